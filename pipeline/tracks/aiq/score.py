"""Scoring of the ``aiq`` track: every bundle's AIQ recomputed from its log, replayed, charted.

:func:`estimate_from_rows` is the estimate of a logged test (the same function ``gmeter aiq
run`` reports with); :func:`score` recomputes it for every bundle with the benchmark's
:math:`p_i`, replays the traces (:mod:`pipeline.tracks.aiq.verify`) and builds the chart data.
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from typing import Any

from pipeline.inputs import BenchmarkInput, BundleInput
from pipeline.metrics.aiq.estimator import (
    AIQEstimate,
    estimate_mc,
    estimate_mc_pairs,
    estimate_stratified,
)
from pipeline.tracks.aiq.bundle import STATUS_OK, SampleRow
from pipeline.tracks.aiq.settings import AIQBenchmarkSettings, settings_of
from pipeline.tracks.base import ScoreContext, ScoreRow, TrackResult


def pairs_by_stratum(rows: Sequence[SampleRow]) -> dict[int, dict[int, tuple[float, float]]]:
    """Successful antithetic pairs: stratum → program id → (score +, score −)."""
    plus: dict[int, SampleRow] = {}
    minus: dict[int, SampleRow] = {}
    for r in rows:
        if r.status == STATUS_OK:
            (plus if r.sign > 0 else minus)[r.program_id] = r
    out: dict[int, dict[int, tuple[float, float]]] = {}
    for pid, a in plus.items():
        b = minus.get(pid)
        if b is not None:
            out.setdefault(a.stratum, {})[pid] = (a.reward, b.reward)
    return out


def pair_lists(
    pairs: dict[int, dict[int, tuple[float, float]]],
) -> dict[int, list[tuple[float, float]]]:
    """Stratum → pairs in program-id order (the order every estimate sums in)."""
    return {s: [d[pid] for pid in sorted(d)] for s, d in pairs.items()}


def estimate_from_rows(
    method: str,
    rows: Sequence[SampleRow],
    p: Sequence[float],
    stages: Sequence[int] = (),
    num_programs: int | None = None,
) -> AIQEstimate:
    """Return the estimate of a logged test (what the scorer recomputes from ``samples.csv``).

    Sums run in program-id order, so the value does not depend on the order of the rows.
    """
    if method == "stratified":
        return estimate_stratified(
            p,
            pair_lists(pairs_by_stratum(rows)),
            legacy_runs=stages[-1] if stages else None,
            num_programs=num_programs,
        )
    if method == "mc-antithetic":
        by_pid = {pid: v for d in pairs_by_stratum(rows).values() for pid, v in d.items()}
        return estimate_mc_pairs([by_pid[pid] for pid in sorted(by_pid)])
    ok = sorted((r.program_id, r.reward) for r in rows if r.status == STATUS_OK)
    return estimate_mc([x for _, x in ok])


def run_weights(method: str, rows: Sequence[SampleRow], p: Sequence[float]) -> list[float]:
    r"""Each logged run's weight :math:`w_j` in the estimate: :math:`\hat\Upsilon = \sum_j w_j r_j`.

    Stratified: a run of a successful antithetic pair in stratum :math:`i` with
    :math:`k_i` such pairs weighs :math:`p_i / 2k_i`; mc-antithetic: :math:`1/2k` over the
    :math:`k` successful pairs; mc: :math:`1/n` over the :math:`n` successful runs. Runs that
    do not count (overtime, or the other run of their pair overtime) weigh 0. The weights sum
    to 1, so :math:`\sum_j w_j r_j / \sum_j w_j` reproduces the AIQ (rliable and any
    weighted mean read ``samples.csv`` this way).
    """
    pairs = pairs_by_stratum(rows)
    if method == "stratified":
        share = {(pid, s): p[s] / (2 * len(d)) for s, d in pairs.items() for pid in d}
    elif method == "mc-antithetic":
        k = sum(len(d) for d in pairs.values())
        share = {(pid, s): 1 / (2 * k) for s, d in pairs.items() for pid in d}
    else:
        n = sum(r.status == STATUS_OK for r in rows)
        return [1 / n if r.status == STATUS_OK else 0.0 for r in rows]
    return [share.get((r.program_id, r.stratum), 0.0) for r in rows]


# --------------------------------------------------------------------------- scoring
def score_bundle(
    item: tuple[BundleInput, BenchmarkInput] | tuple[BundleInput, BenchmarkInput, Any],
) -> dict[str, Any]:
    """Score one bundle (module level: runs on the executor). Returns a JSON-ready record.

    A third item is the bundle's kept verification (or ``None``); a verification made here is
    returned under ``"verification"`` for the caller to keep.
    """
    from pipeline.metrics.aiq.estimator import stage_schedule
    from pipeline.metrics.aiq.sampler import stratum_probabilities
    from pipeline.tracks.aiq.bundle import read_rows
    from pipeline.tracks.aiq.settings import check_log, read_log
    from pipeline.tracks.aiq.verify import benchmark_programs, verify_reusing

    bundle, bench = item[0], item[1]
    kept = item[2] if len(item) > 2 else None
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
    ver, record = verify_reusing(bundle.files, bench, kept)
    errors = [str(x) for x in ver.problems if x.severity == "error"]
    training = log.get("training")
    more = {"training": training} if isinstance(training, dict) else {}
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
            **more,
        },
        "verification": record,
    }  # fmt: skip


def _finite(x: Any) -> float | None:
    return float(x) if isinstance(x, int | float) and math.isfinite(x) else None


def score(bench: BenchmarkInput, bundles: Sequence[BundleInput], ctx: ScoreContext) -> TrackResult:
    """Recompute every bundle's AIQ, replay its traces, and build the chart data."""
    from pipeline.executor import InProcessExecutor
    from pipeline.tracks.aiq.verify import VERIFIER, verification_context

    s = settings_of(bench)
    ex = ctx.executor or InProcessExecutor()
    ordered = sorted(bundles, key=lambda b: b.id)
    # Each bundle version is replayed once per program sample and machine version: kept
    # results travel with the items, fresh ones come back and are kept.
    context = verification_context(bench)
    keys = {b.id: (b.content_hash, context) for b in ordered if b.content_hash}
    memo = ctx.verifications
    kept = memo.recall(VERIFIER, sorted(set(keys.values()))) if memo and keys else {}
    items = [(b, bench, kept.get(keys[b.id]) if b.id in keys else None) for b in ordered]
    records = ex.map(score_bundle, items, label="aiq score", progress=ctx.progress)
    fresh = {keys[r["bundle"]]: (bool(r["verified"]), r["verification"]) for r in records
             if r.get("verification") is not None and r["bundle"] in keys}  # fmt: skip
    if memo and fresh:
        memo.keep(VERIFIER, fresh)
    result = TrackResult(notes=[_method_note(s.method)])
    per_agent: list[dict[str, Any]] = []
    by_length: list[dict[str, Any]] = []
    searches: list[dict[str, Any]] = []
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
        search = _mc_aixi_search(d.get("agent_spec"))
        if search is not None:
            searches.append({**point, **search})
        if search is None or search["paper_settings"]:
            by_length.append({**point, "series": kind or rec["agent"]})
    result.charts["aiq_by_agent"] = {
        "title": "AIQ per agent with 95% intervals",
        "records": per_agent,
    }
    if by_length:  # the paper's curves alone (a Fig. 2 board) would compare nothing
        result.charts["aiq_vs_episode_length"] = {
            "title": "AIQ against episode length (Legg & Veness Fig. 1)",
            "x": {"field": "episode_length", "label": "episode length", "unit": "cycles"},
            "y": {"field": "aiq", "label": "AIQ", "unit": "reward per cycle"},
            "records": sorted(by_length, key=lambda r: (r["series"], r["episode_length"] or 0))
            + _paper_points(s),
        }
    depth_search = _depth_search(searches)
    if depth_search:
        result.charts["aiq_depth_search"] = depth_search
    lengths = _length_distribution(bench, s.sampler_file)
    if lengths:
        result.charts["aiq_program_lengths"] = lengths
    return result


def _method_note(method: str) -> str:
    """The board's note on what the AIQ and its interval are, for the benchmark's method."""
    if method == "mc-antithetic":
        return ("AIQ = mean over the programs (in file order) of the antithetic pair means; 95% "
                "interval from the spread of those pair means (simple Monte Carlo, no strata)")
    if method == "mc":
        return "AIQ = mean score of single runs with random reward signs; 95% normal interval"
    return ("AIQ = Σ p_i × mean pair score of stratum i; 95% interval from the antithetic pairs "
            "(the original's printed interval, ≈ √2 too narrow, is in details.legacy_half_ci)")


def _mc_aixi_search(spec_text: Any) -> dict[str, Any] | None:
    """MC-AIXI's search settings from a logged agent spec (None for other agents)."""
    from pipeline.metrics.aiq.agent_specs import MC_AIXI_DEFAULTS, parse_agent

    if not isinstance(spec_text, str) or not spec_text.startswith("mc-aixi"):
        return None
    try:
        spec = parse_agent(spec_text)
    except ValueError:
        return None
    p = dict(spec.params)
    paper = all(p[k] == MC_AIXI_DEFAULTS[k] for k in ("depth", "simulations", "horizon"))
    return {"depth": int(p["depth"]), "simulations": int(p["simulations"]),
            "horizon": int(p["horizon"]), "paper_settings": paper}  # fmt: skip


def _depth_search(points: Sequence[dict[str, Any]]) -> dict[str, Any] | None:
    """MC-AIXI's AIQ against context depth, one series per number of simulations (Fig. 2).

    Only when the board holds MC-AIXI at two or more depths or numbers of simulations; points
    of a horizon or episode length other than the most common one are left out.
    """
    from collections import Counter

    if len({(p["depth"], p["simulations"]) for p in points}) < 2:
        return None
    horizon, el = Counter((p["horizon"], p["episode_length"]) for p in points).most_common(1)[0][0]
    records = sorted(
        ({**p, "series": f"{p['simulations']} simulations"} for p in points
         if p["horizon"] == horizon and p["episode_length"] == el),
        key=lambda r: (r["simulations"], r["depth"]),
    )  # fmt: skip
    return {
        "title": f"MC-AIXI: AIQ against context depth and search (Legg & Veness Fig. 2), "
        f"{el} cycles, horizon {horizon}",
        "x": {"field": "depth", "label": "context depth", "unit": "bits"},
        "y": {"field": "aiq", "label": "AIQ", "unit": "reward per cycle"},
        "records": records,
    }


def _paper_points(s: AIQBenchmarkSettings) -> list[dict[str, Any]]:
    """Return the paper's AIQ per agent and episode length (for the paper's BF(5) only)."""
    from pipeline.metrics.aiq.agent_specs import PAPER_AIQ, PAPER_AIQ_MC_AIXI

    paper_machine = dict(num_symbols=5, obs_cells=1, reverse_output=False, max_steps=1000,
                         discount=1.0, simplify="single-pass")  # fmt: skip
    if any(getattr(s, k) != v for k, v in paper_machine.items()):
        return []
    return [
        {"agent": f"{agent} (paper)", "series": f"paper {agent}", "episode_length": el,
         "aiq": value, "ci_low": None, "ci_high": None, "verified": False, "source": "paper"}
        for el, row in sorted(PAPER_AIQ.items())
        for agent, value in [*row.items(), ("mc-aixi", PAPER_AIQ_MC_AIXI[el])]
    ]  # fmt: skip


def _length_distribution(bench: BenchmarkInput, path: str) -> dict[str, Any] | None:
    """Program-length distribution sampled vs accepted (paper Fig. 3) from sampler.json."""
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
