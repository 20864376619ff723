"""Transformations (spec §8) and normalised generality (§7): worked examples E7–E9, E12, E13."""

from __future__ import annotations

import math

import numpy as np
import pytest

from pipeline.metrics.generality.curves import curve_indicators
from pipeline.metrics.generality.normalised import isometric_curves, normalised_generality
from pipeline.metrics.generality.transforms import (
    aref,
    beta_parameters,
    dref,
    group_items,
    intrinsic,
    opp,
    rank_percentiles,
    rnk,
)

TOL = 1e-12


# ------------------------------------------------------------------ Rnk (E7)
def test_e7_rank_mapping_counts_the_agent_itself():
    # 5 in (1, 5, 5, 9): 1/4 below + 0.5·2/4 equal = 0.5; on the grid (0,.25,.5,.75,1) -> 1,1,.5,0,0
    p = rank_percentiles([[1], [5], [5], [9]])
    assert p[1, 0] == 0.5
    pts = rnk([[1], [5], [5], [9]], 5)
    assert pts.responses[1].tolist() == [1, 1, 0.5, 0, 0]


def test_e7_mini_study():
    pts = rnk([[10, 7], [20, 7], [30, 1]], 5)
    assert pts.extras["mapped"][:, 0].tolist() == [1 / 6, 0.5, 0.83333333333333326]
    assert pts.extras["mapped"][0, 1] == 0.66666666666666663
    assert pts.responses[0].tolist() == [1, 0, 0, 0, 0, 1, 1, 1, 0, 0]
    assert pts.difficulty.tolist() == [0, 0.25, 0.5, 0.75, 1] * 2
    r = curve_indicators(pts.difficulty, pts.responses, 0.0, 1.0)
    assert r.capability.tolist() == [0.375, 0.5625, 0.5]
    assert r.spread == pytest.approx(
        [0.26020824993326658, 0.13010412496663323, 0.38188130791298658], abs=TOL
    )
    g = normalised_generality(r.capability, r.spread, 0, 1, "grid")
    assert g.gamma == pytest.approx(
        [0.71071954010462046, 0.93110367784468451, 0.41660714285714284], abs=TOL
    )
    # Lemma-19 closed forms (mean, popsd of the percentiles) differ at small c
    m = pts.extras["mapped"]
    assert m.mean(axis=1) == pytest.approx([5 / 12, 7 / 12, 0.5])
    assert m.std(axis=1) == pytest.approx([0.25, 1 / 12, 1 / 3])


def test_rnk_float_formula_decides_grid_ties():
    # m = 24: 7/24 + (0.5·2)/24 = 0.33333333333333337 == g₃₄ (a 0.5), 8/24 would not be
    col = np.array([0.0] * 7 + [1.0, 1.0] + [2.0] * 15)
    p = rank_percentiles(col[:, None])
    assert p[7, 0] == 0.33333333333333337 == np.linspace(0, 1, 100)[33]
    pts = rnk(col[:, None], 100)
    assert pts.responses[7, 33] == 0.5


def test_rnk_with_missing_scores_ranks_among_those_present():
    p = rank_percentiles([[1.0], [np.nan], [3.0]])
    assert p[0, 0] == 0.25 and math.isnan(p[1, 0]) and p[2, 0] == 0.75


def test_grouped_rnk_uses_long_double_row_means():
    x = np.array([[0.1, 0.2, 0.3, 0.4, 0.5, 1.0]])
    g = group_items(x, [[0, 1, 2, 3, 4], [5]])
    acc = np.longdouble(0)
    for v in x[0, :5]:
        acc += np.longdouble(v)
    assert g[0, 0] == float(acc / 5) and g[0, 1] == 1.0


# ------------------------------------------------------------------ ARef (E8)
E8 = np.array([[10, 1, 100], [5, 3, 50], [20, 2, 50], [10, 0, 60]], dtype=float)


def test_e8_aref_equalhalf():
    pts = aref(E8, 0)
    assert pts.responses.tolist() == [[0.5] * 3, [0, 1, 0], [1, 1, 0], [0.5, 0, 0]]
    assert pts.difficulty.tolist() == [0.5, 0.33333333333333337, 1.0]
    r = curve_indicators(pts.difficulty, pts.responses, 0.0, 2.0)
    assert r.capability == pytest.approx(
        [0.66666666666666674, 0.41666666666666669, 0.75, 0.5], abs=TOL
    )
    assert r.spread == pytest.approx(
        [0.33333333333333326, 0.048112522432468635, 0.14433756729740618, 0.25458753860865779],
        abs=TOL,
    )


def test_e8_other_conventions():
    ge = aref(E8, 0, "greater_or_equal")
    assert ge.responses[3].tolist() == [1, 0, 0]
    assert ge.difficulty.tolist() == [1 - 2 / 3, 1 - 2 / 3, 1.0]  # 1 − colMeans, as R
    assert aref(E8, 0, "greater").responses[0].tolist() == [0, 0, 0]


def test_aref_drops_items_nobody_else_answered_and_needs_a_complete_reference():
    x = E8.copy()
    x[1:, 2] = np.nan
    pts = aref(x, 0)
    assert pts.extras["dropped_items"].tolist() == [2] and pts.difficulty.size == 2
    x = E8.copy()
    x[0, 1] = np.nan
    with pytest.raises(ValueError, match="reference"):
        aref(x, 0)


# ------------------------------------------------------------------ DRef (E9)
def test_e9_beta_reference():
    a, b = beta_parameters([0.6], [0.04])
    assert a[0] == pytest.approx(3, abs=1e-12) and b[0] == pytest.approx(2, abs=1e-12)
    pts = dref([[0.5, 0.9]], [0.6, 0.6], [0.04, 0.04], columns=5)
    assert pts.extras["mapped"][0, 0] == pytest.approx(0.31250000000000006, abs=1e-15)
    assert pts.responses[0].tolist() == [1, 1, 0, 0, 0, 1, 1, 1, 1, 0]
    r = curve_indicators(pts.difficulty, pts.responses, 0.0, 1.0)
    assert r.capability[0] == 0.625
    assert r.spread[0] == pytest.approx(0.26020824993326647, abs=TOL)


def test_e9_normal_reference_passes_the_variance_as_sd():
    pts = dref([[0.5]], [0.6], [0.2], columns=5, distribution="normal")
    assert pts.extras["mapped"][0, 0] == pytest.approx(0.30853753872598694, abs=1e-15)


def test_dref_rejects_impossible_beta():
    with pytest.raises(ValueError, match="Beta"):
        dref([[0.5]], [0.5], [0.3])


# ------------------------------------------------------------------ Opp (E13)
def test_e13_opp_mini():
    c = np.array([[np.nan, 1, 0.5], [0, np.nan, 1], [0.5, 0, np.nan]])
    pts = opp(c)
    assert pts.extras["scores"].tolist() == [2, 1.5, 1]
    assert pts.capability_range == (0.0, 3.0)
    r = curve_indicators(pts.difficulty, pts.responses, 0.0, 1.6 * 3)
    assert r.capability.tolist() == [1.75, 1.5, 1.25]
    assert r.spread == pytest.approx(
        [1.0103629710818449, 0.28867513459481237, 1.0103629710818449], abs=TOL
    )
    assert r.expected_difficulty[0] == pytest.approx(1.1666666666666665, abs=TOL)


def test_opp_needs_every_game():
    c = np.array([[np.nan, 1, np.nan], [0, np.nan, 1], [0.5, 0, np.nan]])
    with pytest.raises(ValueError, match="missing"):
        opp(c)


# ------------------------------------------------------------------ intrinsic
def test_intrinsic_epsilon_binarises():
    pts = intrinsic([[0.95, 0.5, np.nan]], [1, 2, 3], epsilon=0.1)
    assert pts.responses[0, :2].tolist() == [1.0, 0.0] and math.isnan(pts.responses[0, 2])
    assert pts.capability_range == (1.0, 3.0)


# ------------------------------------------------------------------ normalised generality
def test_e12_grid_mode():
    g = normalised_generality([0.2, 0.5, 0.8, 0.5], [0.1, 0.5, 0.2, 0.0], 0, 1, "grid")
    # nearest grid point to 0.2 is x₂₁ = 0.20202…: ns = (0.01 − 0.161208…)/0.161208…
    assert -g.gamma[0] == pytest.approx(-0.9379683544303794, abs=TOL)
    assert -g.gamma[1] == pytest.approx(0.00010204081632678248, abs=TOL)
    assert -g.gamma[2] == pytest.approx(-0.75187341772151894, abs=TOL)
    assert -g.gamma[3] == pytest.approx(-0.99999999999999956, abs=TOL)
    assert g.abstruse.tolist() == [False, True, False, False]
    assert g.percent_abstruse == 25.0


def test_grid_mode_endpoints_give_zero_and_abstruse():
    g = normalised_generality([0.001, 0.999, 0.001], [1e-6, 0.01, 0.0], 0, 1, "grid")
    assert g.gamma.tolist() == [0.0, 0.0, 0.0]
    assert g.abstruse.tolist() == [True, True, False]


def test_paper_mode_closed_form_and_degenerate_cases():
    g = normalised_generality([0.25, 0.5, 0.0, 0.0, 0.5], [0.25, 0.0, 0.0, 0.1, 0.6], 0, 1)
    # Ψ = 0.25: S²_cnst = 0.25·0.75 = 0.1875; γ = 1 − 0.0625/0.1875 = 2/3
    assert g.gamma[0] == pytest.approx(2 / 3, abs=TOL)
    assert g.gamma[1] == 1.0 and g.gamma[2] == 1.0
    assert math.isnan(g.gamma[3]) and g.abstruse[3]
    assert g.gamma[4] == pytest.approx(1 - 0.36 / 0.25) and g.abstruse[4]


def test_grid_and_paper_agree_away_from_the_grid_effect():
    cap = np.array([0.2020202020202020, 0.5050505050505051])  # on grid points
    spr = np.array([0.3, 0.2])
    a = normalised_generality(cap, spr, 0, 1, "grid").gamma
    b = normalised_generality(cap, spr, 0, 1, "paper").gamma
    assert a == pytest.approx(b, abs=1e-12)


def test_isometrics():
    iso = isometric_curves(0, 4, 5)
    assert iso.capability.tolist() == [0, 1, 2, 3, 4]
    assert iso.constant.tolist() == [0, math.sqrt(3), 2, math.sqrt(3), 0]
    assert iso.maximum == pytest.approx(iso.constant * math.sqrt(2))


def test_bad_range_is_refused():
    with pytest.raises(ValueError):
        normalised_generality([0.5], [0.1], 1, 1)
