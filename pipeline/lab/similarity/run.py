"""``gmeter similarity run``: the options as given, the experiment they mean, its bundle written.

:func:`plan_run` turns the command's raw options (and ``--from`` a manifest that records an
experiment) into the settings of one experiment — AIQ environment families
(:class:`~pipeline.lab.similarity.experiment.ExperimentSettings`) or a classification/Gym suite
(:class:`~pipeline.lab.similarity.suites.SuiteSettings`) — refusing options that do not apply
to it; :func:`run_planned` runs it and writes the bundle
(:mod:`pipeline.lab.similarity.bundle`, :mod:`pipeline.lab.similarity.suite_bundle`).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from pipeline.errors import UsageError
from pipeline.tracks.similarity.runs import RunsReport


@dataclass(frozen=True)
class RunOptions:
    """The options of ``gmeter similarity run`` as typed (``None``: not given)."""

    experiment: str | None = None
    from_file: Path | None = None
    tests: str | None = None
    agent: str | None = None
    programs: int | None = None
    seeds: int | None = None
    root_seed: int | None = None
    episode_length: int | None = None
    p: str | None = None
    symbols: int | None = None
    merge_unit: str | None = None
    hidden: str | None = None
    max_iter: int | None = None
    size: int | None = None
    steps: int | None = None
    eval_episodes: int | None = None
    merge: str | None = None
    alone: str | None = None


@dataclass(frozen=True)
class PlannedRun:
    """One experiment to run: ``aiq-families``, ``classification`` or ``gym``, and its settings."""

    kind: str
    settings: Any


@dataclass(frozen=True)
class RunReport:
    """What :func:`run_planned` wrote, the analysis of its runs and a one-line summary."""

    written: list[Path]
    analysis: RunsReport
    summary: str


def _floats(text: str | None, name: str) -> tuple[float, ...] | None:
    if text is None:
        return None
    try:
        return tuple(float(x) for x in text.split(",") if x.strip())
    except ValueError:
        raise UsageError(f"{name} {text!r}", hint="give numbers separated by commas") from None


def _ints(text: str | None, name: str) -> tuple[int, ...] | None:
    if text is None:
        return None
    try:
        return tuple(int(x) for x in text.split(",") if x.strip())
    except ValueError:
        raise UsageError(f"{name} {text!r}", hint="give integers separated by commas") from None


def _refuse(wrong: dict[str, Any], kind: str) -> None:
    bad = [k for k, v in wrong.items() if v is not None]
    if bad:
        raise UsageError(
            f"{', '.join(bad)} do(es) not apply to --experiment {kind}",
            hint="see gmeter similarity run --help",
        )


def plan_run(o: RunOptions) -> PlannedRun:
    """The experiment the options (over ``--from``'s recorded settings) describe.

    Raises
    ------
    UsageError
        ``--experiment`` contradicts ``--from``, a list option does not parse, or an option
        does not apply to the experiment.
    """
    from pipeline.lab.similarity.experiment import ExperimentSettings, experiment_from_manifest
    from pipeline.lab.similarity.suites import SuiteSettings

    base: Any = None
    kind = o.experiment
    if o.from_file is not None:
        found, base = experiment_from_manifest(o.from_file)
        if kind is not None and kind != found:
            raise UsageError(
                f"--experiment {kind} but {o.from_file} records a {found} experiment",
                hint="drop --experiment or give a matching file",
            )
        kind = found
    kind = kind or "aiq-families"
    tests = tuple(t.strip() for t in o.tests.split(",") if t.strip()) if o.tests else None
    if kind == "aiq-families":
        ps = _floats(o.p, "--p")
        if ps is not None and len(ps) != 1:
            raise UsageError("--p: aiq-families takes one proportion", hint="e.g. --p 0.5")
        _refuse({"--hidden": o.hidden, "--max-iter": o.max_iter, "--size": o.size,
                 "--steps": o.steps, "--eval-episodes": o.eval_episodes, "--merge": o.merge,
                 "--alone": o.alone}, kind)  # fmt: skip
        given: dict[str, Any] = {
            "agent": o.agent, "programs": o.programs, "seeds": o.seeds,
            "root_seed": o.root_seed, "episode_length": o.episode_length,
            "p": ps[0] if ps else None, "symbols": o.symbols, "merge_unit": o.merge_unit,
            "tests": tests,
        }  # fmt: skip
        base = base if base is not None else ExperimentSettings()
        changes = {k: v for k, v in given.items() if v is not None}
        if "agent" in changes:
            changes["agent_spec"] = ""
        return PlannedRun(kind, ExperimentSettings.from_dict({**asdict(base), **changes})
                          if changes else base)  # fmt: skip
    wrong = {"--agent": o.agent, "--programs": o.programs, "--episode-length": o.episode_length,
             "--symbols": o.symbols, "--merge-unit": o.merge_unit}  # fmt: skip
    given = {
        "experiment": kind, "tests": tests, "seeds": o.seeds, "root_seed": o.root_seed,
        "p": _floats(o.p, "--p"), "hidden": _ints(o.hidden, "--hidden"),
        "max_iter": o.max_iter, "size": o.size, "steps": o.steps,
        "eval_episodes": o.eval_episodes, "alone": o.alone,
        "merge": tuple(m.strip() for m in o.merge.split(",") if m.strip()) if o.merge else None,
    }  # fmt: skip
    _refuse(wrong, kind)
    own = SuiteSettings(experiment=kind).relevant()
    _refuse({f"--{k.replace('_', '-')}": v for k, v in given.items() if k not in own}, kind)
    data = base.to_dict() if base is not None else {"experiment": kind}
    return PlannedRun(kind, SuiteSettings.from_dict(
        {**data, **{k: v for k, v in given.items() if v is not None}}))  # fmt: skip


def run_planned(plan: PlannedRun, out: Path, *, contact: str, licence: str, force: bool,
                executor: Any = None, progress: Any = None) -> RunReport:
    """Run the planned experiment and write its bundle (and benchmark) under ``out``."""
    if plan.kind == "aiq-families":
        from pipeline.lab.similarity.bundle import run_and_write

        report = run_and_write(plan.settings, out, contact=contact, licence=licence, force=force,
                               executor=executor, progress=progress)  # fmt: skip
        r = report.result
        return RunReport(report.written, report.analysis,
                         f"{r.total_runs} runs, {r.failed_runs} failed at the step limit, "
                         f"{r.drawn} programs drawn")  # fmt: skip
    from pipeline.lab.similarity.suite_bundle import run_and_write_suite

    suite = run_and_write_suite(plan.settings, out, contact=contact, licence=licence,
                                force=force, executor=executor, progress=progress)  # fmt: skip
    versions = ", ".join(f"{k} {v}" for k, v in sorted(suite.result.versions.items()))
    return RunReport(suite.written, suite.analysis,
                     f"{len(suite.result.rows)} rows ({versions})")  # fmt: skip
