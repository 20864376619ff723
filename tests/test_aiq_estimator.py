"""AIQ estimator (spec §5): stage schedule, allocation, intervals from pairs, MC, differences."""

from __future__ import annotations

import math
import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pipeline.metrics.aiq.estimator import (
    allocate,
    estimate_mc,
    estimate_mc_pairs,
    estimate_stratified,
    pair_sd,
    paired_difference,
    stage_schedule,
)


def test_stage_schedule_matches_the_original() -> None:
    # spec §5.2: A = 20, -s 2000 -> [0,60,120,200,400,600,1000,1400,2000]
    assert stage_schedule(20, 2000, 24000) == [0, 60, 120, 200, 400, 600, 1000, 1400, 2000]
    # -s 10000: ... 2000 (100A), 5000 (250A), then 10000 (500A) + 20 >= 10000
    assert stage_schedule(20, 10000, 100000)[-3:] == [2000, 5000, 10000]
    # min(#programs, budget) caps the last stage
    assert stage_schedule(20, 10000, 3000)[-1] == 3000
    # beyond 5000·A the budget is appended as one more stage
    assert stage_schedule(2, 50000, 10**6)[-2:] == [10000, 50000]
    assert stage_schedule(20, 10, 100) == [0, 10]


def test_allocation_first_stage_is_proportional_plus_one_pair() -> None:
    p = [0.0, 0.5, 0.3, 0.2]
    # R = 3A = 9 runs: m = p·(9 - 6)/2 = (0.75, 0.45, 0.3); cumulative rounding: floor(.751)=0,
    # floor(1.201)-0 = 1, floor(1.501)-1 = 0; plus ceil(p) = 1 each
    assert allocate(p, [1, 1, 1, 1], 9) == [0, 1, 2, 1]
    # all SDs zero: proportional fallback
    assert allocate(p, [0, 0, 0, 0], 106) == allocate(p, [1, 1, 1, 1], 106)
    # optimal allocation follows p_i s_i: m = (0.1, 0.9)·(206 - 4)/2 = (10.1, 90.9);
    # x = (floor(10.101) - 0, floor(101.001) - floor(10.1)) = (10, 91); plus one pair each
    pairs = allocate([0.0, 0.5, 0.5], [0.0, 1.0, 9.0], 206)
    assert pairs == [0, 11, 92]


@settings(max_examples=100, deadline=None)
@given(
    p=st.lists(st.floats(0.01, 1.0), min_size=1, max_size=20),
    s=st.lists(st.floats(0.0, 100.0), min_size=21, max_size=21),
    runs=st.integers(0, 5000),
)
def test_allocation_properties(p, s, runs) -> None:
    total = sum(p)
    p = [0.0, *(x / total for x in p)]
    s = s[: len(p)]
    pairs = allocate(p, s, runs)
    active = len(p) - 1
    assert pairs[0] == 0 and all(k >= 1 for k in pairs[1:])
    if runs >= 2 * active:
        # the original's rounding (+0.001 on one side only) may add a stray pair at a boundary
        # (its README's "one run extra" known issue), at most one per stratum
        assert sum(pairs) - active <= math.floor((runs - 2 * active) / 2 + 0.001) + active
    if runs >= 2 * active and all(x > 0 for x in s[1 : len(p)]):
        assert sum(pairs) * 2 <= runs + 2 * active


def test_stratified_estimate_by_hand() -> None:
    p = [0.0, 0.5, 0.5]
    pairs = {1: [(10.0, 20.0), (30.0, 40.0)], 2: [(0.0, 0.0), (2.0, 2.0)]}
    e = estimate_stratified(p, pairs)
    # pair means 15, 35 (mean 25, var 200) and 0, 2 (mean 1, var 2)
    assert e.value == pytest.approx(13.0)
    # Var = .25·200/2 + .25·2/2 = 25.25
    assert e.half_ci == pytest.approx(1.96 * math.sqrt(25.25))
    # legacy: 1.96 (.5·√200 + .5·√2) / √(8 runs)
    assert e.legacy_half_ci == pytest.approx(
        1.96 * (0.5 * math.sqrt(200) + 0.5 * math.sqrt(2)) / 8**0.5
    )
    assert e.pairs == 4 and e.runs == 8
    assert [r.pairs for r in e.strata] == [2, 2]
    with pytest.raises(ValueError, match="stratum 2"):
        estimate_stratified(p, {1: pairs[1]})


def test_legacy_interval_is_sqrt2_too_narrow_under_optimal_allocation() -> None:
    # equal p and s, equal pairs (optimal): Σp²s²/k = (Σ p s)²/(N/2) = 2 (Σ p s)²/N
    rng = random.Random(0)
    base = [rng.gauss(0, 1) for _ in range(50)]
    pairs = {i: [(x + i, x + i) for x in base] for i in (1, 2, 3, 4)}
    e = estimate_stratified([0.0, 0.25, 0.25, 0.25, 0.25], pairs)
    assert e.half_ci / e.legacy_half_ci == pytest.approx(math.sqrt(2))


def test_pair_interval_has_nominal_coverage_and_the_legacy_does_not() -> None:
    # 600 simulated tests: 4 strata, pair scores ~ N(mu_i, 10) with correlation 0.4 within pairs
    rng = random.Random(1)
    p = [0.0, 0.4, 0.3, 0.2, 0.1]
    mus = [0.0, 50.0, 20.0, -10.0, 5.0]
    truth = sum(pi * m for pi, m in zip(p, mus, strict=True))
    hits = legacy_hits = 0
    reps = 600
    for _ in range(reps):
        pairs = {}
        for i in range(1, 5):
            k = 10 + 20 * i
            sample = []
            for _ in range(k):
                z = rng.gauss(0, 1)
                a = mus[i] + 10 * (0.63 * z + 0.77 * rng.gauss(0, 1))
                b = mus[i] + 10 * (0.63 * z + 0.77 * rng.gauss(0, 1))
                sample.append((a, b))
            pairs[i] = sample
        e = estimate_stratified(p, pairs)
        hits += e.ci_low <= truth <= e.ci_high
        legacy_hits += abs(e.value - truth) <= e.legacy_half_ci
    assert 0.92 <= hits / reps <= 0.98
    assert legacy_hits / reps < 0.90


def test_pair_sd_matches_the_original_formula() -> None:
    pairs = [(1.0, 5.0), (2.0, 2.0), (7.0, -3.0), (4.0, 0.0)]
    plus = [a for a, _ in pairs]
    minus = [b for _, b in pairs]

    def var(xs, ys):
        mx, my = sum(xs) / len(xs), sum(ys) / len(ys)
        return sum((x - mx) * (y - my) for x, y in zip(xs, ys, strict=True)) / (len(xs) - 1)

    legacy = math.sqrt(0.25 * (var(plus, plus) + var(minus, minus) + 2 * var(plus, minus)))
    assert pair_sd(pairs) == pytest.approx(legacy)
    assert math.isnan(pair_sd(pairs[:1]))


def test_single_pair_strata_get_the_largest_sd() -> None:
    e = estimate_stratified([0.0, 1.0], {1: [(10.0, 10.0)]})
    assert e.value == 10.0 and e.half_ci == pytest.approx(196.0)


def test_monte_carlo_estimators() -> None:
    e = estimate_mc([1.0, 3.0])
    assert e.value == 2.0 and e.half_ci == pytest.approx(1.96 * math.sqrt(2) / math.sqrt(2))
    e = estimate_mc_pairs([(1.0, 3.0), (5.0, 7.0)])
    # pair means 2, 6: sd √8, half = 1.96·√8/√2
    assert e.value == 4.0 and e.half_ci == pytest.approx(1.96 * 2.0)
    with pytest.raises(ValueError):
        estimate_mc([])


def test_paired_difference() -> None:
    p = [0.0, 0.5, 0.5]
    a = {1: {0: (10.0, 20.0), 1: (30.0, 40.0)}, 2: {2: (0.0, 0.0), 3: (2.0, 2.0), 9: (5.0, 5.0)}}
    same = paired_difference(p, a, a)
    assert same.value == 0.0 and same.half_ci == 0.0
    b = {1: {0: (0.0, 10.0), 1: (20.0, 30.0)}, 2: {2: (0.0, 0.0), 3: (2.0, 2.0)}}
    d = paired_difference(p, a, b)
    # common programs only (9 is dropped); differences: stratum 1: 10, 10; stratum 2: 0, 0
    assert d.value == pytest.approx(5.0) and d.half_ci == 0.0 and d.pairs == 4
    assert d.a.value - d.b.value == pytest.approx(d.value)
    with pytest.raises(ValueError):
        paired_difference(p, a, {1: b[1]})
