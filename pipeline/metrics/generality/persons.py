"""Person abilities (EAP θ with its standard error) and reliability under a fitted 1PL/2PL.

Given item parameters, each agent's ability is summarised by its posterior over the
quadrature nodes of the N(0, 1) ability distribution (the same nodes as the estimation,
:mod:`pipeline.metrics.generality.mml`): the posterior mean (EAP) and standard deviation.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.special import expit

from pipeline.metrics.generality.mml import Data, Quadrature, posterior, quadrature


@dataclass(frozen=True)
class Abilities:
    """Per agent: EAP ability, its posterior standard deviation, answers and raw score."""

    theta: np.ndarray
    se: np.ndarray
    answered: np.ndarray
    score: np.ndarray


def eap(y: np.ndarray, a: np.ndarray, c: np.ndarray, quad: Quadrature | None = None) -> Abilities:
    r"""Expected a posteriori abilities and their standard errors.

    .. math::

        \hat\theta_j = \sum_q \theta_q \pi_{jq},\qquad
        \mathrm{SE}(\hat\theta_j) = \Big(\sum_q \theta_q^2 \pi_{jq} - \hat\theta_j^2\Big)^{1/2},
        \qquad \pi_{jq} \propto w_q \prod_i P_{iq}^{y_{ji}} (1 - P_{iq})^{1 - y_{ji}},

    over the items agent j answered (:math:`P_{iq} = \sigma(a_i\theta_q + c_i)`). EAP is
    finite for every response pattern (all correct or all wrong included) and shrinks
    toward the population mean 0 when an agent answered few items; an agent that answered
    nothing gets the prior: θ = 0, SE = 1.

    References
    ----------
    R. D. Bock & R. J. Mislevy, Adaptive EAP estimation of ability in a microcomputer
    environment, Applied Psychological Measurement 6, 431–444 (1982).
    """
    quad = quad or quadrature()
    d = Data.of(y)
    post, _ = posterior(d, a, c, quad)
    theta = post @ quad.nodes
    var = np.maximum(post @ (quad.nodes**2) - theta**2, 0.0)
    return Abilities(
        theta=theta,
        se=np.sqrt(var),
        answered=d.answered.sum(axis=1).astype(int),
        score=d.ones.sum(axis=1),
    )


def empirical_reliability(ab: Abilities) -> float:
    r"""Empirical (EAP) reliability of the measured agents.

    .. math::

        \rho_{emp} = \frac{\mathrm{Var}(\hat\theta)}{\mathrm{Var}(\hat\theta)
            + \overline{\mathrm{SE}^2}},

    the share of the estimated abilities' variance that is not measurement error; NaN for
    fewer than 2 agents. (R mirt's ``empirical_rxx``; Var with divisor n − 1.)

    References
    ----------
    R. P. Chalmers, mirt: a multidimensional item response theory package for the R
    environment, Journal of Statistical Software 48(6) (2012).
    """
    if ab.theta.size < 2:
        return float("nan")
    v = float(np.var(ab.theta, ddof=1))
    return v / (v + float(np.mean(ab.se**2)))


def information_curve(a: np.ndarray, c: np.ndarray, theta: np.ndarray) -> np.ndarray:
    r""":math:`I(\theta) = \sum_i a_i^2 P_i(\theta)(1 - P_i(\theta))` at each θ."""
    p = expit(np.outer(theta, a) + c)
    return np.asarray((a * a * p * (1 - p)).sum(axis=1))


def marginal_reliability(a: np.ndarray, c: np.ndarray, quad: Quadrature | None = None) -> float:
    r"""Marginal reliability of the test over the N(0, 1) ability distribution.

    .. math::

        \rho = \frac{1}{1 + \int \phi(\theta)\, I(\theta)^{-1}\, d\theta},

    the error variance :math:`1/I(\theta)` averaged over the population (variance 1),
    integrated on the quadrature nodes (information floored at :math:`10^{-10}`). It
    describes the test for the assumed population; :func:`empirical_reliability` describes
    the agents measured.

    References
    ----------
    B. F. Green, R. D. Bock, L. G. Humphreys, R. L. Linn & M. D. Reckase, Technical guidelines
    for assessing computerized adaptive tests, Journal of Educational Measurement 21,
    347–360 (1984).
    """
    quad = quad or quadrature()
    info = np.maximum(information_curve(a, c, quad.nodes), 1e-10)
    return float(1.0 / (1.0 + quad.weights @ (1.0 / info)))
