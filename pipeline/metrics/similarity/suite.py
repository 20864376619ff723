"""Suites of tests: the similarity matrix, dissimilarities and diversity (Pereyda & Holder 2020).

Builds on the pair measure of :mod:`pipeline.metrics.similarity.measure`; the 2-D map of a
suite is in
:mod:`pipeline.metrics.similarity.mds`.

References
----------
.. [1] C. Pereyda and L. Holder, "Measuring the Relative Similarity and Difficulty Between AI
   Benchmark Problems", AAAI 2020 Workshop on Evaluating Evaluation of AI Systems (Meta-Eval).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from pipeline.metrics.similarity.measure import Convention, affine_similarity


@dataclass(frozen=True)
class SimilarityMatrix:
    """The pairwise similarities of a suite of tests.

    Attributes
    ----------
    tests : tuple of str
        Row/column order.
    values : numpy.ndarray
        ``(n, n)`` symmetric by construction, diagonal 1, ``nan`` where a pair is unmeasured
        or undefined.
    """

    tests: tuple[str, ...]
    values: NDArray[np.float64]

    @property
    def dissimilarity(self) -> NDArray[np.float64]:
        """``1 - S`` elementwise (diagonal 0)."""
        return 1.0 - self.values

    @property
    def missing(self) -> tuple[tuple[str, str], ...]:
        """The unordered pairs ``(i < j)`` without a value."""
        n = len(self.tests)
        return tuple(
            (self.tests[i], self.tests[j])
            for i in range(n)
            for j in range(i + 1, n)
            if not math.isfinite(self.values[i, j])
        )


def similarity_matrix(
    tests: Sequence[str], pairs: Mapping[tuple[str, str], float]
) -> SimilarityMatrix:
    """Assemble the symmetric similarity matrix of ``tests`` from unordered pair values.

    Each unordered pair is given once (either order); both ``S[i, j]`` and ``S[j, i]`` are set
    from that one value, so the matrix is symmetric by construction. The diagonal is 1 (a test
    is identical to itself). Pairs not given stay ``nan``.

    Raises
    ------
    ValueError
        If a test is unknown, repeated in ``tests``, or a pair is given twice.
    """
    order = tuple(tests)
    if len(set(order)) != len(order):
        raise ValueError("tests must be distinct")
    index = {t: i for i, t in enumerate(order)}
    n = len(order)
    values = np.full((n, n), np.nan)
    np.fill_diagonal(values, 1.0)
    seen: set[frozenset[str]] = set()
    for (ta, tb), s in pairs.items():
        if ta not in index or tb not in index:
            raise ValueError(f"pair ({ta}, {tb}) names a test not in the suite")
        key = frozenset((ta, tb))
        if key in seen:
            raise ValueError(f"pair ({ta}, {tb}) is given twice")
        seen.add(key)
        if ta == tb:
            continue
        values[index[ta], index[tb]] = values[index[tb], index[ta]] = float(s)
    return SimilarityMatrix(order, values)


@dataclass(frozen=True)
class Diversity:
    """A suite's diversity: the mean dissimilarity ``1 - S`` over its distinct pairs.

    Attributes
    ----------
    value : float
        In ``[0, 2]``; ``nan`` with fewer than two tests or no measured pair.
    n_pairs : int
        Pairs that entered the mean.
    n_missing : int
        Pairs without a value (left out, not imputed).
    """

    value: float
    n_pairs: int
    n_missing: int


def suite_diversity(matrix: SimilarityMatrix) -> Diversity:
    r"""Mean pairwise dissimilarity of a suite.

    .. math::

        D = \frac{2}{n(n-1)} \sum_{i<j} \big(1 - S_{ij}\big)

    over the measured pairs ``i < j``; missing pairs are left out and counted. ``0`` means all
    tests are mutually as similar as eq. 3 allows; ``1`` means unrelated on average (paper
    convention at ``p = 1/2``).
    """
    iu = np.triu_indices(len(matrix.tests), k=1)
    vals = matrix.values[iu]
    ok = np.isfinite(vals)
    if not ok.any():
        return Diversity(math.nan, 0, len(vals))
    return Diversity(float(np.mean(1.0 - vals[ok])), int(ok.sum()), int((~ok).sum()))


@dataclass(frozen=True)
class PairSamples:
    """The replicate scores of one pair of distinct tests (the input of a suite bootstrap).

    Attributes
    ----------
    test_a, test_b : str
        The two tests as given (any order).
    p : float
        Proportion of ``test_a`` in the merge.
    v_a, v_b, v_ab : numpy.ndarray
        One score per replicate, paired.
    seeds : tuple
        The replicate labels, in the order of the arrays.
    """

    test_a: str
    test_b: str
    p: float
    v_a: NDArray[np.float64]
    v_b: NDArray[np.float64]
    v_ab: NDArray[np.float64]
    seeds: tuple[object, ...]


def bootstrap_diversity(
    cells: Sequence[PairSamples],
    *,
    convention: Convention = "paper",
    confidence: float = 0.95,
    n_boot: int = 2000,
    seed: int = 0,
) -> tuple[float, float] | None:
    r"""Percentile-bootstrap interval of the suite diversity over replicates (seeds).

    Each bootstrap replicate resamples the seeds with replacement, recomputes every pair's
    ``S`` from the resampled means (orientation fixed by the full-data means, the convention's
    affine form clipped to ``[-1, 1]`` as eq. 3 does) and averages ``1 - S``. When every cell
    has the same seed labels the seeds are resampled **jointly** (one index vector for all
    pairs), which keeps the correlation that common random numbers create between pairs;
    otherwise each cell is resampled on its own (pairs treated as independent).

    Parameters
    ----------
    cells : sequence of PairSamples
        One per unordered pair of distinct tests; cells whose means give ``V_A = V_B`` are
        left out, like :func:`suite_diversity` leaves out undefined pairs. Bootstrap
        replicates in which a resampled pair has ``V_A = V_B`` are dropped.
    convention : {"paper", "mixture"}
        See :func:`similarity`.
    confidence : float
        Level of the two-sided percentile interval.
    n_boot : int
        Number of bootstrap replicates.
    seed : int
        Seed of the :class:`numpy.random.Generator` (the interval is a function of it).

    Returns
    -------
    (low, high) or None
        ``None`` when a cell has fewer than two replicates or no cell is defined. The interval
        lies in ``[0, 2]`` (every ``S`` is clipped to ``[-1, 1]``) and always contains the
        point estimate (the mean ``1 - S`` of the full-data means over the same cells): a
        percentile interval can miss its own point when the bootstrap distribution is skewed,
        so it is widened to the point in that case rather than reported without it.
    """
    rng = np.random.default_rng(seed)
    used: list[tuple[PairSamples, bool]] = []
    for c in cells:
        if len(c.v_a) < 2:
            return None
        ma, mb = float(np.mean(c.v_a)), float(np.mean(c.v_b))
        if ma != mb:
            used.append((c, mb > ma))
    if not used:
        return None
    label_sets = {tuple(c.seeds) for c, _ in used}
    joint_idx = None
    if len(label_sets) == 1:
        joint_idx = rng.integers(0, len(used[0][0].seeds), size=(n_boot, len(used[0][0].seeds)))
    diss = np.zeros(n_boot)
    point = 0.0
    for c, swapped in used:
        a, b, pa = (c.v_b, c.v_a, 1.0 - c.p) if swapped else (c.v_a, c.v_b, c.p)
        n = len(a)
        idx = joint_idx if joint_idx is not None else rng.integers(0, n, size=(n_boot, n))
        lin = affine_similarity(
            a[idx].mean(axis=1), b[idx].mean(axis=1), c.v_ab[idx].mean(axis=1), pa, convention
        )
        # a replicate whose resampled V_A = V_B is undefined (nan) and is dropped below
        diss += 1.0 - np.clip(lin, -1.0, 1.0)
        full = affine_similarity(np.mean(a), np.mean(b), np.mean(c.v_ab), pa, convention)
        point += 1.0 - float(np.clip(full, -1.0, 1.0))
    diss = diss[np.isfinite(diss)] / len(used)
    point /= len(used)
    if len(diss) == 0:
        return None
    tail = 50.0 * (1.0 - confidence)
    lo, hi = np.percentile(diss, [tail, 100.0 - tail])
    return (min(float(lo), point), max(float(hi), point))
