"""The ``aiq`` track: Legg & Veness's Algorithmic IQ on the BF reference machine.

A benchmark fixes the machine (``[aiq]`` settings) and the program sample
(``reference/programs.csv.gz``, whose strata frequencies are the :math:`p_i`). A bundle is the
output of ``gmeter aiq run``: ``aiq.toml`` (settings, seed, result), ``samples.csv`` (one row
per run) and optionally ``traces/actions.csv.gz`` (the actions of every run).

Scoring recomputes the estimate from ``samples.csv`` with the benchmark's :math:`p_i`
(:func:`pipeline.tracks.aiq.engine.estimate_from_rows`; interval from the antithetic pairs) and
replays every traced run: a bundle whose runs all replay is **verified**, one without traces
is **reported**. Charts: AIQ per agent with intervals, AIQ against episode length (paper
Fig. 1) and the program-length distribution sampled vs accepted (paper Fig. 3).
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from typing import Any

from pydantic import Field

from pipeline.errors import Problem
from pipeline.tracks.aiq.benchmark import AIQBenchmarkSettings
from pipeline.tracks.base import (
    BenchmarkInput,
    BundleInput,
    ScoreContext,
    ScoreRow,
    TrackResult,
    TrackSpec,
)
from pipeline.tracks.settings import StrictSettings

PAPER = (
    "S. Legg and J. Veness, An Approximation of the Universal Intelligence Measure, in "
    "Algorithmic Probability and Friends (Solomonoff memorial), LNCS 7070, Springer 2013"
)


_Strict = StrictSettings


class AIQSubmissionSettings(_Strict):
    """The optional ``[aiq]`` section of ``submission.toml``."""

    agent: str = Field("", max_length=2000, description="The agent and how it was configured.")
    code_url: str = Field("", max_length=500, description="Where the agent's code is published.")


# --------------------------------------------------------------------------- validation
def validate_benchmark(bench: BenchmarkInput) -> list[Problem]:
    """Check that the program sample parses and matches the declared count."""
    from pipeline.tracks.aiq.verify import benchmark_programs

    parsed, problems = benchmark_programs(bench)
    if parsed is None or problems:
        return problems
    s = bench.settings
    where = bench.files.where(str(s.get("programs", "reference/programs.csv.gz")))
    count = s.get("program_count")
    if count is not None and count != len(parsed.programs):
        problems.append(Problem(where, "program_count",
                                f"benchmark.toml says {count}, the file has "
                                f"{len(parsed.programs)}", "make them agree"))  # fmt: skip
    if not parsed.programs:
        problems.append(Problem(where, "-", "has no programs", "generate with gmeter aiq sample"))
    return problems


_COMPARED = ("num_symbols", "obs_cells", "reverse_output", "work_tape_len", "input_tape_len",
             "max_steps", "simplify", "discount", "method")  # fmt: skip


def validate_bundle(bundle: BundleInput, bench: BenchmarkInput) -> list[Problem]:
    """aiq.toml fields, samples.csv columns and values, settings equal to the benchmark's."""
    from pipeline.tracks.aiq.bundle import LOG, SAMPLES, check_log, read_log, read_rows, read_traces
    from pipeline.tracks.aiq.verify import benchmark_programs, check_programs

    fs = bundle.files
    log, problems = read_log(fs)
    parsed = read_rows(fs)
    problems += parsed.problems
    where = fs.where(LOG)
    s = bench.settings
    problems += check_log(log, where)
    if log:
        for key in ("agent", "method", "samples", "seed", "episode_length"):
            if key not in log:
                problems.append(Problem(where, key, "is missing", "regenerate with gmeter aiq run"))
        for key in _COMPARED:
            want, have = s.get(key), log.get(key)
            if have is not None and want is not None and have != want:
                problems.append(Problem(where, key, f"is {have!r}, the benchmark uses {want!r}",
                                        "rerun with the benchmark's settings"))  # fmt: skip
        els = s.get("episode_lengths") or []
        if els and log.get("episode_length") not in els:
            problems.append(Problem(where, "episode_length",
                                    f"{log.get('episode_length')!r} is not one of {els}",
                                    "use an episode length the benchmark ranks"))  # fmt: skip
        runs = len(parsed.rows)
        if parsed.rows and runs < int(s.get("min_samples", 2)):
            problems.append(
                Problem(
                    fs.where(SAMPLES),
                    "-",
                    f"has {runs} runs, the benchmark needs at least {s.get('min_samples')}",
                    "rerun with more --samples",
                )
            )
    progs, more = benchmark_programs(bench)
    if progs is not None and not more and parsed.rows:
        method = str(log.get("method", s.get("method", "stratified")))
        problems += check_programs(parsed, progs, method, fs.where(SAMPLES))
    _, _, more = read_traces(fs)
    problems += more
    return problems


def verify_bundle(bundle: BundleInput, benchmark: BenchmarkInput | None = None) -> Any:
    """Replay verification (see :mod:`pipeline.tracks.aiq.verify`)."""
    from pipeline.tracks.aiq.verify import verify_bundle as _verify

    return _verify(bundle, benchmark)


# --------------------------------------------------------------------------- scoring
def score_bundle(item: tuple[BundleInput, BenchmarkInput]) -> dict[str, Any]:
    """Score one bundle (module level: runs on the executor). Returns a JSON-ready record."""
    from pipeline.metrics.aiq.estimator import stage_schedule
    from pipeline.metrics.aiq.sampler import stratum_probabilities
    from pipeline.tracks.aiq.bundle import check_log, read_log, read_rows
    from pipeline.tracks.aiq.engine import estimate_from_rows
    from pipeline.tracks.aiq.verify import benchmark_programs, verify_files

    bundle, bench = item
    log, _ = read_log(bundle.files)
    parsed = read_rows(bundle.files)
    progs, _ = benchmark_programs(bench)
    if not log or not parsed.rows or progs is None:
        return {"bundle": bundle.id, "skip": "aiq.toml, samples.csv or the program sample is "
                "unreadable"}  # fmt: skip
    bad = check_log(log, bundle.files.where("aiq.toml"))
    if bad:
        return {"bundle": bundle.id, "skip": str(bad[0])}
    p = stratum_probabilities(progs.strata)
    method = str(log.get("method", "stratified"))
    budget = int(log.get("samples", len(parsed.rows)))
    m = len(progs.programs)
    stages = stage_schedule(sum(1 for x in p if x > 0), budget, m) if method == "stratified" else []
    try:
        est = estimate_from_rows(method, parsed.rows, p, stages, m)
    except ValueError as exc:
        return {"bundle": bundle.id, "skip": str(exc)}
    ver = verify_files(bundle.files, bench)
    errors = [str(x) for x in ver.problems if x.severity == "error"]
    logged = log.get("result", {}).get("aiq") if isinstance(log.get("result"), dict) else None
    return {
        "bundle": bundle.id,
        "agent": bundle.system,
        "value": est.value,
        "ci_low": est.ci_low,
        "ci_high": est.ci_high,
        "verified": ver.verified,
        "details": {
            "episode_length": log.get("episode_length"),
            "agent_spec": log.get("agent"),
            "method": method,
            "runs": len(parsed.rows),
            "pairs": est.pairs,
            "failed_runs": sum(r.status != "ok" for r in parsed.rows),
            "half_ci": est.half_ci,
            "legacy_half_ci": est.legacy_half_ci,
            "se_p": est.se_p,
            "seed": log.get("seed"),
            "logged_aiq": logged,
            "replayed_runs": ver.replayed,
            "status": "verified" if ver.verified else ("replay failed" if errors and
                                                        ver.has_traces else "reported"),
            "replay_errors": errors[:5],
            "strata": [{"stratum": r.stratum, "p": r.p, "pairs": r.pairs, "mean": r.mean}
                       for r in est.strata],
        },
    }  # fmt: skip


def _finite(x: Any) -> float | None:
    return float(x) if isinstance(x, int | float) and math.isfinite(x) else None


def score(bench: BenchmarkInput, bundles: Sequence[BundleInput], ctx: ScoreContext) -> TrackResult:
    """Recompute every bundle's AIQ, replay its traces, and build the chart data."""
    from pipeline.executor import InProcessExecutor

    ex = ctx.executor or InProcessExecutor()
    ordered = sorted(bundles, key=lambda b: b.id)
    records = ex.map(score_bundle, [(b, bench) for b in ordered], label="aiq score",
                     progress=ctx.progress)  # fmt: skip
    result = TrackResult(notes=[
        "AIQ = Σ p_i × mean pair score of stratum i; 95% interval from the antithetic pairs "
        "(the original's printed interval, ≈ √2 too narrow, is in details.legacy_half_ci)"
    ])  # fmt: skip
    per_agent: list[dict[str, Any]] = []
    by_length: list[dict[str, Any]] = []
    for rec in records:
        if "skip" in rec:
            result.notes.append(f"{rec['bundle']}: not scored ({rec['skip']})")
            continue
        d = rec["details"]
        result.rows.append(
            ScoreRow(
                rec["bundle"],
                rec["agent"],
                "aiq",
                rec["value"],
                rec["ci_low"],
                rec["ci_high"],
                rec["verified"],
                d,
            )
        )
        if d["status"] == "replay failed":
            result.notes.append(f"{rec['bundle']}: replay failed: {d['replay_errors'][0]}")
        point = {"agent": rec["agent"], "bundle": rec["bundle"],
                 "episode_length": d["episode_length"], "aiq": _finite(rec["value"]),
                 "ci_low": _finite(rec["ci_low"]), "ci_high": _finite(rec["ci_high"]),
                 "verified": rec["verified"]}  # fmt: skip
        per_agent.append(point)
        kind = str(d.get("agent_spec") or "").split(",")[0]
        by_length.append({**point, "series": kind or rec["agent"]})
    result.charts["aiq_by_agent"] = {
        "title": "AIQ per agent with 95% intervals",
        "records": per_agent,
    }
    result.charts["aiq_vs_episode_length"] = {
        "title": "AIQ against episode length (Legg & Veness Fig. 1)",
        "x": {"field": "episode_length", "label": "episode length", "unit": "cycles"},
        "y": {"field": "aiq", "label": "AIQ", "unit": "reward per cycle"},
        "records": sorted(by_length, key=lambda r: (r["series"], r["episode_length"] or 0))
        + _paper_points(bench),
    }
    lengths = _length_distribution(bench)
    if lengths:
        result.charts["aiq_program_lengths"] = lengths
    return result


def _paper_points(bench: BenchmarkInput) -> list[dict[str, Any]]:
    """Return the paper's AIQ per agent and episode length (for the paper's BF(5) only)."""
    from pipeline.metrics.aiq.agent_specs import PAPER_AIQ

    s = bench.settings
    paper_machine = dict(num_symbols=5, obs_cells=1, reverse_output=False, max_steps=1000,
                         discount=1.0, simplify="single-pass")  # fmt: skip
    if any(s.get(k, v) != v for k, v in paper_machine.items()):
        return []
    return [
        {"agent": f"{agent} (paper)", "series": f"paper {agent}", "episode_length": el,
         "aiq": value, "ci_low": None, "ci_high": None, "verified": False, "source": "paper"}
        for el, row in sorted(PAPER_AIQ.items()) for agent, value in row.items()
    ]  # fmt: skip


def _length_distribution(bench: BenchmarkInput) -> dict[str, Any] | None:
    """Program-length distribution sampled vs accepted (paper Fig. 3) from sampler.json."""
    path = str(bench.settings.get("sampler_file", "reference/sampler.json"))
    if not bench.files.has(path):
        return None
    try:
        stats = json.loads(bench.files.text(path))
        drawn = [int(x) for x in stats["hist_drawn"]]
        accepted = [int(x) for x in stats["hist_accepted"]]
    except (ValueError, KeyError, TypeError, UnicodeDecodeError):
        return None
    records = []
    for series, hist in (("sampled", drawn), ("accepted", accepted)):
        total = sum(hist) or 1
        for length, count in enumerate(hist):
            if count:
                records.append({"series": series, "length": length, "fraction": count / total})
    return {
        "title": "Program length: all sampled vs accepted (Legg & Veness Fig. 3)",
        "x": {"field": "length", "label": "program length", "unit": "symbols (last bin ≥ 100)"},
        "y": {"field": "fraction", "label": "fraction of programs", "unit": ""},
        "records": records,
        "drawn": stats.get("drawn"),
        "rejected": stats.get("rejected"),
    }


def bundle_template() -> dict[str, str]:
    """Return the files ``gmeter new`` writes into a new AIQ bundle (then run gmeter aiq run)."""
    return {
        "submission.toml": (
            "\n[aiq]\n"
            'agent = "TODO: the agent and its parameters"\n'
            'code_url = ""\n'
            "# then: gmeter aiq run --agent SPEC --episode-length 1000 --samples 10000 "
            "--seed S --out <this folder> --traces\n"
        ),
    }


def benchmark_template() -> dict[str, str]:
    """Return the ``[aiq]`` section ``gmeter new`` writes into a new benchmark."""
    return {
        "benchmark.toml": (
            "\n[aiq]\n"
            "num_symbols = 5\nobs_cells = 1\nreverse_output = false\n"
            'simplify = "single-pass"\ndiscount = 1.0\nepisode_lengths = [1000]\n'
            'programs = "reference/programs.csv.gz"\n'
            "# draw it with: gmeter aiq sample --count 100000 --seed 1 --out <folder>/reference\n"
        ),
    }


TRACK = TrackSpec(
    name="aiq",
    title="AIQ",
    paper=PAPER,
    primary_metric="aiq",
    secondary_metrics=(),
    benchmark_settings=AIQBenchmarkSettings,
    submission_settings=AIQSubmissionSettings,
    validate_benchmark=validate_benchmark,
    validate_bundle=validate_bundle,
    score=score,
    bundle_template=bundle_template,
    benchmark_template=benchmark_template,
)
