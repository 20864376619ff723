"""Item response theory: 1PL/2PL item difficulties by marginal maximum likelihood (girth).

The generality paper's Table 1 lists IRT as a route to item difficulty, and its supplement
(Fig. S7, A.8) compares 2PL IRT difficulty with the intrinsic difficulty. This module is the one
home of the ``girth`` library (numpy/scipy only, maintained, MML estimation of 1PL and 2PL with
Gauss–Hermite-style quadrature over a standard normal ability distribution); everything else
calls :func:`fit_irt`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

import numpy as np

from pipeline.errors import GmeterError

Model = Literal["1pl", "2pl"]


@dataclass(frozen=True)
class IrtResult:
    """The result of :func:`fit_irt`.

    Attributes
    ----------
    model : str
        ``1pl`` or ``2pl``.
    items : tuple of str
        Items estimated, in input order (items everyone passed or everyone failed removed).
    dropped : tuple of str
        Items left out: no variation (difficulty ±∞) or no response at all.
    difficulty : np.ndarray
        b_i on the ability scale (θ ~ N(0, 1)).
    discrimination : np.ndarray
        a_i (one common value repeated for 1PL).
    p_correct : np.ndarray
        Mean (binarised) response per item, the classical difficulty.
    binarised : int
        Responses strictly between 0 and 1 that were binarised (y ≥ 0.5 → 1).
    n_agents : int
        Agents used.
    """

    model: str
    items: tuple[str, ...]
    dropped: tuple[str, ...]
    difficulty: np.ndarray
    discrimination: np.ndarray
    p_correct: np.ndarray
    binarised: int
    n_agents: int


def fit_irt(values: np.ndarray, items: tuple[str, ...], model: Model = "2pl") -> IrtResult:
    r"""Estimate item difficulty and discrimination by marginal maximum likelihood.

    The 2PL model gives agent :math:`j` with ability :math:`\theta_j \sim N(0, 1)` the
    probability of a correct answer to item :math:`i`

    .. math::

        P(y_{ji} = 1 \mid \theta_j) = \frac{1}{1 + e^{-a_i(\theta_j - b_i)}},

    with difficulty :math:`b_i` (the ability at which :math:`P = 1/2`) and discrimination
    :math:`a_i > 0`; 1PL uses one common :math:`a`. The item parameters maximise the marginal
    likelihood :math:`\prod_j \int \prod_i P(y_{ji} \mid \theta)\,\phi(\theta)\,d\theta`, the
    integral by quadrature (``girth.twopl_mml`` / ``girth.onepl_mml``: 41 points on
    [−4.5, 4.5]). Deterministic: no random start.

    Parameters
    ----------
    values : np.ndarray
        ``(agents, items)`` responses in [0, 1]; NaN = not attempted (left out of that item's
        likelihood). Graded values are binarised: ``y ≥ 0.5`` → 1 (counted in ``binarised``).
    items : tuple of str
        Column names.
    model : {"1pl", "2pl"}
        Two parameters per item, or one difficulty per item and a common discrimination.

    Returns
    -------
    IrtResult

    Raises
    ------
    GmeterError
        Values outside [0, 1] or infinite, fewer than 2 agents, fewer than 2 items with
        variation, or an unknown model.

    Notes
    -----
    Items that every agent answered the same way have an infinite MML difficulty; they are
    dropped and listed (``dropped``) rather than given an arbitrary large number, as are items
    whose estimate is not finite. Time grows with items × agents: about 1 s for 500 × 30,
    40 s for 419 × 133. Girth's MML
    returns no standard errors; none are reported. Different IRT programs (R ``ltm``, ``mirt``)
    differ in quadrature and convergence criteria: expect agreement in the second decimal of
    b, not bit equality.

    References
    ----------
    R. D. Bock & M. Aitkin, Marginal maximum likelihood estimation of item parameters:
    application of an EM algorithm, Psychometrika 46, 443–459 (1981). R. Sanchez, girth:
    Item Response Theory (PyPI ``girth``). J. Hernández-Orallo et al., Scientific Reports 11,
    22822 (2021), Table 1 and Supplement Fig. S7.
    """
    if model not in ("1pl", "2pl"):
        raise GmeterError(f"IRT model {model!r} is not supported", hint="use 1pl or 2pl")
    x = np.asarray(values, dtype=float)
    if x.ndim != 2 or x.shape[1] != len(items):
        raise GmeterError("IRT needs an agents × items matrix with one name per item")
    present = ~np.isnan(x)
    if not np.isfinite(x[present]).all() or (x[present] < 0).any() or (x[present] > 1).any():
        raise GmeterError(
            "IRT needs responses in [0, 1] (1 = correct)",
            hint="rescale the responses, or use a transform for raw scores",
        )
    if x.shape[0] < 2:
        raise GmeterError(f"IRT needs at least 2 agents, got {x.shape[0]}")
    graded = int(((x > 0) & (x < 1) & present).sum())
    y = np.where(present, (x >= 0.5).astype(float), np.nan)
    with np.errstate(invalid="ignore"):
        p = np.nanmean(np.where(present, y, np.nan), axis=0) if present.any() else np.full(0, 0.0)
    varies = np.array(
        [present[:, k].any() and 0.0 < p[k] < 1.0 for k in range(x.shape[1])], dtype=bool
    )
    names = tuple(i for i, k in zip(items, varies, strict=True) if k)
    dropped = tuple(i for i, k in zip(items, varies, strict=True) if not k)
    if len(names) < 2:
        raise GmeterError(
            f"IRT needs at least 2 items that some agents pass and others fail, got {len(names)}",
            hint="items everyone passed or failed have no finite difficulty",
        )
    import warnings

    import girth  # the one home of girth (lazy: keeps `gmeter --help` fast)

    data = np.where(present[:, varies], y[:, varies], girth.INVALID_RESPONSE).astype(int)
    # girth's quadrature divides by tiny likelihoods on near-constant items and says so with
    # RuntimeWarnings; the estimates are checked for finiteness below instead.
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        fit = girth.twopl_mml(data.T) if model == "2pl" else girth.onepl_mml(data.T)
    b = np.asarray(fit["Difficulty"], dtype=float)
    a = np.broadcast_to(np.asarray(fit["Discrimination"], dtype=float), b.shape).copy()
    ok = np.isfinite(b) & np.isfinite(a)
    if not ok.all():
        dropped = dropped + tuple(n for n, k in zip(names, ok, strict=True) if not k)
        names = tuple(n for n, k in zip(names, ok, strict=True) if k)
        b, a = b[ok], a[ok]
    if len(names) < 2:
        raise GmeterError("IRT did not converge to finite difficulties", hint="check the data")
    return IrtResult(
        model=model,
        items=names,
        dropped=dropped,
        difficulty=b,
        discrimination=a,
        p_correct=p[varies][ok],
        binarised=graded,
        n_agents=int(x.shape[0]),
    )


def rescale(b: np.ndarray, low: float, high: float) -> np.ndarray:
    r"""Map IRT difficulties linearly onto ``[low, high]`` ("the same range", Fig. S7).

    .. math:: d_i = \ell + (b_i - \min b)\,\frac{h - \ell}{\max b - \min b}

    All-equal difficulties map to the middle of the range.
    """
    lo, hi = float(np.min(b)), float(np.max(b))
    if hi == lo:
        return np.full(b.shape, (low + high) / 2)
    return low + (b - lo) * ((high - low) / (hi - lo))
