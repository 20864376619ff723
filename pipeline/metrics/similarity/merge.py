"""Merging two tests into one, and inverting eq. 3 (Pereyda & Holder 2020, "sampling" merge).

Pure functions on arrays, shared by the passive (classification) and the active (Gym)
experiments of :mod:`pipeline.tracks.similarity`:

* :func:`merge_counts` — how many elements of each test a merged test at proportion ``p``
  holds (the larger test is cut to the size of the smaller);
* :func:`pad_features` — zero-padding of inputs to a common width;
* :func:`offset_classes` — concatenation of the two label sets (B's classes follow A's);
* :func:`sample_merge` — the whole passive merge of two labelled data sets;
* :func:`stitch_merge` — the element-wise ("stitching") merge: items side by side;
* :func:`split_episodes` — how many evaluation episodes of a merged active test go to A;
* :func:`normalise_return` — an episode return mapped to ``[0, 1]`` by documented bounds;
* :func:`implied_v_ab` — the merged score eq. 3 implies from ``S``, ``V_A`` and ``V_B`` (used to
  publish the paper's tables, which give ``S`` but not ``V_AB``).

References
----------
.. [1] C. Pereyda and L. Holder, "Measuring the Relative Similarity and Difficulty Between AI
   Benchmark Problems", AAAI 2020 Workshop on Evaluating Evaluation of AI Systems (Meta-Eval).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from pipeline.metrics.similarity.measure import affine_similarity


def _check_p(p: float) -> None:
    if not (0.0 < p < 1.0):
        raise ValueError(f"p must lie strictly between 0 and 1, got {p}")


def merge_counts(n_a: int, n_b: int, p: float) -> tuple[int, int]:
    r"""Sizes of the two parts of a sampling merge.

    .. math::

        n = \min(n_A, n_B), \qquad k_A = \lfloor p\,n + \tfrac12 \rfloor, \qquad k_B = n - k_A

    The larger test is cut to the size of the smaller (the paper's rule), then a proportion
    ``p`` of the merged test comes from A. ``k_A`` is rounded half up, so ``p = 1/2`` splits an
    odd ``n`` with the extra element on A's side.

    Parameters
    ----------
    n_a, n_b : int
        Elements available in A and B, ``>= 1``.
    p : float
        Proportion of A, ``0 < p < 1``.

    Returns
    -------
    (k_A, k_B) : tuple of int
        ``k_A + k_B = min(n_A, n_B)``; each may be 0 for extreme ``p`` and tiny ``n``.

    Raises
    ------
    ValueError
        If a size is below 1 or ``p`` is outside ``(0, 1)``.
    """
    _check_p(p)
    if n_a < 1 or n_b < 1:
        raise ValueError(f"both tests need at least one element, got {n_a} and {n_b}")
    n = min(n_a, n_b)
    k_a = min(n, math.floor(p * n + 0.5))
    return k_a, n - k_a


def pad_features(x: NDArray[np.float64], width: int) -> NDArray[np.float64]:
    """Zero-pad the columns of ``x`` (``(n, d)``) to ``width`` (``d <= width``); a copy."""
    x = np.asarray(x, dtype=np.float64)
    if x.ndim != 2:
        raise ValueError(f"inputs must be a 2-D array, got shape {x.shape}")
    if x.shape[1] > width:
        raise ValueError(f"cannot pad {x.shape[1]} features to the narrower width {width}")
    out = np.zeros((x.shape[0], width))
    out[:, : x.shape[1]] = x
    return out


def offset_classes(y_b: NDArray[np.int64], n_classes_a: int) -> NDArray[np.int64]:
    """B's labels moved past A's: class ``c`` of B becomes ``n_classes_a + c`` (concatenation)."""
    if n_classes_a < 0:
        raise ValueError("n_classes_a must be >= 0")
    return np.asarray(y_b, dtype=np.int64) + int(n_classes_a)


@dataclass(frozen=True)
class MergedSet:
    """A passive merged test.

    Attributes
    ----------
    x : numpy.ndarray
        ``(k_A + k_B, width)`` inputs, A's rows first, zero-padded to the wider test.
    y : numpy.ndarray
        Labels: A's classes ``0 … c_A - 1``, B's classes ``c_A … c_A + c_B - 1``.
    from_a : numpy.ndarray
        Boolean mask of the rows drawn from A.
    """

    x: NDArray[np.float64]
    y: NDArray[np.int64]
    from_a: NDArray[np.bool_]


def sample_merge(
    x_a: NDArray[np.float64],
    y_a: NDArray[np.int64],
    x_b: NDArray[np.float64],
    y_b: NDArray[np.int64],
    p: float,
    rng: np.random.Generator,
    *,
    n_classes_a: int | None = None,
) -> MergedSet:
    """Merge two labelled data sets by sampling (Pereyda & Holder 2020, Sect. "Merging").

    ``k_A, k_B`` from :func:`merge_counts`; the elements are drawn without replacement by
    ``rng`` (A first, then B); inputs are zero-padded to the wider test
    (:func:`pad_features`) and B's labels offset by A's class count (:func:`offset_classes`).

    Parameters
    ----------
    x_a, y_a, x_b, y_b : numpy.ndarray
        Inputs ``(n, d)`` and integer labels ``0 … c - 1`` of each test.
    p : float
        Proportion of A in the merge, ``0 < p < 1``.
    rng : numpy.random.Generator
        The only randomness (which elements are drawn).
    n_classes_a : int, optional
        A's number of classes (default ``max(y_a) + 1``), so that a class absent from the
        drawn elements still keeps its place.

    Returns
    -------
    MergedSet
    """
    x_a, x_b = np.asarray(x_a, dtype=np.float64), np.asarray(x_b, dtype=np.float64)
    y_a, y_b = np.asarray(y_a, dtype=np.int64), np.asarray(y_b, dtype=np.int64)
    if len(x_a) != len(y_a) or len(x_b) != len(y_b):
        raise ValueError("inputs and labels must have the same length")
    k_a, k_b = merge_counts(len(x_a), len(x_b), p)
    ia = rng.permutation(len(x_a))[:k_a]
    ib = rng.permutation(len(x_b))[:k_b]
    width = max(x_a.shape[1], x_b.shape[1])
    c_a = int(y_a.max()) + 1 if n_classes_a is None else int(n_classes_a)
    x = np.vstack([pad_features(x_a[ia], width), pad_features(x_b[ib], width)])
    y = np.concatenate([y_a[ia], offset_classes(y_b[ib], c_a)])
    from_a = np.concatenate([np.ones(k_a, dtype=bool), np.zeros(k_b, dtype=bool)])
    return MergedSet(x, y, from_a)


def stitch_merge(
    x_l: NDArray[np.float64],
    y_l: NDArray[np.int64],
    x_r: NDArray[np.float64],
    y_r: NDArray[np.int64],
    p: float,
    rng: np.random.Generator,
    *,
    n_classes_l: int | None = None,
    width: int | None = None,
    same_test: bool = False,
) -> MergedSet:
    r"""Merge two labelled data sets element-wise (Pereyda & Holder 2020, "stitching").

    Each merged element puts one item of the left test and one of the right test side by side
    (inputs concatenated, each half zero-padded to ``width``); its label is the left item's
    class for a share ``p`` of the elements and the right item's class (numbered after the
    left's) for the rest, and nothing in the input says which half is asked:

    .. math::

        x = [\,x^L_i \;|\; x^R_{\sigma(i)}\,], \qquad
        y = \begin{cases} y^L_i & i \in K \\ c_L + y^R_{\sigma(i)} & i \notin K \end{cases},
        \qquad |K| = k_A

    (``k_A`` of :func:`merge_counts`).

    The paper's Fig. 2 design compares the stitched pair ``AB`` with each test stitched with
    itself (``AA``, ``BB``: ``same_test``, two items of one test side by side, labelled in
    that test's own classes, as a test merged with itself is that test), so the three scores
    share the input layout and the label rule; sufficiency then asks ``V_BB <= V_AB <= V_AA``.
    The paper reports that stitching violated it (the reason it kept sampling); the reading of
    the label rule above is ours (the paper gives no more detail).

    Why it is violated, for any agent: in ``AB`` the two candidate labels are always distinct
    classes and the input does not say which half is asked, so no agent scores above
    ``max(p, 1 − p)`` in expectation, while in ``AA`` the two items share their class with
    probability ``Σ_c π_c²`` and that bound rises. A pair whose tests alone are learnt well
    therefore has ``V_AB`` below ``V_BB`` (tested with a nearest-neighbour agent).

    Parameters
    ----------
    x_l, y_l, x_r, y_r : numpy.ndarray
        Inputs ``(n, d)`` and labels of the left and right tests (the same test for AA/BB).
    p : float
        Share of elements labelled by the left item, ``0 < p < 1``.
    rng : numpy.random.Generator
        The only randomness: which items are paired and which elements the left half labels.
    n_classes_l : int, optional
        The left test's number of classes (default ``max(y_l) + 1``).
    width : int, optional
        Width of each half (default the wider of the two tests).
    same_test : bool
        Both halves come from one test: its own classes label both (no offset).

    Returns
    -------
    MergedSet
        ``min(n_L, n_R)`` elements of ``2 * width`` inputs; ``from_a`` marks those labelled by
        the left half.
    """
    x_l, x_r = np.asarray(x_l, dtype=np.float64), np.asarray(x_r, dtype=np.float64)
    y_l, y_r = np.asarray(y_l, dtype=np.int64), np.asarray(y_r, dtype=np.int64)
    if len(x_l) != len(y_l) or len(x_r) != len(y_r):
        raise ValueError("inputs and labels must have the same length")
    k_l, _ = merge_counts(len(x_l), len(x_r), p)
    n = min(len(x_l), len(x_r))
    il = rng.permutation(len(x_l))[:n]
    ir = rng.permutation(len(x_r))[:n]
    w = max(x_l.shape[1], x_r.shape[1]) if width is None else int(width)
    c_l = int(y_l.max()) + 1 if n_classes_l is None else int(n_classes_l)
    if same_test:
        c_l = 0
    from_l = np.zeros(n, dtype=bool)
    from_l[rng.permutation(n)[:k_l]] = True
    x = np.hstack([pad_features(x_l[il], w), pad_features(x_r[ir], w)])
    y = np.where(from_l, y_l[il], offset_classes(y_r[ir], c_l))
    return MergedSet(x, y.astype(np.int64), from_l)


def split_episodes(n: int, p: float) -> tuple[int, int]:
    """Evaluation episodes of a merged active test: ``round(p n)`` on A (half up), the rest on B.

    Training episodes are drawn at random (A with probability ``p``); the evaluation is
    stratified so that its share of A is exactly the nominal ``p`` up to rounding.
    """
    _check_p(p)
    if n < 1:
        raise ValueError("n must be >= 1")
    k = min(n, math.floor(p * n + 0.5))
    return k, n - k


def normalise_return(ret: float, low: float, high: float) -> float:
    r"""An episode return on ``[0, 1]``: :math:`\operatorname{clip}((R - L)/(H - L), 0, 1)`.

    ``L`` is the documented return of an agent that achieves nothing (e.g. timing out), ``H``
    that of a good solution; returns outside ``[L, H]`` are clipped.
    """
    if not (math.isfinite(low) and math.isfinite(high)) or high <= low:
        raise ValueError(f"bounds must be finite with low < high, got [{low}, {high}]")
    if not math.isfinite(ret):
        raise ValueError(f"return must be finite, got {ret}")
    return min(1.0, max(0.0, (ret - low) / (high - low)))


def implied_v_ab(v_a: float, v_b: float, s: float) -> float:
    r"""The merged score that eq. 3 implies for a sufficient agent.

    .. math::

        S = \frac{V_A + V_B - 2V_{AB}}{V_A - V_B}
        \quad\Longrightarrow\quad
        V_{AB} = \frac{V_A + V_B - S\,(V_A - V_B)}{2}

    (either order of the tests: the formula is the same after swapping). Of the doubles within
    eight units in the last place of the algebraic value, the one for which
    :func:`~.measure.affine_similarity` gives back the value nearest ``s`` is returned (the
    first such on ties), so a published table round-trips to within a few units in the last
    place of ``S`` (exactly after rounding to the published digits).

    Raises
    ------
    ValueError
        If ``V_A = V_B`` (S does not determine ``V_AB``) or ``|S| > 1`` (no sufficient agent
        gives it).
    """
    for name, v in (("v_a", v_a), ("v_b", v_b), ("s", s)):
        if not math.isfinite(v):
            raise ValueError(f"{name} must be finite, got {v}")
    if v_a == v_b:
        raise ValueError("V_A = V_B: eq. 3 is 0/0 and S does not determine V_AB")
    if abs(s) > 1.0:
        raise ValueError(f"|S| = {abs(s)} > 1: no sufficient agent gives it")
    a, b = max(v_a, v_b), min(v_a, v_b)
    guess = (a + b - s * (a - b)) / 2.0
    candidates = [guess]
    lo = hi = guess
    for _ in range(8):
        lo, hi = math.nextafter(lo, -math.inf), math.nextafter(hi, math.inf)
        candidates += [lo, hi]
    errors = [abs(float(affine_similarity(a, b, x, 0.5, "paper")) - s) for x in candidates]
    return candidates[int(np.argmin(errors))]
