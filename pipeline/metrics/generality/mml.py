r"""Marginal maximum likelihood for the 1PL and 2PL models: Bock–Aitkin EM, then Newton.

The estimator behind :func:`pipeline.metrics.generality.irt.fit_irt`. Abilities are integrated
out over a fixed quadrature of the standard normal (:func:`quadrature`); item parameters are
estimated in slope–intercept form :math:`z = a\theta + c` (difficulty :math:`b = -c/a`).

EM (Bock & Aitkin 1981) is robust far from the optimum but slow near it; once its steps are
small, Newton–Raphson on the marginal log-likelihood with the observed information (Louis
1982) converges quadratically, and the same information matrix gives the standard errors.
Everything is deterministic (no random start).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.special import expit, logsumexp

#: Quadrature points and range (those of R mirt's default for one dimension).
QUAD_POINTS = 61
QUAD_LIMIT = 6.0
#: A slope is held within ±A_MAX (an item that separates agents perfectly has no finite MLE).
A_MAX = 20.0
#: EM hands over to Newton when no parameter moves more than EM_SWITCH; EM_TOL is EM's own
#: stopping rule (R mirt's default) where Newton cannot be used.
EM_SWITCH = 1e-3
EM_TOL = 1e-4
EM_MAX_ITER = 500
NEWTON_MAX_ITER = 50
#: Converged: the largest absolute score (gradient of the log-likelihood) below this.
GRAD_TOL = 1e-5


@dataclass(frozen=True)
class Quadrature:
    """Nodes θ_q and normalised weights w_q of the ability distribution N(0, 1)."""

    nodes: np.ndarray
    weights: np.ndarray


def quadrature(points: int = QUAD_POINTS, limit: float = QUAD_LIMIT) -> Quadrature:
    r"""Equally spaced nodes on :math:`[-L, L]`, weights :math:`\propto \phi(\theta_q)`, sum 1."""
    nodes = np.linspace(-limit, limit, points)
    w = np.exp(-0.5 * nodes * nodes)
    return Quadrature(nodes, w / w.sum())


@dataclass(frozen=True)
class MmlFit:
    r"""The result of :func:`estimate`.

    Attributes
    ----------
    a, c : np.ndarray
        Slopes and intercepts per item (:math:`P = \sigma(a\theta + c)`).
    information : np.ndarray
        Observed information of the free parameters at the estimate.
    jacobian : np.ndarray
        Maps the free parameters onto ``[a_1..a_p, c_1..c_p]`` (:func:`jacobian`).
    loglik : float
        Marginal log-likelihood.
    em_iterations, newton_iterations : int
        Iterations of each phase.
    max_gradient : float
        Largest absolute score of a free parameter at the estimate.
    converged : bool
        ``max_gradient`` < :data:`GRAD_TOL` (slopes held at ±:data:`A_MAX` are not free).
    at_bound : np.ndarray
        Items whose slope is held at ±:data:`A_MAX`.
    """

    a: np.ndarray
    c: np.ndarray
    information: np.ndarray
    jacobian: np.ndarray
    loglik: float
    em_iterations: int
    newton_iterations: int
    max_gradient: float
    converged: bool
    at_bound: np.ndarray


@dataclass(frozen=True)
class Data:
    """0/1 responses split into indicator matrices (NaN = not answered)."""

    ones: np.ndarray  # 1 where answered correctly
    zeros: np.ndarray  # 1 where answered incorrectly
    answered: np.ndarray  # 1 where answered

    @classmethod
    def of(cls, y: np.ndarray) -> Data:
        """Indicators of a 0/1/NaN matrix."""
        present = ~np.isnan(y)
        ones = (present & (y == 1)).astype(float)
        return cls(ones, present.astype(float) - ones, present.astype(float))


def node_loglik(d: Data, a: np.ndarray, c: np.ndarray, quad: Quadrature) -> np.ndarray:
    r""":math:`\log P(y_j \mid \theta_q)` for every agent and node: ``(agents, nodes)``."""
    z = np.outer(a, quad.nodes) + c[:, None]
    return np.asarray(d.ones @ -np.logaddexp(0.0, -z) + d.zeros @ -np.logaddexp(0.0, z))


def posterior(d: Data, a: np.ndarray, c: np.ndarray, quad: Quadrature) -> tuple[np.ndarray, float]:
    """Posterior weights of each agent over the nodes, and the marginal log-likelihood."""
    lj = node_loglik(d, a, c, quad) + np.log(quad.weights)
    norm = logsumexp(lj, axis=1)
    return np.exp(lj - norm[:, None]), float(norm.sum())


def _scores(d: Data, post: np.ndarray, a: np.ndarray, c: np.ndarray, quad: Quadrature) -> tuple:
    """Expected counts and the score (gradient) of every item's (a, c)."""
    r = d.ones.T @ post  # expected correct answers at each node, (items, nodes)
    n = d.answered.T @ post  # expected answers at each node
    p = expit(np.outer(a, quad.nodes) + c[:, None])
    resid = r - n * p
    return n, p, resid @ quad.nodes, resid.sum(axis=1)


def _m_step(
    n: np.ndarray, p: np.ndarray, ga: np.ndarray, gc: np.ndarray, quad: Quadrature, one: bool
) -> tuple[np.ndarray, np.ndarray]:
    """One Newton step of the expected complete-data log-likelihood: (Δa, Δc)."""
    w = n * p * (1.0 - p)
    t = quad.nodes
    haa, hac, hcc = w @ (t * t), w @ t, w.sum(axis=1)
    if one:
        # arrow-shaped Hessian: eliminate the intercepts (Schur complement on the slope)
        hcc = np.maximum(hcc, 1e-12)
        s = haa.sum() - (hac * hac / hcc).sum()
        da = (ga.sum() - (hac * gc / hcc).sum()) / max(s, 1e-12)
        return np.full(ga.shape, da), (gc - hac * da) / hcc
    det = np.maximum(haa * hcc - hac * hac, 1e-12)
    return (hcc * ga - hac * gc) / det, (haa * gc - hac * ga) / det


def observed_information(d: Data, a: np.ndarray, c: np.ndarray, quad: Quadrature) -> np.ndarray:
    r"""Observed information of ``[a_1..a_p, c_1..c_p]`` by Louis' (1982) identity.

    With :math:`s_{jq}` the complete-data score of agent j at node q (for item i,
    :math:`m_{ji}(y_{ji} - P_{iq})(\theta_q, 1)`), :math:`H_q` the complete-data Hessian and
    :math:`\pi_{jq}` the posterior weights,

    .. math::

        I = -\sum_j \Big[\sum_q \pi_{jq} (H_{jq} + s_{jq} s_{jq}^\top)
            - \bar s_j \bar s_j^\top\Big], \qquad \bar s_j = \sum_q \pi_{jq} s_{jq},

    exactly minus the Hessian of the marginal log-likelihood. Cost: nodes × agents × items².

    References
    ----------
    T. A. Louis, Finding the observed information matrix when using the EM algorithm,
    Journal of the Royal Statistical Society B 44, 226–233 (1982).
    """
    post, _ = posterior(d, a, c, quad)
    t = quad.nodes
    p = expit(np.outer(a, t) + c[:, None])  # (items, nodes)
    k = a.size
    n = d.answered.T @ post
    w = n * p * (1.0 - p)
    info = np.zeros((2 * k, 2 * k))
    # complete-data information: block diagonal per item
    idx = np.arange(k)
    info[idx, idx] = w @ (t * t)
    info[idx, idx + k] = info[idx + k, idx] = w @ t
    info[idx + k, idx + k] = w.sum(axis=1)
    # minus the posterior second moment of the complete-data scores
    s0 = np.zeros((k, k))
    s1 = np.zeros((k, k))
    s2 = np.zeros((k, k))
    y = d.ones
    for q in range(t.size):
        e = d.answered * (y - p[:, q])  # (agents, items)
        m = e.T @ (e * post[:, q : q + 1])
        s0 += m
        s1 += t[q] * m
        s2 += t[q] * t[q] * m
    info -= np.block([[s2, s1], [s1, s0]])
    # plus the outer product of the posterior mean scores
    g1 = d.answered * (y * (post @ t)[:, None] - (post * t) @ p.T)
    g0 = d.answered * (y - post @ p.T)
    g = np.hstack([g1, g0])
    info += g.T @ g
    return (info + info.T) / 2


def jacobian(k: int, one_slope: bool, fixed_slopes: np.ndarray) -> np.ndarray:
    """Map the free parameters onto ``[a_1..a_p, c_1..c_p]``.

    2PL: one slope per item; 1PL: one slope shared by every item. Slopes held at their bound
    (``fixed_slopes``) are not free.
    """
    if one_slope:
        cols = [] if fixed_slopes.any() else [np.concatenate([np.ones(k), np.zeros(k)])]
    else:
        cols = [np.eye(2 * k)[:, i] for i in range(k) if not fixed_slopes[i]]
    cols += [np.eye(2 * k)[:, k + i] for i in range(k)]
    return np.stack(cols, axis=1)


def _newton(
    d: Data, a: np.ndarray, c: np.ndarray, quad: Quadrature, jac: np.ndarray
) -> tuple[np.ndarray, np.ndarray, float, int]:
    """Newton–Raphson on the marginal log-likelihood; returns (a, c, ℓ, accepted steps)."""
    k = a.size
    post, loglik = posterior(d, a, c, quad)
    steps = 0
    while steps < NEWTON_MAX_ITER:
        _, _, ga, gc = _scores(d, post, a, c, quad)
        grad = jac.T @ np.concatenate([ga, gc])
        if np.abs(grad).max() < GRAD_TOL * 1e-2:
            break
        info = jac.T @ observed_information(d, a, c, quad) @ jac
        try:
            np.linalg.cholesky(info)  # not positive definite: Newton has no ascent direction
            delta = jac @ np.linalg.solve(info, grad)
        except np.linalg.LinAlgError:
            break
        for _ in range(30):
            na = np.clip(a + delta[:k], -A_MAX, A_MAX)
            nc = c + delta[k:]
            npost, nll = posterior(d, na, nc, quad)
            if nll >= loglik - 1e-12 * abs(loglik):
                break
            delta = delta / 2
        else:
            break
        a, c, post, loglik = na, nc, npost, nll
        steps += 1
        if float(np.abs(delta).max()) < 1e-12:
            break
    return a, c, loglik, steps


def _em(
    d: Data,
    a: np.ndarray,
    c: np.ndarray,
    quad: Quadrature,
    one_slope: bool,
    tol: float,
    budget: int,
) -> tuple[np.ndarray, np.ndarray, int]:
    """Bock–Aitkin EM until no parameter moves more than ``tol``; returns (a, c, iterations)."""
    done = 0
    while done < budget:
        done += 1
        post, _ = posterior(d, a, c, quad)
        n, p, ga, gc = _scores(d, post, a, c, quad)
        da, dc = _m_step(n, p, ga, gc, quad, one_slope)
        step = max(float(np.abs(da).max()), float(np.abs(dc).max()))
        if step > 1.0:  # far from the optimum: keep EM's steps moderate
            da, dc = da / step, dc / step
        na = np.clip(a + da, -A_MAX, A_MAX)
        # a slope held at its bound does not count as moving (its intercept still does)
        moved = max(float(np.abs(na - a).max()), float(np.abs(dc).max()))
        a, c = na, c + dc
        if moved < tol:
            break
    return a, c, done


def estimate(y: np.ndarray, one_slope: bool, quad: Quadrature | None = None) -> MmlFit:
    r"""Maximise the marginal likelihood of the 1PL (``one_slope``) or 2PL model.

    .. math::

        \ell(a, c) = \sum_j \log \sum_q w_q \prod_{i: m_{ji} = 1}
            P_{iq}^{y_{ji}} (1 - P_{iq})^{1 - y_{ji}}, \qquad
            P_{iq} = \sigma(a_i \theta_q + c_i),

    :math:`m_{ji}` = 1 where agent j answered item i. Start: :math:`a = 1`, :math:`c_i =
    1.16\,\mathrm{logit}(\bar y_i)`. EM (expected counts at the nodes, one Newton step per
    item and iteration) until no parameter moves more than :data:`EM_SWITCH`; then Newton on
    :math:`\ell` with the observed information (:func:`observed_information`), halving a
    step until :math:`\ell` does not decrease, until the largest absolute score is below
    :data:`GRAD_TOL`. Where Newton cannot go on (information not positive definite), EM
    continues to :data:`EM_TOL` within :data:`EM_MAX_ITER` iterations in all. A slope that
    reaches ±:data:`A_MAX` (an item that orders the agents perfectly has no finite maximum)
    is held there and is no longer a free parameter.

    Parameters
    ----------
    y : np.ndarray
        ``(agents, items)`` in {0, 1} or NaN, every item with both values present.
    one_slope : bool
        1PL (one slope shared by all items) instead of 2PL.
    quad : Quadrature, optional
        Defaults to :func:`quadrature`.

    Returns
    -------
    MmlFit

    References
    ----------
    R. D. Bock & M. Aitkin, Marginal maximum likelihood estimation of item parameters:
    application of an EM algorithm, Psychometrika 46, 443–459 (1981).
    """
    quad = quad or quadrature()
    d = Data.of(y)
    k = y.shape[1]
    with np.errstate(invalid="ignore", divide="ignore"):
        pbar = d.ones.sum(axis=0) / d.answered.sum(axis=0)
    pbar = np.clip(pbar, 1e-3, 1 - 1e-3)
    a = np.ones(k)
    c = 1.16 * np.log(pbar / (1.0 - pbar))
    a, c, em = _em(d, a, c, quad, one_slope, EM_SWITCH, EM_MAX_ITER)
    at_bound = np.abs(a) >= A_MAX * (1 - 1e-9)
    jac = jacobian(k, one_slope, at_bound)
    a, c, loglik, newton = _newton(d, a, c, quad, jac)

    def largest_score(a: np.ndarray, c: np.ndarray) -> float:
        post, _ = posterior(d, a, c, quad)
        _, _, ga, gc = _scores(d, post, a, c, quad)
        return float(np.abs(jac.T @ np.concatenate([ga, gc])).max())

    max_grad = largest_score(a, c)
    if max_grad >= GRAD_TOL and em < EM_MAX_ITER:
        a, c, more = _em(d, a, c, quad, one_slope, EM_TOL, EM_MAX_ITER - em)
        em += more
        at_bound = np.abs(a) >= A_MAX * (1 - 1e-9)
        jac = jacobian(k, one_slope, at_bound)
        max_grad = largest_score(a, c)
        _, loglik = posterior(d, a, c, quad)
    info = jac.T @ observed_information(d, a, c, quad) @ jac
    return MmlFit(
        a=a,
        c=c,
        information=info,
        jacobian=jac,
        loglik=loglik,
        em_iterations=em,
        newton_iterations=newton,
        max_gradient=max_grad,
        converged=bool(max_grad < GRAD_TOL),
        at_bound=at_bound,
    )
