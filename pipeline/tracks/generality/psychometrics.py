"""The psychometric view of a generality board: factor analysis and IRT beside generality.

The supplement of Hernández-Orallo et al. (2021) compares generality with what a
psychometrician would compute instead: a first factor (loadings, variance explained) and 2PL
IRT difficulties against the intrinsic difficulty. This module builds the "psychometric" chart
data and notes of every generality board (:func:`board_view`); ``gmeter fa`` and ``gmeter irt``
on any response file are :mod:`pipeline.lab.generality.psychometrics`.

Minimum sizes (the paper's Table 1 is not public in our sources; its supplement F.4 names
Osborne & Costello 2004 and Morizot et al. 2009): factor analysis needs at least
:data:`FA_MIN_AGENTS` agents and :data:`FA_MIN_ITEMS` varying items; 2PL IRT needs
:data:`IRT_MIN_AGENTS` agents (Morizot et al. recommend a few hundred) and
:data:`IRT_MIN_ITEMS` varying items. Below these the board says so instead of printing numbers.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from pipeline.errors import GmeterError
from pipeline.metrics.generality.factor import minres
from pipeline.metrics.generality.irt import fit_irt

if TYPE_CHECKING:
    from pipeline.tracks.generality.analysis import Analysis

FA_MIN_AGENTS = 20
FA_MIN_ITEMS = 5
IRT_MIN_AGENTS = 100
IRT_MIN_ITEMS = 5
#: The board fits IRT only up to this many item × agent cells (the MML fit, its item fit and
#: standard errors grow with items² × agents); larger benchmarks get a note pointing at
#: ``gmeter irt``.
IRT_BOARD_MAX_CELLS = 20000
#: Transforms whose per-item responses are correct/incorrect-like values in [0, 1].
IRT_TRANSFORMS = ("intrinsic", "irt")


def _num(x: float) -> float | None:
    return float(x) if math.isfinite(float(x)) else None


# ------------------------------------------------------------------ the board
@dataclass(frozen=True)
class BoardView:
    """The psychometric chart data and notes of one generality board."""

    chart: dict[str, Any]
    notes: list[str]


def _pearson(x: np.ndarray, y: np.ndarray) -> float:
    r"""Pearson's :math:`r = \sum \tilde x \tilde y / \sqrt{\sum \tilde x^2 \sum \tilde y^2}`.

    :math:`\tilde x = x - \bar x`, each deviation scaled by its largest magnitude first (as
    ``scipy.stats.pearsonr`` does, against overflow); clipped to [-1, 1].
    """
    dx, dy = x - x.mean(), y - y.mean()
    dx, dy = dx / np.abs(dx).max(), dy / np.abs(dy).max()
    r = float(np.dot(dx, dy) / (np.linalg.norm(dx) * np.linalg.norm(dy)))
    return max(-1.0, min(1.0, r))


def _average_ranks(x: np.ndarray) -> np.ndarray:
    """Ranks 1..n of ``x``, tied values given the mean of their ranks (Spearman's convention)."""
    order = np.argsort(x, kind="mergesort")
    sorted_x = x[order]
    starts = np.flatnonzero(np.r_[True, sorted_x[1:] != sorted_x[:-1]])
    ends = np.r_[starts[1:], x.size]  # a tie group's positions are starts..ends-1 (0-based)
    mean_rank = (starts + ends + 1) / 2.0
    ranks = np.empty(x.size)
    ranks[order] = np.repeat(mean_rank, ends - starts)
    return ranks


def _pearson_spearman(x: np.ndarray, y: np.ndarray) -> tuple[float, float]:
    """Pearson's r and Spearman's rho (Pearson's r of the average ranks); NaN when undefined.

    In numpy, not ``scipy.stats`` (which ``score`` would spend 0.7 s importing for these two).
    """
    x, y = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    if x.size < 3 or np.ptp(x) == 0 or np.ptp(y) == 0:
        return math.nan, math.nan
    return _pearson(x, y), _pearson(_average_ranks(x), _average_ranks(y))


WHAT_GENERALITY_ADDS = (
    "Factor analysis and IRT describe the items and how they covary across the population; "
    "generality describes each agent: how its successes concentrate on the easy items "
    "(a step-like curve) rather than being scattered across difficulties, whatever the "
    "population — so it is not a relabelled g factor."
)


def board_view(
    an: Analysis, fa_matrix: tuple[np.ndarray, tuple[str, ...]] | None = None
) -> BoardView:
    """FA summary and IRT-vs-difficulty scatter for a scored benchmark (or why not).

    FA runs on the raw response matrix of the scored agents with complete responses (or on
    ``fa_matrix``, e.g. group means); IRT only where the per-item responses are in [0, 1]
    (transforms intrinsic and irt). The benchmark's own difficulty of an item is that of its
    first point.
    """
    pop = an.population
    kept = np.flatnonzero(an.kept)
    raw = pop.values[kept]
    fa_values, fa_items = fa_matrix if fa_matrix is not None else (raw, tuple(pop.items))
    transform = getattr(an.points, "kind", "")
    chart: dict[str, Any] = {"what_generality_adds": WHAT_GENERALITY_ADDS}
    notes: list[str] = []
    complete = fa_values[~np.isnan(fa_values).any(axis=1)] if fa_values.size else fa_values
    varying = int((np.nanstd(complete, axis=0) > 0).sum()) if complete.size else 0
    if complete.shape[0] < FA_MIN_AGENTS or varying < FA_MIN_ITEMS:
        msg = (
            f"psychometric view: too small for factor analysis ({complete.shape[0]} agents "
            f"with complete responses, {varying} varying items; at least {FA_MIN_AGENTS} and "
            f"{FA_MIN_ITEMS} needed)"
        )
        notes.append(msg)
        chart["fa"] = {"status": "too_small", "message": msg}
    else:
        try:
            fa = minres(complete, fa_items, 1)
        except GmeterError as exc:
            notes.append(f"psychometric view: factor analysis failed ({exc})")
            chart["fa"] = {"status": "failed", "message": str(exc)}
        else:
            first = fa.first
            chart["fa"] = {
                "status": "ok",
                "n_agents": fa.n_agents,
                "mean_loading": _num(first.mean()),
                "min_loading": _num(first.min()),
                "max_loading": _num(first.max()),
                "variance_explained": _num(fa.variance_explained[0]),
                "dropped_constant_items": len(fa.dropped),
                "bars": [
                    {"item": i, "loading": _num(v)} for i, v in zip(fa.items, first, strict=True)
                ],
            }
            notes.append(
                f"psychometric view: one-factor minres FA on {fa.n_agents} agents × "
                f"{len(fa.items)} items: mean loading {first.mean():.3f} (from "
                f"{first.min():.3f} to {first.max():.3f}), first factor explains "
                f"{fa.variance_explained[0]:.3f} of the variance"
            )
            notes += [f"psychometric view, factor analysis: {w}" for w in fa.warnings]
            notes += _tetrachoric_fa(complete, fa_items, chart["fa"])
    if transform not in IRT_TRANSFORMS:
        msg = (
            f"psychometric view: no IRT — the {transform or 'declared'} transform's "
            "responses are not per-item successes in [0, 1]"
        )
        notes.append(msg)
        chart["irt"] = {"status": "not_applicable", "message": msg}
    elif raw.shape[0] < IRT_MIN_AGENTS:
        msg = (
            f"psychometric view: too small for 2PL IRT ({raw.shape[0]} agents; at least "
            f"{IRT_MIN_AGENTS} needed)"
        )
        notes.append(msg)
        chart["irt"] = {"status": "too_small", "message": msg}
    elif an.irt is None and raw.size > IRT_BOARD_MAX_CELLS:
        msg = (
            f"psychometric view: IRT not run on the board ({raw.shape[0]} agents × "
            f"{raw.shape[1]} items is beyond its time budget); run `gmeter irt` on the responses"
        )
        notes.append(msg)
        chart["irt"] = {"status": "skipped", "message": msg}
    else:
        chart["irt"], more = _irt_panel(an, raw, tuple(pop.items))
        notes += more
    notes += _per_bundle_fa(an, fa_matrix is None)
    notes.append(WHAT_GENERALITY_ADDS)
    return BoardView(chart, notes)


def _tetrachoric_fa(
    values: np.ndarray, items: tuple[str, ...], panel: dict[str, Any]
) -> list[str]:
    """On 0/1 responses, FA on tetrachoric correlations too (what psychometrics reports)."""
    if not np.isin(values, (0.0, 1.0)).all():
        return []
    try:
        fa = minres(values, items, 1, "tetrachoric")
    except GmeterError:
        return []
    first = fa.first
    panel["tetrachoric"] = {
        "mean_loading": _num(first.mean()),
        "min_loading": _num(first.min()),
        "max_loading": _num(first.max()),
        "variance_explained": _num(fa.variance_explained[0]),
        "corrected_pairs": fa.corrected_pairs,
        "smoothed": fa.smoothed,
    }
    return [
        f"psychometric view: on tetrachoric correlations (0/1 items; R psych's defaults) the "
        f"mean loading is {first.mean():.3f} (from {first.min():.3f} to {first.max():.3f}) "
        f"and the first factor explains {fa.variance_explained[0]:.3f}: Pearson (phi) "
        "correlations of pass/fail items understate the loadings"
    ] + [
        f"psychometric view, tetrachoric factor analysis: {w}"
        for w in fa.warnings
        if not w.startswith("small sample")  # said once, by the Pearson analysis
    ]


def _per_bundle_fa(an: Analysis, raw_items: bool) -> list[str]:
    """FA within each bundle big enough (e.g. humans and machines separately, Fig. S11)."""
    pop = an.population
    kept = np.flatnonzero(an.kept)
    bundles = [pop.bundles[k] for k in kept]
    if not raw_items or len(set(bundles)) < 2:
        return []
    notes = []
    for b in sorted(set(bundles)):
        rows = pop.values[[k for k, bb in zip(kept, bundles, strict=True) if bb == b]]
        rows = rows[~np.isnan(rows).any(axis=1)]
        if rows.shape[0] < FA_MIN_AGENTS or int((rows.std(axis=0) > 0).sum()) < FA_MIN_ITEMS:
            notes.append(f"psychometric view: bundle {b} alone is too small for factor analysis")
            continue
        try:
            fa = minres(rows, tuple(pop.items), 1)
        except GmeterError:
            continue
        first = fa.first
        notes.append(
            f"psychometric view, bundle {b} alone ({fa.n_agents} agents): mean loading "
            f"{first.mean():.3f} (from {first.min():.3f} to {first.max():.3f}), first factor "
            f"explains {fa.variance_explained[0]:.3f} of the variance"
        )
    return notes


def _irt_panel(
    an: Analysis, raw: np.ndarray, items: tuple[str, ...]
) -> tuple[dict[str, Any], list[str]]:
    fit = an.irt
    try:
        if fit is None:
            fit = fit_irt(np.where(np.isnan(raw), np.nan, np.clip(raw, 0, 1)), items, "2pl")
    except GmeterError as exc:
        return {"status": "failed", "message": str(exc)}, [f"psychometric view: IRT failed ({exc})"]
    pts = an.points
    own: dict[str, float] = {}
    for d, k in zip(pts.difficulty, pts.item_index, strict=True):
        if k >= 0 and items[int(k)] not in own:
            own[items[int(k)]] = float(d)
    names = [i for i in fit.items if i in own]
    b = np.array([fit.difficulty[fit.items.index(i)] for i in names])
    d = np.array([own[i] for i in names])
    p = np.array([fit.p_correct[fit.items.index(i)] for i in names])
    if len(fit.items) < IRT_MIN_ITEMS:
        msg = f"psychometric view: too few varying items for IRT ({len(fit.items)})"
        return {"status": "too_small", "message": msg}, [msg]
    r_d, rho_d = _pearson_spearman(b, d)
    r_p, rho_p = _pearson_spearman(b, p)
    panel = {
        "status": "ok",
        "model": fit.model,
        "pearson": _num(r_d),
        "spearman": _num(rho_d),
        "pearson_mean_response": _num(r_p),
        "spearman_mean_response": _num(rho_p),
        "dropped_items": len(fit.dropped),
        "converged": fit.convergence.converged,
        "reliability_empirical": _num(fit.reliability_empirical),
        "reliability_marginal": _num(fit.reliability_marginal),
        "warnings": list(fit.warnings),
        "points": [
            {
                "item": i,
                "difficulty": _num(dd),
                "irt_difficulty": _num(bb),
                "irt_difficulty_se": _num(float(fit.difficulty_se[fit.items.index(i)])),
                "discrimination": _num(float(fit.discrimination[fit.items.index(i)])),
                "discrimination_se": _num(float(fit.discrimination_se[fit.items.index(i)])),
                "mean_response": _num(pp),
                "flags": " ".join(fit.flags[fit.items.index(i)]),
            }
            for i, dd, bb, pp in zip(names, d, b, p, strict=True)
        ],
    }
    se = fit.difficulty_se[np.isfinite(fit.difficulty_se)]
    notes = [
        f"psychometric view: 2PL IRT difficulty vs the benchmark's difficulty over "
        f"{len(names)} items: Pearson {r_d:.2f}, Spearman {rho_d:.2f}; vs the item mean "
        f"response: Pearson {r_p:.2f}",
        "psychometric view: 2PL IRT "
        + ("converged" if fit.convergence.converged else "did NOT converge")
        + (f"; median standard error of a difficulty {np.median(se):.2f} logits" if se.size else "")
        + f"; reliability {fit.reliability_empirical:.2f} (empirical), "
        f"{fit.reliability_marginal:.2f} (marginal)",
    ]
    notes += [f"psychometric view, IRT: {w}" for w in fit.warnings]
    return panel, notes


def chart_data(view: BoardView) -> dict[str, Any]:
    """The board's chart entries: the summary, the loadings bars and the IRT scatter.

    ``generality_psychometric`` is the machine-readable summary (statuses, FA numbers, IRT
    correlations); the two others use shapes the site's generic charts draw (bars of one text
    and one number; a scatter with ``x``/``y`` fields).
    """
    out: dict[str, Any] = {"generality_psychometric": view.chart}
    fa = view.chart.get("fa", {})
    if fa.get("status") == "ok":
        out["generality_psychometric_loadings"] = {
            "title": (
                f"First-factor loadings (minres): mean {fa['mean_loading']:.3f}, "
                f"variance explained {fa['variance_explained']:.3f}"
            ),
            "value": {"label": "loading", "unit": ""},
            "records": fa["bars"],
        }
    irt = view.chart.get("irt", {})
    if irt.get("status") == "ok":
        r, rho = irt["pearson"], irt["spearman"]
        out["generality_psychometric_irt"] = {
            "title": (
                "2PL IRT difficulty against the benchmark's difficulty (Pearson "
                + ("—" if r is None else f"{r:.2f}")
                + ", Spearman "
                + ("—" if rho is None else f"{rho:.2f}")
                + ")"
            ),
            "x": {"field": "difficulty", "label": "benchmark difficulty", "unit": ""},
            "y": {"field": "irt_difficulty", "label": "2PL IRT difficulty", "unit": "logits"},
            "records": irt["points"],
        }
    return out
