"""Running an AIQ test: programs → runs on the executor → samples → estimate (spec §5).

The methods:

* ``stratified`` (default, the original's): antithetic pairs allocated to strata stage by stage
  (:func:`pipeline.metrics.aiq.estimator.stage_schedule`,
  :func:`~pipeline.metrics.aiq.estimator.allocate`);
  programs are consumed per stratum in file order and a pair with a failed run is replaced by
  the stratum's next program.
* ``mc-antithetic``: programs in file order, both signs, ``budget/2`` successful pairs.
* ``mc``: programs in file order, one run each with a random sign, ``budget`` successful runs.

Every run's seed is ``run_seed(seed, program_id, sign)``: two agents tested with the same root
seed meet the same programs with the same ``%`` draws (common random numbers), and the result
does not depend on the executor or the number of workers. :func:`run_aiq_difference` runs two
agents together, allocating by the SD of their per-program difference.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from pipeline.errors import GmeterError
from pipeline.lab.aiq.runner import map_runs
from pipeline.metrics.aiq.agent_specs import AgentSpec, parse_agent
from pipeline.metrics.aiq.estimator import (
    AIQEstimate,
    DifferenceEstimate,
    allocate,
    estimate_stratified,
    paired_difference,
    stage_schedule,
)
from pipeline.metrics.aiq.runs import AIQSettings, RunItem, RunResult, run_seed
from pipeline.tracks.aiq.bundle import STATUS_OK, STATUS_OVERTIME, SampleRow
from pipeline.tracks.aiq.programs import ProgramSample
from pipeline.tracks.aiq.score import estimate_from_rows, pair_lists, pairs_by_stratum

METHODS = ("stratified", "mc-antithetic", "mc")


@dataclass
class AIQRun:
    """A finished test of one agent."""

    agent: AgentSpec
    settings: AIQSettings
    method: str
    budget: int
    seed: int
    num_programs: int
    stages: list[int]
    rows: list[SampleRow]
    estimate: AIQEstimate


def _sd(ys: Sequence[float]) -> float:
    k = len(ys)
    mean = sum(ys) / k
    return math.sqrt(sum((y - mean) ** 2 for y in ys) / (k - 1))


class _Runner:
    """Runs programs for one or more agents through the executor, logging every run."""

    def __init__(
        self,
        agents: Sequence[AgentSpec],
        sample: ProgramSample,
        settings: AIQSettings,
        seed: int,
        executor: Any,
        record: bool,
        progress: Any,
        step_timeout: float = 10.0,
    ) -> None:
        from pipeline.executor import InProcessExecutor

        self.agents = agents
        self.sample = sample
        self.settings = settings
        self.seed = seed
        self.ex = executor or InProcessExecutor()
        self.record = record
        self.progress = progress
        self.rows: list[list[SampleRow]] = [[] for _ in agents]
        self.step_timeout = step_timeout

    def run(self, jobs: Sequence[tuple[int, int]], stage: int) -> list[list[RunResult]]:
        """Run (program id, sign) jobs for every agent; return results per agent."""
        items = [
            RunItem(self.sample.programs[pid], sign, run_seed(self.seed, pid, sign))
            for pid, sign in jobs
        ]
        out: list[list[RunResult]] = []
        for k, spec in enumerate(self.agents):
            label = f"{spec.kind} stage {stage}" if stage else spec.kind
            res = map_runs(self.ex, spec, items, self.settings, record=self.record,
                           step_timeout=self.step_timeout, label=label,
                           progress=self.progress)  # fmt: skip
            for (pid, sign), item, r in zip(jobs, items, res, strict=True):
                self.rows[k].append(
                    SampleRow(
                        pid,
                        item.program,
                        self.sample.strata[pid],
                        sign,
                        item.seed,
                        r.score,
                        r.steps,
                        r.cycles,
                        STATUS_OVERTIME if r.failed else STATUS_OK,
                        stage,
                        r.actions,
                    )
                )
            out.append(res)
        return out

    def pair_values(self, pids: Sequence[int], stage: int) -> list[float | None]:
        """Per program: the pair mean (one agent) or the difference A − B; None if a run failed."""
        jobs = [(pid, sign) for pid in pids for sign in (1, -1)]
        res = self.run(jobs, stage)
        out: list[float | None] = []
        for j in range(len(pids)):
            means = []
            for agent_res in res:
                a, b = agent_res[2 * j], agent_res[2 * j + 1]
                means.append(None if a.failed or b.failed else (a.score + b.score) / 2)
            if any(m is None for m in means):
                out.append(None)
            elif len(means) == 1:
                out.append(means[0])
            else:
                out.append(means[0] - means[1])  # type: ignore[operator]
        return out


def _stratified(
    sample: ProgramSample, budget: int, evaluate: Callable[[Sequence[int], int], list[Any]]
) -> list[int]:
    p = sample.p
    queues = sample.by_stratum()
    used = dict.fromkeys(queues, 0)
    active = sum(1 for x in p if x > 0)
    schedule = stage_schedule(active, budget, len(sample.programs))
    sd = [1.0] * len(p)
    planned = [0] * len(p)
    ys: dict[int, list[float]] = {i: [] for i in range(len(p))}
    for k in range(1, len(schedule)):
        alloc = allocate(p, sd, schedule[k] - schedule[k - 1])
        need = list(alloc)
        while any(need):
            pids: list[int] = []
            for i, m in enumerate(need):
                if m == 0:
                    continue
                q = queues[i]
                if used[i] + m > len(q):
                    raise GmeterError(
                        f"ran out of programs in stratum {i} ({len(q)} in the sample)",
                        hint="use a larger program sample or a smaller --samples",
                    )
                pids += q[used[i] : used[i] + m]
                used[i] += m
            for pid, y in zip(pids, evaluate(pids, k), strict=True):
                if y is not None:
                    s = sample.strata[pid]
                    ys[s].append(y)
                    need[s] -= 1
        for i in range(len(p)):
            planned[i] += 2 * alloc[i]
            sd[i] = _sd(ys[i]) if planned[i] > 2 else 1.0
    return schedule


def _in_order(
    sample: ProgramSample, wanted: int, evaluate: Callable[[Sequence[int]], list[Any]]
) -> None:
    got = 0
    nxt = 0
    while got < wanted:
        if nxt >= len(sample.programs):
            raise GmeterError(
                f"ran out of programs ({len(sample.programs)} in the sample)",
                hint="use a larger program sample or a smaller --samples",
            )
        take = list(range(nxt, min(nxt + wanted - got, len(sample.programs))))
        nxt += len(take)
        got += sum(y is not None for y in evaluate(take))


def mc_sign(seed: int, program_id: int) -> int:
    """Return the random sign of a program in simple Monte Carlo (from the root seed)."""
    from pipeline.metrics.seeds import derive_seed

    return 1 if derive_seed(seed, program_id, 2) & 1 else -1


def run_aiq(
    agent: str | AgentSpec,
    sample: ProgramSample,
    settings: AIQSettings,
    budget: int,
    seed: int,
    *,
    method: str = "stratified",
    executor: Any = None,
    record: bool = False,
    progress: Any = None,
    step_timeout: float = 10.0,
) -> AIQRun:
    """Test one agent with ``budget`` runs; return the logged runs and the estimate.

    Raises
    ------
    GmeterError
        A stratum (or the sample) ran out of programs.
    ValueError
        Unknown method, bad agent spec, budget < 2.
    """
    spec = agent if isinstance(agent, AgentSpec) else parse_agent(agent, settings.episode_length)
    if method not in METHODS:
        raise ValueError(f"unknown method {method!r}; use one of {', '.join(METHODS)}")
    if budget < 2:
        raise ValueError("the budget (runs) must be >= 2")
    runner = _Runner([spec], sample, settings, seed, executor, record, progress, step_timeout)
    try:
        return _run_method(runner, spec, sample, settings, budget, seed, method)
    finally:
        from pipeline.lab.aiq.external import close_external_agents

        close_external_agents()


def _run_method(
    runner: _Runner,
    spec: AgentSpec,
    sample: ProgramSample,
    settings: AIQSettings,
    budget: int,
    seed: int,
    method: str,
) -> AIQRun:
    stages: list[int] = []
    if method == "stratified":
        stages = _stratified(sample, budget, runner.pair_values)
    elif method == "mc-antithetic":
        _in_order(sample, budget // 2, lambda pids: runner.pair_values(pids, 0))
    else:

        def single(pids: Sequence[int]) -> list[float | None]:
            res = runner.run([(pid, mc_sign(seed, pid)) for pid in pids], 0)[0]
            return [None if r.failed else r.score for r in res]

        _in_order(sample, budget, single)
    rows = runner.rows[0]
    est = estimate_from_rows(method, rows, sample.p, stages, len(sample.programs))
    return AIQRun(spec, settings, method, budget, seed, len(sample.programs), stages, rows, est)


def run_aiq_difference(
    agent_a: str | AgentSpec,
    agent_b: str | AgentSpec,
    sample: ProgramSample,
    settings: AIQSettings,
    budget: int,
    seed: int,
    *,
    executor: Any = None,
    progress: Any = None,
    step_timeout: float = 10.0,
) -> tuple[AIQRun, AIQRun, DifferenceEstimate]:
    r"""Test two agents on the same programs and seeds; estimate :math:`\Upsilon_A - \Upsilon_B`.

    The stratified allocation follows the SD of the per-program difference of pair means (both
    agents' four runs must succeed for a program to count); ``budget`` counts runs per agent.
    """
    specs = [
        a if isinstance(a, AgentSpec) else parse_agent(a, settings.episode_length)
        for a in (agent_a, agent_b)
    ]
    runner = _Runner(specs, sample, settings, seed, executor, False, progress, step_timeout)
    try:
        stages = _stratified(sample, budget, runner.pair_values)
    finally:
        from pipeline.lab.aiq.external import close_external_agents

        close_external_agents()
    pa, pb = (pairs_by_stratum(rows) for rows in runner.rows)
    common = {s: {pid: v for pid, v in d.items() if pid in pb.get(s, {})} for s, d in pa.items()}
    diff = paired_difference(sample.p, common, pb)
    runs = [
        AIQRun(spec, settings, "stratified", budget, seed, len(sample.programs), stages, rows,
               estimate_stratified(sample.p, pair_lists(pairs_by_stratum(rows)),
                                   legacy_runs=stages[-1],
                                   num_programs=len(sample.programs)))
        for spec, rows in zip(specs, runner.rows, strict=True)
    ]  # fmt: skip
    return runs[0], runs[1], diff
