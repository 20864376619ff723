"""Properties of capability and spread from the paper (Supplement §E–F), as hypothesis tests.

The curves are the reference's piecewise-linear ones, so every expectation below is derived
for that discretisation (a 0/1 step between adjacent points is a ramp of one grid step).
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from pipeline.metrics.generality.curves import agent_indicators, curve_indicators
from pipeline.metrics.generality.normalised import normalised_generality

grid_sizes = st.integers(5, 60)
probs = st.floats(0.0, 1.0)


@st.composite
def curves(draw):
    """A difficulty grid k·δ (k = 1..n) and graded responses in [0, 1]."""
    n = draw(grid_sizes)
    delta = draw(st.sampled_from([0.25, 0.5, 1.0, 2.0]))
    d = delta * np.arange(1, n + 1)
    y = np.array(draw(st.lists(probs, min_size=n, max_size=n)))
    return d, y


@settings(max_examples=40, deadline=None)
@given(curves(), st.sampled_from([0.5, 1.0, 3.0, 10.0]))
def test_translation(curve, t):
    # Shifting every difficulty by t (saturated from 0): Ψ + t, same S.
    d, y = curve
    a = agent_indicators(d, y, kmin=0.0)
    b = agent_indicators(d + t, y, kmin=0.0)
    assert b.capability == pytest.approx(a.capability + t, abs=1e-9)
    assert b.spread == pytest.approx(a.spread, abs=1e-6)


@settings(max_examples=40, deadline=None)
@given(curves(), st.sampled_from([0.25, 0.5, 2.0, 7.0]))
def test_same_units(curve, k):
    # Scaling difficulties by k scales Ψ and S by k, Γ by 1/k; γ on the scaled range is unchanged.
    d, y = curve
    a = agent_indicators(d, y, kmin=0.0)
    b = agent_indicators(k * d, y, kmin=0.0)
    assert b.capability == pytest.approx(k * a.capability, rel=1e-12, abs=1e-12)
    assert b.spread == pytest.approx(k * a.spread, rel=1e-6, abs=1e-6)
    ga = normalised_generality([a.capability], [a.spread], 0, d[-1]).gamma[0]
    gb = normalised_generality([b.capability], [b.spread], 0, k * d[-1]).gamma[0]
    assert gb == pytest.approx(ga, abs=1e-6)


@settings(max_examples=40, deadline=None)
@given(curves())
def test_compactness(curve):
    # A curve that is 1 left of a and 0 right of b has S² ≤ 2(Ψ−a)(b−Ψ) ≤ (b−a)²/2: its spread
    # is bounded by the width of its transition (the increasing step attains the bound).
    d, y = curve
    y = y.copy()
    y[0], y[-1] = 1.0, 0.0  # saturated up to a = d[0] (kmin = 0), nothing beyond b = d[-1]
    a, b = d[0], d[-1]
    r = agent_indicators(d, y, kmin=0.0)
    c = r.capability - a
    assert r.spread**2 <= 2 * c * ((b - a) - c) + 1e-9
    assert r.spread <= (b - a) / math.sqrt(2) + 1e-9


@settings(max_examples=30, deadline=None)
@given(grid_sizes, st.floats(0.5, 50.0), st.sampled_from([0.25, 0.5, 1.0]))
def test_step_has_infinite_generality(n, pos, delta):
    # ψ = 1 up to the last point: a step, S = 0, Γ = ∞. On a dyadic grid the sums are exact;
    # elsewhere S² is rounding (|S²| ~ 1e-16·Ψ², spec §11), so S is tiny but may not be 0.
    d = delta * np.arange(n)
    r = agent_indicators(d, np.ones(n), kmin=0.0)
    assert r.capability == d[-1]
    assert r.spread == 0.0 and r.generality == math.inf
    d = np.linspace(0, pos, n)
    r = agent_indicators(d, np.ones(n), kmin=0.0)
    assert r.capability == pytest.approx(pos)
    assert r.spread**2 <= 1e-13 * pos**2


@settings(max_examples=40, deadline=None)
@given(st.floats(0.01, 0.99), st.floats(0.5, 20.0), st.integers(2, 200))
def test_constant_curve(c, q, n):
    # ψ = c on [0, q] then 0 (no extrapolation): Ψ = cq, S = q·sqrt(c(1−c)), γ = 0 (isometric)
    d = np.linspace(0, q, n)
    r = agent_indicators(d, np.full(n, c), kmin=0.0)
    assert r.capability == pytest.approx(c * q, rel=1e-12)
    assert r.spread == pytest.approx(q * math.sqrt(c * (1 - c)), rel=1e-9)
    g = normalised_generality([r.capability], [r.spread], 0, q, "paper").gamma[0]
    assert g == pytest.approx(0.0, abs=1e-9)


@settings(max_examples=40, deadline=None)
@given(st.integers(4, 400), st.data())
def test_minimum_generality_step(n, data):
    # The increasing step (0 then 1 up to q) has the maximum spread S² = 2Ψ(q−Ψ): γ = −1.
    # On the grid 0..q the jump is a ramp of one step δ; integrating the ramp exactly:
    # Ψ = q − j·δ + δ/2 ... so compare with the closed form for that Ψ to O(δ²).
    j = data.draw(st.integers(1, n - 1))
    q = 1.0
    d = np.linspace(0, q, n + 1)
    y = (np.arange(n + 1) >= j).astype(float)
    r = agent_indicators(d, y, kmin=0.0)
    delta = q / n
    assert r.capability == pytest.approx(q - (j - 0.5) * delta, abs=1e-12)
    g = normalised_generality([r.capability], [r.spread], 0, q, "paper").gamma[0]
    assert g == pytest.approx(-1.0, abs=2 * delta)


@pytest.mark.parametrize(("mu", "sigma"), [(5.0, 1.0), (10.0, 0.5), (3.0, 0.3)])
def test_normal_acc_has_spread_sigma(mu, sigma):
    # ψ(h) = 1 − Φ((h−μ)/σ), the survival function of N(μ, σ²): Ψ = μ and S = σ.
    from scipy.special import ndtr

    d = np.linspace(0, mu + 10 * sigma, 20001)
    y = 1 - ndtr((d - mu) / sigma)
    r = agent_indicators(d, y, kmin=0.0)
    assert r.capability == pytest.approx(mu, abs=1e-6)
    assert r.spread == pytest.approx(sigma, abs=1e-4)


@settings(max_examples=40, deadline=None)
@given(st.lists(st.integers(1, 40), min_size=1, max_size=30), st.sampled_from([0.1, 0.25, 1.0]))
def test_lemma19_average_of_steps(positions, delta):
    # Agent i steps down at a_i (on the grid kδ): y = [d < a_i]. Each step is a ramp of width δ,
    # i.e. a step at a_i − Uδ with U ~ U(0,1); averaging the curves gives the mixture, so
    # Ψ = mean(a) − δ/2 and S² = popvar(a) + δ²/12 exactly (Lemma 19 plus the ramp).
    a = np.array(positions, dtype=float) * delta
    d = delta * np.arange(0, max(positions) + 2)
    y = (d[None, :] < a[:, None]).astype(float)
    mean_curve = y.mean(axis=0)
    r = agent_indicators(d, mean_curve, kmin=0.0)
    assert r.capability == pytest.approx(a.mean() - delta / 2, abs=1e-9)
    assert r.spread == pytest.approx(math.sqrt(a.var() + delta**2 / 12), abs=1e-9)


@settings(max_examples=30, deadline=None)
@given(curves())
def test_kmin_below_the_data_changes_only_expected_difficulty(curve):
    d, y = curve
    assume(y.sum() > 0)
    a = agent_indicators(d, y, kmin=None)
    b = agent_indicators(d, y, kmin=d[0] - 3)
    assert b.capability == pytest.approx(a.capability, abs=1e-9)
    assert b.spread == pytest.approx(a.spread, abs=1e-6)


@settings(max_examples=30, deadline=None)
@given(curves())
def test_bounds(curve):
    # Ψ lies between u₁ and u_N (kmin None), S ≥ 0, Γ = 1/S.
    d, y = curve
    r = curve_indicators(d, y[None, :])
    assert d[0] - 1e-12 <= r.capability[0] <= d[-1] + 1e-12
    assert r.spread[0] >= 0
    assert r.generality[0] == (math.inf if r.spread[0] == 0 else 1 / r.spread[0])
