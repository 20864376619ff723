"""The Rasch model by conditional maximum likelihood, and Andersen's likelihood-ratio test.

A global test of the 1PL: if the Rasch model holds, item difficulties estimated in any two
groups of agents are the same (up to sampling error). Andersen (1973) compares the conditional
likelihood of one set of difficulties for everyone with that of separate sets for agents with
low and high raw scores. Conditioning on the raw score removes the abilities from the
likelihood, so the test does not depend on an assumed ability distribution.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.optimize import minimize
from scipy.special import chdtrc  # chi2.sf without importing scipy.stats (0.7 s)

#: The test is computed on at most this many items (conditional likelihood costs items³).
MAX_ITEMS = 400


@dataclass(frozen=True)
class CmlFit:
    """Rasch difficulties by CML (sum zero) and the conditional log-likelihood."""

    beta: np.ndarray
    loglik: float
    converged: bool


@dataclass(frozen=True)
class AndersenTest:
    r"""The result of :func:`andersen_test`.

    Attributes
    ----------
    statistic : float
        :math:`LR = 2(\sum_g \ell_g - \ell)`.
    df : int
        :math:`(G - 1)(k - 1)`.
    p_value : float
        Upper tail of :math:`\chi^2_{df}`.
    agents : int
        Agents with complete responses used.
    low, high : int
        Agents in each group (raw score ≤ median, > median).
    excluded : tuple of str
        Items constant within a group, left out of every fit.
    loglik : float
        Conditional log-likelihood of the whole sample.
    """

    statistic: float
    df: int
    p_value: float
    agents: int
    low: int
    high: int
    excluded: tuple[str, ...]
    loglik: float


def _conditional(beta: np.ndarray, scores: np.ndarray, counts: np.ndarray) -> tuple:
    r"""Conditional log-likelihood and its gradient in β.

    .. math::

        \ell_c(\beta) = -\sum_i s_i \beta_i - \sum_r n_r \log\gamma_r(\varepsilon),\qquad
        \frac{\partial \ell_c}{\partial \beta_i} = -s_i + \sum_r n_r
            \frac{\varepsilon_i \gamma^{(i)}_{r-1}}{\gamma_r},

    :math:`\varepsilon_i = e^{-\beta_i}`, :math:`\gamma_r` the elementary symmetric
    functions and :math:`\gamma^{(i)}` those without item i (prefix and suffix products).
    """
    k = beta.size
    eps = np.exp(-(beta - beta.mean()))
    prefix = [(np.ones(1), 0.0)]
    for i in range(k):
        prefix.append(_esf_step(prefix[-1], eps[i]))
    suffix = [(np.ones(1), 0.0)]
    for i in range(k - 1, -1, -1):
        suffix.append(_esf_step(suffix[-1], eps[i]))
    suffix = suffix[::-1]  # suffix[i] = items i..k-1
    gamma, gscale = prefix[k]
    with np.errstate(divide="ignore"):
        log_gamma = np.log(gamma) + gscale
    r = np.arange(k + 1)
    used = counts > 0
    shift = beta.mean() * r  # γ_r(e^{-β}) = e^{-r·mean β} γ_r(ε)
    loglik = -float(scores @ beta) - float(counts[used] @ (log_gamma[used] - shift[used]))
    grad = -scores.astype(float)
    for i in range(k):
        (pv, ps), (sv, ss) = prefix[i], suffix[i + 1]
        without = np.convolve(pv, sv)  # γ^{(i)}_0..γ^{(i)}_{k-1}, scaled by e^{ps+ss}
        with np.errstate(divide="ignore", invalid="ignore"):
            log_without = np.log(without) + ps + ss
            prob = np.exp(np.log(eps[i]) + log_without[r[used] - 1] - log_gamma[used])
        prob = np.where(r[used] == 0, 0.0, prob)
        grad[i] += float(counts[used] @ prob)
    return loglik, grad


def _esf_step(state: tuple[np.ndarray, float], e: float) -> tuple[np.ndarray, float]:
    g, s = state
    nxt = np.concatenate([g, [0.0]]) + e * np.concatenate([[0.0], g])
    top = float(nxt.max())
    return nxt / top, s + float(np.log(top))


def fit_cml(y: np.ndarray) -> CmlFit:
    r"""Rasch item difficulties by conditional maximum likelihood (normalised to sum zero).

    :math:`P(y_{ji} = 1) = \exp(\theta_j - \beta_i) / (1 + \exp(\theta_j - \beta_i))`; the
    raw score :math:`r_j` is sufficient for :math:`\theta_j`, so the likelihood of the
    responses given the raw scores (:func:`_conditional`) involves β only. Agents with a raw
    score of 0 or k carry no information and drop out. Maximised by BFGS on
    :math:`\beta_1..\beta_{k-1}` (:math:`\beta_k = -\sum` the others).

    Parameters
    ----------
    y : np.ndarray
        ``(agents, items)`` complete 0/1 responses, every item with both values among the
        agents whose raw score is neither 0 nor k.

    References
    ----------
    E. B. Andersen, Asymptotic properties of conditional maximum-likelihood estimators,
    Journal of the Royal Statistical Society B 32, 283–301 (1970).
    """
    k = y.shape[1]
    raw = y.sum(axis=1).astype(int)
    keep = (raw > 0) & (raw < k)
    scores = y[keep].sum(axis=0)
    counts = np.bincount(raw[keep], minlength=k + 1).astype(float)
    p = np.clip(scores / max(int(keep.sum()), 1), 1e-3, 1 - 1e-3)
    start = -np.log(p / (1 - p))
    start -= start.mean()

    def negative(free: np.ndarray) -> tuple[float, np.ndarray]:
        beta = np.concatenate([free, [-free.sum()]])
        ll, g = _conditional(beta, scores, counts)
        return -ll, -(g[:-1] - g[-1])

    opt = minimize(
        negative, start[:-1], jac=True, method="BFGS", options={"gtol": 1e-8, "maxiter": 2000}
    )
    beta = np.concatenate([opt.x, [-opt.x.sum()]])
    loglik, grad = _conditional(beta, scores, counts)
    return CmlFit(beta, loglik, bool(np.abs(grad - grad.mean()).max() < 1e-4))


def andersen_test(y: np.ndarray, items: tuple[str, ...]) -> AndersenTest | None:
    r"""Andersen's likelihood-ratio test of the Rasch model, median split of the raw score.

    .. math::

        LR = 2\Big(\sum_{g} \ell_c(\hat\beta^{(g)}; g) - \ell_c(\hat\beta; \text{all})\Big)
        \;\sim\; \chi^2_{(G - 1)(k - 1)}

    under the Rasch model, with G = 2 groups: raw score ≤ median and > median (R eRm's
    ``LRtest`` default ``splitcr = "median"``). Items constant within a group (no
    conditional information there) are left out of every fit and listed, as eRm does.
    Only agents with complete responses take part (eRm groups missing-data patterns
    instead: with missing responses the two differ).

    Returns
    -------
    AndersenTest or None
        None when it cannot be computed: fewer than 2 items left, an empty group, more than
        :data:`MAX_ITEMS` items, or non-finite likelihoods.

    Notes
    -----
    On the mazes (496 × 23) LR = 49.43, df = 22, p = 0.0007, R eRm 1.0-2's ``LRtest``.

    References
    ----------
    E. B. Andersen, A goodness of fit test for the Rasch model, Psychometrika 38, 123–140
    (1973). P. Mair & R. Hatzinger, Extended Rasch modeling: the eRm package, Journal of
    Statistical Software 20(9) (2007).
    """
    complete = y[~np.isnan(y).any(axis=1)]
    if complete.shape[0] < 4 or complete.shape[1] > MAX_ITEMS:
        return None
    raw = complete.sum(axis=1)
    high = raw > np.median(raw)
    groups = [complete[~high], complete[high]]
    if min(g.shape[0] for g in groups) == 0:
        return None
    constant = np.zeros(complete.shape[1], dtype=bool)
    for g in [*groups, complete]:
        constant |= g.min(axis=0) == g.max(axis=0)
    keep = ~constant
    if int(keep.sum()) < 2:
        return None
    full = fit_cml(complete[:, keep])
    parts = [fit_cml(g[:, keep]) for g in groups]
    stat = 2.0 * (sum(p.loglik for p in parts) - full.loglik)
    if not np.isfinite(stat):
        return None
    df = (len(groups) - 1) * (int(keep.sum()) - 1)
    return AndersenTest(
        statistic=float(max(stat, 0.0)),
        df=df,
        p_value=float(chdtrc(df, max(stat, 0.0))),  # df >= 1 here
        agents=int(complete.shape[0]),
        low=int(groups[0].shape[0]),
        high=int(groups[1].shape[0]),
        excluded=tuple(i for i, c in zip(items, constant, strict=True) if c),
        loglik=full.loglik,
    )
