"""IRT beyond point estimates: information and standard errors, abilities, reliability, fit.

Properties of the estimator (score zero at the estimate, information equal to minus the
Hessian, standard errors equal to the curvature's), recovery on simulated data, flags and
warnings on small or degenerate data, and the command's CSV/JSON.
"""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import numpy as np
import pytest
from scipy.special import ndtr, ndtri
from scipy.stats import multivariate_normal, pearsonr
from typer.testing import CliRunner

from cli.app import app
from pipeline.metrics.generality import itemfit, mml, persons, rasch
from pipeline.metrics.generality.irt import MIN_AGENTS, fit_irt
from pipeline.metrics.generality.tetrachoric import bivariate_normal_cdf, tetrachoric

ROOT = Path(__file__).resolve().parents[1]
MAZES = ROOT / "submissions/mazes/cambridge-psychometrics/responses.csv"


def simulate(n: int, a: np.ndarray, b: np.ndarray, seed: int) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    theta = rng.normal(size=n)
    p = 1.0 / (1.0 + np.exp(-a * (theta[:, None] - b)))
    return (rng.random((n, a.size)) < p).astype(float), theta


def loglik(y: np.ndarray, v: np.ndarray, k: int) -> float:
    return mml.posterior(mml.Data.of(y), v[:k], v[k:], mml.quadrature())[1]


def numeric_hessian(f, v: np.ndarray, h: float = 1e-4) -> np.ndarray:
    m = v.size
    out = np.zeros((m, m))
    e = np.eye(m) * h
    for i in range(m):
        for j in range(m):
            out[i, j] = (
                f(v + e[i] + e[j]) - f(v + e[i] - e[j]) - f(v - e[i] + e[j]) + f(v - e[i] - e[j])
            ) / (4 * h * h)
    return out


# ------------------------------------------------------------------ estimator properties
@pytest.mark.parametrize("seed", [1, 2])
def test_observed_information_is_minus_the_hessian(seed):
    rng = np.random.default_rng(seed)
    y, _ = simulate(250, rng.uniform(0.5, 2, 4), rng.normal(size=4), seed)
    y[:: 3 + seed, 1] = np.nan  # missing responses take part in the identity too
    a, c = rng.uniform(0.5, 2, 4), rng.normal(size=4)  # anywhere, not only at the optimum
    info = mml.observed_information(mml.Data.of(y), a, c, mml.quadrature())
    hess = numeric_hessian(lambda v: loglik(y, v, 4), np.concatenate([a, c]))
    assert np.abs(info + hess).max() < 1e-4 * max(1.0, np.abs(hess).max())


@pytest.mark.parametrize("model", ["1pl", "2pl"])
def test_estimate_is_a_maximum_and_standard_errors_are_its_curvature(model):
    a_true = np.array([0.8, 1.5, 1.1, 2.0, 0.6])
    y, _ = simulate(400, a_true, np.array([-1.0, -0.3, 0.2, 0.7, 1.4]), 11)
    res = fit_irt(y, tuple("abcde"), model)
    assert res.convergence.converged and res.convergence.max_gradient < 1e-5
    k = 5
    fit_a = res.discrimination
    fit_c = -res.difficulty * fit_a
    if model == "2pl":
        v = np.concatenate([fit_a, fit_c])

        def ll(v):
            return loglik(y, v, k)

        def b_of(v):
            return -v[k:] / v[:k]
    else:
        v = np.concatenate([[fit_a[0]], fit_c])

        def ll(v):
            return loglik(y, np.concatenate([np.full(k, v[0]), v[1:]]), k)

        def b_of(v):
            return -v[1:] / v[0]

    # a maximum: every perturbation lowers the log-likelihood
    for d in np.eye(v.size) * 1e-3:
        assert ll(v + d) < ll(v) and ll(v - d) < ll(v)
    cov = np.linalg.inv(-numeric_hessian(ll, v))
    # delta method by numerical Jacobian of b
    jac = np.array([(b_of(v + e) - b_of(v - e)) / 2e-6 for e in np.eye(v.size) * 1e-6]).T
    se_b = np.sqrt(np.diag(jac @ cov @ jac.T))
    assert np.allclose(res.difficulty_se, se_b, rtol=1e-3)
    se_a = np.sqrt(cov[0, 0]) if model == "1pl" else np.sqrt(np.diag(cov)[:k])
    assert np.allclose(res.discrimination_se, se_a, rtol=1e-3)


def test_standard_errors_shrink_like_one_over_root_n():
    a, b = np.array([1.0, 1.3, 0.9, 1.6, 1.2, 0.8]), np.array([-1.2, -0.5, 0.0, 0.4, 0.9, 1.5])
    small = fit_irt(simulate(300, a, b, 3)[0], tuple("abcdef"))
    large = fit_irt(simulate(2700, a, b, 4)[0], tuple("abcdef"))
    ratio = np.median(small.difficulty_se / large.difficulty_se)
    assert 2.4 < ratio < 3.6  # sqrt(2700 / 300) = 3


@pytest.mark.slow
def test_standard_errors_match_the_spread_over_replications():
    a, b = np.array([1.0, 1.8, 0.7, 1.2, 1.5]), np.array([-1.0, -0.2, 0.3, 0.8, 1.6])
    est, ses = [], []
    for seed in range(60):
        res = fit_irt(simulate(500, a, b, 100 + seed)[0], tuple("abcde"))
        est.append(res.difficulty)
        ses.append(res.difficulty_se)
    ratio = np.std(est, axis=0, ddof=1) / np.mean(ses, axis=0)
    assert np.all((ratio > 0.7) & (ratio < 1.35))


def test_1pl_difficulties_agree_with_rasch_cml_on_mazes():
    from pipeline.lab.generality.matrix import read_matrix

    pop = read_matrix(MAZES)
    res = fit_irt(pop.values, pop.items, "1pl")
    cml = rasch.fit_cml(pop.values)
    assert pearsonr(res.difficulty, cml.beta)[0] > 0.999
    assert res.andersen is not None and res.andersen.p_value < 0.01


# ------------------------------------------------------------------ abilities, reliability
def test_abilities_recover_theta_and_handle_every_pattern():
    a, b = np.full(20, 1.4), np.linspace(-2, 2, 20)
    y, theta = simulate(600, a, b, 5)
    y[0] = 1.0  # all correct
    y[1] = 0.0  # all wrong
    y[2] = np.nan  # answered nothing
    y[3, 10:] = np.nan  # answered half
    res = fit_irt(y, tuple(f"i{k}" for k in range(20)))
    assert np.isfinite(res.theta).all() and np.isfinite(res.theta_se).all()
    assert res.theta[0] == res.theta.max() and res.theta[1] == res.theta.min()
    assert res.theta[2] == pytest.approx(0.0, abs=1e-9)
    assert res.theta_se[2] == pytest.approx(1.0, abs=1e-6)
    assert res.theta_se[3] > np.median(res.theta_se)
    assert pearsonr(res.theta[4:], theta[4:])[0] > 0.9
    assert res.person_answered[3] == 10 and res.person_answered[2] == 0


def test_reliability_grows_with_test_length():
    rel = []
    for k in (5, 15, 40):
        y, _ = simulate(500, np.full(k, 1.2), np.linspace(-1.5, 1.5, k), 8)
        res = fit_irt(y, tuple(f"i{j}" for j in range(k)))
        assert 0 < res.reliability_empirical < 1 and 0 < res.reliability_marginal < 1
        assert abs(res.reliability_empirical - res.reliability_marginal) < 0.1
        rel.append(res.reliability_marginal)
    assert rel[0] < rel[1] < rel[2]


def test_eap_equals_the_posterior_mean_by_direct_integration():
    a, c = np.array([1.0, 2.0, 0.5]), np.array([0.5, -1.0, 0.0])
    y = np.array([[1.0, 0.0, 1.0]])
    ab = persons.eap(y, a, c)
    t = np.linspace(-8, 8, 20001)
    p = 1 / (1 + np.exp(-(np.outer(t, a) + c)))
    like = np.prod(np.where(y[0] == 1, p, 1 - p), axis=1) * np.exp(-t * t / 2)
    mean = (t * like).sum() / like.sum()
    sd = np.sqrt((t * t * like).sum() / like.sum() - mean**2)
    assert ab.theta[0] == pytest.approx(mean, abs=2e-3)
    assert ab.se[0] == pytest.approx(sd, abs=2e-3)


# ------------------------------------------------------------------ item fit
def test_item_fit_flags_an_item_that_does_not_follow_the_model():
    a, b = np.full(12, 1.3), np.linspace(-1.5, 1.5, 12)
    y, theta = simulate(800, a, b, 21)
    rng = np.random.default_rng(0)
    y[:, 4] = (rng.random(800) < 0.5).astype(float)  # pure noise
    y[:, 7] = (theta > 0.2).astype(float)  # a Guttman item
    res = fit_irt(y, tuple(f"i{k}" for k in range(12)), "1pl")
    assert "misfit" in res.flags[4] and "misfit" in res.flags[7]
    fine = [k for k in range(12) if k not in (4, 7)]
    assert sum("misfit" in res.flags[k] for k in fine) <= 2
    assert res.infit[4] > 1.1 and res.outfit[7] < 0.8
    assert res.sx2_p[4] < 0.01 and res.sx2_p[7] < 0.01


def test_sx2_expected_proportions_follow_the_model_exactly():
    # with the true parameters and a huge sample, observed ≈ expected: S-X² ≈ its df
    a, b = np.array([1.0, 1.5, 0.8, 1.2]), np.array([-0.5, 0.0, 0.5, 1.0])
    y, _ = simulate(200000, a, b, 2)
    sx = itemfit.s_x2(y, a, -a * b, 2)
    assert sx is not None
    assert np.all(sx.p_value > 0.001)
    assert itemfit.s_x2(np.where(y == 1, np.nan, y), a, -a * b, 2) is None  # missing data


def test_andersen_test_rejects_unequal_slopes_and_keeps_rasch_data():
    b = np.linspace(-1.5, 1.5, 10)
    rasch_y, _ = simulate(1500, np.full(10, 1.0), b, 31)
    twopl_y, _ = simulate(1500, np.array([0.4, 2.5] * 5), b, 31)
    names = tuple(f"i{k}" for k in range(10))
    keep = rasch.andersen_test(rasch_y, names)
    reject = rasch.andersen_test(twopl_y, names)
    assert keep is not None and reject is not None
    assert keep.df == reject.df == 9
    assert keep.p_value > 0.01 and reject.p_value < 1e-6


def test_cml_gradient_is_the_derivative_of_the_likelihood():
    y, _ = simulate(300, np.ones(6), np.linspace(-1, 1, 6), 4)
    raw = y.sum(axis=1).astype(int)
    keep = (raw > 0) & (raw < 6)
    scores, counts = y[keep].sum(axis=0), np.bincount(raw[keep], minlength=7).astype(float)
    beta = np.array([0.3, -0.2, 0.5, -0.7, 0.1, 0.0])
    _, grad = rasch._conditional(beta, scores, counts)
    h = 1e-6
    num = [
        (
            rasch._conditional(beta + e, scores, counts)[0]
            - rasch._conditional(beta - e, scores, counts)[0]
        )
        / (2 * h)
        for e in np.eye(6) * h
    ]
    assert np.allclose(grad, num, atol=1e-5)


# ------------------------------------------------------------------ warnings and flags
def test_small_samples_and_boundary_items_are_flagged():
    # the letter-series humans, 1 = correct: 48 agents, items that almost nobody passes
    from pipeline.lab.generality.matrix import read_matrix

    pop = read_matrix(ROOT / "submissions/letter-series/humans/responses.csv")
    res = fit_irt((pop.values == 1).astype(float), pop.items, "2pl")
    assert res.n_agents < MIN_AGENTS["2pl"]
    assert any(w.startswith("small sample") for w in res.warnings)
    far = np.abs(res.difficulty) > 4
    assert far.any()
    assert all("extreme" in f for f, x in zip(res.flags, far, strict=True) if x)
    assert all("extreme" not in f for f, x in zip(res.flags, far, strict=True) if not x)


def test_a_perfectly_ordering_item_is_held_at_the_bound_without_breaking_the_rest():
    a, b = np.full(8, 1.2), np.linspace(-1.2, 1.2, 8)
    y, theta = simulate(400, a, b, 6)
    y[:, 3] = (theta > 0.0).astype(float)
    y[:, 5] = 1.0 - y[:, 5]  # reversed: negative slope
    res = fit_irt(y, tuple(f"i{k}" for k in range(8)))
    assert "bound" in res.flags[3] or "steep" in res.flags[3]
    assert "negative" in res.flags[5]
    others = [k for k in range(8) if k not in (3, 5)]
    assert np.isfinite(res.difficulty_se[others]).all()


# ------------------------------------------------------------------ tetrachoric units
@pytest.mark.parametrize(
    ("h", "k", "rho"),
    [
        (0.3, -1.2, 0.5),
        (0.0, 1.0, 0.3),
        (1.0, 0.0, -0.7),
        (0.0, 0.0, 0.2),
        (-2.0, 2.5, 0.95),
        (-0.5, -0.5, -0.99),
        (3.0, 3.0, 0.0),
    ],
)
def test_bivariate_normal_cdf(h, k, rho):
    want = multivariate_normal([0, 0], [[1, rho], [rho, 1]]).cdf([h, k])
    assert bivariate_normal_cdf(np.array(h), np.array(k), np.array(rho)) == pytest.approx(
        want, abs=1e-6
    )


def test_tetrachoric_recovers_the_latent_correlation():
    rng = np.random.default_rng(9)
    z = rng.multivariate_normal([0, 0, 0], [[1, 0.6, 0.3], [0.6, 1, -0.4], [0.3, -0.4, 1]], 200000)
    y = (z > np.array([0.5, -0.3, 1.0])).astype(float)
    res = tetrachoric(y, ("a", "b", "c"))
    assert res.rho[0, 1] == pytest.approx(0.6, abs=0.01)
    assert res.rho[0, 2] == pytest.approx(0.3, abs=0.01)
    assert res.rho[1, 2] == pytest.approx(-0.4, abs=0.01)
    assert res.corrected_pairs == 0 and not res.smoothed


def test_an_empty_cell_gets_half_a_count_and_the_maximum_is_interior():
    # n00 = 30, n01 = 0, n10 = 20, n11 = 50 (item a = first index); b has threshold exactly 0
    rows = [[0, 0]] * 30 + [[1, 0]] * 20 + [[1, 1]] * 50
    res = tetrachoric(np.array(rows, dtype=float), ("a", "b"))
    assert res.corrected_pairs == 1
    tau_a = -ndtri(0.7)  # b: 50 of 100, threshold exactly 0
    grid = np.linspace(-0.9999, 0.9999, 199999)
    p00 = bivariate_normal_cdf(np.full_like(grid, tau_a), np.zeros_like(grid), grid)
    cells = np.stack([p00, ndtr(tau_a) - p00, 0.5 - p00, 1 - ndtr(tau_a) - 0.5 + p00])
    ll = np.array([30.0, 0.5, 20.0, 50.0]) @ np.log(np.maximum(cells, 1e-300))
    assert res.rho[0, 1] == pytest.approx(grid[np.argmax(ll)], abs=2e-5)
    assert res.rho[0, 1] < 0.9999


def test_tetrachoric_needs_binary_responses(tmp_path):
    path = tmp_path / "r.csv"
    path.write_text("agent,a,b,c\nx,0.5,1,0\ny,1,0,1\nz,0,1,1\nw,1,1,0\n", encoding="utf-8")
    out = CliRunner().invoke(app, ["fa", str(path), "--correlation", "tetrachoric"])
    assert out.exit_code == 1 and "0/1" in out.output
    out = CliRunner().invoke(app, ["fa", str(path), "--correlation", "spearman"])
    assert out.exit_code == 2


# ------------------------------------------------------------------ the command
def test_irt_csv_has_standard_errors_and_persons_one_row_per_agent():
    out = CliRunner().invoke(app, ["irt", str(MAZES), "--model", "2pl", "--format", "csv"])
    assert out.exit_code == 0, out.output
    rows = list(csv.DictReader(io.StringIO(out.stdout)))
    assert {"difficulty_se", "discrimination_se"} <= set(rows[0])
    assert all(0 < float(r["difficulty_se"]) < 1 for r in rows)
    assert "reliability" in out.stderr and "converged" in out.stderr
    out = CliRunner().invoke(app, ["irt", str(MAZES), "--persons", "--format", "csv"])
    assert out.exit_code == 0, out.output
    people = list(csv.DictReader(io.StringIO(out.stdout)))
    agents = {line.split(",")[0] for line in MAZES.read_text().splitlines()[1:]}
    assert len(people) == len(agents) and {p["agent"] for p in people} == agents
    assert all(float(p["theta_se"]) > 0 for p in people)


def test_irt_json_reports_convergence_reliability_and_the_global_test():
    out = CliRunner().invoke(
        app, ["irt", str(MAZES), "--model", "1pl", "--format", "json", "--persons"]
    )
    assert out.exit_code == 0, out.output
    doc = json.loads(out.stdout)
    assert doc["convergence"]["converged"] is True
    assert 0.5 < doc["reliability"]["empirical"] < 1
    assert doc["andersen_test"]["df"] == 22 and doc["andersen_test"]["p_value"] < 0.01
    assert len(doc["persons"]) == 496 and len(doc["items"]) == 23
    assert "Andersen" in out.stderr
