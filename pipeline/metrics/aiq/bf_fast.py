"""numba-compiled kernels of the BF reference machine: same semantics as :mod:`bf`, ~100× faster.

Every kernel here restates a loop of :mod:`pipeline.metrics.aiq.bf` (and of the sampler in
:mod:`pipeline.metrics.aiq.sampler`) over NumPy arrays so that numba compiles it; the random
stream is the same SplitMix64, so a kernel and its plain-Python twin give identical results
(``tests/test_aiq_bf.py`` checks this cycle by cycle). Kernels are cached on disk
(``cache=True``): the first call in a fresh checkout compiles for a few seconds.

Machine state is passed as arrays: ``tape`` (int8, work tape), ``regs`` (int64: ``[ptr]``),
``inputs`` (int8, history), ``output`` (int8), ``rng`` (uint64: ``[state]``).

References
----------
Legg, S. & Veness, J. (2013). An Approximation of the Universal Intelligence Measure.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from numba import njit

from pipeline.metrics.aiq.bf import BFConfig, CompiledProgram, ReplayResult, compile_program

_GOLDEN = np.uint64(0x9E3779B97F4A7C15)
_MIX1 = np.uint64(0xBF58476D1CE4E5B9)
_MIX2 = np.uint64(0x94D049BB133111EB)
_S30 = np.uint64(30)
_S27 = np.uint64(27)
_S31 = np.uint64(31)
_S11 = np.uint64(11)
_TWO_M53 = 1.1102230246251565e-16


@njit(cache=True, inline="always")
def rng_next(rng: np.ndarray) -> np.uint64:  # pragma: no cover - compiled
    """SplitMix64 step (see :class:`bf.SplitMix64`)."""
    z = rng[0] + _GOLDEN
    rng[0] = z
    z = (z ^ (z >> _S30)) * _MIX1
    z = (z ^ (z >> _S27)) * _MIX2
    return z ^ (z >> _S31)


@njit(cache=True, inline="always")
def rng_uniform(rng: np.ndarray) -> float:  # pragma: no cover - compiled
    """Return a float in [0, 1) from the top 53 bits."""
    return np.float64(rng_next(rng) >> _S11) * _TWO_M53


@njit(cache=True, inline="always")
def rng_below(rng: np.ndarray, n: int) -> int:  # pragma: no cover - compiled
    """Return an integer in 0..n-1."""
    return int(rng_uniform(rng) * n)


@njit(cache=True)
def bf_cycle(
    ops: np.ndarray,
    jump: np.ndarray,
    tape: np.ndarray,
    regs: np.ndarray,
    inputs: np.ndarray,
    output: np.ndarray,
    action: int,
    n: int,
    blank: int,
    max_steps: int,
    rng: np.ndarray,
) -> int:  # pragma: no cover - compiled
    """Push ``action`` onto the history, run the program once; return the steps executed."""
    for i in range(inputs.shape[0] - 1, 0, -1):
        inputs[i] = inputs[i - 1]
    inputs[0] = action
    tape_len = tape.shape[0]
    readable = inputs.shape[0] - 1
    out_len = output.shape[0]
    nops = ops.shape[0]
    ptr = regs[0]
    idx = ptr if ptr >= 0 else ptr + tape_len
    step = 0
    ip = 0
    in_ptr = 0
    out_ptr = 0
    while ip < nops:
        if step >= max_steps or out_ptr == out_len:
            break
        step += 1
        op = ops[ip]
        ip += 1
        if op == 1:  # >
            ptr += 1
            if ptr >= tape_len:
                ptr = 0
            idx = ptr if ptr >= 0 else ptr + tape_len
        elif op == 0:  # <
            ptr -= 1
            if ptr < -tape_len:
                ptr = 0
            idx = ptr if ptr >= 0 else ptr + tape_len
        elif op == 2:  # +
            c = tape[idx] + 1
            tape[idx] = 0 if c == n else c
        elif op == 3:  # -
            c = tape[idx] - 1
            tape[idx] = n - 1 if c < 0 else c
        elif op == 5:  # .
            output[out_ptr] = tape[idx]
            out_ptr += 1
        elif op == 4:  # ,
            if in_ptr >= readable:
                tape[idx] = blank
            else:
                tape[idx] = inputs[in_ptr]
                in_ptr += 1
        elif op == 6:  # %
            tape[idx] = rng_below(rng, n)
        elif op == 7:  # [
            if tape[idx] == blank:
                ip = jump[ip - 1]
        elif op == 8:  # ]
            if tape[idx] != blank:
                ip = jump[ip - 1]
        else:  # #
            break
    regs[0] = ptr
    return step


@njit(cache=True)
def bf_cycle_many(
    ops: np.ndarray,
    jump: np.ndarray,
    starts: np.ndarray,
    ends: np.ndarray,
    tapes: np.ndarray,
    regs: np.ndarray,
    inputs: np.ndarray,
    outputs: np.ndarray,
    rngs: np.ndarray,
    active: np.ndarray,
    actions: np.ndarray,
    n: int,
    max_steps: int,
) -> np.ndarray:  # pragma: no cover - compiled
    """One cycle of many machines in one call: the batched protocol's and the vector env's step.

    Machine ``i`` runs program ``ops[starts[i]:ends[i]]`` (``jump`` holds indices relative to the
    program's start) on row ``i`` of ``tapes``, ``regs``, ``inputs``, ``outputs`` and ``rngs``;
    only rows listed in ``active`` step, with ``actions[k]`` for ``active[k]``. Returns the steps
    of each active machine (same order). Exactly :func:`bf_cycle` per machine.
    """
    blank = (n - 1) // 2
    out = np.empty(active.shape[0], np.int64)
    for k in range(active.shape[0]):
        i = active[k]
        out[k] = bf_cycle(
            ops[starts[i] : ends[i]], jump[starts[i] : ends[i]], tapes[i], regs[i : i + 1],
            inputs[i], outputs[i], actions[k], n, blank, max_steps, rngs[i : i + 1],
        )  # fmt: skip
    return out


@njit(cache=True)
def bf_cycle_percepts(
    ops: np.ndarray,
    jump: np.ndarray,
    starts: np.ndarray,
    ends: np.ndarray,
    tapes: np.ndarray,
    regs: np.ndarray,
    inputs: np.ndarray,
    outputs: np.ndarray,
    rngs: np.ndarray,
    active: np.ndarray,
    actions: np.ndarray,
    n: int,
    max_steps: int,
    reward_cell: int,
    rewards: np.ndarray,
    obs: np.ndarray,
) -> np.ndarray:  # pragma: no cover - compiled
    r"""One cycle of the machines ``active`` and their percepts, in one call (batched runs).

    As :func:`bf_cycle_many`, then for every active machine ``i`` that stayed within the
    step limit: ``rewards[i]`` = :math:`100(c_i - m)/m` (unsigned, bit-identical to
    :meth:`BFConfig.reward_of`) and ``obs[i]`` its observation cells. Rows over the limit
    and inactive rows keep their values. Returns the steps of each active machine.
    """
    blank = (n - 1) // 2
    mid = (n - 1) / 2
    width = outputs.shape[1]
    out = np.empty(active.shape[0], np.int64)
    for k in range(active.shape[0]):
        i = active[k]
        s = bf_cycle(
            ops[starts[i] : ends[i]], jump[starts[i] : ends[i]], tapes[i], regs[i : i + 1],
            inputs[i], outputs[i], actions[k], n, blank, max_steps, rngs[i : i + 1],
        )  # fmt: skip
        out[k] = s
        if s >= max_steps:
            continue
        rewards[i] = 100 * (outputs[i, reward_cell] - mid) / mid
        c = 0
        for j in range(width):
            if j != reward_cell:
                obs[i, c] = outputs[i, j]
                c += 1
    return out


@njit(cache=True)
def bank_step_all(
    ops: np.ndarray,
    jump: np.ndarray,
    starts: np.ndarray,
    ends: np.ndarray,
    tapes: np.ndarray,
    regs: np.ndarray,
    inputs: np.ndarray,
    outputs: np.ndarray,
    rngs: np.ndarray,
    actions: np.ndarray,
    skip: np.ndarray,
    n: int,
    max_steps: int,
    reward_cell: int,
    signs: np.ndarray,
    cycle: np.ndarray,
    episode_length: int,
    rewards: np.ndarray,
    obs: np.ndarray,
    term: np.ndarray,
    trunc: np.ndarray,
    steps: np.ndarray,
) -> int:  # pragma: no cover - compiled
    r"""One cycle of every machine not in ``skip``, with its reward, observation and flags.

    The vector environment's whole step in one call: ``rewards[i]`` is
    :math:`\sigma_i \cdot 100(c_i - m)/m` (bit-identical to :meth:`BFConfig.reward_of`),
    ``term[i]`` whether the cycle reached the step limit, ``trunc[i]`` whether ``cycle[i]``
    reached ``episode_length``; ``obs`` receives every machine's observation cells. Returns
    the index of the first action outside ``0..n-1`` (nothing is stepped then), else -1.
    """
    size = actions.shape[0]
    for i in range(size):
        if not skip[i] and (actions[i] < 0 or actions[i] >= n):
            return i
    blank = (n - 1) // 2
    mid = (n - 1) / 2
    for i in range(size):
        if skip[i]:
            rewards[i] = 0.0
            term[i] = False
            trunc[i] = False
            steps[i] = 0
            continue
        s = bf_cycle(
            ops[starts[i] : ends[i]], jump[starts[i] : ends[i]], tapes[i], regs[i : i + 1],
            inputs[i], outputs[i], actions[i], n, blank, max_steps, rngs[i : i + 1],
        )  # fmt: skip
        steps[i] = s
        cycle[i] += 1
        rewards[i] = signs[i] * (100 * (outputs[i, reward_cell] - mid) / mid)
        term[i] = s >= max_steps
        trunc[i] = (not term[i]) and cycle[i] >= episode_length
    width = outputs.shape[1]
    for i in range(size):
        k = 0
        for j in range(width):
            if j != reward_cell:
                obs[i, k] = outputs[i, j]
                k += 1
    return -1


@njit(cache=True)
def new_machine(
    n: int, obs_cells: int, tape_len: int, in_len: int, seed: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:  # pragma: no cover
    """Fresh blank tapes: (tape, regs, inputs, output, rng)."""
    blank = (n - 1) // 2
    tape = np.full(tape_len, blank, np.int8)
    regs = np.zeros(1, np.int64)
    inputs = np.full(in_len, blank, np.int8)
    output = np.full(1 + obs_cells, blank, np.int8)
    rng = np.empty(1, np.uint64)
    rng[0] = np.uint64(seed)
    return tape, regs, inputs, output, rng


@njit(cache=True)
def replay_kernel(
    ops: np.ndarray,
    jump: np.ndarray,
    actions: np.ndarray,
    n: int,
    obs_cells: int,
    reverse: bool,
    tape_len: int,
    in_len: int,
    max_steps: int,
    seed: int,
) -> tuple[np.ndarray, np.ndarray, np.ndarray, int]:  # pragma: no cover - compiled
    """Replay ``actions``; return (reward symbols, output tapes, steps, failure cycle or -1).

    Arrays have one row per cycle run; the run stops after the first failing cycle.
    """
    blank = (n - 1) // 2
    tape, regs, inputs, output, rng = new_machine(n, obs_cells, tape_len, in_len, seed)
    cycles = actions.shape[0]
    outs = np.empty((cycles, 1 + obs_cells), np.int8)
    steps = np.empty(cycles, np.int32)
    rcell = obs_cells if reverse else 0
    rsym = np.empty(cycles, np.int8)
    failure = -1
    done = 0
    for k in range(cycles):
        s = bf_cycle(ops, jump, tape, regs, inputs, output, actions[k], n, blank, max_steps, rng)
        outs[k, :] = output
        steps[k] = s
        rsym[k] = output[rcell]
        done = k + 1
        if s >= max_steps:
            failure = k
            break
    return rsym[:done], outs[:done], steps[:done], failure


@njit(cache=True, inline="always")
def normalise(total: float, length: int, discount: float) -> float:  # pragma: no cover
    """Mean reward (undiscounted) or the original's discounted normaliser (with L+1)."""
    if discount == 1.0:
        return total / length
    return total / ((1.0 - discount ** (length + 1)) / (1.0 - discount))


@njit(cache=True)
def replay_score_kernel(
    ops: np.ndarray,
    jump: np.ndarray,
    actions: np.ndarray,
    n: int,
    obs_cells: int,
    reverse: bool,
    tape_len: int,
    in_len: int,
    max_steps: int,
    seed: int,
    rflip: float,
    discount: float,
) -> tuple[float, int, int, bool]:  # pragma: no cover - compiled
    r"""Replay and score like an AIQ run: (score, total steps, cycles, failed).

    Accumulates :math:`\sum_i d^{i-1} \sigma r_i` in cycle order, exactly as
    :func:`pipeline.metrics.aiq.agents_fast.run_episode` does, so logged scores compare exactly.
    """
    blank = (n - 1) // 2
    mid = (n - 1) / 2
    tape, regs, inputs, output, rng = new_machine(n, obs_cells, tape_len, in_len, seed)
    rcell = obs_cells if reverse else 0
    total = 0.0
    disc = 1.0
    total_steps = 0
    cycles = actions.shape[0]
    for k in range(cycles):
        s = bf_cycle(ops, jump, tape, regs, inputs, output, actions[k], n, blank, max_steps, rng)
        total_steps += s
        if s >= max_steps:
            return np.nan, total_steps, k + 1, True
        r = 100 * (output[rcell] - mid) / mid
        total += disc * rflip * r
        disc *= discount
    return normalise(total, cycles, discount), total_steps, cycles, False


def seed64(seed: int) -> Any:
    """Return a Python integer seed as the kernels take it (modulo :math:`2^{64}`)."""
    return np.uint64(seed & 0xFFFFFFFFFFFFFFFF)


def program_arrays(program: str | CompiledProgram) -> tuple[np.ndarray, np.ndarray]:
    """Opcode and jump arrays of a program for the kernels."""
    prog = program if isinstance(program, CompiledProgram) else compile_program(program)
    return np.asarray(prog.ops, np.int8), np.asarray(prog.jump, np.int32)


class FastMachine:
    """A stepwise machine over the compiled kernel, for agents written in Python.

    Same interface as :class:`bf.BFMachine` (``reset``, ``act``) but returns only what an agent
    run needs: ``(reward, observation, steps)``.
    """

    def __init__(self, program: str | CompiledProgram, config: BFConfig, seed: int = 0) -> None:
        self.ops, self.jump = program_arrays(program)
        self.config = config
        self.seed = seed
        self.reset()

    def reset(self) -> tuple[float, tuple[int, ...]]:
        """Blank tapes; return the initial percept."""
        c = self.config
        self.tape, self.regs, self.inputs, self.output, self.rng = new_machine(
            c.num_symbols, c.obs_cells, c.work_tape_len, c.input_tape_len, seed64(self.seed)
        )
        return 0.0, (c.blank,) * c.obs_cells

    def act(self, action: int) -> tuple[float, tuple[int, ...], int]:
        """One cycle: (reward, observation, steps)."""
        c = self.config
        if not 0 <= action < c.num_symbols:
            raise ValueError(f"action {action} is not in 0..{c.num_symbols - 1}")
        steps = bf_cycle(
            self.ops,
            self.jump,
            self.tape,
            self.regs,
            self.inputs,
            self.output,
            action,
            c.num_symbols,
            c.blank,
            c.max_steps,
            self.rng,
        )
        out = self.output.tolist()
        if c.reverse_output:
            sym, obs = out[c.obs_cells], tuple(out[: c.obs_cells])
        else:
            sym, obs = out[0], tuple(out[1:])
        return c.reward_of(sym), obs, int(steps)


def replay_fast(
    program: str | CompiledProgram, actions: np.ndarray | list[int], config: BFConfig, seed: int = 0
) -> ReplayResult:
    """:func:`bf.replay` on the compiled kernel (identical result)."""
    ops, jump = program_arrays(program)
    acts = np.asarray(actions, np.int64)
    if acts.size and (acts.min() < 0 or acts.max() >= config.num_symbols):
        raise ValueError(f"actions must be in 0..{config.num_symbols - 1}")
    c = config
    rsym, outs, steps, failure = replay_kernel(
        ops,
        jump,
        acts.astype(np.int8),
        c.num_symbols,
        c.obs_cells,
        c.reverse_output,
        c.work_tape_len,
        c.input_tape_len,
        c.max_steps,
        seed64(seed),
    )
    out_rows = [tuple(row) for row in outs.tolist()]
    rc = c.reward_cell
    obs = [row[:rc] + row[rc + 1 :] for row in out_rows]
    return ReplayResult(
        tuple(c.reward_of(int(x)) for x in rsym.tolist()),
        tuple(obs),
        tuple(out_rows),
        tuple(int(x) for x in steps.tolist()),
        None if failure < 0 else int(failure),
    )


class MachineBank:
    """Many BF machines stepped together by :func:`bf_cycle_many` (one compiled call per cycle).

    Parameters
    ----------
    programs : sequence of str or CompiledProgram
        One program per machine (repeat a program for several machines).
    config : BFConfig
        The machine settings shared by every machine.
    seeds : sequence of int
        The ``%`` stream seed of each machine.

    Notes
    -----
    Memory is ``len(programs) × work_tape_len`` bytes for the work tapes (6.4 MB for 64 BF(5)
    machines). Rewards are computed as :meth:`BFConfig.reward_of` does, element by element, so
    they are bit-identical to the stepwise machine.
    """

    def __init__(
        self,
        programs: Sequence[str | CompiledProgram],
        config: BFConfig,
        seeds: Sequence[int],
    ) -> None:
        if len(programs) != len(seeds):
            raise ValueError("one seed per program")
        self.config = config
        self.size = len(programs)
        arrays = [program_arrays(p) for p in programs]
        lengths = np.array([a[0].shape[0] for a in arrays], np.int64)
        self.ends = np.cumsum(lengths)
        self.starts = self.ends - lengths
        self.ops = np.concatenate([a[0] for a in arrays]) if arrays else np.zeros(0, np.int8)
        self.jump = np.concatenate([a[1] for a in arrays]) if arrays else np.zeros(0, np.int32)
        c = config
        blank = c.blank
        self.tapes = np.full((self.size, c.work_tape_len), blank, np.int8)
        self.regs = np.zeros(self.size, np.int64)
        self.inputs = np.full((self.size, c.input_tape_len), blank, np.int8)
        self.outputs = np.full((self.size, c.output_len), blank, np.int8)
        self.rngs = np.array([int(seed64(s)) for s in seeds], np.uint64).reshape(self.size)
        self._mid = (c.num_symbols - 1) / 2

    def reset_rows(self, rows: Sequence[int], seeds: Sequence[int]) -> None:
        """Blank the tapes of ``rows`` and reseed their ``%`` streams."""
        blank = self.config.blank
        for i, s in zip(rows, seeds, strict=True):
            self.tapes[i].fill(blank)
            self.regs[i] = 0
            self.inputs[i].fill(blank)
            self.outputs[i].fill(blank)
            self.rngs[i] = seed64(s)

    def set_program(self, row: int, program: str | CompiledProgram) -> None:
        """Replace the program of one machine (appends its opcodes; for the AIQ vector env)."""
        ops, jump = program_arrays(program)
        start = self.ops.shape[0]
        self.ops = np.concatenate([self.ops, ops])
        self.jump = np.concatenate([self.jump, jump])
        self.starts[row] = start
        self.ends[row] = start + ops.shape[0]
        if self.ops.shape[0] > 1 << 22:  # compact: keep only the programs in use
            keep = [(self.ops[a:b], self.jump[a:b]) for a, b in zip(self.starts, self.ends,
                                                                    strict=True)]  # fmt: skip
            lengths = np.array([k[0].shape[0] for k in keep], np.int64)
            self.ends = np.cumsum(lengths)
            self.starts = self.ends - lengths
            self.ops = np.concatenate([k[0] for k in keep])
            self.jump = np.concatenate([k[1] for k in keep])

    def step(self, active: np.ndarray, actions: np.ndarray) -> np.ndarray:
        """One cycle of the machines ``active`` with ``actions``; return their steps."""
        c = self.config
        return bf_cycle_many(
            self.ops, self.jump, self.starts, self.ends, self.tapes, self.regs, self.inputs,
            self.outputs, self.rngs, active.astype(np.int64), actions.astype(np.int8),
            c.num_symbols, c.max_steps,
        )  # fmt: skip

    def step_percepts(
        self, active: np.ndarray, actions: np.ndarray, rewards: np.ndarray, obs: np.ndarray
    ) -> np.ndarray:
        """:meth:`step`, :meth:`rewards` and :meth:`observations` in one compiled call.

        Writes the unsigned rewards (float64, one per machine) and observation cells (int64,
        shape ``(size, obs_cells)``) of the active machines within the step limit in place;
        returns their steps.
        """
        c = self.config
        return bf_cycle_percepts(
            self.ops, self.jump, self.starts, self.ends, self.tapes, self.regs, self.inputs,
            self.outputs, self.rngs, active.astype(np.int64, copy=False),
            actions.astype(np.int8), c.num_symbols, c.max_steps, c.reward_cell, rewards, obs,
        )  # fmt: skip

    def step_all(
        self,
        actions: np.ndarray,
        skip: np.ndarray,
        signs: np.ndarray,
        cycle: np.ndarray,
        episode_length: int,
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray, int]:
        """Step every machine not in ``skip`` (:func:`bank_step_all`).

        Returns (σ·rewards, observations, terminated, truncated, steps, bad action index or -1).
        """
        c = self.config
        size = self.size
        rewards = np.empty(size)
        obs = np.empty((size, c.obs_cells), np.int64)
        term = np.empty(size, np.bool_)
        trunc = np.empty(size, np.bool_)
        steps = np.empty(size, np.int64)
        bad = bank_step_all(
            self.ops, self.jump, self.starts, self.ends, self.tapes, self.regs, self.inputs,
            self.outputs, self.rngs, actions, skip, c.num_symbols, c.max_steps, c.reward_cell,
            signs, cycle, episode_length, rewards, obs, term, trunc, steps,
        )  # fmt: skip
        return rewards, obs, term, trunc, steps, int(bad)

    def rewards(self, rows: np.ndarray) -> np.ndarray:
        r"""Unsigned rewards :math:`100(c-m)/m` of ``rows`` (float64, as ``reward_of``)."""
        sym = self.outputs[rows, self.config.reward_cell].astype(np.float64)
        return 100 * (sym - self._mid) / self._mid

    def observations(self, rows: np.ndarray) -> np.ndarray:
        """Observation cells of ``rows`` (int64, shape ``(len(rows), obs_cells)``)."""
        c = self.config
        out = self.outputs[rows].astype(np.int64)
        rc = c.reward_cell
        return np.concatenate([out[:, :rc], out[:, rc + 1 :]], axis=1)
