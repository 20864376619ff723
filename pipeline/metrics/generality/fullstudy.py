r"""The reference's padded "full study" pipeline and its small helpers.

``PerformFullStudy`` in the reference code (spec §4.2) does not integrate the raw curve: it
first pads every agent's curve with an optimistic left block and a pessimistic right tail
between limits derived from the quantiles of the item difficulties, then calls the core
indicators (:func:`pipeline.metrics.generality.curves.curve_indicators`) on the padded points. The
published OpenML iris and mazes numbers need exactly this.

Also here: ``BinDifficulties`` (with the reference's bin labelling, replicated). R's type-7
quantile, ``seq`` and ``rowMeans`` live in :mod:`pipeline.metrics.generality.rnumerics`.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike, NDArray

from pipeline.metrics.generality.curves import CurveIndicators, curve_indicators
from pipeline.metrics.generality.rnumerics import r_quantile7, r_row_means, r_seq

__all__ = [
    "PAD_WIDTH",
    "PaddingLimits",
    "bin_difficulties",
    "pad_curves",
    "padded_indicators",
    "padding_limits",
    "r_quantile7",
    "r_row_means",
    "r_seq",
]

FloatArray = NDArray[np.float64]

PAD_WIDTH = 0.00001
"""Width of the ramps the padded pipeline puts next to the data (the reference's 1e-5)."""


@dataclass(frozen=True)
class PaddingLimits:
    """The integration limits of the padded pipeline (spec §4.2 step 2)."""

    kmin: float
    kmax: float


def padding_limits(difficulty: ArrayLike) -> PaddingLimits:
    r"""``calculateLIMITSforPlots(method="INTERQUANTILE")`` of the reference.

    .. math::

        K_{max} &= \max\big(q_{50} + 2(q_{95} - q_{05}),\ \max d\big) \\
        K_{min} &= \begin{cases} 0 & \min d \ge 0 \\
                   \min\big(q_{50} - 2(q_{95} - q_{05}),\ \min d\big) & \text{otherwise}
                   \end{cases}

    with :math:`q_p` R's type-7 quantiles of the item difficulties d.
    """
    d = np.asarray(difficulty, dtype=np.float64)
    q05 = r_quantile7(d, 0.05)
    q50 = r_quantile7(d, 0.5)
    q95 = r_quantile7(d, 0.95)
    dmin = float(d.min())
    dmax = float(d.max())
    kmax = q50 + 2 * (q95 - q05)
    if dmax > kmax:
        kmax = dmax
    kmin = q50 - 2 * (q95 - q05)
    if dmin < kmin:
        kmin = dmin
    if dmin >= 0:
        kmin = 0.0
    return PaddingLimits(kmin, kmax)


def pad_curves(
    difficulty: ArrayLike, responses: ArrayLike, limits: PaddingLimits
) -> tuple[FloatArray, FloatArray]:
    r"""``OptimisticallyExtrapolateACC``: add two saturated and two zero points.

    .. math:: d^P = (K_{min},\ \min d - 10^{-5},\ d,\ \max d + 10^{-5},\ K_{max}),\qquad
              y^P_j = (1, 1, y_j, 0, 0)
    """
    d = np.asarray(difficulty, dtype=np.float64)
    y = np.atleast_2d(np.asarray(responses, dtype=np.float64))
    dmin = float(d.min())
    dmax = float(d.max())
    dp = np.concatenate(([limits.kmin, dmin - PAD_WIDTH], d, [dmax + PAD_WIDTH, limits.kmax]))
    n = y.shape[0]
    yp = np.concatenate((np.ones((n, 2)), y, np.zeros((n, 2))), axis=1)
    return dp, yp


def padded_indicators(
    difficulty: ArrayLike,
    responses: ArrayLike,
    limits: PaddingLimits | None = None,
    *,
    exact: bool = True,
) -> CurveIndicators:
    r"""Compute indicators through the reference's padded pipeline (``PerformFullStudy``).

    The curves are padded (:func:`pad_curves`) and integrated with kmin = :math:`K_{min}`
    and kmax = :math:`K_{max}` (:func:`padding_limits` unless given).

    Parameters
    ----------
    difficulty : array_like, shape (P,)
        Item difficulties.
    responses : array_like, shape (n, P)
        Responses in [0, 1] (NaN = not attempted; the pads are always present).
    limits : PaddingLimits, optional
        Override the limits (they normally come from the difficulties alone).
    exact : bool
        R-rounded merging (see :func:`pipeline.metrics.generality.curves.curve_indicators`).

    Returns
    -------
    CurveIndicators

    Notes
    -----
    Consequences the reference has and this function keeps (spec §4.2): Ψ differs from the
    direct pipeline by O(1e-5); when min d = K_min = 0 the pad (0, 1) merges with the items at
    difficulty 0 and the pad at −1e-5 is truncated; when K_max = max d the pad (K_max, 0) merges
    with the items at max d. All-correct and all-wrong agents get S ≈ 1e-5/√12 instead of 0.

    References
    ----------
    Hernández-Orallo et al. (2021), Supplement §F; reference code ``PerformFullStudy``.
    """
    d = np.asarray(difficulty, dtype=np.float64)
    lim = limits or padding_limits(d)
    dp, yp = pad_curves(d, responses, lim)
    return curve_indicators(dp, yp, kmin=lim.kmin, kmax=lim.kmax, exact=exact)


def bin_difficulties(difficulty: ArrayLike, nbins: int) -> FloatArray:
    r"""``BinDifficulties`` of the reference, labelling quirk included (spec §8.7).

    Breaks are :math:`\mathrm{seq}(\min d - 10^{-5}, \max d + 10^{-5}, \text{length}=B)`
    (so B − 1 intervals :math:`(b_k, b_{k+1}]`), and interval k (1-based) is labelled
    :math:`\min d + w(k - 1/2)` with :math:`w = (\max d - \min d)/B`. The labels are not the
    interval centres; this is kept so the reference's binned scenarios reproduce.
    """
    d = np.asarray(difficulty, dtype=np.float64)
    if nbins < 2:
        raise ValueError("BinDifficulties needs at least 2 bins")
    dmin = float(d.min())
    dmax = float(d.max())
    w = (dmax - dmin) / nbins
    breaks = r_seq(dmin - PAD_WIDTH, dmax + PAD_WIDTH, nbins)
    # R's cut(right=TRUE): interval k holds (b_k, b_{k+1}].
    code = np.searchsorted(breaks, d, side="left")
    out: FloatArray = np.asarray(dmin + w * (code - 0.5), dtype=np.float64)
    return out
