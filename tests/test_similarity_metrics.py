"""Eq. 3 of Pereyda & Holder (2020): hand-derived cases, conventions and properties."""

from __future__ import annotations

import math
import sys

import numpy as np
import pytest
from hypothesis import assume, example, given, settings
from hypothesis import strategies as st

from pipeline.metrics.similarity.measure import (
    affine_similarity,
    estimate_similarity,
    fieller_interval,
    similarity,
)

finite = st.floats(min_value=-100.0, max_value=100.0, allow_nan=False, allow_infinity=False)
props = st.floats(min_value=0.01, max_value=0.99)


def literal_eq3(v1: float, v2: float, x: float) -> float:
    """Eq. 3 typed in as printed, with A the easier test."""
    va, vb = max(v1, v2), min(v1, v2)
    return (abs(va - x) - abs(vb - x)) / abs(va - vb)


# ----------------------------------------------------------------------------- hand cases
def test_hand_derived_inside_band() -> None:
    # |0.75 - 0.375| - |0.25 - 0.375| = 0.375 - 0.125 = 0.25; / |0.75 - 0.25| = 0.5 -> 0.5
    s = similarity(0.75, 0.25, 0.375)
    assert s.value == 0.5
    assert s.status == "ok" and s.sufficient and not s.swapped
    assert s.dissimilarity == 0.5
    assert s.linear == 0.5


def test_boundaries_of_the_sufficient_band() -> None:
    # V_AB = V_B (merge as hard as the harder test): (0.5 - 0)/0.5 = 1 -> most similar
    assert similarity(0.75, 0.25, 0.25).value == 1.0
    # V_AB = V_A (merge as easy as the easier test): (0 - 0.5)/0.5 = -1
    assert similarity(0.75, 0.25, 0.75).value == -1.0
    # midpoint: 0.25 - 0.25 = 0 -> 0, dissimilarity 1
    mid = similarity(0.75, 0.25, 0.5)
    assert mid.value == 0.0 and mid.dissimilarity == 1.0
    for x in (0.25, 0.5, 0.75):
        assert similarity(0.75, 0.25, x).status == "ok"


def test_easier_test_becomes_a_whatever_the_order() -> None:
    s = similarity(0.25, 0.75, 0.375, p=0.3)
    assert s.swapped and s.v_a == 0.75 and s.v_b == 0.25
    assert s.value == 0.5
    assert s.p == pytest.approx(0.7)  # 30 % of the *first* (harder) test = 70 % of A


def test_eq3_changes_sign_without_the_ordering_convention() -> None:
    # Why the order matters: typed with B first, eq. 3 gives -0.5 for the case above.
    raw = (abs(0.25 - 0.375) - abs(0.75 - 0.375)) / abs(0.25 - 0.75)
    assert raw == -0.5
    assert similarity(0.25, 0.75, 0.375).value == 0.5


def test_equal_difficulty_is_undefined_not_a_division_error() -> None:
    s = similarity(0.5, 0.5, 0.4)
    assert s.status == "undefined" and math.isnan(s.value) and math.isnan(s.dissimilarity)
    assert "0/0" in s.reason
    assert not s.sufficient


def test_insufficient_agent_is_flagged_and_saturated_value_reported() -> None:
    # below the harder test: |0.75-0.1| - |0.25-0.1| = 0.65 - 0.15 = 0.5 -> 1 (saturated)
    low = similarity(0.75, 0.25, 0.1)
    assert low.status == "insufficient" and not low.sufficient
    assert low.value == 1.0
    assert low.linear == pytest.approx((0.75 + 0.25 - 0.2) / 0.5)  # 1.6, not clipped
    assert "below the harder test" in low.reason
    # above the easier test: 0.15 - 0.65 = -0.5 -> -1; linear (1 - 1.8)/0.5 = -1.6
    high = similarity(0.75, 0.25, 0.9)
    assert high.status == "insufficient" and high.value == -1.0
    assert high.linear == pytest.approx(-1.6)
    assert "above the easier test" in high.reason


def test_self_similarity_is_one() -> None:
    s = similarity(0.6, 0.6, 0.6, identical=True)
    assert s.value == 1.0 and s.status == "identity" and s.sufficient
    assert s.dissimilarity == 0.0


def test_p_does_not_enter_paper_convention_but_unrelated_point_moves() -> None:
    # p_A = 0.3, V_A = 0.8, V_B = 0.4: unrelated tests give x = 0.3*0.8 + 0.7*0.4 = 0.52
    # eq. 3: (0.8 + 0.4 - 1.04)/0.4 = 0.4 = 1 - 2p  (not 0!)
    s = similarity(0.8, 0.4, 0.52, p=0.3)
    assert s.value == pytest.approx(0.4)
    assert s.unrelated == pytest.approx(0.4)
    assert similarity(0.8, 0.4, 0.52, p=0.7).value == s.value  # p only labels the merge


def test_mixture_convention_hand_cases() -> None:
    # p = 0.25, A = 1, B = 0: m = 0.25
    # x = 0.125 <= m: (0.25 - 0.125)/(0.25 * 1) = 0.5
    assert similarity(1.0, 0.0, 0.125, p=0.25, convention="mixture").value == 0.5
    # x = 0.625 > m: (0.25 - 0.625)/(0.75 * 1) = -0.5
    assert similarity(1.0, 0.0, 0.625, p=0.25, convention="mixture").value == -0.5
    # the unrelated point scores 0, the band ends +-1
    mix = similarity(1.0, 0.0, 0.25, p=0.25, convention="mixture")
    assert mix.value == 0.0 and mix.unrelated == 0.0
    assert similarity(1.0, 0.0, 0.0, p=0.25, convention="mixture").value == 1.0
    assert similarity(1.0, 0.0, 1.0, p=0.25, convention="mixture").value == -1.0
    out = similarity(1.0, 0.0, 1.5, p=0.25, convention="mixture")
    assert out.status == "insufficient" and out.value == -1.0
    assert out.linear == pytest.approx((0.25 - 1.5) / 0.75)


def test_bad_inputs_raise() -> None:
    with pytest.raises(ValueError, match="p must"):
        similarity(1, 0, 0.5, p=0.0)
    with pytest.raises(ValueError, match="p must"):
        similarity(1, 0, 0.5, p=1.0)
    with pytest.raises(ValueError, match="finite"):
        similarity(1, float("nan"), 0.5)
    with pytest.raises(ValueError, match="convention"):
        similarity(1, 0, 0.5, convention="other")  # type: ignore[arg-type]


# ----------------------------------------------------------------------------- properties
@settings(deadline=None)  # timing varies on a shared machine
@given(finite, finite, finite)
@example(0.0, -4.593739736925753e-06, 64.0)  # cancellation in the literal formula
def test_matches_literal_eq3_and_range(v1: float, v2: float, x: float) -> None:
    assume(abs(v1 - v2) > 1e-6)
    s = similarity(v1, v2, x)
    # The literal formula subtracts two absolute values of size ~max|v|; its rounding error,
    # a few ulps of that size, is divided by the gap |v1 - v2| (cancellation), so the
    # tolerance scales with that ratio (e.g. v1 = 0, v2 = -4.6e-6, x = 64: error ~3e-9).
    scale = max(abs(v1), abs(v2), abs(x), 1.0)
    tol = 1e-9 + 8.0 * sys.float_info.epsilon * scale / abs(v1 - v2)
    assert s.value == pytest.approx(literal_eq3(v1, v2, x), abs=tol)
    assert -1.0 <= s.value <= 1.0
    assert 0.0 <= s.dissimilarity <= 2.0
    assert s.sufficient == (min(v1, v2) <= x <= max(v1, v2))
    if s.sufficient:
        assert s.linear == pytest.approx(s.value, abs=1e-9)


@settings(deadline=None)  # timing varies on a shared machine
@given(finite, finite, finite, props, st.sampled_from(["paper", "mixture"]))
def test_order_of_arguments_never_matters(
    v1: float, v2: float, x: float, p: float, conv: str
) -> None:
    s1 = similarity(v1, v2, x, p, convention=conv)  # type: ignore[arg-type]
    s2 = similarity(v2, v1, x, 1.0 - p, convention=conv)  # type: ignore[arg-type]
    if v1 == v2:
        assert s1.status == s2.status == "undefined"
    else:
        assert s1.value == pytest.approx(s2.value, abs=1e-9)
        assert s1.p == pytest.approx(s2.p)


@settings(deadline=None)  # timing varies on a shared machine
@given(finite, finite, finite)
def test_mixture_equals_paper_at_one_half(v1: float, v2: float, x: float) -> None:
    assume(v1 != v2)
    a = similarity(v1, v2, x, 0.5, convention="paper")
    b = similarity(v1, v2, x, 0.5, convention="mixture")
    assert a.value == pytest.approx(b.value, abs=1e-9)


@settings(deadline=None)  # timing varies on a shared machine
@given(finite, finite, props)
def test_unrelated_point_gives_unrelated_value(v1: float, v2: float, p: float) -> None:
    assume(abs(v1 - v2) > 1e-3)
    x = p * v1 + (1 - p) * v2  # sampling merge of two non-interacting tests, p of the first
    for conv in ("paper", "mixture"):
        s = similarity(v1, v2, x, p, convention=conv)  # type: ignore[arg-type]
        assert s.value == pytest.approx(s.unrelated, abs=1e-6)


@settings(deadline=None)  # timing varies on a shared machine
@given(finite, props)
def test_self_similarity_is_one_at_any_p(v: float, p: float) -> None:
    assert similarity(v, v, v, p, identical=True).value == 1.0


@settings(deadline=None)  # timing varies on a shared machine
@given(finite, finite, finite, finite)
@example(v1=0.0, v2=1.1125369292536007e-308, x1=0.0, x2=1.0)  # subnormal gap overflowed
def test_similarity_decreases_as_the_merge_gets_easier(
    v1: float, v2: float, x1: float, x2: float
) -> None:
    assume(v1 != v2)
    lo, hi = min(x1, x2), max(x1, x2)
    assert similarity(v1, v2, lo).value >= similarity(v1, v2, hi).value


def test_affine_form_vectorised_and_undefined_where_equal() -> None:
    out = affine_similarity([0.75, 0.5], [0.25, 0.5], [0.375, 0.5], 0.5)
    assert out[0] == 0.5 and math.isnan(out[1])


# ----------------------------------------------------------------------------- several seeds
def test_single_seed_has_no_interval() -> None:
    e = estimate_similarity([0.75], [0.25], [0.375])
    assert e.value == 0.5 and e.ci_low is None and e.ci_high is None
    assert e.n_seeds == 1 and e.gap_resolved is None


def test_interval_reduces_to_t_interval_when_the_gap_is_constant() -> None:
    # a = 1, b = 0 in every seed, so d = 1 has no variance and S_k = 2 u_k = 1 - 2 x_k:
    # x = 0.2, 0.3, 0.4 -> S_k = 0.6, 0.4, 0.2, mean 0.4, sd 0.2,
    # t(0.975, 2) = 4.302652729911275 -> half-width 4.302652729911275 * 0.2 / sqrt(3)
    e = estimate_similarity([1, 1, 1], [0, 0, 0], [0.2, 0.3, 0.4])
    half = 4.302652729911275 * 0.2 / math.sqrt(3)
    assert e.value == pytest.approx(0.4)
    assert e.ci_low == pytest.approx(0.4 - half) and e.ci_high == pytest.approx(0.4 + half)
    assert e.gap_resolved is True and e.n_insufficient == 0


def test_identical_seeds_give_a_point_interval() -> None:
    e = estimate_similarity([0.75] * 4, [0.25] * 4, [0.375] * 4)
    assert e.ci_low == pytest.approx(0.5) and e.ci_high == pytest.approx(0.5)


def test_unresolved_gap_gives_no_interval() -> None:
    # V_A - V_B per seed: 0.1, -0.08, 0.05: mean 0.0233, not significant -> Fieller unbounded
    e = estimate_similarity([0.6, 0.42, 0.55], [0.5, 0.5, 0.5], [0.5, 0.48, 0.52])
    assert e.gap_resolved is False and e.ci_low is None and e.ci_high is None
    assert e.n_reversed == 1
    assert math.isfinite(e.value)


def test_orientation_is_fixed_by_the_means() -> None:
    e = estimate_similarity([0.3, 0.2], [0.8, 0.7], [0.4, 0.3], p=0.25)
    assert e.point.swapped and e.point.p == 0.75
    assert e.n_reversed == 0


def test_interval_of_an_insufficient_cell_is_eq3_of_the_fieller_ends() -> None:
    # linear S = 1.3 ± a little: every end maps through eq. 3's clip to 1, the point too
    e = estimate_similarity([1.0, 1.0, 1.0], [0.0, 0.0, 0.0], [-0.1, -0.2, -0.15])
    assert e.point.status == "insufficient" and e.value == 1.0
    assert e.n_insufficient == 3
    assert (e.ci_low, e.ci_high) == (1.0, 1.0)
    assert e.point.linear > 1.0  # the extrapolated value is still reported beside it


@settings(max_examples=200, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.floats(0.0, 1.0), st.floats(0.0, 1.0), st.floats(0.0, 1.0)
        ),
        min_size=2,
        max_size=6,
    ),
    st.floats(0.05, 0.95),
    st.sampled_from(["paper", "mixture"]),
)
def test_every_interval_lies_in_minus_one_one_and_contains_its_point(
    reps: list[tuple[float, float, float]], p: float, convention: str
) -> None:
    a, b, x = (list(t) for t in zip(*reps, strict=True))
    e = estimate_similarity(a, b, x, p, convention=convention)  # type: ignore[arg-type]
    if e.ci_low is None:
        return
    assert e.ci_high is not None
    assert -1.0 <= e.ci_low <= e.value <= e.ci_high <= 1.0


def test_mixture_interval_crossing_zero_uses_each_side_scale() -> None:
    # p = 0.2: above the unrelated point S = θ/0.2, below S = θ/0.8 (θ the Fieller ratio)
    e = estimate_similarity(
        [0.9, 0.8, 0.85, 0.95], [0.1, 0.2, 0.15, 0.05], [0.3, 0.12, 0.2, 0.27], 0.2,
        convention="mixture",
    )  # fmt: skip
    assert e.ci_low is not None and e.ci_high is not None
    assert e.ci_low < 0.0 < e.ci_high
    assert -1.0 <= e.ci_low <= e.value <= e.ci_high <= 1.0


def test_identity_and_undefined_cells_have_no_interval() -> None:
    assert estimate_similarity([0.5, 0.6], [0.5, 0.6], [0.5, 0.6], identical=True).ci_low is None
    e = estimate_similarity([0.5, 0.6], [0.6, 0.5], [0.5, 0.6])
    assert e.point.status == "undefined" and e.ci_low is None


def test_fieller_needs_two_points() -> None:
    assert fieller_interval(np.array([1.0]), np.array([1.0])) is None


def test_estimate_rejects_ragged_input() -> None:
    with pytest.raises(ValueError, match="same"):
        estimate_similarity([1, 2], [0], [0.5])
    with pytest.raises(ValueError, match="confidence"):
        estimate_similarity([1, 2], [0, 0], [0.5, 0.5], confidence=1.0)


@pytest.mark.slow
def test_fieller_coverage_is_nominal() -> None:
    # Simulated replicates: true V_A = 60, V_B = 40, V_AB = 45 -> S = (100 - 90)/20 = 0.5.
    rng = np.random.default_rng(7)
    hits = 0
    trials = 2000
    for _ in range(trials):
        a = 60 + rng.normal(0, 3, 5)
        b = 40 + rng.normal(0, 3, 5)
        x = 45 + rng.normal(0, 3, 5)
        e = estimate_similarity(a, b, x)
        if e.ci_low is not None and e.ci_low <= 0.5 <= e.ci_high:  # type: ignore[operator]
            hits += 1
    assert 0.93 <= hits / trials <= 0.97
