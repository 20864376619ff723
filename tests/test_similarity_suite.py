"""Suites: similarity matrix, diversity, bootstrap, and the classical MDS map."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from pipeline.metrics.similarity.mds import classical_mds
from pipeline.metrics.similarity.suite import (
    PairSamples,
    bootstrap_diversity,
    similarity_matrix,
    suite_diversity,
)


# ----------------------------------------------------------------------------- matrix
def test_matrix_is_symmetric_by_construction_with_unit_diagonal() -> None:
    m = similarity_matrix(["a", "b", "c"], {("a", "b"): 0.5, ("c", "a"): 0.0, ("b", "c"): -0.5})
    assert np.array_equal(m.values, m.values.T)
    assert np.all(np.diag(m.values) == 1.0)
    assert m.values[0, 2] == m.values[2, 0] == 0.0
    assert np.array_equal(m.dissimilarity, 1.0 - m.values)
    assert m.missing == ()


def test_matrix_missing_pairs_and_errors() -> None:
    m = similarity_matrix(["a", "b", "c"], {("a", "b"): 0.5})
    assert m.missing == (("a", "c"), ("b", "c"))
    with pytest.raises(ValueError, match="twice"):
        similarity_matrix(["a", "b"], {("a", "b"): 0.5, ("b", "a"): 0.4})
    with pytest.raises(ValueError, match="not in the suite"):
        similarity_matrix(["a", "b"], {("a", "z"): 0.5})
    with pytest.raises(ValueError, match="distinct"):
        similarity_matrix(["a", "a"], {})


@settings(deadline=None)  # timing varies on a shared machine
@given(st.lists(st.floats(-1, 1), min_size=6, max_size=6))
def test_matrix_symmetry_property(vals: list[float]) -> None:
    tests = ["t0", "t1", "t2", "t3"]
    pairs = [(tests[i], tests[j]) for i in range(4) for j in range(i + 1, 4)]
    # give each pair in a scrambled order
    given_pairs = {
        (b, a) if k % 2 else (a, b): v
        for k, ((a, b), v) in enumerate(zip(pairs, vals, strict=True))
    }
    m = similarity_matrix(tests, given_pairs)
    assert np.array_equal(m.values, m.values.T)


def test_diversity_hand_derived() -> None:
    # S = 0.5, 0, -0.5 -> 1 - S = 0.5, 1, 1.5 -> mean 1.0
    m = similarity_matrix(["a", "b", "c"], {("a", "b"): 0.5, ("a", "c"): 0.0, ("b", "c"): -0.5})
    d = suite_diversity(m)
    assert d.value == 1.0 and d.n_pairs == 3 and d.n_missing == 0


def test_diversity_degenerate_cases() -> None:
    one = suite_diversity(similarity_matrix(["a"], {}))
    assert math.isnan(one.value) and one.n_pairs == 0 and one.n_missing == 0
    part = suite_diversity(similarity_matrix(["a", "b", "c"], {("a", "b"): 0.25}))
    assert part.value == 0.75 and part.n_pairs == 1 and part.n_missing == 2
    same = suite_diversity(similarity_matrix(["a", "b"], {("a", "b"): 1.0}))
    assert same.value == 0.0


# ----------------------------------------------------------------------------- bootstrap
def _cell(a: str, b: str, va: list[float], vb: list[float], vab: list[float]) -> PairSamples:
    return PairSamples(a, b, 0.5, np.array(va), np.array(vb), np.array(vab), tuple(range(len(va))))


def test_bootstrap_is_deterministic_and_brackets_the_point() -> None:
    rng = np.random.default_rng(3)
    cells = [
        _cell(
            "a",
            "b",
            list(80 + rng.normal(0, 2, 6)),
            list(40 + rng.normal(0, 2, 6)),
            list(50 + rng.normal(0, 2, 6)),
        ),
        _cell(
            "a",
            "c",
            list(80 + rng.normal(0, 2, 6)),
            list(60 + rng.normal(0, 2, 6)),
            list(70 + rng.normal(0, 2, 6)),
        ),
    ]
    ci1 = bootstrap_diversity(cells, seed=11)
    ci2 = bootstrap_diversity(cells, seed=11)
    assert ci1 == ci2 and ci1 is not None
    # point: S_ab = (120 - 100)/40 = 0.5ish, S_ac = (140 - 140)/20 = 0ish -> D near 0.75
    assert ci1[0] < 0.75 < ci1[1]


def test_bootstrap_needs_two_seeds() -> None:
    assert bootstrap_diversity([_cell("a", "b", [1.0], [0.0], [0.5])]) is None


def test_bootstrap_of_constant_replicates_is_a_point() -> None:
    cells = [_cell("a", "b", [1.0, 1.0, 1.0], [0.0, 0.0, 0.0], [0.25, 0.25, 0.25])]
    assert bootstrap_diversity(cells) == pytest.approx((0.5, 0.5))  # S = 0.5


def test_bootstrap_independent_resampling_when_seed_labels_differ() -> None:
    a = PairSamples(
        "a", "b", 0.5, np.array([1.0, 1.1]), np.array([0.0, 0.1]), np.array([0.5, 0.6]), (1, 2)
    )
    b = PairSamples(
        "a",
        "c",
        0.5,
        np.array([1.0, 1.1, 0.9]),
        np.array([0.5, 0.4, 0.6]),
        np.array([0.7, 0.8, 0.75]),
        (1, 2, 3),
    )
    ci = bootstrap_diversity([a, b], seed=1)
    assert ci is not None and ci[0] <= ci[1]


# ----------------------------------------------------------------------------- MDS
def _dist(x: np.ndarray) -> np.ndarray:
    return np.linalg.norm(x[:, None, :] - x[None, :, :], axis=2)


def test_mds_recovers_euclidean_distances() -> None:
    pts = np.array([[0.0, 0.0], [3.0, 0.0], [0.0, 4.0], [1.0, 1.0]])
    e = classical_mds(_dist(pts), ["a", "b", "c", "d"])
    assert np.allclose(_dist(e.coords), _dist(pts), atol=1e-9)
    assert e.explained == pytest.approx(1.0)
    assert e.negative_mass == pytest.approx(0.0, abs=1e-12)
    assert np.allclose(e.coords.mean(axis=0), 0.0, atol=1e-12)


def test_mds_sign_convention() -> None:
    pts = np.array([[0.0, 0.0], [3.0, 0.0], [0.0, 4.0], [1.0, 1.0]])
    e = classical_mds(_dist(pts))
    for k in range(2):
        col = e.coords[:, k]
        assert col[np.argmax(np.abs(col))] > 0
    # the mirror image of the points gives the same output
    assert np.allclose(classical_mds(_dist(pts * [-1, 1])).coords, e.coords, atol=1e-9)


def test_mds_permutation_equivariance() -> None:
    pts = np.array([[0.0, 0.0], [3.0, 0.0], [0.0, 4.0], [1.0, 1.5], [2.0, 3.0]])
    d = _dist(pts)
    perm = [3, 0, 4, 2, 1]
    e = classical_mds(d)
    ep = classical_mds(d[np.ix_(perm, perm)])
    assert np.allclose(ep.coords, e.coords[perm], atol=1e-9)


def test_mds_small_cases() -> None:
    assert classical_mds(np.zeros((0, 0))).coords.shape == (0, 2)
    one = classical_mds([[0.0]], ["only"])
    assert np.array_equal(one.coords, [[0.0, 0.0]])
    two = classical_mds([[0.0, 2.0], [2.0, 0.0]], ["a", "b"])
    # a line: +-1 on the first axis, nothing on the second; largest |coord| positive = first
    assert np.allclose(two.coords, [[1.0, 0.0], [-1.0, 0.0]])
    assert two.as_records() == [
        {"test": "a", "x": 1.0, "y": 0.0},
        {"test": "b", "x": -1.0, "y": 0.0},
    ]


def test_mds_non_euclidean_dissimilarities_report_negative_mass() -> None:
    # violates the triangle inequality: d(a,c) = 2 > d(a,b) + d(b,c) = 0.2
    d = np.array([[0.0, 0.1, 2.0], [0.1, 0.0, 0.1], [2.0, 0.1, 0.0]])
    e = classical_mds(d)
    assert e.negative_mass > 0
    assert np.all(np.isfinite(e.coords))


def test_mds_rejects_bad_matrices() -> None:
    with pytest.raises(ValueError, match="square"):
        classical_mds(np.zeros((2, 3)))
    with pytest.raises(ValueError, match="missing"):
        classical_mds([[0.0, np.nan], [np.nan, 0.0]])
    with pytest.raises(ValueError, match="symmetric"):
        classical_mds([[0.0, 1.0], [2.0, 0.0]])
    with pytest.raises(ValueError, match="zero diagonal"):
        classical_mds([[1.0, 1.0], [1.0, 0.0]])
    with pytest.raises(ValueError, match="labels"):
        classical_mds([[0.0]], ["a", "b"])


@settings(max_examples=50, deadline=None)
@given(arrays(np.float64, (5, 2), elements=st.floats(-10, 10)))
def test_mds_reproduces_planar_configurations(pts: np.ndarray) -> None:
    d = _dist(pts)
    d = 0.5 * (d + d.T)
    np.fill_diagonal(d, 0.0)
    e = classical_mds(d)
    assert np.allclose(_dist(e.coords), d, atol=1e-6)
