"""Tetrachoric FA and Andersen's test against R psych 2.2.9 / eRm 1.0-2 (golden files).

The files under tests/data/psychometrics/ were written by tests/tools/psychometrics_golden.R
(R is not a dependency: the numbers are committed).
"""

from __future__ import annotations

import csv
import json
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from cli.app import app
from pipeline.lab.generality.matrix import read_matrix
from pipeline.metrics.generality.factor import minres
from pipeline.metrics.generality.rasch import andersen_test, fit_cml
from pipeline.metrics.generality.tetrachoric import tetrachoric

ROOT = Path(__file__).resolve().parents[1]
GOLDEN = ROOT / "tests/data/psychometrics"
SETS = {
    "mazes": (ROOT / "submissions/mazes/cambridge-psychometrics/responses.csv", False),
    # the humans' file codes wrong as -0.25 and unanswered as 0: 1 = correct, else 0
    "letters": (ROOT / "submissions/letter-series/humans/responses.csv", True),
}


def _summary(name: str) -> dict[str, str]:
    with (GOLDEN / "summary.csv").open(encoding="utf-8") as fh:
        return next(r for r in csv.DictReader(fh) if r["set"] == name)


def _data(name: str) -> tuple[np.ndarray, tuple[str, ...]]:
    path, recode = SETS[name]
    pop = read_matrix(path)
    values = (pop.values == 1).astype(float) if recode else pop.values
    keep = values.std(axis=0) > 0
    return values[:, keep], tuple(i for i, k in zip(pop.items, keep, strict=True) if k)


@pytest.mark.parametrize("name", sorted(SETS))
def test_tetrachoric_matrix_equals_psych(name):
    values, items = _data(name)
    res = tetrachoric(values, items)
    with (GOLDEN / f"{name}_tetrachoric.csv").open(encoding="utf-8") as fh:
        rows = list(csv.reader(fh))
    names = rows[0][1:]
    expected = np.array([[float(v) for v in r[1:]] for r in rows[1:]])
    order = [res.items.index(n) for n in names]
    # psych stops its search at R optimize's default tolerance (~1.2e-4)
    assert np.abs(res.rho[np.ix_(order, order)] - expected).max() < 2e-4


def test_letters_exercise_the_zero_cell_correction_and_smoothing():
    values, items = _data("letters")
    res = tetrachoric(values, items)
    assert res.corrected_pairs > 0 and res.smoothed
    assert np.linalg.eigvalsh(res.rho).min() > 0


@pytest.mark.parametrize("name", sorted(SETS))
def test_tetrachoric_factor_loadings_equal_psych(name):
    values, items = _data(name)
    fa = minres(values, items, 1, "tetrachoric")
    gold = _summary(name)
    assert fa.first.mean() == pytest.approx(float(gold["mean_loading_tetrachoric"]), abs=1e-3)
    assert fa.variance_explained[0] == pytest.approx(float(gold["variance_tetrachoric"]), abs=1e-3)
    pearson = minres(values, items, 1, "pearson")
    assert pearson.first.mean() == pytest.approx(float(gold["mean_loading_pearson"]), abs=1e-4)
    with (GOLDEN / f"{name}_fa_tetrachoric.csv").open(encoding="utf-8") as fh:
        per_item = {r["item"]: float(r["loading"]) for r in csv.DictReader(fh)}
    got = dict(zip(fa.items, fa.first, strict=True))
    assert max(abs(got[i] - v) for i, v in per_item.items()) < 2e-3


def test_fa_command_tetrachoric_on_mazes_is_within_001_of_psych():
    path = SETS["mazes"][0]
    out = CliRunner().invoke(
        app, ["fa", str(path), "--correlation", "tetrachoric", "--format", "json"]
    )
    assert out.exit_code == 0, out.output
    doc = json.loads(out.stdout)
    assert doc["correlation"] == "tetrachoric"
    assert abs(doc["mean_loading"] - float(_summary("mazes")["mean_loading_tetrachoric"])) < 0.01
    pearson = json.loads(CliRunner().invoke(app, ["fa", str(path), "--format", "json"]).stdout)
    assert pearson["mean_loading"] < doc["mean_loading"] - 0.05  # phi understates loadings


@pytest.mark.parametrize("name", sorted(SETS))
def test_andersen_test_and_cml_equal_erm(name):
    values, items = _data(name)
    gold = _summary(name)
    assert fit_cml(values).loglik == pytest.approx(float(gold["rasch_cml_loglik"]), abs=1e-4)
    test = andersen_test(values, items)
    assert test is not None
    assert test.statistic == pytest.approx(float(gold["andersen_lr"]), abs=1e-3)
    assert test.df == int(gold["andersen_df"])
    assert test.p_value == pytest.approx(float(gold["andersen_p"]), rel=1e-3)
