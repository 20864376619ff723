r"""A whole generality study: points → indicators → normalised generality → bootstrap.

:func:`run_study` takes the points of a transformation
(:mod:`pipeline.metrics.generality.transforms`)
and the options a benchmark declares, and returns every per-agent number the track stores,
plus the aggregated curve (the ACC of the column means) and seeded bootstrap intervals over
items for capability and spread.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

import numpy as np
from numpy.typing import NDArray

from pipeline.metrics.generality.curves import CurveIndicators, curve_indicators
from pipeline.metrics.generality.fullstudy import PaddingLimits, padded_indicators, padding_limits
from pipeline.metrics.generality.normalised import Mode, NormalisedGenerality, normalised_generality
from pipeline.metrics.generality.transforms import ANCHOR, Points
from pipeline.metrics.parallel import MapFn, serial_map

FloatArray = NDArray[np.float64]


@dataclass(frozen=True)
class StudyOptions:
    """How to compute a study (the benchmark's declared settings).

    Attributes
    ----------
    pipeline : {"direct", "padded"}
        ``direct``: the curves as given, between ``kmin`` and ``kmax``. ``padded``: the
        reference's full study
        (:func:`pipeline.metrics.generality.fullstudy.padded_indicators`), whose
        limits come from the difficulties (``kmin``/``kmax`` are then ignored).
    kmin, kmax : float or None
        Integration limits of the direct pipeline (see
        :func:`pipeline.metrics.generality.curves.curve_indicators`).
    normalisation : {"paper", "grid"}
        Normalised generality mode.
    capability_range : tuple of float or None
        Range [low, high] for γ; None takes the transformation's natural range.
    bootstrap : int
        Bootstrap replicates over items (0 = no intervals).
    confidence : float
        Two-sided level of the percentile intervals.
    seed : int
        Seed of the bootstrap's ``numpy.random.Generator``.
    """

    pipeline: Literal["direct", "padded"] = "direct"
    kmin: float | None = None
    kmax: float | None = None
    normalisation: Mode = "paper"
    capability_range: tuple[float, float] | None = None
    bootstrap: int = 0
    confidence: float = 0.95
    seed: int = 0


@dataclass(frozen=True)
class Interval:
    """Percentile bootstrap intervals per agent (NaN where not estimable)."""

    low: FloatArray
    high: FloatArray


@dataclass(frozen=True)
class StudyResult:
    """Everything a study computes.

    Attributes
    ----------
    indicators : CurveIndicators
        Per-agent Ψ, expected difficulty, S, Γ.
    normalised : NormalisedGenerality
        Per-agent γ and the abstruse flag.
    aggregated : CurveIndicators
        Indicators of the aggregated curve (the mean response of all agents per point).
    capability_ci, spread_ci : Interval or None
        Bootstrap intervals (None without bootstrap).
    limits : PaddingLimits or None
        The padded pipeline's limits (None for ``direct``).
    capability_range : tuple of float
        The γ range used.
    options : StudyOptions
        The options, stored with the result (the seed included).
    """

    indicators: CurveIndicators
    normalised: NormalisedGenerality
    aggregated: CurveIndicators
    capability_ci: Interval | None
    spread_ci: Interval | None
    limits: PaddingLimits | None
    capability_range: tuple[float, float]
    options: StudyOptions


def _indicators(
    d: FloatArray, y: FloatArray, opts: StudyOptions, exact: bool = True
) -> CurveIndicators:
    if opts.pipeline == "padded":
        return padded_indicators(d, y, exact=exact)
    return curve_indicators(d, y, opts.kmin, opts.kmax, exact=exact)


def _safe_indicators(
    d: FloatArray, y: FloatArray, opts: StudyOptions, exact: bool = True
) -> CurveIndicators:
    """As :func:`_indicators`, with NaN for agents that answered none of the points."""
    empty = np.isnan(y).all(axis=1)
    if not empty.any():
        return _indicators(d, y, opts, exact)
    n = y.shape[0]
    nan = np.full(n, np.nan)
    out = CurveIndicators(
        nan.copy(), nan.copy(), nan.copy(), nan.copy(), nan.copy(), np.full(n, "no_items")
    )
    if (~empty).any():
        part = _indicators(d, y[~empty], opts, exact)
        for name in (
            "capability",
            "expected_difficulty",
            "spread",
            "generality",
            "spread_squared",
            "status",
        ):
            getattr(out, name)[~empty] = getattr(part, name)
    return out


def run_study(points: Points, options: StudyOptions, map_fn: MapFn | None = None) -> StudyResult:
    """Compute the indicators, γ, the aggregated curve and bootstrap intervals of a study.

    Parameters
    ----------
    points : Points
        The transformed responses.
    options : StudyOptions
        The benchmark's settings.
    map_fn : MapFn, optional
        Runs the bootstrap chunks (an executor's ``map``, :mod:`pipeline.metrics.parallel`);
        in-process when None.

    Returns
    -------
    StudyResult

    Notes
    -----
    The bootstrap draws items with replacement (B × m indices; replicates come in chunks of
    ``BOOTSTRAP_CHUNK``, chunk k seeded with ``SeedSequence(seed).spawn(...)[k]`` so the
    intervals do not depend on the executor), keeps each drawn item's points (and the fixed anchor
    points), recomputes the indicators through the same pipeline and reports percentile
    intervals. Item difficulties are those of the full population (a transformation is not
    re-run per replicate). An agent with no answered item in a replicate is left out of that
    replicate. Replicates merge with double-precision means (``exact=False``): faster, and
    an ulp does not matter to an interval.
    """
    d = points.difficulty
    y = points.responses
    if y.shape[0] == 0:
        raise ValueError("no agents")
    ind = _safe_indicators(d, y, options)
    low, high = options.capability_range or points.capability_range
    norm = normalised_generality(ind.capability, ind.spread, low, high, options.normalisation)
    with np.errstate(invalid="ignore"):
        col_means = np.nanmean(np.where(np.isnan(y).all(axis=0), 0.0, y), axis=0)
    agg = _indicators(d, col_means[None, :], options)
    limits = (
        padding_limits(d[points.item_index != ANCHOR]) if options.pipeline == "padded" else None
    )
    cap_ci = spr_ci = None
    if options.bootstrap > 0 and points.n_items > 0:
        cap_ci, spr_ci = _bootstrap(points, options, map_fn)
    return StudyResult(ind, norm, agg, cap_ci, spr_ci, limits, (float(low), float(high)), options)


BOOTSTRAP_CHUNK = 25
"""Replicates per work item; each item has its own seed, so results do not depend on workers."""


def _bootstrap(
    points: Points, opts: StudyOptions, map_fn: MapFn | None
) -> tuple[Interval, Interval]:

    sizes = [
        min(BOOTSTRAP_CHUNK, opts.bootstrap - k) for k in range(0, opts.bootstrap, BOOTSTRAP_CHUNK)
    ]
    seeds = np.random.SeedSequence(opts.seed).spawn(len(sizes))
    work = [(points, opts, seed, size) for seed, size in zip(seeds, sizes, strict=True)]
    parts = (map_fn or serial_map)(_bootstrap_chunk, work, label="bootstrap")
    caps = np.concatenate([p[0] for p in parts])
    sprs = np.concatenate([p[1] for p in parts])
    alpha = (1 - opts.confidence) / 2
    return _interval(caps, alpha), _interval(sprs, alpha)


def _bootstrap_chunk(
    work: tuple[Points, StudyOptions, np.random.SeedSequence, int],
) -> tuple[FloatArray, FloatArray]:
    """Capabilities and spreads of ``size`` replicates (rows) drawn with one seed."""
    points, opts, seed, size = work
    m = points.n_items
    rng = np.random.default_rng(seed)
    draws = rng.integers(0, m, size=(size, m))
    idx = points.item_index
    anchors = np.flatnonzero(idx == ANCHOR)
    order = np.argsort(idx, kind="stable")
    sorted_idx = idx[order]
    first = np.searchsorted(sorted_idx, np.arange(m), side="left")
    last = np.searchsorted(sorted_idx, np.arange(m), side="right")
    n = points.responses.shape[0]
    caps = np.full((size, n), np.nan)
    sprs = np.full((size, n), np.nan)
    for b in range(size):
        cols = np.concatenate((anchors, order[_ranges(first, last, np.sort(draws[b]))]))
        r = _safe_indicators(points.difficulty[cols], points.responses[:, cols], opts, exact=False)
        caps[b] = r.capability
        sprs[b] = r.spread
    return caps, sprs


def _ranges(
    first: NDArray[np.intp], last: NDArray[np.intp], pick: NDArray[np.int64]
) -> NDArray[np.intp]:
    """Concatenate ``arange(first[i], last[i])`` for each i in ``pick``, without a Python loop."""
    lens = (last - first)[pick]
    total = int(lens.sum())
    offsets = np.concatenate(([0], np.cumsum(lens)[:-1]))
    return np.repeat(first[pick] - offsets, lens) + np.arange(total)


def _interval(samples: FloatArray, alpha: float) -> Interval:
    ok = ~np.isnan(samples).all(axis=0)
    lo = np.full(samples.shape[1], np.nan)
    hi = np.full(samples.shape[1], np.nan)
    if ok.any():
        lo[ok] = np.nanquantile(samples[:, ok], alpha, axis=0)
        hi[ok] = np.nanquantile(samples[:, ok], 1 - alpha, axis=0)
    return Interval(lo, hi)
