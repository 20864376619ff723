"""Legg & Veness's Figures 1 and 2 as sweeps of AIQ runs: the recipe of the committed boards.

Figure 1 is AIQ against episode length (1 000 … 100 000 cycles) for the six reference agents
with the paper's parameters for each length; Figure 2 is MC-AIXI's AIQ at 50 000 cycles over
a grid of context depths and simulations per cycle. Each point is one bundle, written by the
same code as ``gmeter aiq run --traces`` (so ``gmeter aiq verify`` replays it); the runs of a
bundle go through the executor (local processes or Dask), so a maintainer with a cluster can
rerun a whole figure, with more runs, by passing ``runs`` (``gmeter aiq figure``).

The run counts below are what the committed boards hold. They are a compromise, said on the
boards: MC-AIXI costs one to two milliseconds per cycle at the paper's settings, more as its
context trees grow (see ``make bench``), and the other agents' runs are limited by the size of
their committed action traces, not by CPU. The boards declare them (``[aiq] samples`` and
``samples_by_bundle``) and root seed 1, so the benchmark owns every bundle's runs and seeds; the
programs are used in file order, so all agents meet the same environments with the same
machine randomness (common random numbers) and smaller samples are prefixes of larger ones.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

#: Paper Fig. 1's episode lengths.
FIGURE1_LENGTHS = (1000, 3000, 10000, 30000, 100000)
#: Runs per bundle of the committed Figure 1 board, per agent, at FIGURE1_LENGTHS.
FIGURE1_RUNS: dict[str, tuple[int, ...]] = {
    "random": (200, 100, 60, 20, 20),
    "freq": (1000, 600, 240, 100, 50),
    "q0": (1000, 600, 240, 100, 50),
    "q-lambda": (1000, 600, 240, 100, 50),
    "hlq-lambda": (1000, 600, 240, 100, 50),
    "mc-aixi": (200, 100, 60, 20, 10),
}
#: Paper Fig. 2: MC-AIXI at 50 000 cycles over context depth × simulations per cycle.
FIGURE2_LENGTH = 50_000
FIGURE2_DEPTHS = (2, 4, 8, 16, 32)
FIGURE2_SIMULATIONS = (10, 30, 100)
FIGURE2_RUNS = 10
NAMES = {
    "random": "Random",
    "freq": "Freq",
    "q0": "Q(0)",
    "q-lambda": "Q(λ)",
    "hlq-lambda": "HLQ(λ)",
    "mc-aixi": "MC-AIXI",
}
#: Cycles per second on one core of the committed machine (``make bench``; bench/RESULTS.md),
#: MC-AIXI at the paper's settings once its context tree has grown: for projections only.
DEFAULT_RATES = {"random": 6.5e6, "freq": 6.3e6, "q0": 5.8e6, "q-lambda": 5.8e6,
                 "hlq-lambda": 5.1e6, "mc-aixi": 600.0}  # fmt: skip
#: Where each figure's board lives (relative to the repository root).
FIGURE_BENCHMARKS = {1: Path("submissions/aiq-bf5-fig1"), 2: Path("submissions/aiq-bf5-fig2")}
#: Fixed cost of one simulated bit in units of context-tree levels (measured: a cycle at depth
#: D costs about (12 + D) units); used only to project the cost of MC-AIXI settings.
MC_AIXI_FIXED_LEVELS = 12.0


@dataclass(frozen=True)
class SweepJob:
    """One bundle of a figure: an agent spec, an episode length and a number of runs."""

    agent: str
    episode_length: int
    runs: int
    folder: str
    system: str
    figure: int

    @property
    def cycles(self) -> int:
        """Interaction cycles of the whole bundle (runs × episode length)."""
        return self.runs * self.episode_length


def figure1_jobs(runs: Mapping[str, Sequence[int]] | None = None) -> list[SweepJob]:
    """Every (agent, episode length) of Figure 1 (default: the committed board's run counts)."""
    table = dict(FIGURE1_RUNS if runs is None else runs)
    out = []
    for agent, counts in table.items():
        for el, n in zip(FIGURE1_LENGTHS, counts, strict=True):
            out.append(SweepJob(agent, el, n, f"{agent}-el{el}", f"{NAMES[agent]}, EL {el}", 1))
    return out


def figure2_jobs(runs: int = FIGURE2_RUNS) -> list[SweepJob]:
    """Every (depth, simulations) cell of Figure 2, cheapest first."""
    cells = sorted(((d, s) for d in FIGURE2_DEPTHS for s in FIGURE2_SIMULATIONS),
                   key=lambda c: ((MC_AIXI_FIXED_LEVELS + c[0]) * c[1], c))  # fmt: skip
    return [
        SweepJob(f"mc-aixi,depth={d},simulations={s}", FIGURE2_LENGTH, runs,
                 f"mc-aixi-d{d}-n{s}", f"MC-AIXI, depth {d}, {s} simulations", 2)
        for d, s in cells
    ]  # fmt: skip


def figure_jobs(figure: int, *, scale: float = 1.0, only: str | None = None) -> list[SweepJob]:
    """The jobs of Figure 1 or 2, every run count scaled (to an even number >= 2).

    ``only`` keeps the jobs whose folder contains that text (e.g. ``mc-aixi``, ``el100000``).
    """
    if figure not in (1, 2):
        raise ValueError("the paper has Figures 1 and 2 (1: episode length, 2: depth x search)")
    if not scale > 0:
        raise ValueError("scale must be > 0")
    jobs = figure1_jobs() if figure == 1 else figure2_jobs()
    out = []
    for job in jobs:
        if only and only not in job.folder:
            continue
        runs = max(2, 2 * round(job.runs * scale / 2))
        out.append(SweepJob(job.agent, job.episode_length, runs, job.folder, job.system,
                            job.figure))  # fmt: skip
    return out


def relative_cost(agent: str) -> float:
    r"""Cost per cycle of an MC-AIXI spec relative to the paper's settings (D 32, N 100, H 3).

    :math:`\frac{N}{100}\cdot\frac{H}{3}\cdot\frac{12 + D}{12 + 32}`; 1 for other agents.
    """
    from pipeline.metrics.aiq.agent_specs import parse_agent

    spec = parse_agent(agent)
    if spec.kind != "mc-aixi":
        return 1.0
    d, n, h = spec.param("depth"), spec.param("simulations"), spec.param("horizon")
    return n / 100 * h / 3 * (MC_AIXI_FIXED_LEVELS + d) / (MC_AIXI_FIXED_LEVELS + 32)


def sweep_cost(jobs: Sequence[SweepJob], rates: Mapping[str, float]) -> float:
    """Projected CPU-seconds of the jobs from cycles per second per agent kind.

    ``rates["mc-aixi"]`` is the rate at the paper's settings; other MC-AIXI settings are scaled
    by :func:`relative_cost`.
    """
    total = 0.0
    for job in jobs:
        kind = job.agent.split(",")[0]
        total += job.cycles * relative_cost(job.agent) / rates[kind]
    return total


def submission_toml(job: SweepJob, seed: int) -> str:
    """The ``submission.toml`` of a reference bundle of a figure."""
    from pipeline.toml_writer import toml_value

    what = ("with the paper's parameters for episode length "
            f"{job.episode_length}" if job.figure == 1 else
            f"({job.agent.removeprefix('mc-aixi,')}, other parameters the paper's)")  # fmt: skip
    text = (
        f"gmeter's reference agent {NAMES[job.agent.split(',')[0]]} {what}, {job.runs} runs "
        f"(antithetic pairs, programs in file order), traces included: Legg & Veness Fig. "
        f"{job.figure}. Root seed {seed}, as every bundle of the figure (common random "
        f"numbers). Made with: gmeter aiq run --agent {job.agent} --episode-length "
        f"{job.episode_length} --samples {job.runs} --seed {seed} --method mc-antithetic "
        f"--traces"
    )
    return (
        f"submitted = {dt.date.today().isoformat()}\n"
        'contact = "gmeter maintainers (https://github.com/gmeter)"\n'
        'licence = "CC-BY-4.0"\n'
        f"description = {toml_value(text)}\n\n"
        "[system]\n"
        f"name = {toml_value(job.system)}\n"
        'version = "paper parameters"\n'
        'organisation = "gmeter reference agents"\n'
        'url = "https://github.com/mathemajician/AIQ"\n\n'
        "[aiq]\n"
        f"agent = {toml_value(job.agent + ' (see aiq.toml for every value)')}\n"
    )


def run_jobs(
    jobs: Sequence[SweepJob],
    benchmark: Path,
    *,
    seed: int = 1,
    method: str = "mc-antithetic",
    executor: Any = None,
    progress: Any = None,
    skip_existing: bool = True,
    report: Callable[[SweepJob, Any], None] | None = None,
) -> list[Path]:
    """Run every job into ``benchmark/<folder>`` (skipping finished bundles); return the folders.

    A bundle is finished when its ``aiq.toml`` exists; bundles are written whole, so an
    interrupted sweep resumes where it stopped.
    """
    from pipeline.lab.aiq.run import run_to_bundle

    done = []
    for job in jobs:
        out = benchmark / job.folder
        if skip_existing and (out / "aiq.toml").exists():
            done.append(out)
            continue
        out.mkdir(parents=True, exist_ok=True)
        (out / "submission.toml").write_text(submission_toml(job, seed), encoding="utf-8")
        run, _ = run_to_bundle(job.agent, job.episode_length, job.runs, seed, out,
                               benchmark=benchmark, traces=True, method=method,
                               executor=executor, progress=progress)  # fmt: skip
        if report is not None:
            report(job, run)
        done.append(out)
    return done
