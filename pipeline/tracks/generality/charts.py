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

import itertools
import math
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

import numpy as np

from pipeline.metrics.generality.curves import merge_points
from pipeline.metrics.generality.fullstudy import pad_curves
from pipeline.metrics.generality.normalised import isometric_curves
from pipeline.tracks.presentation import (
    ChartRequest,
    Citation,
    LineChart,
    Presentation,
    ScatterChart,
    as_records,
    find_setting,
    fmt,
    is_number,
)

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


# --------------------------------------------------------------------------- presentation
CURVE_LIMIT = 10
"""Most characteristic curves drawn in one chart: the most capable agents, one colour each
(the site's palette has ten); the title says how many, the board's table lists them all."""
SERIES_LIMIT = 8
"""Most bundles a capability chart tells apart by colour and shape (more: one colour)."""
POINT_LABELS = 12
"""Scatter charts with at most this many points write each point's name beside it."""


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def _pt(label: str, x: Any, y: Any, **extra: Any) -> dict[str, Any]:
    point = {"label": label, "x": x, "y": y, **extra}
    if point.get("series") == label:
        del point["label"]  # the series already names the point
    return point


def draw_acc(data: Any) -> list[ChartRequest]:
    """Each agent's characteristic curve ψ(h) as integrated (``generality_acc``)."""
    if not isinstance(data, Mapping):
        return []
    curves = [c for c in _list(data.get("curves", [])) if isinstance(c, Mapping)]
    # the most capable first (capability is the area under ψ), not the first by id
    ranked = sorted(enumerate(curves), key=lambda ic: (-_area(ic[1]), ic[0]))
    shown = [c for _, c in ranked[:CURVE_LIMIT]]
    recs = []
    for c in shown:
        agent = str(c.get("agent", ""))
        for x, y in zip(_list(c.get("x")), _list(c.get("psi")), strict=False):
            if is_number(x) and is_number(y):
                recs.append(_pt(agent, x, y, series=agent))
    if not recs:
        return []
    note = (
        f" (the {len(shown)} most capable of {len(curves)} agents)"
        if len(curves) > len(shown)
        else ""
    )
    return [
        LineChart(
            f"Agent characteristic curves{note}",
            recs,
            x=("difficulty h", "difficulty units"),
            y=("ψ(h)", "mean result, 0–1"),
            what="Each agent's characteristic curve ψ(h) as integrated, with its observed points",
            points=len(recs) <= 400,
        )
    ]


def _area(curve: Mapping[str, Any]) -> float:
    """The area under a drawn curve ψ(h) (trapezoids): the agent's capability Ψ = ∫ψ(h) dh.

    Capability is Hernández-Orallo et al.'s (2021) first indicator; ranking the drawn curves by
    it picks the agents a reader of the board looks for first.
    """
    pts = [
        (float(x), float(y))
        for x, y in zip(_list(curve.get("x")), _list(curve.get("psi")), strict=False)
        if is_number(x) and is_number(y)
    ]
    pts.sort()
    return sum((x1 - x0) * (y0 + y1) / 2 for (x0, y0), (x1, y1) in itertools.pairwise(pts))


def draw_aggregated(data: Any) -> list[ChartRequest]:
    """The curve of the column means of all agents (``generality_aggregated_acc``)."""
    if not isinstance(data, Mapping):
        return []
    recs = [
        {"x": x, "y": y}
        for x, y in zip(_list(data.get("x")), _list(data.get("psi")), strict=False)
        if is_number(x) and is_number(y)
    ]
    if not recs:
        return []
    cap, spr = data.get("capability"), data.get("spread")
    return [
        LineChart(
            f"Aggregated ACC (Ψ = {fmt(cap)}, S = {fmt(spr)})",
            recs,
            x=("difficulty h", "difficulty units"),
            y=("ψ(h)", "mean result, 0–1"),
            what="The characteristic curve of the column means of all agents",
        )
    ]


def draw_capability_spread(data: Any) -> list[ChartRequest]:
    """Capability vs spread with the isometrics, and vs normalised generality (Figs. 4–5)."""
    if not isinstance(data, Mapping):
        return []
    pts = [p for p in _list(data.get("points", [])) if isinstance(p, Mapping)]
    iso = data.get("isometrics")
    iso = iso if isinstance(iso, Mapping) else {}
    xs = _list(iso.get("capability"))
    curves: list[dict[str, Any]] = []
    for name, key in (
        ("γ = 0 (constant curve)", "constant"),
        ("γ = −1 (maximum spread)", "maximum"),
    ):
        ys = _list(iso.get(key))
        for k, (x, y) in enumerate(zip(xs, ys, strict=False)):
            if is_number(x) and is_number(y):
                curves.append({"curve": name, "x": x, "y": y, "end": k == len(xs) // 2})
    # Several bundles (e.g. humans and machines, the paper's Fig. S11): colour and shape
    # each point by its bundle, with a legend.
    bundles = sorted({str(p.get("bundle") or "") for p in pts} - {""})
    by_bundle = 2 <= len(bundles) <= SERIES_LIMIT

    def points(key: str) -> list[dict[str, Any]]:
        out: list[dict[str, Any]] = []
        for p in pts:
            if not (is_number(p.get("capability")) and is_number(p.get(key))):
                continue
            extra = {"series": str(p.get("bundle") or "")} if by_bundle else {}
            out.append(
                {"label": str(p.get("agent", "")), "x": p["capability"], "y": p[key], **extra}
            )
        return out

    labels = len(pts) <= POINT_LABELS
    legend = f"; colour and shape: bundle ({', '.join(bundles)})" if by_bundle else ""
    out: list[ChartRequest] = []
    recs = points("spread")
    if recs:
        out.append(
            ScatterChart(
                "Capability vs spread",
                recs,
                x=("capability Ψ", "difficulty units"),
                y=("spread S", "difficulty units"),
                curves=curves,
                what="dashed curves are the isometrics of normalised generality (supplement "
                "Figs. 4–5); points above the constant curve are abstruse" + legend,
                labels=labels,
                shapes=by_bundle,
            )
        )
    recs = points("normalised_generality")
    if recs:
        out.append(
            ScatterChart(
                "Capability vs normalised generality",
                recs,
                x=("capability Ψ", "difficulty units"),
                y=("normalised generality γ", "−1–1"),
                what=legend.removeprefix("; "),
                labels=labels,
                shapes=by_bundle,
                suffix="-gamma",
            )
        )
    return out


def draw_evolution(data: Any) -> list[ChartRequest]:
    """Each agent's capability at its publication date (``generality_evolution``)."""
    rows = as_records(data) or []
    recs = [
        _pt(str(r.get("agent", "")), str(r.get("date")), r.get("capability"))
        for r in rows
        if r.get("date") and is_number(r.get("capability"))
    ]
    if not recs:
        return []
    return [
        ScatterChart(
            "Capability over time",
            recs,
            x=("date", ""),
            y=("capability Ψ", "difficulty units"),
            temporal=True,
            labels=len(recs) <= 40,
            what="each agent at its publication date",
        )
    ]


def interval_note(level: str, manifest: Mapping[str, Any]) -> str:
    """Bootstrap percentile intervals over items, with the number of replicates."""
    reps = find_setting(manifest, "bootstrap")
    n = f" ({reps} replicates)" if isinstance(reps, int) and reps > 0 else ""
    return f"Intervals: {level} bootstrap percentile intervals, resampling items{n}."


METHODOLOGY = (
    "<p>Generality separates <em>how much</em> a system can do from <em>how evenly</em> it does "
    "it. Items have an intrinsic difficulty <var>h</var>; an agent's characteristic curve (ACC) "
    "ψ(<var>h</var>) is its mean result on the items of difficulty <var>h</var>, linearly "
    "interpolated between observed difficulties, saturated (ψ = 1) left of the data and zero "
    "right of it.</p>\n"
    "<div class=\"formula\">\n"
    "<p>capability Ψ = ∫<sub>0</sub><sup>∞</sup> ψ(h) dh; effort M = ∫<sub>0</sub><sup>∞</sup> h "
    "ψ(h) dh; expected difficulty H = M / Ψ;</p>\n"
    "<p>spread S = √(2M − Ψ²); generality Γ = 1 / S (infinite for a step curve);</p>\n"
    "<p>normalised generality γ = 1 − S² / S²<sub>cnst</sub>, with S²<sub>cnst</sub> = (Ψ − m)(q "
    "− (Ψ − m)) on the capability interval [m, m + q] (the paper's closed form; a benchmark may "
    "choose the reference code's variant, which evaluates S²<sub>cnst</sub> at the nearest of "
    "100 grid capabilities).</p>\n"
    "</div>\n"
    "<p>When the benchmark has no intrinsic difficulty it is derived by a transformation: "
    "<strong>ARef</strong> (a reference agent), <strong>DRef</strong> (a reference "
    "distribution), <strong>Rnk</strong> (ranks over <var>c</var> columns) or "
    "<strong>Opp</strong> (the opponent's score). Difficulties derived from the population of "
    "agents are <em>populational</em>: a new entry can change everyone's scores, and the "
    "changelog says so.</p>"
)
"""The methodology section of a generality board and of the about page (HTML)."""

CITATION = Citation(
    bibtex="""@article{hernandezorallo2021generality,
  author  = {Hern{\\'a}ndez-Orallo, Jos{\\'e} and Loe, Bao Sheng and Cheke, Lucy and
             Mart{\\'i}nez-Plumed, Fernando and {\\'O} h{\\'E}igeartaigh, Se{\\'a}n},
  title   = {General intelligence disentangled via a generality metric
             for natural and artificial intelligence},
  journal = {Scientific Reports},
  volume  = {11},
  pages   = {22822},
  year    = {2021},
  doi     = {10.1038/s41598-021-01997-7},
  url     = {https://doi.org/10.1038/s41598-021-01997-7}
}""",
    title="General intelligence disentangled via a generality metric for natural and "
    "artificial intelligence",
    kind="article",
    year=2021,
    authors=("Hernández-Orallo", "Loe", "Cheke", "Martínez-Plumed", "Ó hÉigeartaigh"),
    doi="10.1038/s41598-021-01997-7",
)

PRESENTATION = Presentation(
    charts={
        "generality_acc": draw_acc,
        "generality_aggregated_acc": draw_aggregated,
        "generality_capability_spread": draw_capability_spread,
        "generality_evolution": draw_evolution,
    },
    # the psychometric summary is in the run notes
    hidden=frozenset({"generality_psychometric"}),
    interval_note=interval_note,
    methodology=METHODOLOGY,
    citation=CITATION,
)
"""How the site shows the generality track."""
