"""Exploratory factor analysis by minimum residual (minres) on Pearson or tetrachoric correlations.

The psychometric comparison of the generality paper's supplement (A.1–A.2, A.8): a first factor
extracted from an agents × items response matrix, its loadings, their mean and range, and the
proportion of variance it explains — what a psychometrician would compute instead of
generality. Pure numpy/scipy.

Why not ``factor_analyzer``: its 0.5.1 release (the latest) passes ``force_all_finite`` to
scikit-learn's ``check_array``, an argument scikit-learn 1.8 removed, so ``fit`` fails with the
scikit-learn this project needs; it also pulls pandas. The method is small: it is written here
from its definition, and the test suite checks it against the published letter-series numbers.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

import numpy as np
from scipy.optimize import minimize

from pipeline.errors import GmeterError

Correlation = Literal["pearson", "tetrachoric"]

#: Agents per item below which a factor solution is flagged as unstable (Osborne & Costello
#: 2004 find a ratio of 5:1 or less gives wrong solutions in most samples).
AGENTS_PER_ITEM = 5
#: Agents below which any factor solution is flagged.
MIN_AGENTS = 20

#: Bounds of a uniqueness during the minres search (a Heywood case stops at the lower bound).
PSI_LOW = 0.005
PSI_HIGH = 1.0


@dataclass(frozen=True)
class FactorResult:
    """The result of :func:`minres`.

    Attributes
    ----------
    items : tuple of str
        The items analysed (constant columns removed), in input order.
    dropped : tuple of str
        Constant columns left out (zero variance: no correlation is defined).
    loadings : np.ndarray
        ``(items, factors)`` unrotated loadings; each factor's sign makes its loadings sum ≥ 0.
    uniqueness : np.ndarray
        ``1 − communality`` per item at the optimum.
    variance_explained : np.ndarray
        Per factor: ``Σ_i λ_ik² / p`` (the proportion of the total standardised variance).
    converged : bool
        Whether the optimiser reported success.
    n_agents : int
        Rows used.
    correlation : str
        ``pearson`` or ``tetrachoric``.
    corrected_pairs : int
        Tetrachoric only: item pairs whose 2 × 2 table had an empty cell (filled with 0.5).
    smoothed : bool
        Tetrachoric only: the matrix was not positive definite and was smoothed.
    warnings : tuple of str
        Small sample, Heywood cases, corrected or smoothed correlations (one sentence each).
    """

    items: tuple[str, ...]
    dropped: tuple[str, ...]
    loadings: np.ndarray
    uniqueness: np.ndarray
    variance_explained: np.ndarray
    converged: bool
    n_agents: int
    correlation: str = "pearson"
    corrected_pairs: int = 0
    smoothed: bool = False
    warnings: tuple[str, ...] = ()

    @property
    def first(self) -> np.ndarray:
        """The first factor's loadings."""
        return self.loadings[:, 0]


def _loadings(r: np.ndarray, psi: np.ndarray, k: int) -> np.ndarray:
    reduced = r - np.diag(psi)
    values, vectors = np.linalg.eigh(reduced)
    order = np.argsort(values)[::-1][:k]
    top = np.maximum(values[order], 100 * np.finfo(float).eps)
    return np.asarray(vectors[:, order] * np.sqrt(top))


def _objective(psi: np.ndarray, r: np.ndarray, k: int) -> tuple[float, np.ndarray]:
    lam = _loadings(r, psi, k)
    resid = r - np.diag(psi) - lam @ lam.T
    # Envelope theorem: Λ is optimal for the reduced matrix, so ∂f/∂ψ_i = −2·resid_ii.
    return float(np.sum(resid * resid)), -2.0 * np.diag(resid)


def minres(
    values: np.ndarray,
    items: tuple[str, ...],
    factors: int = 1,
    correlation: Correlation = "pearson",
) -> FactorResult:
    r"""Minimum-residual factor analysis of a response matrix.

    With :math:`R` the Pearson (or tetrachoric, see
    :func:`pipeline.metrics.generality.tetrachoric.tetrachoric`) correlation matrix of the
    items (columns), :math:`\Psi` the
    diagonal matrix of uniquenesses and :math:`\Lambda` the :math:`p \times k` loadings,

    .. math::

        \hat\Psi = \arg\min_{\Psi} \lVert R - \Psi - \Lambda_\Psi \Lambda_\Psi^\top \rVert_F^2,
        \qquad \Lambda_\Psi = V_k \operatorname{diag}(\sqrt{\ell_k}),

    where :math:`V_k, \ell_k` are the top :math:`k` eigenvectors and eigenvalues of
    :math:`R - \Psi` (the reduced correlation matrix). This is the unweighted least squares
    ("minres") criterion of Harman & Jones (1966), searched over :math:`\psi_i \in [0.005, 1]`
    with L-BFGS-B from :math:`\psi_i = 1/(R^{-1})_{ii}` (one minus the squared multiple
    correlation) and the analytic gradient
    :math:`-2\,\mathrm{diag}(R - \Psi - \Lambda\Lambda^\top)`.
    Variance explained by factor :math:`k`: :math:`\sum_i \lambda_{ik}^2 / p`. Loadings are
    unrotated; a factor's sign is arbitrary and is chosen so that its loadings sum to ≥ 0.

    Parameters
    ----------
    values : np.ndarray
        ``(agents, items)`` finite numbers (any scale: correlations are scale-free).
    items : tuple of str
        Column names.
    factors : int
        Number of factors k (1 for the paper's comparison).
    correlation : {"pearson", "tetrachoric"}
        Pearson (phi for 0/1 items) as the paper, or tetrachoric for 0/1 items (R psych's
        ``fa(x, cor = "tet")``: on pass/fail items phi understates the loadings).

    Returns
    -------
    FactorResult

    Raises
    ------
    GmeterError
        Missing or non-finite values, fewer than 3 agents, fewer than ``k + 2`` non-constant
        items, ``k`` < 1, or (tetrachoric) values other than 0 and 1.

    Notes
    -----
    On the letter-series humans this gives loadings from −0.212 to 0.594, mean 0.215, first
    factor variance 0.0876, the values of R's ``psych::fa(fm = "minres")``; the paper prints
    0.093 for the variance (an older library version). On the mazes (496 × 23) the mean
    first-factor loading is 0.342 on Pearson and 0.465 on tetrachoric correlations, as
    ``psych::fa(x)`` and ``psych::fa(x, cor = "tet")`` (psych 2.2.9).

    Warnings (``warnings``) name a sample under :data:`MIN_AGENTS` agents or
    :data:`AGENTS_PER_ITEM` agents per item (Osborne & Costello 2004), Heywood cases (a
    uniqueness at its lower bound :data:`PSI_LOW`), and tetrachoric tables with empty cells
    or a smoothed matrix.

    References
    ----------
    H. H. Harman & W. H. Jones, Factor analysis by minimizing residuals (minres),
    Psychometrika 31, 351–368 (1966). J. W. Osborne & A. B. Costello, Sample size and subject
    to item ratio in principal components analysis, Practical Assessment, Research &
    Evaluation 9(11) (2004). J. Hernández-Orallo et al., General intelligence
    disentangled via a generality metric for natural and artificial intelligence,
    Scientific Reports 11, 22822 (2021), Supplement A.1–A.2.
    """
    x = np.asarray(values, dtype=float)
    if x.ndim != 2 or x.shape[1] != len(items):
        raise GmeterError("factor analysis needs an agents × items matrix with one name per item")
    if correlation not in ("pearson", "tetrachoric"):
        raise GmeterError(
            f"correlation {correlation!r} is not supported", hint="use pearson or tetrachoric"
        )
    if factors < 1:
        raise GmeterError(f"--factors {factors}: give at least 1 factor")
    if not np.isfinite(x).all():
        bad = np.argwhere(~np.isfinite(x))[0]
        raise GmeterError(
            f"factor analysis needs complete responses; agent row {int(bad[0]) + 1}, "
            f"item {items[int(bad[1])]} is missing or not finite",
            hint="remove incomplete agents or fill the value",
        )
    if x.shape[0] < 3:
        raise GmeterError(
            f"factor analysis needs at least 3 agents, got {x.shape[0]}",
            hint="correlations between items need several agents",
        )
    sd = x.std(axis=0)
    keep = sd > 0
    dropped = tuple(i for i, k in zip(items, keep, strict=True) if not k)
    names = tuple(i for i, k in zip(items, keep, strict=True) if k)
    if len(names) < factors + 2:
        raise GmeterError(
            f"factor analysis needs at least {factors + 2} items that vary across agents, "
            f"got {len(names)}" + (f" ({len(dropped)} constant dropped)" if dropped else ""),
            hint="give more items or fewer factors",
        )
    corrected, smoothed = 0, False
    if correlation == "tetrachoric":
        from pipeline.metrics.generality.tetrachoric import tetrachoric

        tet = tetrachoric(x[:, keep], names)
        r, corrected, smoothed = tet.rho, tet.corrected_pairs, tet.smoothed
    else:
        r = np.corrcoef(x[:, keep], rowvar=False)
    res = minres_matrix(r, names, int(x.shape[0]), factors)
    notes = list(res.warnings)
    if corrected:
        notes.append(
            f"{corrected} item pair(s) had an empty cell in their 2 × 2 table (0.5 added, as "
            "psych's correct = 0.5): their tetrachoric correlations are weakly determined"
        )
    if smoothed:
        notes.append(
            "the tetrachoric matrix was not positive definite and was smoothed (psych's cor.smooth)"
        )
    return FactorResult(
        items=names,
        dropped=dropped,
        loadings=res.loadings,
        uniqueness=res.uniqueness,
        variance_explained=res.variance_explained,
        converged=res.converged,
        n_agents=res.n_agents,
        correlation=correlation,
        corrected_pairs=corrected,
        smoothed=smoothed,
        warnings=tuple(notes),
    )


def minres_matrix(
    r: np.ndarray, items: tuple[str, ...], n_agents: int, factors: int = 1
) -> FactorResult:
    """Minres on a given correlation matrix (see :func:`minres` for the criterion and search).

    ``n_agents`` is only reported and used for the sample-size warnings.
    """
    p = r.shape[0]
    try:
        start = 1.0 / np.diag(np.linalg.inv(r))
    except np.linalg.LinAlgError:
        start = np.full(p, 0.5)
    if not np.isfinite(start).all():
        start = np.full(p, 0.5)
    start = np.clip(start, PSI_LOW, PSI_HIGH)
    opt = minimize(
        _objective,
        start,
        args=(r, factors),
        jac=True,
        method="L-BFGS-B",
        bounds=[(PSI_LOW, PSI_HIGH)] * p,
        options={"maxiter": 2000, "ftol": 1e-14, "gtol": 1e-10},
    )
    psi = np.asarray(opt.x)
    lam = _loadings(r, psi, factors)
    signs = np.where(lam.sum(axis=0) < 0, -1.0, 1.0)
    lam = lam * signs
    communality = (lam * lam).sum(axis=1)
    notes = []
    if n_agents < MIN_AGENTS or n_agents < AGENTS_PER_ITEM * p:
        notes.append(
            f"small sample: {n_agents} agents for {p} items, at least "
            f"{max(MIN_AGENTS, AGENTS_PER_ITEM * p)} recommended ({AGENTS_PER_ITEM} per item); "
            "the loadings may not replicate"
        )
    heywood = [i for i, v in zip(items, psi, strict=True) if v <= PSI_LOW * (1 + 1e-6)]
    if heywood:
        notes.append(
            f"Heywood case: the uniqueness of {', '.join(heywood[:5])}"
            + (f" and {len(heywood) - 5} more" if len(heywood) > 5 else "")
            + f" stopped at its lower bound {PSI_LOW} (communality near 1); read with care"
        )
    if not opt.success:
        notes.append("the minres search did not report convergence")
    return FactorResult(
        items=items,
        dropped=(),
        loadings=lam,
        uniqueness=1.0 - communality,
        variance_explained=(lam * lam).sum(axis=0) / p,
        converged=bool(opt.success),
        n_agents=n_agents,
        warnings=tuple(notes),
    )
