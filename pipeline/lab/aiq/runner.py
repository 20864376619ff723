"""Running an agent on BF programs: the AIQ track's engine room between agents and executors.

Reference agents run in the compiled kernel (or plain Python with ``plain``); outside agents —
a Python class (``module:Class``), a program (``cmd:PROGRAM``), a Gymnasium policy factory
(``gym:module:factory``) — through the adapters of :mod:`pipeline.lab.aiq.external`; a
batched program (``cmdbatch:PROGRAM``) gets whole batches of runs (:func:`execute_batch`,
:mod:`pipeline.lab.aiq.batch`). The maths of one run (machine, agents, rewards) is pure
and lives in :mod:`pipeline.metrics.aiq.runs`; this module chooses the agent and maps the runs
over an executor.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Sequence
from typing import Any

from pipeline.metrics.aiq.agent_specs import AgentSpec, parse_agent
from pipeline.metrics.aiq.runs import (
    AIQSettings,
    RunItem,
    RunResult,
    reference_agent,
    run_episode_py,
    run_reference_fast,
)


def _outside_agent(spec: AgentSpec, step_timeout: float) -> Any:
    """An agent object for ``module:Class``, ``cmd:`` or ``gym:`` (fresh or per worker)."""
    if spec.kind == "gym":
        from pipeline.lab.aiq.gym_env import GymPolicyAgent

        return GymPolicyAgent(spec.target, dict(spec.params))
    from pipeline.lab.aiq.external import external_agent

    return external_agent(spec, step_timeout)


def execute_run(
    item: RunItem,
    *,
    agent: str,
    settings: AIQSettings,
    record: bool,
    plain: bool = False,
    step_timeout: float = 10.0,
) -> RunResult:
    """Run one item (module-level and picklable for the executors).

    ``agent`` is a spec string; reference agents use the compiled kernel unless ``plain``;
    external agents are created (and, for programs, kept alive) per worker process.
    """
    spec = parse_agent(agent, settings.episode_length)
    if spec.is_reference and not plain:
        return run_reference_fast(spec, item.program, settings, item.sign, item.seed, record)
    if spec.is_reference:
        obj = reference_agent(spec)
        return run_episode_py(item.program, settings, obj, item.sign, item.seed, record=record)
    from pipeline.metrics.aiq.bf_fast import FastMachine

    obj = _outside_agent(spec, step_timeout)
    return run_episode_py(
        item.program, settings, obj, item.sign, item.seed, record=record,
        params=dict(spec.params), machine_cls=FastMachine,
    )  # fmt: skip


def execute_batch(
    items: Sequence[RunItem],
    *,
    agent: str,
    settings: AIQSettings,
    record: bool,
    step_timeout: float = 10.0,
) -> list[RunResult]:
    """Run a batch of items through a ``cmdbatch:`` agent (module-level, picklable)."""
    from pipeline.lab.aiq.batch import BatchCommandAgent, run_batch
    from pipeline.lab.aiq.external import shared_process

    spec = parse_agent(agent, settings.episode_length)
    obj = shared_process(("batch", spec.target, step_timeout),
                         lambda: BatchCommandAgent(spec.target, step_timeout))  # fmt: skip
    assert isinstance(obj, BatchCommandAgent)
    return run_batch(items, settings, obj, record=record, params=dict(spec.params))


def execute_vec_batch(
    items: Sequence[RunItem],
    *,
    agent: str,
    settings: AIQSettings,
    record: bool,
    step_timeout: float = 10.0,
) -> list[RunResult]:
    """Run a batch of items through a ``vec:`` policy (module-level, picklable)."""
    from pipeline.lab.aiq.batch import run_batch
    from pipeline.lab.aiq.vec_agent import VecPolicyAgent

    spec = parse_agent(agent, settings.episode_length)
    obj = VecPolicyAgent(spec.target, dict(spec.params))
    return run_batch(items, settings, obj, record=record, params=dict(spec.params))


def _this_process_if_one_worker(ex: Any) -> Any:
    """A local pool of one worker is replaced by this process (same results, item by item).

    One worker parallelises nothing, and starting it costs a second interpreter, the imports
    and the compiled kernels' start-up (about a second, as much as a whole batched run of a
    ``vec:`` policy): ``gmeter aiq run --workers 1`` runs in the calling process.
    """
    if getattr(ex, "kind", None) == "local" and getattr(ex, "workers", 0) == 1:
        from pipeline.executor import InProcessExecutor

        return InProcessExecutor()
    return ex


def map_runs(
    ex: Any,
    spec: AgentSpec,
    items: Sequence[RunItem],
    settings: AIQSettings,
    *,
    record: bool,
    step_timeout: float = 10.0,
    label: str = "",
    progress: Any = None,
) -> list[RunResult]:
    """Map the runs over the executor: one task per run, or per batch for ``cmdbatch:``.

    Batches split the runs evenly over the executor's workers (at most
    :data:`~pipeline.lab.aiq.batch.MAX_BATCH` runs each); results do not depend on it.
    """
    ex = _this_process_if_one_worker(ex)
    if spec.kind not in ("batch", "vec"):
        fn = functools.partial(execute_run, agent=spec.text, settings=settings, record=record,
                               step_timeout=step_timeout)  # fmt: skip
        return list(ex.map(fn, items, label=label, progress=progress))
    from pipeline.lab.aiq.batch import MAX_BATCH

    if not items:
        return []
    workers = max(1, int(getattr(ex, "workers", 1) or 1))
    per = min(MAX_BATCH, math.ceil(len(items) / workers))
    batches = [list(items[i : i + per]) for i in range(0, len(items), per)]
    run = execute_batch if spec.kind == "batch" else execute_vec_batch
    fnb = functools.partial(run, agent=spec.text, settings=settings, record=record,
                            step_timeout=step_timeout)  # fmt: skip
    out: list[RunResult] = []
    for res in ex.map(fnb, batches, label=label, progress=progress, chunksize=1):
        out += res
    return out


def run_agent_on_programs(
    agent: str | AgentSpec,
    programs: Sequence[str],
    settings: AIQSettings,
    seeds: Sequence[int],
    signs: Sequence[int] | None = None,
    *,
    record: bool = False,
    executor: Any = None,
    progress: Any = None,
    step_timeout: float = 10.0,
) -> list[RunResult]:
    """Run ``agent`` once on each program: the engine's public entry point.

    Parameters
    ----------
    agent : str or AgentSpec
        ``random``, ``freq``, ``q0``, ``q-lambda``, ``hlq-lambda`` (with ``,key=value``
        overrides), ``module:Class``, ``cmd:PROGRAM``, ``cmdbatch:PROGRAM`` or
        ``gym:module:factory``.
    programs : sequence of str
        BF programs (one run each).
    settings : AIQSettings
        Machine, episode length, discount.
    seeds : sequence of int
        One seed per run (machine ``%`` stream and, hashed, the agent's stream).
    signs : sequence of int, optional
        Antithetic sign per run (+1/−1); default all +1.
    record : bool
        Keep the action traces.
    executor : Executor, optional
        Where to run (default in-process). Results do not depend on it.
    progress : callable, optional
        ``progress(label, done, total)``.
    step_timeout : float
        Seconds an external program may take per reply (per batched reply for cmdbatch).

    Returns
    -------
    list of RunResult
        In program order.
    """
    from pipeline.executor import InProcessExecutor

    text = agent.text if isinstance(agent, AgentSpec) else agent
    parse_agent(text, settings.episode_length)  # fail early on a bad spec
    if len(seeds) != len(programs) or (signs is not None and len(signs) != len(programs)):
        raise ValueError("programs, seeds and signs must have the same length")
    sg = list(signs) if signs is not None else [1] * len(programs)
    items = [RunItem(p, s, int(x)) for p, s, x in zip(programs, sg, seeds, strict=True)]
    ex = executor or InProcessExecutor()
    spec = parse_agent(text, settings.episode_length)
    return map_runs(ex, spec, items, settings, record=record, label=f"aiq {text}",
                    progress=progress, step_timeout=step_timeout)  # fmt: skip
