"""Compile every cached AIQ kernel once, with the argument types the pipeline passes.

The numba kernels (``cache=True``) compile lazily, a few seconds each, on their first call in a
fresh checkout. :func:`compile_kernels` calls each of them once on a tiny machine through the
same entry points the pipeline uses (so the compiled signatures are the ones later calls look
up) and thereby writes numba's on-disk cache. ``make install`` runs it into a seed cache that
the parallel test workers start from (``tests/conftest.py``); ``python -m
pipeline.metrics.aiq.warmup`` runs it into whatever ``NUMBA_CACHE_DIR`` says.

Each call below is cheap (a 3-cycle episode on BF(5)); the time is numba's compilation, or
loading the kernels from the cache when they are already there.
"""

from __future__ import annotations

import time
from collections.abc import Callable

#: A small BF program that reads its action and writes it out (so cycles do I/O).
_PROGRAM = ",.>+."


def _bf_kernels() -> None:
    import numpy as np

    from pipeline.metrics.aiq.bf import BFConfig
    from pipeline.metrics.aiq.bf_fast import (
        FastMachine,
        MachineBank,
        program_arrays,
        replay_fast,
        replay_score_kernel,
        seed64,
    )

    c = BFConfig()
    FastMachine(_PROGRAM, c, seed=1).act(1)  # new_machine, bf_cycle (action: int64)
    replay_fast(_PROGRAM, [0, 1, 2], c, seed=1)  # replay_kernel (bf_cycle, action: int8)
    ops, jump = program_arrays(_PROGRAM)  # as pipeline.tracks.aiq.verify.replay_rows
    replay_score_kernel(ops, jump, np.asarray([0, 1, 2], np.int8), c.num_symbols, c.obs_cells,
                        c.reverse_output, c.work_tape_len, c.input_tape_len, c.max_steps,
                        seed64(1), 1.0, 1.0)  # fmt: skip
    bank = MachineBank([_PROGRAM, _PROGRAM], c, [1, 2])
    active = np.arange(2, dtype=np.int64)
    acts = np.array([0, 1], np.int64)
    bank.step(active, acts)  # bf_cycle_many
    bank.step_percepts(active, acts, np.zeros(2), np.zeros((2, c.obs_cells), np.int64))
    bank.step_all(acts, np.zeros(2, np.bool_), np.ones(2), np.zeros(2, np.int64), 3)


def _sampler_kernels() -> None:
    from pipeline.metrics.aiq.bf import BFConfig
    from pipeline.metrics.aiq.sampler_fast import sample_block_fast

    sample_block_fast(1, 1, BFConfig())


def _agent_kernels() -> None:
    from pipeline.metrics.aiq.agent_specs import parse_agent
    from pipeline.metrics.aiq.runs import AIQSettings, run_reference_fast

    settings = AIQSettings(episode_length=3)
    for agent in ("q-lambda", "mc-aixi,depth=2,simulations=2,horizon=2"):
        run_reference_fast(parse_agent(agent, 3), _PROGRAM, settings, 1, 1, True)


def _merged_kernel() -> None:
    import numpy as np

    from pipeline.metrics.aiq.agent_specs import parse_agent
    from pipeline.metrics.aiq.bf import BFConfig
    from pipeline.metrics.aiq.bf_fast import program_arrays, seed64
    from pipeline.metrics.aiq.merged_episode import run_merged_episode

    c = BFConfig()  # arguments as pipeline.lab.similarity.experiment.run_replicate passes them
    kind, params = parse_agent("q-lambda", 3).kernel_args()
    prog = program_arrays(_PROGRAM)
    run_merged_episode(*prog, *prog, c.num_symbols, c.obs_cells, c.reverse_output,
                       c.work_tape_len, c.input_tape_len, c.max_steps, kind,
                       np.asarray(params, np.float64), 3, 1.0, 0.5, seed64(1), seed64(2),
                       seed64(3), seed64(4))  # fmt: skip


#: Every group of kernels, by the entry points that compile it.
GROUPS: dict[str, Callable[[], None]] = {
    "bf": _bf_kernels,
    "sampler": _sampler_kernels,
    "agents": _agent_kernels,
    "merged": _merged_kernel,
}


def compile_kernels(groups: tuple[str, ...] = tuple(GROUPS)) -> dict[str, float]:
    """Compile (or load from numba's cache) the kernels of ``groups``; return seconds per group.

    Raises
    ------
    KeyError
        An unknown group name.
    """
    took: dict[str, float] = {}
    for name in groups:
        start = time.perf_counter()
        GROUPS[name]()
        took[name] = time.perf_counter() - start
    return took


if __name__ == "__main__":  # pragma: no cover - exercised by make install
    import sys

    for group, seconds in compile_kernels(tuple(sys.argv[1:]) or tuple(GROUPS)).items():
        print(f"{group}: {seconds:.1f} s")
