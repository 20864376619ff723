"""Scoring of the ``generality`` track: an analysis turned into score rows and chart data.

The analysis is :mod:`pipeline.tracks.generality.analysis`; the chart data
:mod:`pipeline.tracks.generality.charts`.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from pipeline.errors import ScoringError
from pipeline.inputs import BenchmarkInput, BundleInput
from pipeline.metrics.generality.fullstudy import PAD_WIDTH
from pipeline.tracks.base import ScoreContext, ScoreRow, TrackResult
from pipeline.tracks.generality.analysis import Analysis, _seed, analyse, assemble
from pipeline.tracks.generality.data import (
    BundleData,
    ItemTable,
    coverage_problems,
    read_bundle,
    read_items,
)
from pipeline.tracks.generality.settings import METRICS, BenchmarkSettings, settings_of

STEP_SPREAD = PAD_WIDTH
"""Spread below which a curve is a step at the method's resolution (10⁻⁵ difficulty units).

The padded pipeline puts ramps 10⁻⁵ wide next to the data, so an agent that solves every
item (or none) gets S = 10⁻⁵/√12 ≈ 2.9·10⁻⁶ and Γ ≈ 3.5·10⁵ instead of the step's S = 0 and
Γ = ∞. The stored numbers stay those of the reference implementation; the rows carry a
``step`` mark and a ``display`` value with the convention (docs/generality.md §1).
"""


def _finite(x: float) -> float | None:
    return float(x) if math.isfinite(x) else None


def step_marks(spread: float, responses: np.ndarray) -> dict[str, Any] | None:
    """Return the ``step`` detail of an agent whose spread is in (0, :data:`STEP_SPREAD`).

    ``{"where": "all_solved" | "none_solved" | "step", "spread": S, "tolerance": 1e-5}``:
    ``all_solved`` when every attempted response is 1 (capability at the top of the
    difficulty range), ``none_solved`` when every one is 0 (at the bottom), else ``step``.
    ``None`` for any other agent (or an undefined spread).
    """
    if not (math.isfinite(spread) and 0.0 < spread < STEP_SPREAD):
        return None  # an exact 0 already reads as the step it is (S = 0, Γ = ∞)
    seen = responses[~np.isnan(responses)]
    where = "step"
    if seen.size and bool(np.all(seen >= 1.0)):
        where = "all_solved"
    elif seen.size and bool(np.all(seen <= 0.0)):
        where = "none_solved"
    return {"where": where, "spread": spread, "tolerance": STEP_SPREAD}


STEP_WORDS = {
    "all_solved": "perfect score (every item solved)",
    "none_solved": "no item solved",
    "step": "a step curve",
}


def _display(metric: str, step: dict[str, Any]) -> dict[str, Any] | None:
    """How the board shows a step agent's spread and generality (the raw value stays)."""
    why = (
        f"{STEP_WORDS[step['where']]}: the curve is a step, so S = 0 and Γ = ∞ by convention; "
        f"the computed spread {step['spread']:.4g} is below the method's resolution "
        f"{step['tolerance']:g} (the padded pipeline's ramps give 10⁻⁵/√12)"
    )
    if metric == "spread":
        return {"value": 0.0, "label": "step", "note": why}
    if metric == "generality":
        return {"value": "inf", "label": "step", "note": why}
    return None


def score(bench: BenchmarkInput, bundles: Sequence[BundleInput], ctx: ScoreContext) -> TrackResult:
    """Recompute the whole benchmark from all its bundles (see the module docstring)."""
    s = settings_of(bench)
    items, problems = read_items(bench.files, s)
    if problems:
        raise ScoringError(f"benchmark {bench.id}: {problems[0]}")
    result = TrackResult()
    data: list[tuple[str, BundleData]] = []
    for b in sorted(bundles, key=lambda x: x.id):
        bd, probs = read_bundle(b.files, s)
        if bd is not None:
            probs += coverage_problems(b.files, bd, items.items if items else None, s)
        errors = [p for p in probs if p.severity == "error"]
        if bd is None or errors:
            result.notes.append(f"bundle {b.id} skipped: {errors[0] if errors else 'unreadable'}")
            continue
        data.append((b.id, bd))
    if not data:
        result.notes.append("no bundle to score")
        return result
    seed = _seed(ctx.seed, bench.id)
    an = analyse(s, items, assemble(items, data), seed=seed, executor=ctx.executor)
    result.notes.extend(an.notes)
    result.rows.extend(_rows(s, an, seed))
    from pipeline.tracks.generality.charts import charts, summary_notes

    result.charts.update(charts(an))
    result.notes.extend(summary_notes(s, an))
    _psychometric(s, items, an, result)
    result.notes.append(WITHOUT_BOARD)
    return result


WITHOUT_BOARD = (
    "Case studies of the paper's supplement without a board: object recognition (A.3; humans, "
    "macaques and six deep networks, Rajalingham et al. 2018), the odour span task (A.4; 10 "
    "rats, April et al. 2013) and the physical cognition of orangutans (A.9; 53 orangutans, "
    "Damerius et al. 2018): their per-agent, per-item data are not public (the authors' "
    "repository has the scripts and plots, not the tables), so there is nothing to score "
    "(see docs/generality.md)"
)
"""The note every generality board carries about the supplement's case studies it lacks."""


def _psychometric(
    s: BenchmarkSettings, items: ItemTable | None, an: Analysis, result: TrackResult
) -> None:
    """Add the psychometric view (FA, IRT vs difficulty) as chart data and notes."""
    from pipeline.errors import GmeterError
    from pipeline.tracks.generality.psychometrics import board_view, chart_data

    fa_matrix = None
    if s.group_items and items is not None:
        from pipeline.metrics.generality.transforms import group_items

        groups: dict[str, list[int]] = {}
        for k, g in enumerate(items.column("group") or ()):
            groups.setdefault(str(g), []).append(k)
        raw = an.population.values[np.flatnonzero(an.kept)]
        fa_matrix = (group_items(raw, list(groups.values())), tuple(groups))
    try:
        view = board_view(an, fa_matrix)
    except (GmeterError, ValueError, np.linalg.LinAlgError) as exc:
        result.notes.append(f"psychometric view unavailable: {exc}")
        return
    result.charts.update(chart_data(view))
    result.notes.extend(view.notes)


def _rows(s: BenchmarkSettings, an: Analysis, seed: int) -> list[ScoreRow]:
    res = an.result
    ind = res.indicators
    norm = res.normalised
    rows: list[ScoreRow] = []
    pop = an.population
    idx = np.flatnonzero(an.kept)
    for j, k in enumerate(idx):
        agent, bundle = pop.agents[k], pop.bundles[k]
        details = {
            "transform": s.transform,
            "pipeline": s.pipeline,
            "normalisation": norm.mode,
            "capability_range": [norm.low, norm.high],
            "abstruse": bool(norm.abstruse[j]),
            "status": str(ind.status[j]),
        }
        unranked = None
        if an.missing is not None and an.missing[j] > 0:
            details["missing_items"] = int(an.missing[j])
            details["missing_policy"] = s.missing
        if s.missing == "exclude" and an.missing is not None:
            n_items = max(1, len(an.population.items))
            coverage = 1.0 - float(an.missing[j]) / n_items
            details["coverage"] = coverage
            if coverage < s.min_coverage:
                unranked = (
                    f"not ranked: answered {coverage:.1%} of the items, below the "
                    f"benchmark's minimum coverage {s.min_coverage:.0%}"
                )
        if res.capability_ci is not None:
            details["bootstrap"] = {"replicates": s.bootstrap, "seed": seed}
        step = step_marks(float(ind.spread[j]), np.asarray(an.points.responses[j], dtype=float))
        if step is not None:
            details["step"] = step

        def ci(interval: Any, j: int = j) -> tuple[float | None, float | None]:
            if interval is None:
                return None, None
            return _finite(interval.low[j]), _finite(interval.high[j])

        values = {
            "capability": (float(ind.capability[j]), ci(res.capability_ci)),
            "spread": (float(ind.spread[j]), ci(res.spread_ci)),
            "generality": (float(ind.generality[j]), (None, None)),
            "normalised_generality": (float(norm.gamma[j]), (None, None)),
            "expected_difficulty": (float(ind.expected_difficulty[j]), (None, None)),
        }
        for metric in METRICS:
            v, (lo, hi) = values[metric]
            d = dict(details)
            if unranked is not None:
                d["unranked_value"] = _finite(v)
                d["why"] = unranked
                if math.isfinite(v):  # the board shows the value, marked, and ranks nothing
                    d["display"] = {"value": v, "label": "not ranked", "note": unranked}
                rows.append(ScoreRow(bundle, agent, metric, math.nan, None, None, True, d))
                continue
            if math.isnan(v):
                d["why"] = f"undefined ({ind.status[j]})"
            shown = _display(metric, step) if step is not None else None
            if shown is None and "coverage" in d and d["coverage"] < 1.0 and math.isfinite(v):
                shown = {
                    "value": v,
                    "label": f"coverage {d['coverage']:.0%}",
                    "note": f"answered {d['coverage']:.1%} of the items; the missing ones are "
                    "left out (the benchmark's missing = 'exclude')",
                }
            if shown is not None:
                d["display"] = shown
            rows.append(ScoreRow(bundle, agent, metric, v, lo, hi, True, d))
    return rows
