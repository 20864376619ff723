"""Relative similarity of two tests from a baseline agent's scores (Pereyda & Holder 2020, eq. 3).

A *test* is anything an agent can be scored on (a dataset, a family of environments). Two tests
A and B are merged into a test AB(p) that holds a proportion ``p`` of A; a baseline agent π is
scored on A, on B and on AB(p). How far the merged score falls towards the harder test measures
how much the two tests interfere, which the paper reads as their similarity.

Conventions (all tested, see ``docs/similarity.md``):

* **A is the easier test** (``V_A > V_B``) whatever order the caller gives; swapping the
  arguments swaps ``p`` to ``1 - p`` and never changes ``S``. Eq. 3 itself changes sign under
  a swap, which is why the order has to be fixed.
* ``V_A = V_B``: ``S`` is 0/0, **undefined** (``nan`` with a reason), never a division error.
* **Sufficiency** ``V_B <= V_AB <= V_A``. Outside it the absolute values of eq. 3 saturate at
  ``±1``; the value is reported as eq. 3 gives it, flagged ``insufficient``, and the affine
  extension (``linear``) is reported next to it.
* A test merged **with itself** is identical to itself: ``S = 1`` by definition.
* ``p`` does not appear in eq. 3 (the *paper* convention). Under a sampling merge of unrelated
  tests ``V_AB(p) = p V_A + (1-p) V_B``, where eq. 3 gives ``1 - 2p``: zero only at ``p = 1/2``.
  The *mixture* convention re-centres the scale on that point (equal to eq. 3 at ``p = 1/2``).

References
----------
.. [1] C. Pereyda and L. Holder, "Measuring the Relative Similarity and Difficulty Between AI
   Benchmark Problems", AAAI 2020 Workshop on Evaluating Evaluation of AI Systems (Meta-Eval).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Literal

import numpy as np
from numpy.typing import ArrayLike, NDArray

Convention = Literal["paper", "mixture"]
Status = Literal["ok", "insufficient", "undefined", "identity"]
CONVENTIONS: tuple[str, ...] = ("paper", "mixture")


@dataclass(frozen=True)
class Similarity:
    """The similarity of one pair of tests, A the easier one.

    Attributes
    ----------
    value : float
        ``S`` in ``[-1, 1]``; ``nan`` when undefined.
    status : {"ok", "insufficient", "undefined", "identity"}
        ``ok`` (sufficient agent), ``insufficient`` (``V_AB`` outside ``[V_B, V_A]``; ``value`` is
        saturated at ``±1``), ``undefined`` (``V_A = V_B``), ``identity`` (a test with itself).
    swapped : bool
        True when the caller's second test was the easier one and the pair was swapped.
    v_a, v_b, v_ab : float
        Scores on the easier test A, the harder test B and the merge.
    p : float
        Proportion of the easier test A in the merge.
    convention : {"paper", "mixture"}
        See :func:`similarity`.
    linear : float
        The affine form of the convention (equal to ``value`` when sufficient); ``nan`` when
        undefined.
    unrelated : float
        The value ``S`` takes when ``V_AB = p V_A + (1 - p) V_B`` (a sampling merge of two tests
        that do not interact): ``1 - 2p`` under the paper convention, ``0`` under the mixture one.
    reason : str
        Why the value is undefined or flagged, empty when ``ok``.
    """

    value: float
    status: Status
    swapped: bool
    v_a: float
    v_b: float
    v_ab: float
    p: float
    convention: Convention
    linear: float
    unrelated: float
    reason: str = ""

    @property
    def sufficient(self) -> bool:
        """Whether ``V_B <= V_AB <= V_A`` held (always True for ``identity``)."""
        return self.status in ("ok", "identity")

    @property
    def dissimilarity(self) -> float:
        """``1 - S`` in ``[0, 2]`` (``nan`` when undefined)."""
        return 1.0 - self.value


def _check_p(p: float) -> None:
    if not 0.0 < p < 1.0 or math.isnan(p):
        raise ValueError(f"p must lie strictly between 0 and 1, got {p}")


def _check_convention(convention: str) -> None:
    if convention not in CONVENTIONS:
        raise ValueError(f"convention must be one of {CONVENTIONS}, got {convention!r}")


def affine_similarity(
    v_a: ArrayLike, v_b: ArrayLike, v_ab: ArrayLike, p: float, convention: Convention = "paper"
) -> NDArray[np.float64]:
    r"""Compute the affine (unclipped) similarity, vectorised; A must already be the easier.

    .. math::

        \operatorname{lin}(x) = \frac{m - x}{c\,(V_A - V_B)}, \qquad
        m = w V_A + (1 - w) V_B

    with ``w = c = 1/2`` for the paper convention, which gives
    :math:`(V_A + V_B - 2x)/(V_A - V_B)`, and ``w = p``, ``c = p`` when ``x <= m`` else
    ``c = 1 - p`` for the mixture convention. ``V_A = V_B`` gives ``nan``. Eq. 3 is
    ``clip(lin, -1, 1)`` (for ``V_A > V_B``), see :func:`similarity`.

    Parameters
    ----------
    v_a, v_b, v_ab : array_like
        Scores on the easier test, the harder test and the merge (broadcast together).
    p : float
        Proportion of the easier test in the merge, ``0 < p < 1``.
    convention : {"paper", "mixture"}
        Which scale.

    Returns
    -------
    numpy.ndarray
        The affine value(s); ``nan`` where ``V_A = V_B``.
    """
    _check_p(p)
    _check_convention(convention)
    a = np.asarray(v_a, dtype=np.float64)
    b = np.asarray(v_b, dtype=np.float64)
    x = np.asarray(v_ab, dtype=np.float64)
    w = 0.5 if convention == "paper" else p
    m = w * a + (1.0 - w) * b
    c = (
        np.full(np.broadcast(a, b, x).shape, 0.5)
        if convention == "paper"
        else np.where(x <= m, p, 1.0 - p)
    )
    d = c * (a - b)
    # A gap V_A - V_B near the smallest double overflows the quotient to ±inf: that is the
    # limit of the formula, and sufficiency checks downstream flag such a pair.
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        out = np.where(d != 0.0, (m - x) / np.where(d != 0.0, d, 1.0), np.nan)
    return np.asarray(out, dtype=np.float64)


def similarity(
    v_a: float,
    v_b: float,
    v_ab: float,
    p: float = 0.5,
    *,
    convention: Convention = "paper",
    identical: bool = False,
) -> Similarity:
    r"""Similarity ``S(A, B, p, π)`` of two tests from one baseline agent's scores (eq. 3).

    .. math::

        S(A, B, p, \pi) = \frac{|V_A - V_{AB}(p)| - |V_B - V_{AB}(p)|}{|V_A - V_B|}

    where :math:`V_A > V_B` are the agent's scores on the easier test A and the harder test B
    and :math:`V_{AB}(p)` its score on their merge holding a proportion ``p`` of A. For a
    *sufficient* agent (:math:`V_B \le V_{AB} \le V_A`) this is the affine form
    :math:`(V_A + V_B - 2V_{AB})/(V_A - V_B)`: ``S = 1`` when the merge is as hard as B,
    ``S = 0`` at the midpoint, ``S = -1`` when the merge is as easy as A. High ``S`` means the
    tests interfere (the agent cannot keep them apart), which the paper calls *similar*; the
    dissimilarity is ``1 - S`` in ``[0, 2]``.

    Parameters
    ----------
    v_a, v_b : float
        Scores on the two tests, in any order (higher = better); the easier one becomes A.
    v_ab : float
        Score on the merge.
    p : float
        Proportion of the **first argument's** test in the merge, ``0 < p < 1``; becomes
        ``1 - p`` when the pair is swapped.
    convention : {"paper", "mixture"}
        ``paper``: eq. 3 as published (``p`` only labels the merge). ``mixture``: the scale is
        re-centred on the unrelated-tests point :math:`m = pV_A + (1-p)V_B`, i.e.
        ``(m - V_AB)/(p (V_A - V_B))`` below ``m`` and ``(m - V_AB)/((1-p)(V_A - V_B))`` above,
        saturating at ``±1`` outside ``[V_B, V_A]`` like eq. 3; equal to eq. 3 at ``p = 1/2``.
    identical : bool
        The two tests are the same test: ``S = 1`` by definition (eq. 3 would be 0/0).

    Returns
    -------
    Similarity
        The value, its status and the ordered inputs.

    Raises
    ------
    ValueError
        If a score is not finite, ``p`` is outside ``(0, 1)`` or the convention is unknown.

    Notes
    -----
    * Eq. 3 equals ``clip(linear, -1, 1)`` for ``V_A > V_B``: its absolute values saturate
      outside the sufficient band, so an insufficient agent gets exactly ``±1``. We report that
      value (it is what the paper's formula gives) but flag it and report ``linear`` too.
    * The paper runs ``p = 1/2`` only. With the paper convention an unrelated pair scores
      ``1 - 2p`` (``Similarity.unrelated``), so values at different ``p`` are not comparable;
      the mixture convention makes them comparable (unrelated = 0) at the price of departing
      from the published formula when ``p != 1/2``.

    References
    ----------
    .. [1] C. Pereyda and L. Holder, "Measuring the Relative Similarity and Difficulty Between
       AI Benchmark Problems", Meta-Eval workshop, AAAI 2020, eq. 3.

    Examples
    --------
    >>> similarity(0.75, 0.25, 0.375).value  # merge nearer the harder test: similar
    0.5
    >>> similarity(0.25, 0.75, 0.375).value  # the order of the tests does not matter
    0.5
    >>> similarity(0.75, 0.25, 0.5).value  # midpoint: unrelated (at p = 1/2)
    0.0
    """
    _check_p(p)
    _check_convention(convention)
    for name, v in (("v_a", v_a), ("v_b", v_b), ("v_ab", v_ab)):
        if not math.isfinite(v):
            raise ValueError(f"{name} must be finite, got {v}")
    swapped = v_b > v_a
    a, b, pa = (v_b, v_a, 1.0 - p) if swapped else (v_a, v_b, p)
    unrelated = 1.0 - 2.0 * pa if convention == "paper" else 0.0
    common = dict(swapped=swapped, v_a=a, v_b=b, v_ab=v_ab, p=pa, convention=convention)
    if identical:
        return Similarity(1.0, "identity", linear=1.0, unrelated=unrelated, **common)  # type: ignore[arg-type]
    if a == b:
        return Similarity(
            math.nan,
            "undefined",
            linear=math.nan,
            unrelated=math.nan,
            reason="V_A = V_B: the tests are equally hard and eq. 3 is 0/0",
            **common,  # type: ignore[arg-type]
        )
    lin = float(affine_similarity(a, b, v_ab, pa, convention))
    value = min(1.0, max(-1.0, lin))
    if b <= v_ab <= a:
        return Similarity(value, "ok", linear=lin, unrelated=unrelated, **common)  # type: ignore[arg-type]
    side = "below the harder test" if v_ab < b else "above the easier test"
    return Similarity(
        value,
        "insufficient",
        linear=lin,
        unrelated=unrelated,
        reason=f"V_AB = {v_ab:g} lies {side} (outside [{b:g}, {a:g}]): eq. 3 saturates",
        **common,  # type: ignore[arg-type]
    )


# --------------------------------------------------------------------------- several seeds
@dataclass(frozen=True)
class SimilarityEstimate:
    """``S`` from several replicates (seeds) of one cell, with a confidence interval.

    Attributes
    ----------
    point : Similarity
        Eq. 3 applied to the mean scores (a ratio-of-means estimator).
    ci_low, ci_high : float or None
        Fieller interval mapped through eq. 3 (see :func:`estimate_similarity`): inside
        ``[-1, 1]`` and containing ``point.value``; ``None`` with
        fewer than two seeds, for ``identity``/``undefined`` cells, or when the interval is
        unbounded because the difficulty gap ``V_A - V_B`` is not resolved.
    n_seeds : int
        Number of replicates.
    gap_resolved : bool or None
        Whether ``V_A - V_B`` differs from 0 at the confidence level (``None``: < 2 seeds).
    n_insufficient : int
        Replicates whose own ``V_AB`` lies outside their own ``[min, max]`` of ``V_A, V_B``.
    n_reversed : int
        Replicates in which the harder test (by the means) scored higher than the easier one.
    confidence : float
        Confidence level of the interval.
    """

    point: Similarity
    ci_low: float | None
    ci_high: float | None
    n_seeds: int
    gap_resolved: bool | None
    n_insufficient: int
    n_reversed: int
    confidence: float

    @property
    def value(self) -> float:
        """The point estimate of ``S``."""
        return self.point.value


def fieller_interval(
    u: NDArray[np.float64], d: NDArray[np.float64], confidence: float = 0.95
) -> tuple[float, float] | None:
    r"""Fieller's confidence interval for the ratio of means :math:`\theta = E[u]/E[d]` (paired).

    The set of :math:`\theta` with
    :math:`(\bar u - \theta \bar d)^2 \le t^2 (s_{uu} - 2\theta s_{ud} + \theta^2 s_{dd})`,
    :math:`s` the sample (co)variances of the means and ``t`` the Student quantile with
    ``n - 1`` degrees of freedom. Returns ``None`` when that set is unbounded (``d``'s mean is
    not significantly non-zero) or when ``n < 2``.
    """
    from scipy.special import stdtrit  # Student-t quantile; far lighter than scipy.stats

    n = len(u)
    if n < 2 or len(d) != n:
        return None
    ub, db = float(np.mean(u)), float(np.mean(d))
    cov = np.cov(np.vstack([u, d]), ddof=1) / n
    t2 = float(stdtrit(n - 1, 0.5 + confidence / 2.0)) ** 2
    qa = db * db - t2 * cov[1, 1]
    qb = -2.0 * (ub * db - t2 * cov[0, 1])
    qc = ub * ub - t2 * cov[0, 0]
    if qa <= 0.0:
        return None
    disc = max(qb * qb - 4.0 * qa * qc, 0.0)
    root = math.sqrt(disc)
    return ((-qb - root) / (2.0 * qa), (-qb + root) / (2.0 * qa))


def estimate_similarity(
    v_a: ArrayLike,
    v_b: ArrayLike,
    v_ab: ArrayLike,
    p: float = 0.5,
    *,
    convention: Convention = "paper",
    identical: bool = False,
    confidence: float = 0.95,
) -> SimilarityEstimate:
    r"""``S`` of one cell measured with several seeds: ratio of means and a Fieller interval.

    The point is :func:`similarity` of the mean scores; the pair is oriented (A easier) by the
    means and that orientation is kept for every replicate. Under the convention's affine form
    ``S = (m - x)/(c (V_A - V_B))`` is a ratio of means of the paired replicate quantities
    :math:`u_k = w a_k + (1 - w) b_k - x_k` and :math:`d_k = a_k - b_k`, so the interval is
    Fieller's (:func:`fieller_interval`) divided by ``c`` (``c`` from the point's side of ``m``).

    .. math::

        \hat S = \operatorname{clip}\Big(\frac{\bar u}{c\,\bar d}, -1, 1\Big)

    Parameters
    ----------
    v_a, v_b, v_ab : array_like
        One score per seed (same length, paired by seed).
    p : float
        Proportion of the first given test in the merge.
    convention : {"paper", "mixture"}
        See :func:`similarity`.
    identical : bool
        The two tests are the same test (``S = 1``, no interval).
    confidence : float
        Confidence level, e.g. 0.95.

    Returns
    -------
    SimilarityEstimate

    Notes
    -----
    Fieller's set is an interval for the ratio :math:`\theta = E[u]/E[d]`; ``S`` is a
    non-decreasing function of it, :math:`S = g(\theta) = \operatorname{clip}(\theta/c(\theta),
    -1, 1)` (``c = 1/2`` for the paper convention; ``c = p`` for :math:`\theta \ge 0` and
    ``1 - p`` below for the mixture one). The image of a confidence interval under a monotone map
    is a confidence interval of the mapped parameter at the same level, so the reported
    interval is :math:`[g(\theta_{lo}), g(\theta_{hi})]`: it lies in ``[-1, 1]`` like eq. 3, and
    it always contains the point, because the ratio of means :math:`\bar u/\bar d` always
    belongs to Fieller's set (its left side vanishes there). An unbounded Fieller set means the
    seeds do not establish which test is easier: ``gap_resolved = False`` and no interval,
    rather than a misleadingly narrow one.
    """
    a = np.asarray(v_a, dtype=np.float64).ravel()
    b = np.asarray(v_b, dtype=np.float64).ravel()
    x = np.asarray(v_ab, dtype=np.float64).ravel()
    if not (len(a) == len(b) == len(x)) or len(a) == 0:
        raise ValueError("v_a, v_b and v_ab need the same, non-zero number of seeds")
    if not (0.0 < confidence < 1.0):
        raise ValueError(f"confidence must lie in (0, 1), got {confidence}")
    point = similarity(
        float(a.mean()),
        float(b.mean()),
        float(x.mean()),
        p,
        convention=convention,
        identical=identical,
    )
    if point.swapped:
        a, b = b, a
    n = len(a)
    lo_k, hi_k = np.minimum(a, b), np.maximum(a, b)
    n_insufficient = int(np.sum((x < lo_k) | (x > hi_k)))
    n_reversed = int(np.sum(a < b))
    if point.status in ("identity", "undefined") or n < 2:
        return SimilarityEstimate(
            point, None, None, n, None, n_insufficient, n_reversed, confidence
        )
    w = 0.5 if convention == "paper" else point.p
    u = w * a + (1.0 - w) * b - x
    d = a - b
    ci = fieller_interval(u, d, confidence)
    if ci is None:
        return SimilarityEstimate(
            point, None, None, n, False, n_insufficient, n_reversed, confidence
        )

    def to_s(theta: float) -> float:
        c = 0.5 if convention == "paper" else (point.p if theta >= 0.0 else 1.0 - point.p)
        return min(1.0, max(-1.0, theta / c))

    lo, hi = to_s(ci[0]), to_s(ci[1])
    # Fieller's set holds the ratio of means, hence lo <= point <= hi in exact arithmetic;
    # the two are computed along different float paths, so close the last-ulp gap.
    lo, hi = min(lo, point.value), max(hi, point.value)
    return SimilarityEstimate(point, lo, hi, n, True, n_insufficient, n_reversed, confidence)
