"""Factor analysis (minres) and IRT (MML): golden numbers, recovery, broken inputs."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from scipy.stats import spearmanr
from typer.testing import CliRunner

from cli.app import app
from pipeline.errors import GmeterError
from pipeline.metrics.generality.factor import minres
from pipeline.metrics.generality.irt import fit_irt, rescale

ROOT = Path(__file__).resolve().parents[1]
LETTERS = ROOT / "submissions/letter-series/humans/responses.csv"


def simulate_2pl(n: int, p: int, seed: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    a = rng.uniform(0.7, 2.2, p)
    b = rng.normal(0.0, 1.0, p)
    theta = rng.normal(0.0, 1.0, n)
    prob = 1.0 / (1.0 + np.exp(-a * (theta[:, None] - b)))
    return (rng.random((n, p)) < prob).astype(float), a, b


def write_wide(path: Path, y: np.ndarray, cells: list[list[str]] | None = None) -> Path:
    rows = cells or [[repr(float(v)) for v in row] for row in y]
    lines = ["agent," + ",".join(f"i{k}" for k in range(len(rows[0])))]
    lines += [f"a{j}," + ",".join(r) for j, r in enumerate(rows)]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


# ------------------------------------------------------------------ factor analysis
def test_letter_series_humans_match_the_supplement():
    # Supplement A.2: loadings from -0.212 to 0.593, average 0.215. Minres on Pearson gives a
    # first-factor variance of 0.0876 (R psych and factor_analyzer agree; the paper prints 0.093).
    out = CliRunner().invoke(app, ["fa", str(LETTERS), "--format", "json"])
    assert out.exit_code == 0, out.output
    doc = json.loads(out.stdout)
    assert doc["mean_loading"] == pytest.approx(0.215, abs=0.005)
    assert doc["min_loading"] == pytest.approx(-0.212, abs=0.005)
    assert doc["max_loading"] == pytest.approx(0.593, abs=0.005)
    assert doc["variance_explained"] == pytest.approx(0.0876, abs=0.001)
    assert len(doc["loadings"]) == 35


def test_one_factor_structure_is_recovered():
    # x_i = λ_i f + sqrt(1 - λ_i²) e_i: the correlation matrix is exactly ΛΛᵀ off the diagonal
    rng = np.random.default_rng(7)
    lam = np.array([0.9, 0.8, 0.7, 0.6, 0.5, 0.4, 0.3])
    f = rng.normal(size=20000)
    x = lam * f[:, None] + np.sqrt(1 - lam**2) * rng.normal(size=(20000, lam.size))
    fa = minres(x, tuple("abcdefg"))
    assert np.abs(fa.first - lam).max() < 0.02
    assert fa.variance_explained[0] == pytest.approx((lam**2).mean(), abs=0.01)


def test_constant_columns_are_dropped_with_a_warning(tmp_path):
    y, _, _ = simulate_2pl(200, 6, 1)
    y[:, 2] = 1.0
    out = CliRunner().invoke(
        app, ["fa", str(write_wide(tmp_path / "r.csv", y)), "--format", "json"]
    )
    assert out.exit_code == 0, out.output
    doc = json.loads(out.stdout)
    assert doc["dropped_constant_items"] == ["i2"] and "i2" not in doc["loadings"]
    assert "constant" in out.stderr


@pytest.mark.parametrize(
    ("shape", "expect"), [((1, 5), "at least 3 agents"), ((50, 1), "several items")]
)
def test_fa_refuses_too_small_inputs(tmp_path, shape, expect):
    y = np.random.default_rng(0).integers(0, 2, shape).astype(float)
    out = CliRunner().invoke(app, ["fa", str(write_wide(tmp_path / "r.csv", y))])
    assert out.exit_code == 1 and expect in out.output


def test_fa_refuses_missing_values():
    x = np.random.default_rng(0).normal(size=(10, 4))
    x[3, 1] = np.nan
    with pytest.raises(GmeterError, match="complete responses"):
        minres(x, ("a", "b", "c", "d"))


def test_nan_text_in_a_wide_file_is_an_error(tmp_path):
    cells = [["1", "0", "1"], ["0", "nan", "1"], ["1", "1", "0"]]
    out = CliRunner().invoke(app, ["irt", str(write_wide(tmp_path / "r.csv", None, cells))])
    assert out.exit_code == 1 and "not a finite number" in out.output


# ------------------------------------------------------------------ IRT
@pytest.mark.parametrize(("n", "p", "seed"), [(300, 10, 1), (500, 20, 2), (1000, 15, 3)])
def test_2pl_recovers_difficulties(tmp_path, n, p, seed):
    y, _, b = simulate_2pl(n, p, seed)
    path = write_wide(tmp_path / "r.csv", y)
    out = CliRunner().invoke(app, ["irt", str(path), "--model", "2pl", "--format", "csv"])
    assert out.exit_code == 0, out.output
    lines = out.stdout.splitlines()
    assert lines[0].startswith("item,difficulty,discrimination")
    est = {r.split(",")[0]: float(r.split(",")[1]) for r in lines[1:]}
    got = [est[f"i{k}"] for k in range(p)]
    assert spearmanr(got, b)[0] >= 0.95


def test_1pl_and_missing_responses():
    y, _, b = simulate_2pl(400, 8, 5)
    y[::7, 3] = np.nan  # not attempted
    res = fit_irt(y, tuple(f"i{k}" for k in range(8)), "1pl")
    assert len(set(np.round(res.discrimination, 12))) == 1
    assert spearmanr(res.difficulty, b)[0] >= 0.9


def test_irt_drops_items_without_variation_and_refuses_bad_values():
    y, _, _ = simulate_2pl(200, 5, 4)
    y[:, 0] = 1.0
    res = fit_irt(y, tuple("abcde"))
    assert res.dropped == ("a",) and res.items == tuple("bcde")
    with pytest.raises(GmeterError, match=r"\[0, 1\]"):
        fit_irt(y * 3, tuple("abcde"))
    with pytest.raises(GmeterError, match="at least 2 agents"):
        fit_irt(y[:1], tuple("abcde"))
    with pytest.raises(GmeterError, match="at least 2 items"):
        fit_irt(y[:, :1], ("a",))


def test_rescale_maps_onto_the_reference_range():
    assert list(rescale(np.array([-1.0, 0.0, 3.0]), 7.0, 15.0)) == [7.0, 9.0, 15.0]
    assert list(rescale(np.array([2.0, 2.0]), 0.0, 1.0)) == [0.5, 0.5]


def test_generality_with_irt_difficulty(tmp_path):
    y, _, _ = simulate_2pl(300, 10, 9)
    path = write_wide(tmp_path / "r.csv", y)
    args = ["generality", str(path), "--transform", "irt", "--irt-model", "2pl"]
    out = CliRunner().invoke(app, [*args, "--irt-range", "0", "10", "--format", "json"])
    assert out.exit_code == 0, out.output
    rows = json.loads(out.stdout)
    assert len(rows) == 300
    assert all(0.0 <= r["capability"] <= 10.0 for r in rows)


# ------------------------------------------------------------------ the board
def test_board_psychometric_view_on_mazes_matches_the_supplement():
    # Supplement A.8: mazes 2PL IRT difficulty vs m3 difficulty Pearson 0.39, vs mean response -0.94
    from pipeline.tracks.base import ScoreContext
    from pipeline.tracks.generality.track import TRACK
    from pipeline.validate import benchmark_inputs

    bench, bundles = benchmark_inputs(ROOT / "submissions/mazes", "generality")
    bench = type(bench)(**{**bench.__dict__, "settings": {**bench.settings, "bootstrap": 0}})
    res = TRACK.score(bench, bundles, ScoreContext())
    irt = res.charts["generality_psychometric"]["irt"]
    assert round(irt["pearson"], 2) == 0.39
    assert round(irt["pearson_mean_response"], 2) == -0.94
    scatter = res.charts["generality_psychometric_irt"]
    assert scatter["x"]["field"] == "difficulty" and len(scatter["records"]) == 23
    assert any("what generality" not in n and "relabelled g factor" in n for n in res.notes)
    # what a psychometrician also reads: standard errors, reliability, tetrachoric loadings
    assert all(0 < p["irt_difficulty_se"] < 1 for p in scatter["records"])
    assert irt["converged"] and 0.5 < irt["reliability_empirical"] < 1
    tet = res.charts["generality_psychometric"]["fa"]["tetrachoric"]
    assert tet["mean_loading"] == pytest.approx(0.4649, abs=0.001)
    assert any("reliability" in n for n in res.notes)


@pytest.mark.parametrize("seed", range(6))
def test_board_correlations_equal_scipys(seed):
    """The board's Pearson and Spearman (numpy, to keep scipy.stats out of ``score``) equal scipy's,
    ties, large magnitudes and tiny samples included; undefined ones are NaN."""
    from scipy.stats import pearsonr

    from pipeline.tracks.generality.psychometrics import _pearson_spearman

    rng = np.random.default_rng(seed)
    for n in (3, 4, 11, 60):
        x = rng.integers(0, 4, n) * 0.25 if seed % 2 else rng.normal(size=n) * 10.0 ** seed
        y = rng.integers(0, 3, n).astype(float) if seed % 3 else 2 * x + rng.normal(size=n)
        if np.ptp(x) == 0 or np.ptp(y) == 0:
            assert all(np.isnan(_pearson_spearman(x, y)))
            continue
        r, rho = _pearson_spearman(x, y)
        assert r == pytest.approx(pearsonr(x, y)[0], abs=1e-12)
        assert rho == pytest.approx(spearmanr(x, y)[0], abs=1e-12)
    assert all(np.isnan(_pearson_spearman(np.ones(5), np.arange(5.0))))
    assert all(np.isnan(_pearson_spearman(np.arange(2.0), np.arange(2.0))))
