r"""Normalised generality γ: the spread relative to what is possible at that capability.

The paper (Supplement §F.5) normalises the spread by the *interval relative squared spread*
(IRSS) over a capability range [min, min + q]: at capability Ψ the constant curve has the
squared spread :math:`S^2_{cnst}` and the increasing step (the "abstruse" extreme) twice
that. Two modes are offered:

``paper``
    The closed form per agent (the default for new benchmarks).
``grid``
    The reference code's ``PlotCapabilityVsSpread``: :math:`S^2_{cnst}` is evaluated at the
    nearest point of a 100-point capability grid (spec §7). The published figures (mean γ,
    % abstruse) need it.

Also the isometric curves of the paper's Fig. 4–5 for charts.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

import numpy as np
from numpy.typing import ArrayLike, NDArray

from pipeline.metrics.generality.rnumerics import r_seq

FloatArray = NDArray[np.float64]
Mode = Literal["paper", "grid"]

GRID_POINTS = 100
"""Size of the reference's capability grid."""
GRID_TOLERANCE = 1e-4
"""Grid values a_k in (−1e-4, 0) are rounding and become 0 (the reference's tolerance)."""


@dataclass(frozen=True)
class NormalisedGenerality:
    """Normalised generality of n agents.

    Attributes
    ----------
    gamma : ndarray
        γ = −s²; 1 for a step, 0 on the constant-curve isometric, −1 for the increasing step.
    abstruse : ndarray of bool
        S above the constant curve's spread at that capability (γ < 0 in ``paper`` mode).
    mode : str
        ``paper`` or ``grid``.
    low, high : float
        The capability range used.
    """

    gamma: FloatArray
    abstruse: NDArray[np.bool_]
    mode: str
    low: float
    high: float

    @property
    def percent_abstruse(self) -> float:
        """100 × (number abstruse) / n, as the reference prints it."""
        return 100.0 * float(np.count_nonzero(self.abstruse)) / max(self.abstruse.size, 1)


def normalised_generality(
    capability: ArrayLike,
    spread: ArrayLike,
    low: float,
    high: float,
    mode: Mode = "paper",
) -> NormalisedGenerality:
    r"""Normalised generality γ of agents with capabilities Ψ and spreads S.

    With the capability range :math:`[\ell, \ell + q]` (``low``, ``high`` with q = high − low)
    and :math:`c = \Psi - \ell`:

    .. math::

        S^2_{cnst} = c\,(q - c), \qquad S^2_{max} = 2 S^2_{cnst}, \qquad
        s^2 = \frac{S^2 - S^2_{cnst}}{S^2_{max} - S^2_{cnst}}, \qquad \gamma = -s^2

    so γ = 1 − S²/S²_cnst in ``paper`` mode. In ``grid`` mode c is replaced by the nearest
    point :math:`x_w - \ell` of the grid :math:`x = \mathrm{seq}(\ell, \ell + q, 100)` (first
    index on ties), and the squares are taken of the square roots, exactly as the reference.

    Parameters
    ----------
    capability, spread : array_like, shape (n,)
        Ψ and S of each agent (difficulty units).
    low, high : float
        The capability range (a benchmark setting: [0, 1] for ARef/Rnk/DRef, [0, n] for Opp,
        [min d, max d] for intrinsic difficulties in the reference's scenarios).
    mode : {"paper", "grid"}
        See the module docstring.

    Returns
    -------
    NormalisedGenerality

    Notes
    -----
    Range 0 ≤ ... : for curves within the range, s² ∈ [−1, 1]. Degenerate cases:

    * ``grid``: an agent whose nearest grid point is an end of the range has
      :math:`S^2_{max} - S^2_{cnst} = 0`, so γ = 0 and it is abstruse whenever S > 0 (the
      reference's behaviour; includes the S ≈ 2.9e-6 of all-correct agents in the padded
      pipeline).
    * ``paper``: with :math:`S^2_{cnst} \le 0` (Ψ at or outside an end of the range) γ = 1 when
      S = 0 (a step at the end) and NaN otherwise (IRSS undefined), abstruse when S > 0.
      Curves reaching outside the range may give |γ| > 1; the value is not clipped.
    * NaN capability or spread gives NaN γ and abstruse False.

    References
    ----------
    Hernández-Orallo et al. (2021), Supplement §F.5 (IRSS); reference code
    ``PlotCapabilityVsSpread``.
    """
    cap = np.asarray(capability, dtype=np.float64)
    spr = np.asarray(spread, dtype=np.float64)
    if cap.shape != spr.shape or cap.ndim != 1:
        raise ValueError("capability and spread must be vectors of the same length")
    if not high > low:
        raise ValueError(f"the capability range [{low}, {high}] is empty")
    if mode == "grid":
        gamma, abstruse = _grid(cap, spr, float(low), float(high))
    elif mode == "paper":
        gamma, abstruse = _paper(cap, spr, float(low), float(high))
    else:
        raise ValueError(f"unknown normalisation mode {mode!r}")
    return NormalisedGenerality(gamma, abstruse, mode, float(low), float(high))


def _grid(
    cap: FloatArray, spr: FloatArray, low: float, high: float
) -> tuple[FloatArray, NDArray[np.bool_]]:
    x = r_seq(low, high, GRID_POINTS)
    off = x - low
    a = off * ((high - low) - off)
    if np.any(a < -GRID_TOLERANCE):  # cannot happen for a proper grid; kept as R's guard
        raise ValueError("negative constant-curve variance on the grid")
    a = np.where((a < 0) & (a > -GRID_TOLERANCE), 0.0, a)
    cy = np.sqrt(a)
    ay = np.sqrt(2 * a)
    valid = ~(np.isnan(cap) | np.isnan(spr))
    w = np.zeros(cap.size, dtype=np.intp)
    if valid.any():
        w[valid] = np.argmin(np.abs(cap[valid][:, None] - x[None, :]), axis=1)
    cyw = cy[w]
    ayw = ay[w]
    den = ayw * ayw - cyw * cyw
    with np.errstate(divide="ignore", invalid="ignore"):
        ns = np.where(den == 0, 0.0, (spr * spr - cyw * cyw) / den)
    gamma = np.where(valid, 0.0 - ns, np.nan)  # 0.0 - ns: no negative zero
    abstruse = valid & (spr > cyw)
    return gamma, abstruse


def _paper(
    cap: FloatArray, spr: FloatArray, low: float, high: float
) -> tuple[FloatArray, NDArray[np.bool_]]:
    c = cap - low
    cnst = c * ((high - low) - c)
    with np.errstate(divide="ignore", invalid="ignore"):
        gamma = np.where(cnst > 0, 1.0 - (spr * spr) / cnst, np.where(spr == 0, 1.0, np.nan))
    valid = ~(np.isnan(cap) | np.isnan(spr))
    gamma = np.where(valid, gamma, np.nan)
    abstruse = valid & np.where(cnst > 0, spr * spr > cnst, spr > 0)
    return gamma, abstruse


@dataclass(frozen=True)
class Isometrics:
    r"""The paper's reference curves in the capability–spread plane (Fig. 4–5).

    Attributes
    ----------
    capability : ndarray
        The grid of capabilities over the range.
    constant : ndarray
        Spread of the constant curve, :math:`\sqrt{c(q - c)}` (γ = 0).
    maximum : ndarray
        Spread of the increasing step, :math:`\sqrt{2c(q - c)}` (γ = −1).
    """

    capability: FloatArray
    constant: FloatArray
    maximum: FloatArray


def isometric_curves(low: float, high: float, points: int = GRID_POINTS) -> Isometrics:
    r"""Compute the constant-curve and maximum-spread isometrics over [low, high].

    .. math:: S_{cnst}(\Psi) = \sqrt{(\Psi - \ell)(q - (\Psi - \ell))}, \qquad
              S_{max}(\Psi) = \sqrt{2}\, S_{cnst}(\Psi)
    """
    x = r_seq(float(low), float(high), points)
    off = x - low
    a = np.clip(off * ((high - low) - off), 0.0, None)
    return Isometrics(x, np.sqrt(a), np.sqrt(2 * a))
