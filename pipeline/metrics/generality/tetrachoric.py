"""Tetrachoric correlations of 0/1 items, with the conventions of R ``psych::tetrachoric``.

A tetrachoric correlation is the correlation of two standard normal variables that, cut at two
thresholds, reproduce the 2 × 2 table of two binary items. Factor analysis of binary items on
Pearson (phi) correlations understates the loadings (phi is bounded by the items' margins); on
tetrachoric correlations it estimates the loadings of the underlying continuous responses,
which is what a psychometrician reports for pass/fail items.

Defaults follow ``psych::tetrachoric`` (psych 2.2.9) so that ``gmeter fa --correlation
tetrachoric`` and ``psych::fa(x, cor = "tet")`` agree: global thresholds, 0.5 in empty cells,
and the eigenvalue smoothing of a matrix that is not positive definite (:func:`smooth`).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.special import ndtr, ndtri, owens_t

from pipeline.errors import GmeterError

#: Count put in an empty cell of a 2 × 2 table (psych's ``correct = 0.5``).
ZERO_CELL = 0.5
#: Search interval of ρ (the bivariate normal degenerates at ±1).
RHO_BOUND = 1.0 - 1e-9
#: Eigenvalues below this are raised before rescaling (psych's ``cor.smooth`` ``eig.tol``).
EIG_TOL = 1e-12


@dataclass(frozen=True)
class TetrachoricResult:
    r"""The result of :func:`tetrachoric`.

    Attributes
    ----------
    items : tuple of str
        Items correlated (in input order); items without variation are in ``dropped``.
    dropped : tuple of str
        Items everyone passed or everyone failed (no threshold, no correlation).
    rho : np.ndarray
        ``(items, items)`` tetrachoric correlation matrix (after smoothing, if any).
    tau : np.ndarray
        Thresholds :math:`\tau_i = -\Phi^{-1}(\bar y_i)` on the latent normal scale.
    corrected_pairs : int
        Pairs whose 2 × 2 table had an empty cell (filled with :data:`ZERO_CELL`).
    smoothed : bool
        Whether the matrix was not positive definite and was smoothed.
    n_agents : int
        Rows used.
    """

    items: tuple[str, ...]
    dropped: tuple[str, ...]
    rho: np.ndarray
    tau: np.ndarray
    corrected_pairs: int
    smoothed: bool
    n_agents: int


def bivariate_normal_cdf(h: np.ndarray, k: np.ndarray, rho: np.ndarray) -> np.ndarray:
    r""":math:`\Phi_2(h, k; \rho) = P(Z_1 \le h, Z_2 \le k)`, standard normals of correlation ρ.

    Owen's (1956) identity in his T function, exact to double precision for
    :math:`|\rho| < 1` (no numerical integration, so the likelihood below is smooth in ρ):

    .. math::

        \Phi_2(h, k; \rho) = \tfrac12[\Phi(h) + \Phi(k)] - T(h, a_h) - T(k, a_k) - \tfrac12 c,
        \qquad a_h = \frac{k - \rho h}{h s},\; a_k = \frac{h - \rho k}{k s},\;
        s = \sqrt{1 - \rho^2},

    with :math:`c = 1` when :math:`hk < 0` and 0 otherwise. Its limit at :math:`h = 0` is
    :math:`\tfrac12\Phi(k) - T(k, -\rho/s)` (and symmetrically at :math:`k = 0`);
    :math:`\Phi_2(0, 0; \rho) = \tfrac14 + \arcsin(\rho)/2\pi`. Vectorised (broadcasts).

    References
    ----------
    D. B. Owen, Tables for computing bivariate normal probabilities, Annals of Mathematical
    Statistics 27, 1075–1090 (1956).
    """
    h, k, rho = np.broadcast_arrays(*(np.asarray(v, dtype=float) for v in (h, k, rho)))
    s = np.sqrt((1.0 - rho) * (1.0 + rho))
    h0, k0 = h == 0.0, k == 0.0
    with np.errstate(divide="ignore", invalid="ignore"):
        a_h = np.where(h0, 0.0, (k - rho * h) / np.where(h0, 1.0, h * s))
        a_k = np.where(k0, 0.0, (h - rho * k) / np.where(k0, 1.0, k * s))
    c = np.where(h * k < 0, 1.0, 0.0)
    general = 0.5 * (ndtr(h) + ndtr(k)) - owens_t(h, a_h) - owens_t(k, a_k) - 0.5 * c
    only_h0 = 0.5 * ndtr(k) - owens_t(k, -rho / s)
    only_k0 = 0.5 * ndtr(h) - owens_t(h, -rho / s)
    both0 = 0.25 + np.arcsin(rho) / (2.0 * np.pi)
    out = np.where(h0 & k0, both0, np.where(h0, only_h0, np.where(k0, only_k0, general)))
    return np.asarray(out, dtype=float)


def _cells(rho: np.ndarray, tau_i: np.ndarray, tau_j: np.ndarray) -> np.ndarray:
    """P of the cells (i=0,j=0), (i=0,j=1), (i=1,j=0), (i=1,j=1); an item is 1 above τ."""
    p00 = bivariate_normal_cdf(tau_i, tau_j, rho)
    p0_, p_0 = ndtr(tau_i), ndtr(tau_j)
    return np.stack([p00, p0_ - p00, p_0 - p00, 1.0 - p0_ - p_0 + p00])


def pair_rho(tables: np.ndarray, tau_i: np.ndarray, tau_j: np.ndarray) -> np.ndarray:
    r"""Maximum likelihood ρ of 2 × 2 tables given their thresholds (vectorised over pairs).

    .. math::

        \hat\rho = \arg\max_{\rho \in (-1, 1)} \sum_{a, b \in \{0, 1\}} n_{ab}
        \log \pi_{ab}(\rho),

    :math:`n_{ab}` the counts (item i = a, item j = b) and :math:`\pi_{ab}` the quadrant
    probabilities of a standard bivariate normal of correlation ρ cut at
    :math:`(\tau_i, \tau_j)`. Since :math:`\partial\pi_{00}/\partial\rho =
    \partial\pi_{11}/\partial\rho = -\partial\pi_{01}/\partial\rho =
    -\partial\pi_{10}/\partial\rho = \phi_2 > 0`, the score has the sign of
    :math:`g(\rho) = n_{00}/\pi_{00} + n_{11}/\pi_{11} - n_{01}/\pi_{01} - n_{10}/\pi_{10}`,
    strictly decreasing in ρ: the maximum is unique and bisection on g finds it (to
    :math:`10^{-15}`). With every cell positive, g changes sign inside (−1, 1).

    psych stops R's ``optimize`` at its default tolerance (about :math:`1.2 \times 10^{-4}`)
    and integrates the bivariate normal numerically (``mnormt::sadmvn``): expect agreement to
    about :math:`10^{-4}`, not bit equality.

    Parameters
    ----------
    tables : np.ndarray
        ``(pairs, 4)`` counts ``[n00, n01, n10, n11]``, every cell positive.
    tau_i, tau_j : np.ndarray
        ``(pairs,)`` thresholds.
    """
    n = np.asarray(tables, dtype=float).T
    lo = np.full(n.shape[1], -RHO_BOUND)
    hi = np.full(n.shape[1], RHO_BOUND)
    sign = np.array([1.0, -1.0, -1.0, 1.0])[:, None]
    for _ in range(60):
        mid = 0.5 * (lo + hi)
        with np.errstate(divide="ignore"):
            g = (sign * n / np.maximum(_cells(mid, tau_i, tau_j), 0.0)).sum(axis=0)
        up = g > 0
        lo = np.where(up, mid, lo)
        hi = np.where(up, hi, mid)
    return 0.5 * (lo + hi)


def smooth(r: np.ndarray) -> tuple[np.ndarray, bool]:
    r"""Make a correlation matrix positive definite the way ``psych::cor.smooth`` does.

    If the smallest eigenvalue is below machine epsilon, eigenvalues below
    :data:`EIG_TOL` are set to :math:`100 \cdot` :data:`EIG_TOL`, all are rescaled to sum to
    the number of variables, the matrix :math:`V \operatorname{diag}(\ell) V^\top` is rebuilt
    and turned back into a correlation matrix (:math:`D^{-1/2} R D^{-1/2}`). Otherwise the
    matrix is returned unchanged.

    Returns
    -------
    (np.ndarray, bool)
        The matrix and whether it was smoothed.

    References
    ----------
    W. Revelle, psych: Procedures for Psychological, Psychometric, and Personality Research
    (R package, ``cor.smooth``); N. J. Higham-style eigenvalue repair in its simplest form.
    """
    values, vectors = np.linalg.eigh(r)
    if values.min() >= np.finfo(float).eps:
        return r, False
    values = np.where(values < EIG_TOL, 100 * EIG_TOL, values)
    values = values * (r.shape[0] / values.sum())
    rebuilt = (vectors * values) @ vectors.T
    d = np.sqrt(np.diag(rebuilt))
    out = rebuilt / np.outer(d, d)
    np.fill_diagonal(out, 1.0)
    return (out + out.T) / 2, True


def tetrachoric(values: np.ndarray, items: tuple[str, ...]) -> TetrachoricResult:
    r"""Tetrachoric correlation matrix of binary items (``psych::tetrachoric`` defaults).

    Each item i is read as a latent standard normal :math:`z_i` cut at a threshold:
    :math:`y_i = 1 \iff z_i > \tau_i`, :math:`\tau_i = -\Phi^{-1}(\bar y_i)` with
    :math:`\bar y_i` the item's proportion of ones over all agents that answered it ("global"
    thresholds, as psych). For each pair the correlation of :math:`(z_i, z_j)` is the
    maximum likelihood value of the pair's 2 × 2 table given the two thresholds
    (:func:`pair_rho`) over the agents that answered both. A table with an empty cell gets
    :data:`ZERO_CELL` (0.5) in every empty cell — psych's ``correct = 0.5`` — which keeps
    ρ away from ±1. The matrix is smoothed if it is not positive definite (:func:`smooth`).

    Parameters
    ----------
    values : np.ndarray
        ``(agents, items)`` in {0, 1}; NaN = not answered (pairwise deletion).
    items : tuple of str
        Column names.

    Returns
    -------
    TetrachoricResult

    Raises
    ------
    GmeterError
        Values other than 0, 1 or NaN; fewer than 2 items with variation; a pair with fewer
        than 3 agents answering both (psych returns NA there and cannot factor the matrix).

    Notes
    -----
    psych subtracts each column's minimum before checking that the data are 0/1; gmeter
    requires 0/1 outright (a response file of 1/2 codes is an error naming the fix).

    References
    ----------
    K. Pearson, On the correlation of characters not quantitatively measurable,
    Philosophical Transactions of the Royal Society A 195, 1–47 (1900). U. Olsson, Maximum
    likelihood estimation of the polychoric correlation coefficient, Psychometrika 44,
    443–460 (1979). W. Revelle, psych (R package), ``tetrachoric``.
    """
    x = np.asarray(values, dtype=float)
    if x.ndim != 2 or x.shape[1] != len(items):
        raise GmeterError("tetrachoric correlations need an agents × items matrix")
    present = ~np.isnan(x)
    if not np.isin(x[present], (0.0, 1.0)).all():
        raise GmeterError(
            "tetrachoric correlations need 0/1 responses (1 = correct)",
            hint="binarise the responses first, or use --correlation pearson",
        )
    with np.errstate(invalid="ignore", divide="ignore"):
        mean = np.nansum(np.where(present, x, 0.0), axis=0) / present.sum(axis=0)
    keep = np.isfinite(mean) & (mean > 0) & (mean < 1)
    names = tuple(i for i, k in zip(items, keep, strict=True) if k)
    dropped = tuple(i for i, k in zip(items, keep, strict=True) if not k)
    if len(names) < 2:
        raise GmeterError(
            f"tetrachoric correlations need at least 2 items that vary, got {len(names)}"
        )
    y = x[:, keep]
    ok = present[:, keep]
    tau = -ndtri(mean[keep])
    p = len(names)
    yy = np.where(ok, y, 0.0)
    both = ok.T.astype(float) @ ok.astype(float)
    n11 = yy.T @ yy
    n10 = yy.T @ (ok & (y == 0)).astype(float)  # item i = 1, item j = 0
    n00 = both - n11 - n10 - n10.T
    li, lj = np.tril_indices(p, -1)
    if (both[li, lj] < 3).any():
        k = int(np.flatnonzero(both[li, lj] < 3)[0])
        raise GmeterError(
            f"tetrachoric correlations: items {names[li[k]]} and {names[lj[k]]} were answered "
            f"together by {int(both[li[k], lj[k]])} agent(s); at least 3 are needed",
            hint="drop one of the items or use --correlation pearson",
        )
    tables = np.stack([n00[li, lj], n10[lj, li], n10[li, lj], n11[li, lj]], axis=1)
    empty = (tables == 0).any(axis=1)
    tables = np.where(tables == 0, ZERO_CELL, tables)
    rho = np.eye(p)
    rho[li, lj] = rho[lj, li] = pair_rho(tables, tau[li], tau[lj])
    corrected = int(empty.sum())
    rho, smoothed = smooth(rho)
    return TetrachoricResult(
        items=names,
        dropped=dropped,
        rho=rho,
        tau=np.asarray(tau, dtype=float),
        corrected_pairs=corrected,
        smoothed=smoothed,
        n_agents=int(x.shape[0]),
    )
