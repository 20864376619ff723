"""Item response theory: 1PL/2PL item parameters with standard errors, abilities, fit.

The generality paper's Table 1 lists IRT as a route to item difficulty, and its supplement
(Fig. S7, A.8) compares 2PL IRT difficulty with the intrinsic difficulty. :func:`fit_irt`
returns what a psychometrician reads from an IRT program: item parameters by marginal maximum
likelihood (:mod:`~pipeline.metrics.generality.mml`) with standard errors from the observed
information, a convergence report, EAP abilities with standard errors and the reliability
(:mod:`~pipeline.metrics.generality.persons`), item fit
(:mod:`~pipeline.metrics.generality.itemfit`), Andersen's global test of the 1PL
(:mod:`~pipeline.metrics.generality.rasch`), and flags and warnings where the numbers should
not be read at face value.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

import numpy as np

from pipeline.errors import GmeterError
from pipeline.metrics.generality import itemfit, mml, persons, rasch

Model = Literal["1pl", "2pl"]

#: Agents below which the estimates are flagged as a small sample: 30 for the 1PL (Linacre
#: 1994: difficulties stable within ±1 logit at 95 %), 100 for the 2PL (Morizot et al. 2009
#: recommend a few hundred).
MIN_AGENTS = {"1pl": 30, "2pl": 100}
#: |difficulty| above which an item is flagged ``extreme``: beyond 99.99 % of the N(0, 1)
#: ability distribution, so its value rests on extrapolation from few informative agents.
EXTREME_DIFFICULTY = 4.0
#: A difficulty standard error above this (logits) is flagged ``imprecise``.
LARGE_SE = 1.0
#: A slope above this is flagged ``steep`` (near-deterministic item; slope weakly determined).
STEEP_SLOPE = 4.0
#: An S-X² p-value below this is flagged ``misfit``, as a mean square outside
#: :data:`pipeline.metrics.generality.itemfit.MNSQ_RANGE`.
MISFIT_P = 0.01

FLAG_MEANINGS = {
    "extreme": f"|difficulty| > {EXTREME_DIFFICULTY:g}: beyond almost every ability of N(0, 1)",
    "imprecise": f"difficulty standard error > {LARGE_SE:g} logit, or none",
    "negative": "negative discrimination: lower-ability agents succeed more often",
    "steep": f"discrimination > {STEEP_SLOPE:g}: near-deterministic, weakly determined",
    "bound": f"discrimination held at ±{mml.A_MAX:g}: no finite maximum",
    "misfit": "infit or outfit outside [0.5, 1.5], or S-X² p < 0.01",
}


@dataclass(frozen=True)
class Convergence:
    """How the estimation ended (see :func:`pipeline.metrics.generality.mml.estimate`)."""

    converged: bool
    em_iterations: int
    newton_iterations: int
    max_gradient: float
    loglik: float
    information_positive_definite: bool


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
    difficulty, discrimination : np.ndarray
        :math:`b_i` on the ability scale (θ ~ N(0, 1)) and :math:`a_i` (one common value
        repeated for 1PL).
    difficulty_se, discrimination_se : np.ndarray
        Standard errors from the inverse observed information (NaN where it is not positive
        definite).
    p_correct : np.ndarray
        Mean (binarised) response per item, the classical difficulty.
    n_answered : np.ndarray
        Agents that answered each item.
    infit, outfit : np.ndarray
        Mean squares at the EAP abilities.
    sx2, sx2_df, sx2_p : np.ndarray
        S-X² item fit (NaN when not computed: missing responses or too many items).
    flags : tuple of tuple of str
        Per item, codes of :data:`FLAG_MEANINGS`.
    binarised : int
        Responses strictly between 0 and 1 that were binarised (y ≥ 0.5 → 1).
    n_agents : int
        Agents (rows) in the input.
    theta, theta_se : np.ndarray
        Per agent (input order): EAP ability and its standard error.
    person_answered, person_score : np.ndarray
        Per agent: items answered and answered correctly (among ``items``).
    reliability_empirical, reliability_marginal : float
        See :func:`pipeline.metrics.generality.persons.empirical_reliability` and
        :func:`~pipeline.metrics.generality.persons.marginal_reliability`.
    convergence : Convergence
        The estimation's report.
    andersen : AndersenTest or None
        1PL only: Andersen's likelihood-ratio test of the Rasch model.
    warnings : tuple of str
        Small sample, convergence, information and flagged items, one sentence each.
    """

    model: str
    items: tuple[str, ...]
    dropped: tuple[str, ...]
    difficulty: np.ndarray
    discrimination: np.ndarray
    p_correct: np.ndarray
    binarised: int
    n_agents: int
    difficulty_se: np.ndarray
    discrimination_se: np.ndarray
    n_answered: np.ndarray
    infit: np.ndarray
    outfit: np.ndarray
    sx2: np.ndarray
    sx2_df: np.ndarray
    sx2_p: np.ndarray
    flags: tuple[tuple[str, ...], ...]
    theta: np.ndarray
    theta_se: np.ndarray
    person_answered: np.ndarray
    person_score: np.ndarray
    reliability_empirical: float
    reliability_marginal: float
    convergence: Convergence
    andersen: rasch.AndersenTest | None
    warnings: tuple[str, ...]


def _standard_errors(fit: mml.MmlFit, one_slope: bool) -> tuple[np.ndarray, np.ndarray, bool]:
    r"""SE of :math:`a_i` and of :math:`b_i = -c_i/a_i` (delta method) from the information.

    .. math::

        \mathrm{Var}(b_i) = rac{\mathrm{Var}(c_i) + b_i^2 \mathrm{Var}(a_i)
            + 2 b_i \mathrm{Cov}(a_i, c_i)}{a_i^2}.
    """
    k = fit.a.size
    nan = np.full(k, np.nan)
    try:
        np.linalg.cholesky(fit.information)
        cov_free = np.linalg.inv(fit.information)
    except np.linalg.LinAlgError:
        return nan, nan.copy(), False
    cov = fit.jacobian @ cov_free @ fit.jacobian.T  # over [a_1..a_p, c_1..c_p]
    idx = np.arange(k)
    va, vc, cac = cov[idx, idx], cov[idx + k, idx + k], cov[idx, idx + k]
    b = -fit.c / fit.a
    vb = (vc + b * b * va + 2 * b * cac) / (fit.a * fit.a)
    held = fit.at_bound
    se_a = np.sqrt(np.where((va > 0) & ~held, va, np.nan))
    se_b = np.sqrt(np.where((vb > 0) & ~held, vb, np.nan))
    return se_b, se_a, True


def fit_irt(values: np.ndarray, items: tuple[str, ...], model: Model = "2pl") -> IrtResult:
    r"""Estimate a 1PL or 2PL model by marginal maximum likelihood, with everything around it.

    The 2PL model gives agent :math:`j` with ability :math:`\theta_j \sim N(0, 1)` the
    probability of a correct answer to item :math:`i`

    .. math::

        P(y_{ji} = 1 \mid \theta_j) = \frac{1}{1 + e^{-a_i(\theta_j - b_i)}},

    with difficulty :math:`b_i` (the ability at which :math:`P = 1/2`) and discrimination
    :math:`a_i`; 1PL uses one common :math:`a`. The item parameters maximise the marginal
    likelihood :math:`\prod_j \int \prod_i P(y_{ji} \mid \theta)\,\phi(\theta)\,d\theta`
    on 61 quadrature nodes over [−6, 6] (:func:`pipeline.metrics.generality.mml.estimate`).
    Deterministic: no random start.

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
    dropped and listed (``dropped``) rather than given an arbitrary large number. On the
    mazes (496 × 23) the 2PL difficulties agree with those of girth 0.8 (41 nodes on
    [−4.5, 4.5]) to 0.01 and the 1PL's with the Rasch CML difficulties of R eRm at
    r > 0.999: different programs differ in quadrature and stopping rules, so expect
    agreement in the second decimal of b, not bit equality.

    References
    ----------
    R. D. Bock & M. Aitkin, Marginal maximum likelihood estimation of item parameters:
    application of an EM algorithm, Psychometrika 46, 443–459 (1981). J. M. Linacre, Sample
    size and item calibration stability, Rasch Measurement Transactions 7(4), 328 (1994).
    J. Morizot, A. T. Ainsworth & S. P. Reise, Toward modern psychometrics: application of
    item response theory models in personality research, in Handbook of Research Methods in
    Personality Psychology, Guilford (2007). J. Hernández-Orallo et al., Scientific Reports
    11, 22822 (2021), Table 1 and Supplement Fig. S7.
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
    answered = present.sum(axis=0)
    with np.errstate(invalid="ignore", divide="ignore"):
        p = np.where(present, y, 0.0).sum(axis=0) / answered
    varies = (answered > 0) & (p > 0.0) & (p < 1.0)
    names = tuple(i for i, k in zip(items, varies, strict=True) if k)
    dropped = tuple(i for i, k in zip(items, varies, strict=True) if not k)
    if len(names) < 2:
        raise GmeterError(
            f"IRT needs at least 2 items that some agents pass and others fail, got {len(names)}",
            hint="items everyone passed or failed have no finite difficulty",
        )
    yk = y[:, varies]
    one = model == "1pl"
    quad = mml.quadrature()
    with np.errstate(over="ignore"):
        fit = mml.estimate(yk, one, quad)
    se_b, se_a, pd = _standard_errors(fit, one)
    b = -fit.c / fit.a
    ab = persons.eap(yk, fit.a, fit.c, quad)
    ms = itemfit.mean_squares(yk, fit.a, fit.c, ab.theta)
    sx = itemfit.s_x2(yk, fit.a, fit.c, 1 if one else 2, quad)
    nan = np.full(len(names), np.nan)
    sx2, sx2_df, sx2_p = (sx.statistic, sx.df, sx.p_value) if sx else (nan, nan, nan)
    flags = _flags(b, fit, se_b, ms, sx2_p)
    return IrtResult(
        model=model,
        items=names,
        dropped=dropped,
        difficulty=b,
        discrimination=fit.a.copy(),
        p_correct=p[varies],
        binarised=graded,
        n_agents=int(x.shape[0]),
        difficulty_se=se_b,
        discrimination_se=se_a,
        n_answered=answered[varies].astype(int),
        infit=ms.infit,
        outfit=ms.outfit,
        sx2=sx2,
        sx2_df=sx2_df,
        sx2_p=sx2_p,
        flags=flags,
        theta=ab.theta,
        theta_se=ab.se,
        person_answered=ab.answered,
        person_score=ab.score,
        reliability_empirical=persons.empirical_reliability(ab),
        reliability_marginal=persons.marginal_reliability(fit.a, fit.c, quad),
        convergence=Convergence(
            converged=fit.converged,
            em_iterations=fit.em_iterations,
            newton_iterations=fit.newton_iterations,
            max_gradient=fit.max_gradient,
            loglik=fit.loglik,
            information_positive_definite=pd,
        ),
        andersen=rasch.andersen_test(yk, names) if one else None,
        warnings=_warnings(model, int(x.shape[0]), fit, pd, flags),
    )


def _flags(
    b: np.ndarray,
    fit: mml.MmlFit,
    se_b: np.ndarray,
    ms: itemfit.MeanSquares,
    sx2_p: np.ndarray,
) -> tuple[tuple[str, ...], ...]:
    lo, hi = itemfit.MNSQ_RANGE
    out = []
    for k in range(b.size):
        f = []
        if abs(b[k]) > EXTREME_DIFFICULTY:
            f.append("extreme")
        if not se_b[k] <= LARGE_SE:  # NaN included
            f.append("imprecise")
        if fit.a[k] < 0:
            f.append("negative")
        if fit.at_bound[k]:
            f.append("bound")
        elif fit.a[k] > STEEP_SLOPE:
            f.append("steep")
        mnsq = (ms.infit[k], ms.outfit[k])
        if any(not lo <= v <= hi for v in mnsq if np.isfinite(v)) or sx2_p[k] < MISFIT_P:
            f.append("misfit")
        out.append(tuple(f))
    return tuple(out)


def _warnings(
    model: str, n: int, fit: mml.MmlFit, pd: bool, flags: tuple[tuple[str, ...], ...]
) -> tuple[str, ...]:
    notes = []
    if n < MIN_AGENTS[model]:
        notes.append(
            f"small sample: {n} agents for a {model.upper()} model (at least "
            f"{MIN_AGENTS[model]} recommended); the estimates and their standard errors are "
            "unstable"
        )
    if not fit.converged:
        notes.append(
            f"the estimation did not converge (largest score {fit.max_gradient:.2g} after "
            f"{fit.em_iterations} EM and {fit.newton_iterations} Newton iterations)"
        )
    if not pd:
        notes.append(
            "the information matrix is not positive definite: no standard errors (the model "
            "is not identified by these data)"
        )
    for code in ("extreme", "imprecise", "negative", "bound", "steep", "misfit"):
        k = sum(code in f for f in flags)
        if k:
            notes.append(f"{k} item(s) flagged {code}: {FLAG_MEANINGS[code]}")
    return tuple(notes)


def rescale(b: np.ndarray, low: float, high: float) -> np.ndarray:
    r"""Map IRT difficulties linearly onto ``[low, high]`` ("the same range", Fig. S7).

    .. math:: d_i = \ell + (b_i - \min b)\,\frac{h - \ell}{\max b - \min b}

    All-equal difficulties map to the middle of the range.
    """
    lo, hi = float(np.min(b)), float(np.max(b))
    if hi == lo:
        return np.full(b.shape, (low + high) / 2)
    return low + (b - lo) * ((high - low) / (hi - lo))
