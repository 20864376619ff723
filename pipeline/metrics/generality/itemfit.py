"""Item fit of a 1PL/2PL model: infit and outfit mean squares, and Orlando–Thissen S-X².

Two views of whether an item behaves as the model says. Infit/outfit compare each answer with
its model probability at the agent's estimated ability (Rasch practice: values near 1 fit,
below 0.5 or above 1.5 are unproductive for measurement). S-X² compares, within each raw-score
group, the observed proportion correct with the one the model implies after integrating the
ability out (no ability estimates needed), and gives a χ² p-value.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.special import chdtrc, expit  # chdtrc: chi2.sf without importing scipy.stats

from pipeline.metrics.generality.mml import Quadrature, quadrature

#: Mean squares outside this range are flagged (Linacre's "productive for measurement").
MNSQ_RANGE = (0.5, 1.5)
#: Expected cell count below which adjacent score groups are merged (R mirt's default).
MIN_EXPECTED = 1.0
#: S-X² is computed on at most this many items (the recursion costs items² per item).
SX2_MAX_ITEMS = 200


@dataclass(frozen=True)
class MeanSquares:
    """Per item: outfit and infit mean squares (NaN for an item nobody answered)."""

    infit: np.ndarray
    outfit: np.ndarray


@dataclass(frozen=True)
class SX2:
    """Per item: the S-X² statistic, its degrees of freedom and p-value (NaN when df < 1)."""

    statistic: np.ndarray
    df: np.ndarray
    p_value: np.ndarray


def mean_squares(y: np.ndarray, a: np.ndarray, c: np.ndarray, theta: np.ndarray) -> MeanSquares:
    r"""Outfit and infit mean squares at the given abilities.

    With :math:`P_{ji} = \sigma(a_i\hat\theta_j + c_i)`, :math:`W_{ji} = P_{ji}(1 - P_{ji})`
    and sums over the agents who answered item i (:math:`N_i` of them):

    .. math::

        \text{outfit}_i = \frac{1}{N_i}\sum_j \frac{(y_{ji} - P_{ji})^2}{W_{ji}},\qquad
        \text{infit}_i = \frac{\sum_j (y_{ji} - P_{ji})^2}{\sum_j W_{ji}}.

    Both have expectation about 1 under the model; outfit is sensitive to unexpected answers
    far from the item's difficulty (lucky guesses, careless slips), infit to misfit near it.
    With EAP abilities (shrunk toward 0) rather than Rasch person estimates the values are
    close to, not equal to, those of Rasch programs.

    References
    ----------
    B. D. Wright & G. N. Masters, Rating Scale Analysis, MESA Press (1982), ch. 5.
    J. M. Linacre, What do infit and outfit, mean-square and standardized mean?, Rasch
    Measurement Transactions 16(2), 878 (2002).
    """
    present = ~np.isnan(y)
    p = expit(np.outer(theta, a) + c)
    w = p * (1 - p)
    r2 = np.where(present, (np.nan_to_num(y) - p) ** 2, 0.0)
    n = present.sum(axis=0)
    with np.errstate(invalid="ignore", divide="ignore"):
        outfit = np.where(present, r2 / np.maximum(w, 1e-300), 0.0).sum(axis=0) / n
        infit = r2.sum(axis=0) / np.where(present, w, 0.0).sum(axis=0)
    return MeanSquares(infit=infit, outfit=outfit)


def _score_distribution(p: np.ndarray) -> np.ndarray:
    """Lord–Wingersky: P(raw score = s | θ_q) for s = 0..k, from ``(k, nodes)`` P."""
    f = np.ones((1, p.shape[1]))
    for row in p:
        f = np.vstack([f * (1 - row), np.zeros((1, p.shape[1]))]) + np.vstack(
            [np.zeros((1, p.shape[1])), f * row]
        )
    return f


def _collapse(n: np.ndarray, obs: np.ndarray, exp: np.ndarray) -> list[tuple[float, float, float]]:
    """Merge adjacent score groups until both expected cells are ≥ MIN_EXPECTED."""
    groups: list[list[float]] = []
    acc = [0.0, 0.0, 0.0]  # N, N·O, N·E
    for ns, o, e in zip(n, obs, exp, strict=True):
        if ns == 0:
            continue
        acc = [acc[0] + ns, acc[1] + ns * o, acc[2] + ns * e]
        if acc[2] >= MIN_EXPECTED and acc[0] - acc[2] >= MIN_EXPECTED:
            groups.append(acc)
            acc = [0.0, 0.0, 0.0]
    if acc[0] > 0:
        if groups:
            groups[-1] = [g + x for g, x in zip(groups[-1], acc, strict=True)]
        else:
            groups.append(acc)
    return [(g[0], g[1] / g[0], g[2] / g[0]) for g in groups]


def s_x2(
    y: np.ndarray, a: np.ndarray, c: np.ndarray, params: int, quad: Quadrature | None = None
) -> SX2 | None:
    r"""Orlando & Thissen's S-X² item fit statistic.

    For raw scores :math:`s = 1, \dots, k-1` with :math:`N_s` agents, observed proportion
    :math:`O_{is}` correct on item i, and the model's

    .. math::

        E_{is} = \frac{\sum_q w_q P_{iq} f^{(-i)}_{s-1}(\theta_q)}{\sum_q w_q f_s(\theta_q)},
        \qquad S\text{-}X^2_i = \sum_s N_s \frac{(O_{is} - E_{is})^2}{E_{is}(1 - E_{is})},

    :math:`f_s` (:math:`f^{(-i)}_s`) the probability of raw score s (without item i) by
    the Lord–Wingersky recursion. Adjacent score groups are merged until both expected cell
    counts are at least :data:`MIN_EXPECTED`; df = groups − ``params`` (the item's free
    parameters: 2 for 2PL, 1 for 1PL).

    Returns
    -------
    SX2 or None
        None with missing responses (raw scores are not comparable) or more than
        :data:`SX2_MAX_ITEMS` items.

    References
    ----------
    M. Orlando & D. Thissen, Likelihood-based item-fit indices for dichotomous item
    response theory models, Applied Psychological Measurement 24, 50–64 (2000).
    F. M. Lord & M. S. Wingersky, Comparison of IRT true-score and equipercentile observed-
    score "equatings", Applied Psychological Measurement 8, 453–461 (1984).
    """
    if np.isnan(y).any() or y.shape[1] > SX2_MAX_ITEMS:
        return None
    quad = quad or quadrature()
    k = y.shape[1]
    p = expit(np.outer(a, quad.nodes) + c[:, None])
    full = _score_distribution(p) @ quad.weights  # marginal P(score = s)
    raw = y.sum(axis=1).astype(int)
    n = np.bincount(raw, minlength=k + 1).astype(float)
    stat = np.full(k, np.nan)
    df = np.full(k, np.nan)
    for i in range(k):
        rest = _score_distribution(np.delete(p, i, axis=0))  # (k, nodes): scores 0..k-1
        s = np.arange(1, k)
        with np.errstate(invalid="ignore", divide="ignore"):
            exp = ((p[i] * rest[s - 1]) @ quad.weights) / full[s]
            obs = np.array([y[raw == v, i].mean() if n[v] else np.nan for v in s])
        groups = _collapse(n[s], obs, exp)
        g = len(groups) - params
        if g < 1:
            continue
        stat[i] = sum(ng * (o - e) ** 2 / (e * (1 - e)) for ng, o, e in groups)
        df[i] = g
    with np.errstate(invalid="ignore"):
        pv = np.where(np.isfinite(stat), chdtrc(np.nan_to_num(df, nan=1.0), stat), np.nan)
    return SX2(statistic=stat, df=df, p_value=pv)
