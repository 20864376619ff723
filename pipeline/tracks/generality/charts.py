"""Chart data and summary notes of the generality track (JSON-ready, no plotting here).

Charts (keys of ``TrackResult.charts``, read by :mod:`pipeline.site.charts`):

``generality_acc``
    Each agent's characteristic curve as integrated: the merged points (x = difficulty,
    psi = mean response), with the saturated block from kmin and cut at kmax.
``generality_aggregated_acc``
    The curve of the column means (every agent's mean response per point) and its Ψ and S.
``generality_capability_spread``
    Capability vs spread (and normalised generality) per agent, with the paper's isometric
    curves (Fig. 4–5): the constant curve (γ = 0) and the maximum spread (γ = −1).
``generality_evolution``
    Per agent with a date (``agents.csv``): the indicators over time, sorted by date.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

import numpy as np

from pipeline.metrics.generality.curves import merge_points
from pipeline.metrics.generality.fullstudy import pad_curves
from pipeline.metrics.generality.normalised import isometric_curves

if TYPE_CHECKING:
    from pipeline.tracks.generality.analysis import Analysis
    from pipeline.tracks.generality.settings import BenchmarkSettings


def _num(x: float) -> float | None:
    """Return a JSON-safe number: 10 significant digits; inf and NaN become None."""
    x = float(x)
    return float(f"{x:.10g}") if math.isfinite(x) else None


def _curve(
    u: np.ndarray, psi: np.ndarray, kmin: float | None, kmax: float | None
) -> tuple[list[float | None], list[float | None]]:
    x = list(u)
    y = list(psi)
    if kmin is not None and kmin < u[0]:
        x = [kmin, float(u[0]), *x]
        y = [1.0, 1.0, *y]
    elif kmin is not None and kmin > u[0]:
        keep = [k for k, v in enumerate(x) if v >= kmin] or [len(x) - 1]
        x = [x[k] for k in keep]
        y = [y[k] for k in keep]
    if kmax is not None and kmax < u[-1]:
        keep = [k for k, v in enumerate(x) if v <= kmax] or [0]
        x = [x[k] for k in keep]
        y = [y[k] for k in keep]
    return [_num(v) for v in x], [_num(v) for v in y]


def _limits(an: Analysis) -> tuple[float | None, float | None]:
    res = an.result
    if res.limits is not None:
        return res.limits.kmin, res.limits.kmax
    return res.options.kmin, res.options.kmax


def charts(an: Analysis) -> dict[str, Any]:
    """Build every chart's data from an analysis."""
    res = an.result
    pop = an.population
    pts = an.points
    kept = np.flatnonzero(an.kept)
    agents = [pop.agents[k] for k in kept]
    bundles = [pop.bundles[k] for k in kept]
    kmin, kmax = _limits(an)
    d, y = pts.difficulty, pts.responses
    if res.limits is not None:
        d, y = pad_curves(d, y, res.limits)
    curves: list[dict[str, Any]] = []
    missing = np.isnan(y)
    patterns, inverse = np.unique(~missing, axis=0, return_inverse=True)
    inverse = inverse.ravel()
    by_row: dict[int, tuple[list[float | None], list[float | None]]] = {}
    for p in range(patterns.shape[0]):
        rows = np.flatnonzero(inverse == p)
        cols = np.flatnonzero(patterns[p])
        if cols.size == 0:
            continue
        merged = merge_points(d[cols], y[np.ix_(rows, cols)])
        for r, psi in zip(rows, merged.response, strict=True):
            by_row[int(r)] = _curve(merged.difficulty, psi, kmin, kmax)
    for j, (agent, bundle) in enumerate(zip(agents, bundles, strict=True)):
        x, psi = by_row.get(j, ([], []))
        curves.append({"agent": agent, "bundle": bundle, "x": x, "psi": psi})
    with np.errstate(invalid="ignore"):
        col_means = np.nanmean(np.where(missing.all(axis=0), 0.0, y), axis=0)
    agg = merge_points(d, col_means[None, :])
    ax, apsi = _curve(agg.difficulty, agg.response[0], kmin, kmax)
    ind, norm = res.indicators, res.normalised
    iso = isometric_curves(*res.capability_range)
    points = [
        {
            "agent": agents[j],
            "bundle": bundles[j],
            "capability": _num(ind.capability[j]),
            "spread": _num(ind.spread[j]),
            "generality": _num(ind.generality[j]),
            "normalised_generality": _num(norm.gamma[j]),
            "expected_difficulty": _num(ind.expected_difficulty[j]),
            "abstruse": bool(norm.abstruse[j]),
        }
        for j in range(len(agents))
    ]
    out: dict[str, Any] = {
        "generality_acc": {
            "kmin": _num_or_none(kmin),
            "kmax": _num_or_none(kmax),
            "curves": curves,
        },
        "generality_aggregated_acc": {
            "x": ax,
            "psi": apsi,
            "capability": _num(res.aggregated.capability[0]),
            "spread": _num(res.aggregated.spread[0]),
        },
        "generality_capability_spread": {
            "range": list(res.capability_range),
            "normalisation": norm.mode,
            "points": points,
            "isometrics": {
                "capability": [_num(v) for v in iso.capability],
                "constant": [_num(v) for v in iso.constant],
                "maximum": [_num(v) for v in iso.maximum],
            },
        },
    }
    dated = [
        dict(p, date=pop.dates[agents[j]]) for j, p in enumerate(points) if agents[j] in pop.dates
    ]
    if dated:
        out["generality_evolution"] = sorted(dated, key=lambda p: (str(p["date"]), str(p["agent"])))
    return out


def _num_or_none(x: float | None) -> float | None:
    return None if x is None else _num(x)


def summary_notes(s: BenchmarkSettings, an: Analysis) -> list[str]:
    """Human-readable summary lines (the reference's printed summaries)."""
    res = an.result
    ind, norm = res.indicators, res.normalised
    lo, hi = res.capability_range
    notes = [
        f"transform {s.transform}, {s.pipeline} pipeline, normalisation {norm.mode} on "
        f"[{lo:g}, {hi:g}]",
        f"{len(ind.capability)} agents: mean capability {np.nanmean(ind.capability):.4g}, "
        f"mean spread {np.nanmean(ind.spread):.4g}, mean normalised generality "
        f"{np.nanmean(norm.gamma):.4g}, {norm.percent_abstruse:.2f} % abstruse "
        f"({int(norm.abstruse.sum())} of {norm.abstruse.size})",
        f"aggregated curve: capability {res.aggregated.capability[0]:.6g}, spread "
        f"{res.aggregated.spread[0]:.6g}",
    ]
    if res.limits is not None:
        notes.append(f"padded limits: kmin {res.limits.kmin:g}, kmax {res.limits.kmax:.6g}")
    return notes
