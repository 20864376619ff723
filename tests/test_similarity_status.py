"""Saturated, unresolved and forced values of eq. 3 are not measurements (issue 24, item 3).

Every pair row carries a status; only ``sufficient`` pairs get a value, an interval, a place
in a "most similar" ordering and a share of the suite diversity (whose count is shown).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pytest

from pipeline.inputs import BenchmarkInput, BundleInput, FileSet
from pipeline.ranking import min_ranks
from pipeline.tracks import get_track
from pipeline.tracks.base import ScoreContext
from pipeline.tracks.similarity.settings import BenchmarkSettings

TESTS = ["t1", "t2", "t3", "t4"]
HEADER = "test_a,test_b,p,merge,agent,v_a,v_b,v_ab,seed\n"


def _cell(a: str, b: str, va: list[float], vb: list[float], vab: list[float]) -> str:
    return "".join(
        f"{a},{b},0.5,sampling,mlp,{x},{y},{z},{k}\n"
        for k, (x, y, z) in enumerate(zip(va, vb, vab, strict=True))
    )


def _noisy(rng: np.random.Generator, mean: float, n: int, sd: float = 0.01) -> list[float]:
    return [round(float(v), 6) for v in mean + sd * rng.standard_normal(n)]


def _runs(rng: np.random.Generator, n: int) -> tuple[str, dict[str, str]]:
    """One pair of each kind, with random levels (the class, not one example)."""
    hi, lo = rng.uniform(0.7, 0.9), rng.uniform(0.2, 0.4)
    mid = (hi + lo) / 2 + rng.uniform(-0.1, 0.1) * (hi - lo)
    same = rng.uniform(0.4, 0.6)
    rows = HEADER
    # sufficient: clear gap, V_AB inside [V_B, V_A]
    rows += _cell("t1", "t2", _noisy(rng, hi, n), _noisy(rng, lo, n), _noisy(rng, mid, n))
    # insufficient: V_AB below both (eq. 3 saturates at +1)
    rows += _cell("t1", "t3", _noisy(rng, hi, n), _noisy(rng, lo, n), _noisy(rng, lo - 0.1, n))
    # gap unresolved: the two tests are as hard as each other up to the seed noise
    # (V_AB at the midpoint on the means, so only the unresolved gap disqualifies it)
    a = _noisy(rng, same, n, 0.05)
    b = [x + 0.05 * float(rng.standard_normal()) for x in a]
    e = 0.01 * rng.standard_normal(n)
    mid_k = [(x + y) / 2 + float(z - e.mean()) for x, y, z in zip(a, b, e, strict=True)]
    rows += _cell("t1", "t4", a, b, mid_k)
    # forced by the design: every seed gives the same three numbers
    rows += _cell("t2", "t3", [hi] * n, [lo] * n, [(hi + lo) / 2] * n)
    expect = {"t1|t2": "sufficient", "t1|t3": "insufficient", "t1|t4": "gap unresolved",
              "t2|t3": "forced by the design"}  # fmt: skip
    return rows, expect


def _score(runs: str) -> Any:
    model = BenchmarkSettings.model_validate({"tests": [{"id": t} for t in TESTS]}).model_dump(
        mode="json"
    )
    bench = BenchmarkInput("sim", "similarity", "1.0.0", {}, model, FileSet("submissions/sim", {}))
    bundle = BundleInput(
        "b1", "sim", {"system": {"name": "mlp"}}, {},
        FileSet("submissions/sim/b1", {"runs.csv": runs.encode()}),
    )  # fmt: skip
    return get_track("similarity").score(bench, [bundle], ScoreContext(seed=3, options={}))


@pytest.mark.parametrize("seed", range(4))
def test_each_pair_row_has_a_status_and_only_measurements_have_numbers(seed: int) -> None:
    rng = np.random.default_rng(seed)
    runs, expect = _runs(rng, int(rng.integers(8, 21)))
    res = _score(runs)
    sim = {r.agent: r for r in res.rows if r.metric == "similarity"}
    got = {k: r.details["measurement"] for k, r in sim.items()}
    assert got == expect
    for key, r in sim.items():
        if got[key] == "sufficient":
            assert math.isfinite(r.value) and r.ci_low is not None and r.ci_high is not None
            assert r.ci_low < r.ci_high  # never a degenerate interval
        else:
            assert math.isnan(r.value) and r.ci_low is None and r.ci_high is None
            assert r.details["why"]
    # the "most similar" ordering: ranks only measurements, so no saturated +1 tops it
    ranks = min_ranks([r.value for r in sim.values()], "higher")
    ranked = [k for k, rk in zip(sim, ranks, strict=True) if rk is not None]
    assert ranked == ["t1|t2"]


@pytest.mark.parametrize("seed", range(3))
def test_diversity_is_over_sufficient_pairs_with_the_count_shown(seed: int) -> None:
    rng = np.random.default_rng(100 + seed)
    runs, _ = _runs(rng, 12)
    res = _score(runs)
    sim = {r.agent: r for r in res.rows if r.metric == "similarity"}
    measured = [r.value for r in sim.values() if r.details["measurement"] == "sufficient"]
    (div,) = [r for r in res.rows if r.metric == "diversity"]
    assert div.value == pytest.approx(float(np.mean([1 - v for v in measured])))
    assert div.details["n_sufficient"] == len(measured)
    assert f"{len(measured)} sufficient of" in div.details["over"]
    (suite,) = res.charts["similarity_suites"]["suites"]
    assert suite["n_sufficient"] == len(measured) and suite["n_pairs"] == len(sim)
    assert suite["n_flagged"] == len(sim) - len(measured)


def test_matrices_mark_non_measurements_without_intervals() -> None:
    runs, expect = _runs(np.random.default_rng(7), 10)
    res = _score(runs)
    for cell in res.charts["similarity_heatmap"]:
        key = "|".join(sorted((cell["row"], cell["col"])))
        if cell["row"] == cell["col"]:
            assert cell["measurement"] == "identity"
        elif key in expect:
            assert cell["measurement"] == expect[key]
            if cell["measurement"] != "sufficient":
                assert cell["ci_low"] is None and cell["ci_high"] is None
    flagged = {f["pair"] for f in res.charts["similarity_flags"]["flags"]}
    assert flagged == {k for k, v in expect.items() if v != "sufficient"}
