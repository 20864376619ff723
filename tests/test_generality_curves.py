"""Core indicators (spec §1–§4, §10 worked examples, §11 numerics).

The expected values are R 4.2.2's doubles as printed in the spec (17 significant digits);
tests compare to 1e-12 unless noted (the issue asks 1e-9) and bit for bit where the spec says
the operation order makes it so.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pipeline.metrics.generality.curves import (
    agent_indicators,
    curve_indicators,
    curve_points,
    indicators_from_merged,
    merge_points,
    r_group_means,
)
from pipeline.metrics.generality.fullstudy import (
    bin_difficulties,
    padded_indicators,
    padding_limits,
    r_quantile7,
    r_row_means,
    r_seq,
)

TOL = 1e-12


def _literal(d, y, kmin=None, kmax=None):
    """Spec §1–§2 transliterated with Python floats, one agent, no vectorisation."""
    u = sorted(set(d))
    yb = [sum(v for dd, v in zip(d, y, strict=True) if dd == x) / d.count(x) for x in u]
    n = len(u)
    kmin0 = u[0]
    left = 0.0
    imin = 0
    if kmin is None:
        kmin = kmin0
    elif kmin < kmin0:
        left = 1 * (kmin0 - kmin)
    elif kmin > kmin0:
        imin = next((i for i in range(n) if kmin <= u[i]), n - 1)
    imax = n - 1
    if kmax is not None and kmax < u[-1]:
        imax = max([i for i in range(n) if kmax >= u[i]], default=0)
    a = left
    for i in range(imin, imax):
        a = a + ((u[i + 1] - u[i]) * (yb[i] + yb[i + 1])) / 2
    m = (1 / 2) * (kmin0 - kmin) * (kmin0 + kmin) if kmin < kmin0 else 0.0
    for i in range(imin, imax):
        p, q, c, e = u[i], u[i + 1], yb[i], yb[i + 1]
        m = m + ((1 / 6) * (q - p)) * (p * (2 * c + e) + q * (c + 2 * e))
    e = m / a
    s2 = (2 * a) * (e - kmin) - a * a
    if -1e-5 < s2 < 0:
        s2 = 0.0
    return a + kmin, e, math.sqrt(s2)


# ------------------------------------------------------------------ E1–E6
E1 = ([1, 2, 3, 4], [1, 1, 0.5, 0])


@pytest.mark.parametrize(
    ("kmin", "kmax", "cap", "spread", "expdiff"),
    [
        # kmin 0: left block 1; trapezoids 1, 0.75, 0.25 -> A = 3; M = 0.5+1.5+11/6+5/6
        (0.0, None, 3.0, 0.57735026918962473, 1.5555555555555554),
        (None, None, 3.0, 0.57735026918962473, 2.083333333333333),
        (-3.0, None, 3.0, 0.57735026918962162, 0.027777777777777752),
        # kmin inside the data: the segment [1.5, 2] is dropped, not interpolated (a hole)
        (1.5, None, 2.5, 1.1547005383792515, 2.6666666666666665),
        (2.0, None, 3.0, 0.57735026918962551, None),
        (None, 3.0, 2.75, 0.32274861218395051, 1.9047619047619047),
        (None, 3.5, 2.75, 0.32274861218395051, 1.9047619047619047),
    ],
)
def test_e1_basic_curve(kmin, kmax, cap, spread, expdiff):
    r = agent_indicators(*E1, kmin=kmin, kmax=kmax)
    assert r.capability == pytest.approx(cap, abs=TOL)
    assert r.spread == pytest.approx(spread, abs=TOL)
    if expdiff is not None:
        assert r.expected_difficulty == pytest.approx(expdiff, abs=TOL)
    assert r.generality == pytest.approx(1 / r.spread)


def test_e1_is_bit_identical_to_r():
    # The operation order is R's, so the doubles are R's (spec §11).
    r = agent_indicators(*E1, kmin=0.0)
    assert r.spread == 0.57735026918962473
    assert r.generality == 1.7320508075688803
    assert agent_indicators(*E1, kmin=-3.0).spread == 0.57735026918962162
    assert agent_indicators(*E1, kmin=2.0).spread == 0.57735026918962551


def test_e2_merging():
    # (3,1,2,1,3,2) / (0,1,1,0,1,0) merge to (1,2,3) / (0.5,0.5,0.5): Ψ = 2, S = 1
    r = agent_indicators([3, 1, 2, 1, 3, 2], [0, 1, 1, 0, 1, 0])
    assert (r.capability, r.spread, r.generality, r.expected_difficulty) == (2.0, 1.0, 1.0, 2.0)
    m = merge_points([3, 1, 2, 1, 3, 2], [0, 1, 1, 0, 1, 0])
    assert m.difficulty.tolist() == [1, 2, 3]
    assert m.counts.tolist() == [2, 2, 2]


def test_e3_step_on_distinct_points():
    # the 1 -> 0 step between 4 and 5 is a ramp: half a bin, S = sqrt(1/12)
    d, y = list(range(10)), [1] * 5 + [0] * 5
    r = agent_indicators(d, y)
    assert r.capability == 4.5
    assert r.spread == pytest.approx(0.28867513459481081, abs=TOL)
    assert r.expected_difficulty == pytest.approx(2.2592592592592591, abs=TOL)
    assert agent_indicators(d, y, kmin=-1).spread == pytest.approx(0.28867513459481697, abs=TOL)


def test_e4_all_ones_and_zeros():
    r = agent_indicators([1, 2, 3, 4], [1, 1, 1, 1])
    assert (r.capability, r.spread, r.generality, r.expected_difficulty) == (
        4.0,
        0.0,
        math.inf,
        2.5,
    )
    r = agent_indicators([1, 2, 3, 4], [0, 0, 0, 0], kmin=0)
    assert (r.capability, r.spread, r.expected_difficulty) == (1.0, 0.0, 0.5)


def test_e4_all_zero_without_left_block_is_a_step_at_kmin():
    # R: error (0/0). Documented answer: Ψ = kmin0, S = 0, Γ = inf, E = kmin0 (limit of a
    # vanishing saturated block).
    r = agent_indicators([1, 2, 3, 4], [0, 0, 0, 0])
    assert (r.capability, r.spread, r.generality, r.expected_difficulty) == (
        1.0,
        0.0,
        math.inf,
        1.0,
    )
    assert r.status == "no_area"


def test_e5_single_distinct_difficulty():
    # R: error. Documented: no segment; A is the left block.
    r = agent_indicators([2, 2, 2], [1, 0, 1])
    assert (r.capability, r.spread, r.status) == (2.0, 0.0, "no_area")
    r = agent_indicators([2, 2, 2], [1, 0, 1], kmin=0)
    # left block 2 -> Ψ = 2, M = 2, E = 1, S² = 2·2·1 − 4 = 0
    assert (r.capability, r.spread, r.expected_difficulty, r.status) == (2.0, 0.0, 1.0, "ok")


def test_limits_beyond_the_data_leave_no_segment():
    # kmin above every point: R counts imin:(imax-1) downwards and fails; we sum nothing.
    r = agent_indicators([1, 2, 3], [1, 0.5, 0], kmin=5)
    assert (r.capability, r.spread, r.status) == (5.0, 0.0, "no_area")
    r = agent_indicators([1, 2, 3], [1, 0.5, 0], kmin=0, kmax=0.5)
    # only the saturated block [0, 1] is left: Ψ = 1, a step
    assert (r.capability, r.spread) == (1.0, 0.0)


def test_e6_increasing_step():
    r = agent_indicators([1, 2, 3, 4], [0, 0, 1, 1])
    assert r.capability == 2.5
    assert r.spread == pytest.approx(2.1015867021530816, abs=TOL)
    assert r.expected_difficulty == pytest.approx(3.2222222222222219, abs=TOL)


def test_negative_spread2_beyond_tolerance_is_nan():
    # Only reachable with ψ > 1: d = (0, 1), ψ = 2: A = 2, M = 1, S² = 2·2·0.5 − 4 = −2.
    r = indicators_from_merged([0.0, 1.0], [2.0, 2.0], None, None)
    assert r.spread_squared[0] == -2.0
    assert math.isnan(r.spread[0]) and math.isnan(r.generality[0])
    assert r.status[0] == "negative_spread2"


def test_tiny_negative_spread2_is_rounding():
    # A = 1, M = 0.5 + 2e-7... : craft S² in (−1e-5, 0) directly on merged points
    r = indicators_from_merged([0.0, 1.0], [1.000001, 1.000001], None, None)
    assert -1e-5 < r.spread_squared[0] < 0
    assert r.spread[0] == 0.0 and r.generality[0] == math.inf


@pytest.mark.parametrize(
    "bad",
    [([1, 2], [0.5]), ([1, 2], [0.5, 1.5]), ([1, 2], [-0.1, 0]), ([1, math.inf], [1, 0])],
)
def test_invalid_inputs_raise(bad):
    with pytest.raises(ValueError):
        curve_indicators(*bad)


def test_agent_with_no_item_raises():
    with pytest.raises(ValueError, match="no answered item"):
        curve_indicators([1, 2], [[1, 0], [np.nan, np.nan]])


# ------------------------------------------------------------------ padded pipeline (E10)
def test_e10_padded_with_min_zero():
    d = [0, 0, 0.1, 0.5, 0.9]
    lim = padding_limits(d)
    assert (lim.kmin, lim.kmax) == (0.0, pytest.approx(1.74, abs=1e-15))
    r = padded_indicators(d, [[1, 0, 1, 1, 0]])
    # ψ(0) = mean(1 pad, 1, 0) = 2/3, the pad at −1e-5 is truncated
    assert r.capability[0] == pytest.approx(0.68333333333333335, abs=TOL)
    assert r.spread[0] == pytest.approx(0.18782379449307718, abs=TOL)
    assert r.expected_difficulty[0] == pytest.approx(0.36747967479674787, abs=TOL)
    direct = agent_indicators(d, [1, 0, 1, 1, 0], kmin=0)
    assert direct.capability == 0.675
    assert direct.spread == pytest.approx(0.21457321982639524, abs=TOL)


def test_e10b_padded_normal_case():
    d = [1, 2, 2, 3, 4, 5, 5, 5]
    y = [1, 1, 0, 1, 0, 1, 0, 0]
    lim = padding_limits(d)
    assert (lim.kmin, lim.kmax) == (0.0, pytest.approx(10.8, abs=1e-14))
    r = padded_indicators(d, [y])
    assert r.capability[0] == pytest.approx(3.166668333333333, abs=TOL)
    assert r.spread[0] == pytest.approx(1.3642277017531039, abs=TOL)
    direct = agent_indicators(d, y, kmin=0)
    assert direct.capability == pytest.approx(3.1666666666666665, abs=TOL)
    assert direct.spread == pytest.approx(1.3642254619787415, abs=TOL)


def test_padded_all_correct_gets_the_ramp_spread():
    # all-correct agents keep a 1e-5 ramp at max d: S = 1e-5/sqrt(12) (spec §7)
    r = padded_indicators([1, 2, 3, 4], [[1, 1, 1, 1]])
    # (S² ≈ 8e-12 is the difference of numbers near 16: only ~4 digits survive)
    assert r.spread[0] == pytest.approx(1e-5 / math.sqrt(12), rel=1e-3)


def test_quantile_type7_matches_r():
    x = [0, 0, 0.1, 0.5, 0.9]
    # h = 1 + 4·0.95 = 4.8 -> 0.2·0.5 + 0.8·0.9 = 0.82
    assert r_quantile7(x, 0.95) == pytest.approx(0.82, abs=1e-15)
    assert r_quantile7(x, 0.5) == 0.1
    assert r_quantile7([3.0], 0.05) == 3.0


def test_e11_bin_difficulties_quirk():
    assert bin_difficulties([0, 1, 2.5, 4, 7, 10], 4).tolist() == [
        1.25,
        1.25,
        1.25,
        3.75,
        6.25,
        6.25,
    ]


def test_r_seq_is_r_and_numpy_linspace():
    assert r_seq(0, 1, 100).tolist() == np.linspace(0, 1, 100).tolist()
    assert r_seq(0.2, 0.9, 7)[-1] == 0.9


def test_r_row_means_long_double():
    x = np.array([[0.1, 0.2, 0.3, 0.4, 0.5]])
    acc = np.longdouble(0)
    for v in x[0]:
        acc += np.longdouble(v)
    assert r_row_means(x, [[0, 1, 2, 3, 4]])[0, 0] == float(acc / np.longdouble(5))


# ------------------------------------------------------------------ E14 demo curves
def test_e14_demo_simple_curves():
    d = np.linspace(0, 10, 10000)
    step = (d < 5).astype(float)
    comp = (d >= 5).astype(float)
    alt = (np.arange(d.size) % 2).astype(float)
    const = np.full(d.size, 0.5)
    lin = 1 - d / 10
    r = curve_indicators(d, np.vstack([step, comp, alt, const, lin]), 0.0, 10.0)
    assert r.capability[0] == pytest.approx(5, abs=1e-3)
    assert r.spread[0] == pytest.approx(0.000288704, abs=1e-8)
    assert r.spread[1] == pytest.approx(7.0710678, abs=1e-6)
    assert r.spread[2] == pytest.approx(4.99999998, abs=1e-7)
    assert r.spread[3] == pytest.approx(5.0, abs=1e-9)
    assert r.spread[4] == pytest.approx(2.88675, abs=1e-5)


def test_fig1_agents_a_b():
    # 24 items at difficulties 0/1/2 (8 each), kmin −0.2. Solving Ψ and S of the paper's Fig. 1
    # for the success counts gives a = (6, 5, 4)/8 and b = (8, 7, 0)/8: e.g. for a,
    # T = (0.75+0.625)/2 + (0.625+0.5)/2 = 1.25, M = 2/6 + 5/6, S² = 2·7/6 − 1.25² = 0.7708.
    d = [0] * 8 + [1] * 8 + [2] * 8
    a = [1] * 6 + [0] * 2 + [1] * 5 + [0] * 3 + [1] * 4 + [0] * 4
    b = [1] * 8 + [1] * 7 + [0] * 1 + [0] * 8
    ra = agent_indicators(d, a, kmin=-0.2)
    rb = agent_indicators(d, b, kmin=-0.2)
    assert ra.capability == pytest.approx(1.25, abs=TOL)
    assert rb.capability == pytest.approx(1.375, abs=TOL)
    assert ra.spread == pytest.approx(0.87797, abs=5e-6)
    assert rb.spread == pytest.approx(0.43899, abs=5e-6)


# ------------------------------------------------------------------ vectorised = literal
responses = st.lists(st.sampled_from([0.0, 0.5, 1.0, 0.25]), min_size=2, max_size=12)


@settings(max_examples=150, deadline=None)
@given(
    st.lists(st.integers(0, 6), min_size=2, max_size=12),
    st.data(),
    st.sampled_from([None, -1.0, 0.0, 1.5, 3.0]),
    st.sampled_from([None, 2.0, 4.5, 10.0]),
)
def test_vectorised_equals_literal_spec(ds, data, kmin, kmax):
    d = [float(x) * 0.5 for x in ds]
    if len(set(d)) < 2:
        return
    rows = [
        data.draw(
            st.lists(st.sampled_from([0.0, 0.5, 1.0, 0.25]), min_size=len(d), max_size=len(d))
        )
        for _ in range(3)
    ]
    r = curve_indicators(d, rows, kmin, kmax)
    for j, y in enumerate(rows):
        try:
            cap, ed, spr = _literal(d, y, kmin, kmax)
        except (ZeroDivisionError, ValueError):
            continue  # the degenerate cases R fails on: tested above
        assert r.capability[j] == cap
        assert r.spread[j] == spr
        assert r.expected_difficulty[j] == ed


def test_missing_responses_use_the_agents_own_items():
    d = [1, 2, 3, 4]
    y = np.array([[1, np.nan, 0.5, 0], [1, 1, 0.5, 0]])
    r = curve_indicators(d, y, 0.0)
    alone = agent_indicators([1, 3, 4], [1, 0.5, 0], 0.0)
    assert r.capability[0] == alone.capability and r.spread[0] == alone.spread
    assert r.capability[1] == 3.0


def test_rows_are_independent_and_order_free():
    rng = np.random.default_rng(3)
    d = rng.integers(0, 30, 200) / 3
    y = (rng.random((50, 200)) < 0.6).astype(float)
    whole = curve_indicators(d, y, 0.0)
    perm = rng.permutation(200)
    shuffled = curve_indicators(d[perm], y[:, perm], 0.0)
    single = curve_indicators(d, y[7:8], 0.0)
    assert np.array_equal(whole.capability, shuffled.capability)
    assert np.array_equal(whole.spread, shuffled.spread)
    assert whole.capability[7] == single.capability[0]


def test_chunking_does_not_change_results(monkeypatch):
    import pipeline.metrics.generality.curves as curves

    rng = np.random.default_rng(5)
    d = rng.random(300) * 10
    y = (rng.random((40, 300)) < 0.5).astype(float)
    whole = curve_indicators(d, y, 0.0)
    monkeypatch.setattr(curves, "_CHUNK_ELEMENTS", 700)
    chunked = curve_indicators(d, y, 0.0)
    assert np.array_equal(whole.spread, chunked.spread)


def test_r_group_means_is_rs_long_double_mean():
    rng = np.random.default_rng(1)
    x = rng.random((4, 30))
    counts = np.array([1, 4, 1, 10, 13, 1])
    got = r_group_means(x, counts)
    starts = np.concatenate(([0], np.cumsum(counts)[:-1]))
    for j in range(4):
        for g, (s0, c) in enumerate(zip(starts, counts, strict=True)):
            v = x[j, s0 : s0 + c].astype(np.longdouble)
            s = np.longdouble(0)
            for e in v:
                s += e
            s /= c
            t = np.longdouble(0)
            for e in v:
                t += e - s
            s += t / c
            assert got[j, g] == float(s)
    assert np.allclose(r_group_means(x, counts, exact=False), got, rtol=0, atol=1e-15)


def test_curve_points_for_charts():
    x, psi = curve_points([1, 2, 2, 3], [1, 1, 0, 0], kmin=0.0)
    assert x.tolist() == [0.0, 1.0, 1.0, 2.0, 3.0]
    assert psi.tolist() == [1.0, 1.0, 1.0, 0.5, 0.0]


@pytest.mark.parametrize("width", [1, 2, 3, 7, 64])
def test_sums_are_sequential_like_rs_loop(width):
    # The kernel relies on numpy reducing the outer axis row by row (not pairwise); pin it with
    # values whose sum depends on the order (a change in numpy would break bit-exactness).
    from pipeline.metrics.generality.curves import _sequential_sum

    rng = np.random.default_rng(width)
    x = rng.random((3001, width)) * 10.0 ** rng.uniform(-8, 8, size=(3001, 1))
    x[rng.random(x.shape) < 0.5] *= -1
    expect = np.cumsum(np.vstack([np.full((1, width), 0.3), x]), axis=0)[-1]
    assert np.array_equal(_sequential_sum(x, 0.3), expect)
