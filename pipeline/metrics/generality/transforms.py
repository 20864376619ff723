r"""Transformations: from raw results to (difficulty, response) points (spec §8).

The generality indicators need, for each agent, responses in [0, 1] on items with a
difficulty. Where the benchmark has no intrinsic difficulty, the paper (main text, Table 1)
derives one from a population or a reference:

=========  ==================================================================  ===========
name       difficulty of a point                                               γ range
=========  ==================================================================  ===========
intrinsic  given per item; responses optionally binarised with a threshold ε   [min, max]
ARef       1 − share of the other agents beating a reference agent on the item  [0, 1]
Rnk        grid column g of an item; passed below the agent's rank percentile  [0, 1]
DRef       grid column g of a category; passed below the reference CDF value   [0, 1]
Opp        the opponent's tournament score (from a crosstable)                 [0, n]
=========  ==================================================================  ===========

Each function returns a :class:`Points` set: one difficulty per point, one response per
agent and point (NaN = not attempted), and which original item each point belongs to (so a
bootstrap can resample items). Every comparison uses the reference code's arithmetic, since
exact float ties decide 0.5 responses.

Minimum sensible sizes (rules of thumb, Supplement §F.4): a population transformation (ARef,
Rnk, Opp) needs enough agents for its difficulties to mean anything — with m agents a Rnk
percentile moves in steps of 1/m and an ARef difficulty in steps of 1/(m − 1); c should exceed
the number of agents so that the grid resolves every rank (c = 100 in the paper).

References
----------
Hernández-Orallo et al. (2021), main text Table 1 and Supplement §F.4; reference code
``GenerateBinarisedResponsesAndDifficultiesFromCrispReference``,
``GenerateStepwiseResponsesAndDifficultiesFromOrder``,
``GenerateStepwiseResponsesAndDifficultiesFromDistributionalReference``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np
from numpy.typing import ArrayLike, NDArray

from pipeline.metrics.generality.rnumerics import r_row_means, r_seq

FloatArray = NDArray[np.float64]
ArefConvention = Literal["greater_butequalhalf", "greater_or_equal", "greater"]
ANCHOR = -1
"""``item_index`` of points that belong to no item (the Opp end points)."""


@dataclass(frozen=True)
class Points:
    """Difficulty/response points of n agents after a transformation.

    Attributes
    ----------
    difficulty : ndarray, shape (P,)
        Difficulty of each point.
    responses : ndarray, shape (n, P)
        Responses in [0, 1]; NaN where the agent did not attempt the item.
    item_index : ndarray of int, shape (P,)
        The original item of each point (0-based), or ``ANCHOR`` (−1) for fixed points.
    capability_range : tuple of float
        The transformation's natural capability range for normalised generality.
    kind : str
        ``intrinsic``, ``aref``, ``rnk``, ``dref`` or ``opp``.
    extras : dict
        Per-transformation by-products for reports (``item_difficulty``, ``mapped``, ``scores``).
    """

    difficulty: FloatArray
    responses: FloatArray
    item_index: NDArray[np.int64]
    capability_range: tuple[float, float]
    kind: str
    extras: dict[str, Any] = field(default_factory=dict)

    @property
    def n_items(self) -> int:
        """Number of original items."""
        return int(self.item_index.max()) + 1 if self.item_index.size else 0


def _matrix(values: ArrayLike) -> FloatArray:
    x = np.atleast_2d(np.asarray(values, dtype=np.float64))
    if x.ndim != 2:
        raise ValueError("expected an agents × items matrix")
    if np.isinf(x).any():
        raise ValueError("values must be finite (NaN marks a missing value)")
    return x


def intrinsic(responses: ArrayLike, difficulty: ArrayLike, epsilon: float | None = None) -> Points:
    r"""Items with an intrinsic difficulty; responses used as they are or binarised.

    .. math:: y'_{ji} = [\, y_{ji} \ge 1 - \varepsilon \,] \quad\text{(only if ε is given)}

    Parameters
    ----------
    responses : array_like, shape (n, m)
        Responses in [0, 1] (NaN = missing).
    difficulty : array_like, shape (m,)
        One finite difficulty per item.
    epsilon : float, optional
        Binarisation threshold of the paper's :math:`A = [E[r] \ge 1 - \varepsilon]`; None keeps
        graded responses (the reference never binarises).
    """
    y = _matrix(responses)
    d = np.asarray(difficulty, dtype=np.float64)
    if d.shape != (y.shape[1],) or not np.isfinite(d).all():
        raise ValueError("need one finite difficulty per item")
    if epsilon is not None:
        if not 0 <= epsilon < 1:
            raise ValueError("epsilon must lie in [0, 1)")
        y = np.where(np.isnan(y), np.nan, (y >= 1 - epsilon).astype(np.float64))
    idx = np.arange(d.size, dtype=np.int64)
    return Points(d, y, idx, (float(d.min()), float(d.max())), "intrinsic")


def aref(
    scores: ArrayLike,
    reference_row: int,
    convention: ArefConvention = "greater_butequalhalf",
) -> Points:
    r"""ARef: binarise against a reference agent; difficulty from the other agents (spec §8.1).

    .. math::

        b_{ji} = \tfrac12\big([r_{ji} > r_{\rho i}] + [r_{ji} \ge r_{\rho i}]\big), \qquad
        h_i = 1 - \frac{1}{|J_i|}\sum_{j \in J_i} b_{ji}

    for ``greater_butequalhalf`` (1 above the reference ρ, 0.5 on a tie, 0 below), where
    :math:`J_i` are the agents other than ρ that have a score on item i. ``greater_or_equal``
    uses :math:`[r \ge r_\rho]` and ``greater`` :math:`[r > r_\rho]`.

    The reference agent stays in the analysis (all 0.5 under the default convention) but is
    left out of the difficulty. The mean is R's ``colMeans`` (long-double sum and division).

    Parameters
    ----------
    scores : array_like, shape (n, m)
        Raw scores, higher is better, any scale; NaN = missing (the reference must have all).
    reference_row : int
        Row of the reference agent.
    convention : str
        The tie convention.

    Notes
    -----
    Items no other agent has a score on get no difficulty and are dropped (``extras
    ["dropped_items"]``). Minimum sensible size: a few agents besides the reference; with m
    of them the difficulties lie on the grid k/(2m).
    """
    r = _matrix(scores)
    n = r.shape[0]
    if not 0 <= reference_row < n:
        raise ValueError("reference row out of range")
    ref = r[reference_row]
    if np.isnan(ref).any():
        raise ValueError("the reference agent must have a score on every item")
    missing = np.isnan(r)
    gt = (r > ref).astype(np.float64)
    ge = (r >= ref).astype(np.float64)
    if convention == "greater_butequalhalf":
        b = (gt + ge) / 2
    elif convention == "greater_or_equal":
        b = ge
    elif convention == "greater":
        b = gt
    else:
        raise ValueError(f"unknown ARef convention {convention!r}")
    b[missing] = np.nan
    others = np.ones(n, dtype=bool)
    others[reference_row] = False
    bo = b[others]
    present = ~np.isnan(bo)
    count = present.sum(axis=0)
    sums = np.where(present, bo, 0.0).astype(np.longdouble).sum(axis=0)
    keep = count > 0
    with np.errstate(invalid="ignore", divide="ignore"):
        share = (sums / np.maximum(count, 1).astype(np.longdouble)).astype(np.float64)
    h = 1 - share
    cols = np.flatnonzero(keep)
    return Points(
        h[cols],
        b[:, cols],
        np.arange(cols.size, dtype=np.int64),
        (0.0, 1.0),
        "aref",
        {"item_difficulty": h[cols], "kept_items": cols, "dropped_items": np.flatnonzero(~keep)},
    )


def rank_percentiles(scores: ArrayLike) -> FloatArray:
    r"""Mid-rank percentile of each score in its item's population (the agent counts itself).

    .. math:: p_{ji} = \frac{\#\{k: r_{ki} < r_{ji}\}}{m_i}
              + \frac{0.5\,\#\{k: r_{ki} = r_{ji}\}}{m_i}

    with :math:`m_i` the agents having a score on item i, evaluated exactly in this order (float
    ties with the grid depend on it). NaN stays NaN.
    """
    r = _matrix(scores)
    out = np.full(r.shape, np.nan)
    for i in range(r.shape[1]):
        col = r[:, i]
        ok = ~np.isnan(col)
        s = np.sort(col[ok])
        mi = s.size
        less = np.searchsorted(s, col[ok], side="left").astype(np.float64)
        eq = np.searchsorted(s, col[ok], side="right") - less
        out[ok, i] = less / mi + (0.5 * eq) / mi
    return out


def _steps(cut: FloatArray, grid: FloatArray) -> FloatArray:
    """[cut > g] + 0.5·[cut == g] for each cut and grid point, items concatenated."""
    c3 = cut[:, :, None]
    g3 = grid[None, None, :]
    resp = (c3 > g3).astype(np.float64) + 0.5 * (c3 == g3)
    resp[np.broadcast_to(np.isnan(c3), resp.shape)] = np.nan
    return resp.reshape(cut.shape[0], -1)


def rnk(scores: ArrayLike, columns: int = 100) -> Points:
    r"""Rnk: each item becomes ``columns`` grid points passed below the agent's percentile.

    .. math:: g_d = \frac{d-1}{c-1}\ (d = 1..c), \qquad
              y_{jid} = [p_{ji} > g_d] + \tfrac12 [p_{ji} = g_d]

    with :math:`p_{ji}` from :func:`rank_percentiles`; the difficulty of point (i, d) is
    :math:`g_d`. After merging, :math:`\psi_j(g_d)` is the share of items whose percentile
    exceeds :math:`g_d`, so Ψ ≈ mean percentile and S ≈ its population s.d. (Lemma 19; the
    integrated values differ from these by about 1e-3 at c = 100).

    Parameters
    ----------
    scores : array_like, shape (n, m)
        Raw scores, higher is better (NaN = missing).
    columns : int
        c, the grid resolution (100 in the paper; at least 2).
    """
    if columns < 2:
        raise ValueError("Rnk needs at least 2 columns")
    p = rank_percentiles(scores)
    grid = r_seq(0.0, 1.0, columns)
    m = p.shape[1]
    return Points(
        np.tile(grid, m),
        _steps(p, grid),
        np.repeat(np.arange(m, dtype=np.int64), columns),
        (0.0, 1.0),
        "rnk",
        {"mapped": p},
    )


def group_items(scores: ArrayLike, groups: Sequence[Sequence[int]]) -> FloatArray:
    """Mean score per group of items, as R's ``rowMeans`` (long double), for grouped Rnk.

    A group with a missing member gives a missing mean for that agent.
    """
    return r_row_means(scores, groups)


def beta_parameters(mean: ArrayLike, variance: ArrayLike) -> tuple[FloatArray, FloatArray]:
    r"""Moment-matched Beta parameters.

    .. math:: \alpha = \Big(\frac{1-\mu}{\sigma^2} - \frac{1}{\mu}\Big)\mu^2, \qquad
              \beta = \alpha\Big(\frac{1}{\mu} - 1\Big)

    Valid only for :math:`0 < \sigma^2 < \mu(1-\mu)`; otherwise α or β ≤ 0.
    """
    mu = np.asarray(mean, dtype=np.float64)
    var = np.asarray(variance, dtype=np.float64)
    alpha = ((1 - mu) / var - 1 / mu) * (mu * mu)
    beta = alpha * (1 / mu - 1)
    return alpha, beta


def dref(
    values: ArrayLike,
    mean: ArrayLike,
    variance: ArrayLike,
    columns: int = 100,
    distribution: Literal["beta", "normal"] = "beta",
) -> Points:
    r"""DRef: each category becomes ``columns`` grid points passed below the reference CDF.

    .. math:: \kappa_{ji} = F_i(v_{ji}), \qquad y_{jid} = [\kappa_{ji} > g_d]
              + \tfrac12[\kappa_{ji} = g_d], \qquad g = \mathrm{seq}(0, 1, c)

    :math:`F_i` is the Beta CDF moment-matched to the reference mean :math:`\mu_i` and
    variance :math:`\sigma_i^2` (:func:`beta_parameters`, ``scipy.special.betainc``), or for
    ``normal`` the normal CDF with mean μ and — as the reference does — the *variance passed
    as the standard deviation*.

    Raises
    ------
    ValueError
        Beta parameters not positive (σ² ≥ μ(1 − μ), μ ∉ (0, 1)) or values outside [0, 1].
    """
    from scipy import special

    if columns < 2:
        raise ValueError("DRef needs at least 2 columns")
    v = _matrix(values)
    mu = np.asarray(mean, dtype=np.float64)
    var = np.asarray(variance, dtype=np.float64)
    if mu.shape != (v.shape[1],) or var.shape != mu.shape:
        raise ValueError("need one reference mean and variance per category")
    if distribution == "beta":
        a, b = beta_parameters(mu, var)
        if not (np.all(a > 0) and np.all(b > 0)):
            raise ValueError("Beta reference needs 0 < mean < 1 and 0 < variance < mean(1-mean)")
        if np.nanmin(v) < 0 or np.nanmax(v) > 1:
            raise ValueError("Beta reference needs values in [0, 1]")
        cut = special.betainc(a[None, :], b[None, :], v)
    elif distribution == "normal":
        cut = special.ndtr((v - mu[None, :]) / var[None, :])
    else:
        raise ValueError(f"unknown distribution {distribution!r}")
    cut = np.where(np.isnan(v), np.nan, cut)
    grid = r_seq(0.0, 1.0, columns)
    m = v.shape[1]
    return Points(
        np.tile(grid, m),
        _steps(cut, grid),
        np.repeat(np.arange(m, dtype=np.int64), columns),
        (0.0, 1.0),
        "dref",
        {"mapped": cut},
    )


def opp(crosstable: ArrayLike) -> Points:
    r"""Opp: the opponent's tournament score is the difficulty (spec §8.4).

    The diagonal (a player against itself) counts as a draw, 0.5, in the scores and in the
    curve. With :math:`C_{jk}` the result of j against k:

    .. math:: s_k = \sum_{l} C_{kl}, \qquad
              d = (0, s_1, \dots, s_n, n), \qquad y_j = (1, C_{j1}, \dots, C_{jn}, 0)

    Equal scores merge into one point (the mean result against those opponents); the end
    points (0 → 1, n → 0) are fixed pseudo-items. The capability range is [0, n].

    Parameters
    ----------
    crosstable : array_like, shape (n, n)
        Results 1 / 0.5 / 0 (any value in [0, 1]); the diagonal is ignored (NaN allowed).

    Raises
    ------
    ValueError
        Not square, or a missing game off the diagonal (scores would not be comparable).
    """
    c = np.array(_matrix(crosstable), dtype=np.float64)
    n = c.shape[0]
    if c.shape != (n, n) or n < 2:
        raise ValueError("the crosstable must be square with at least 2 players")
    np.fill_diagonal(c, 0.5)
    if np.isnan(c).any():
        raise ValueError("every pair of players needs a result (missing games)")
    scores = c.astype(np.longdouble).sum(axis=1).astype(np.float64)
    d = np.concatenate(([0.0], scores, [float(n)]))
    y = np.concatenate((np.ones((n, 1)), c, np.zeros((n, 1))), axis=1)
    idx = np.concatenate(([ANCHOR], np.arange(n), [ANCHOR])).astype(np.int64)
    return Points(d, y, idx, (0.0, float(n)), "opp", {"scores": scores})
