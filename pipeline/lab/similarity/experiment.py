"""The AIQ environment-families experiment behind ``gmeter similarity run``.

Tests are *families* of BF(n) environments (programs of the AIQ sampler selected by behaviour
stratum or by length); a reference agent is scored on each family and on the merge of every
pair of families (:mod:`pipeline.metrics.aiq.merged_episode`: one lifetime whose cycles are drawn
from the two environments with probability ``p``); eq. 3 turns the three scores into a
similarity (:mod:`pipeline.tracks.similarity.runs`).

Design of one replicate ``k`` (a seed of ``runs.csv``):

* every family gets ``programs`` programs from one sampler stream (a program may enter several
  families, e.g. ``copy`` and ``short``);
* program ``i`` of family ``f`` runs twice (antithetic signs ±1) with machine seed
  ``m(k, f, i, s)`` and agent seed ``a(k, i, s)``;
* the merge of families ``f`` and ``g`` pairs program ``i`` of ``f`` with program ``i`` of
  ``g``, with the *same* machine seeds, the *same* agent seed and a schedule seed ``z(k, i, s)``
  shared by all pairs: common random numbers throughout;
* ``V`` is the mean over programs of the antithetic pair means; a program index whose run
  failed (step limit) in any of the three conditions of a pair is left out of that pair.

Every seed derives from ``root_seed`` (:func:`pipeline.executor.derive_seed`), so the bundle is
a function of the recorded settings, whatever the executor.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Mapping
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, NamedTuple

from pipeline.errors import UsageError


@dataclass(frozen=True)
class Family:
    """A test: the accepted programs with one of ``strata`` and a length in range."""

    id: str
    title: str
    description: str
    strata: tuple[int, ...] = ()
    min_length: int = 0
    max_length: int | None = None

    def accepts(self, stratum: int, length: int) -> bool:
        """Whether a program of this stratum and length (``#`` included) belongs here."""
        if self.strata and stratum not in self.strata:
            return False
        return length >= self.min_length and (self.max_length is None or length < self.max_length)


FAMILIES: dict[str, Family] = {
    f.id: f
    for f in (
        Family(
            "copy",
            "Copy",
            "Behaviour stratum 1: the reward symbol equals the current action.",
            (1,),
        ),
        Family(
            "lagged",
            "Lagged copy",
            "Strata 2-4: the reward symbol equals the action 1, 2 or 3 cycles back.",
            (2, 3, 4),
        ),
        Family(
            "shifted",
            "Shifted copy",
            "Strata 5-8: the reward symbol is the current or "
            "previous action plus or minus one (mod n).",
            (5, 6, 7, 8),
        ),
        Family(
            "other",
            "No simple behaviour",
            "Strata 11-20: no behaviour class (any length).",
            tuple(range(11, 21)),
        ),
        Family(
            "short", "Short programs", "Any stratum, program length < 10 (with '#').", (), 0, 10
        ),
        Family(
            "long", "Long programs", "Any stratum, program length >= 24 (with '#').", (), 24, None
        ),
    )
}


@dataclass(frozen=True)
class ExperimentSettings:
    """Everything that determines the experiment's ``runs.csv`` (recorded in the manifests)."""

    tests: tuple[str, ...] = ("copy", "lagged", "shifted", "other", "short", "long")
    agent: str = "q-lambda"
    symbols: int = 5
    episode_length: int = 1000
    programs: int = 150
    seeds: int = 8
    root_seed: int = 2020
    p: float = 0.5
    merge_unit: str = "cycle"
    block: int = 500
    max_blocks: int = 400
    agent_spec: str = ""

    def __post_init__(self) -> None:
        problems = []
        unknown = [t for t in self.tests if t not in FAMILIES]
        if unknown:
            problems.append(f"unknown test(s) {', '.join(unknown)}: use {', '.join(FAMILIES)}")
        if len(set(self.tests)) != len(self.tests) or len(self.tests) < 2:
            problems.append("tests: give at least two distinct families")
        if not 0.0 < self.p < 1.0:
            problems.append("p must lie strictly between 0 and 1")
        if self.merge_unit not in ("cycle", "episode"):
            problems.append("merge_unit must be cycle (one lifetime) or episode (control)")
        for name, low in (
            ("symbols", 2),
            ("episode_length", 1),
            ("programs", 2),
            ("seeds", 1),
            ("block", 1),
            ("max_blocks", 1),
            ("root_seed", 0),
        ):
            if getattr(self, name) < low:
                problems.append(f"{name} must be >= {low}")
        if problems:
            raise UsageError("; ".join(problems), hint="see docs/similarity.md")

    def spec(self) -> Any:
        """Return the parsed agent (:class:`pipeline.metrics.aiq.agent_specs.AgentSpec`)."""
        from pipeline.metrics.aiq.agent_specs import STEP_AGENTS, parse_agent

        try:
            spec = parse_agent(self.agent_spec or self.agent, self.episode_length)
        except ValueError as exc:
            raise UsageError(str(exc)) from None
        if spec.kind not in STEP_AGENTS:
            raise UsageError(
                f"{self.agent}: the experiment runs the compiled step agents (not mc-aixi)",
                hint="use q-lambda, hlq-lambda, q0, freq or random",
            )
        return spec

    def agent_name(self) -> str:
        """Return the agent's short name (the ``agent`` column of ``runs.csv``)."""
        return str(self.spec().kind)

    def to_dict(self) -> dict[str, Any]:
        """Return the settings as recorded in TOML (the agent spec in canonical form)."""
        d = asdict(self)
        d["tests"] = list(self.tests)
        d["agent_spec"] = self.spec().text
        return d

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> ExperimentSettings:
        """Rebuild settings from :meth:`to_dict` output (``agent_spec``, when set, wins)."""
        known = {f for f in cls.__dataclass_fields__}
        extra = sorted(set(data) - known)
        if extra:
            raise UsageError(f"unknown experiment setting(s): {', '.join(extra)}")
        d = dict(data)
        d["tests"] = tuple(d.get("tests", cls.tests))
        return cls(**d)


@dataclass(frozen=True)
class ReplicateItem:
    """One unit of work for the executors: replicate ``k`` of the settings."""

    settings: dict[str, Any]
    k: int


@dataclass(frozen=True)
class ReplicateResult:
    """The ``runs.csv`` rows of one replicate and its bookkeeping."""

    rows: list[dict[str, Any]]
    drawn: int
    failed_runs: int
    total_runs: int


def _sample_families(s: ExperimentSettings, k: int) -> tuple[dict[str, list[str]], int]:
    from pipeline.metrics.aiq.bf import BFConfig
    from pipeline.metrics.aiq.sampler_fast import sample_block_fast
    from pipeline.metrics.seeds import derive_seed

    cfg = BFConfig(num_symbols=s.symbols)
    lists: dict[str, list[str]] = {f: [] for f in s.tests}
    drawn = 0
    for blk in range(s.max_blocks):
        if all(len(v) >= s.programs for v in lists.values()):
            return lists, drawn
        block = sample_block_fast(
            derive_seed(s.root_seed, "similarity", k, "sample", blk), s.block, cfg
        )
        drawn += block.drawn
        for prog, stratum in zip(block.programs, block.strata, strict=True):
            for f in s.tests:
                if len(lists[f]) < s.programs and FAMILIES[f].accepts(stratum, len(prog)):
                    lists[f].append(prog)
    if all(len(v) >= s.programs for v in lists.values()):
        return lists, drawn
    short = [f for f, v in lists.items() if len(v) < s.programs]
    raise UsageError(
        f"families {', '.join(short)} got fewer than {s.programs} programs from "
        f"{s.max_blocks} blocks",
        hint="raise max_blocks or lower programs",
    )


class _Seeds(NamedTuple):
    """Kernel seeds of one replicate, per (program index, sign); machines also per family."""

    agent: list[list[Any]]
    schedule: list[list[Any]]
    machine: dict[str, list[list[Any]]]


def _seeds(s: ExperimentSettings, k: int) -> _Seeds:
    from pipeline.metrics.aiq.bf_fast import seed64
    from pipeline.metrics.seeds import derive_seed

    def grid(*keys: str) -> list[list[Any]]:
        return [
            [seed64(derive_seed(s.root_seed, "similarity", k, *keys, i, j)) for j in range(2)]
            for i in range(s.programs)
        ]

    return _Seeds(grid("agent"), grid("schedule"), {f: grid("machine", f) for f in s.tests})


def run_replicate(item: ReplicateItem) -> ReplicateResult:
    """Run replicate ``k``: sample, score every family and every merge (picklable)."""
    import numpy as np

    from pipeline.metrics.aiq import agents_fast, merged_episode
    from pipeline.metrics.aiq.bf import BFConfig, SplitMix64
    from pipeline.metrics.aiq.bf_fast import program_arrays

    run_episode: Any = agents_fast.run_episode  # numba dispatchers: untyped for mypy
    run_merged_episode: Any = merged_episode.run_merged_episode

    s = ExperimentSettings.from_dict(item.settings)
    kind, plist = s.spec().kernel_args()
    params = np.asarray(plist, np.float64)
    c = BFConfig(num_symbols=s.symbols)
    mach = (c.num_symbols, c.obs_cells, c.reverse_output, c.work_tape_len, c.input_tape_len,
            c.max_steps)  # fmt: skip
    lists, drawn = _sample_families(s, item.k)
    progs = {f: [program_arrays(p) for p in lists[f]] for f in s.tests}
    sd = _seeds(s, item.k)  # common random numbers across families and merges
    signs = (1.0, -1.0)
    single = {f: np.empty((s.programs, 2)) for f in s.tests}
    for f in s.tests:
        for i in range(s.programs):
            for j, sign in enumerate(signs):
                single[f][i, j] = run_episode(
                    *progs[f][i], *mach, kind, params, s.episode_length, sign, 1.0,
                    sd.machine[f][i][j], sd.agent[i][j], False)[0]  # fmt: skip
    failed = sum(int(np.isnan(v).sum()) for v in single.values())
    total = 2 * s.programs * len(s.tests)
    rows: list[dict[str, Any]] = []
    for x, f in enumerate(s.tests):
        for g in s.tests[x + 1 :]:
            merged = np.empty((s.programs, 2))
            for i in range(s.programs):
                for j, sign in enumerate(signs):
                    if s.merge_unit == "episode":  # control: whole environments, no new runs
                        on_a = SplitMix64(int(sd.schedule[i][j])).uniform() < s.p
                        merged[i, j] = single[f][i, j] if on_a else single[g][i, j]
                        continue
                    merged[i, j] = run_merged_episode(
                        *progs[f][i], *progs[g][i], *mach, kind, params, s.episode_length,
                        sign, s.p, sd.machine[f][i][j], sd.machine[g][i][j], sd.agent[i][j],
                        sd.schedule[i][j])[0]  # fmt: skip
            if s.merge_unit == "cycle":
                failed += int(np.isnan(merged).sum())
                total += 2 * s.programs
            bad = np.isnan(single[f]).any(1) | np.isnan(single[g]).any(1)
            ok = ~(bad | np.isnan(merged).any(1))
            rows.append({
                "test_a": f, "test_b": g, "p": s.p, "merge": "sampling",
                "agent": s.agent_name(), "v_a": float(single[f][ok].mean()),
                "v_b": float(single[g][ok].mean()), "v_ab": float(merged[ok].mean()),
                "seed": str(item.k + 1),
            })  # fmt: skip
    return ReplicateResult(rows, drawn, failed, total)


@dataclass(frozen=True)
class ExperimentResult:
    """All replicates of one experiment."""

    settings: ExperimentSettings
    rows: list[dict[str, Any]]
    drawn: int
    failed_runs: int
    total_runs: int


def run_experiment(
    settings: ExperimentSettings,
    *,
    executor: Any = None,
    progress: Callable[[str, int, int], None] | None = None,
) -> ExperimentResult:
    """Run every replicate (in parallel through ``executor``) and collect the rows."""
    from pipeline.executor import InProcessExecutor

    settings.spec()  # a bad agent fails before any work
    items = [ReplicateItem(settings.to_dict(), k) for k in range(settings.seeds)]
    ex = executor or InProcessExecutor()
    parts = ex.map(run_replicate, items, label="similarity replicates", progress=progress)
    rows = [r for part in parts for r in part.rows]
    return ExperimentResult(
        settings,
        rows,
        sum(p.drawn for p in parts),
        sum(p.failed_runs for p in parts),
        sum(p.total_runs for p in parts),
    )


RUNS_HEADER = ("test_a", "test_b", "p", "merge", "agent", "v_a", "v_b", "v_ab", "seed")


def runs_csv(rows: list[dict[str, Any]]) -> str:
    """Return ``runs.csv`` text (floats in shortest round-trip form)."""
    lines = [",".join(RUNS_HEADER)]
    for r in rows:
        lines.append(
            ",".join(repr(r[c]) if isinstance(r[c], float) else str(r[c]) for c in RUNS_HEADER)
        )
    return "\n".join(lines) + "\n"


def settings_from_manifest(path: Path) -> ExperimentSettings:
    """Read the ``[similarity.experiment]`` table of a submission.toml or benchmark.toml."""
    return ExperimentSettings.from_dict(_experiment_table(path))


def _experiment_table(path: Path) -> dict[str, Any]:
    """The ``[similarity.experiment]`` table of a manifest; a usage error if it has none."""
    from pipeline.limits import read_toml_file

    data = read_toml_file(path, error=UsageError)
    sim = data.get("similarity", {})
    exp = sim.get("experiment") if isinstance(sim, dict) else None
    if not isinstance(exp, dict):
        raise UsageError(
            f"{path} has no [similarity.experiment] table",
            hint="give a manifest written by gmeter similarity run",
        )
    return exp


def today() -> dt.date:
    """Return today's date (a function so tests can pin it)."""
    return dt.date.today()


def experiment_from_manifest(path: Path) -> tuple[str, Any]:
    """Read ``[similarity.experiment]`` and return ``(kind, settings)`` of any experiment.

    ``kind`` is ``aiq-families`` (no ``experiment`` key: the tables written before the suites
    existed), ``classification`` or ``gym``; ``settings`` is an :class:`ExperimentSettings` or a
    :class:`pipeline.lab.similarity.suites.SuiteSettings`.
    """
    exp = _experiment_table(path)
    kind = exp.get("experiment", "aiq-families")
    if kind == "aiq-families":
        return kind, ExperimentSettings.from_dict(
            {k: v for k, v in exp.items() if k != "experiment"}
        )
    from pipeline.lab.similarity.suites import SuiteSettings

    return str(kind), SuiteSettings.from_dict(exp)
