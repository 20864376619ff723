"""Stitching vs sampling (Pereyda & Holder 2020, Fig. 2): the merge designs, property-tested."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from numpy.typing import NDArray

from pipeline.errors import UsageError
from pipeline.lab.similarity.suites import SuiteSettings, plan, run_suite
from pipeline.metrics.similarity.merge import MergedSet, sample_merge, stitch_merge


def _blobs(
    rng: np.random.Generator, n: int, classes: int, dim: int, spread: float
) -> tuple[NDArray[np.float64], NDArray[np.int64]]:
    centres = rng.normal(0.0, 4.0, size=(classes, dim))
    y = rng.integers(0, classes, size=n)
    return centres[y] + rng.normal(0.0, spread, size=(n, dim)), y.astype(np.int64)


def _knn_accuracy(m: MergedSet, rng: np.random.Generator) -> float:
    """Held-out accuracy of a 1-nearest-neighbour agent (a learner with no training noise)."""
    from sklearn.neighbors import KNeighborsClassifier

    order = rng.permutation(len(m.y))
    cut = int(0.7 * len(order))
    tr, te = order[:cut], order[cut:]
    clf = KNeighborsClassifier(n_neighbors=1).fit(m.x[tr], m.y[tr])
    return float(np.mean(clf.predict(m.x[te]) == m.y[te]))


def _inside(v_a: float, v_b: float, v_ab: float) -> bool:
    return min(v_a, v_b) <= v_ab <= max(v_a, v_b)


@pytest.mark.parametrize("seed", range(4))
def test_sampling_stays_sufficient_where_stitching_violates_it(seed: int) -> None:
    # Two learnable tests of different difficulty: A with two well-separated classes, B with
    # three overlapping ones. The same agent scores both merges of the same pair at the
    # paper's p = 1/2.
    rng = np.random.default_rng(seed)
    xa, ya = _blobs(rng, 1000, 2, 4, 0.5)
    xb, yb = _blobs(rng, 1000, 3, 6, 3.5)
    p = 0.5

    def alone(x: NDArray[np.float64], y: NDArray[np.int64]) -> float:
        return _knn_accuracy(MergedSet(x, y, np.ones(len(y), dtype=bool)), rng)

    v_a, v_b = alone(xa, ya), alone(xb, yb)
    v_ab = _knn_accuracy(sample_merge(xa, ya, xb, yb, p, rng, n_classes_a=2), rng)
    assert v_a > v_b and _inside(v_a, v_b, v_ab)  # sampling: between the two tests

    def stitched(left: str, right: str) -> float:
        d = {"A": (xa, ya, 2), "B": (xb, yb, 3)}
        (xl, yl, cl), (xr, yr, _) = d[left], d[right]
        m = stitch_merge(xl, yl, xr, yr, p, rng, n_classes_l=cl, width=6,
                         same_test=left == right)  # fmt: skip
        return _knn_accuracy(m, rng)

    s_aa, s_bb, s_ab = stitched("A", "A"), stitched("B", "B"), stitched("A", "B")
    assert not _inside(s_aa, s_bb, s_ab)  # stitching: AB outside [BB, AA]
    # ... and why: the asked half is not in the input, so AB cannot beat max(p, 1 - p) by
    # more than the held-out noise, while both tests alone are learnt far better than that.
    assert s_ab < max(p, 1 - p) + 0.1 < v_b


def test_stitched_labels_come_from_one_half_in_the_proportion_p() -> None:
    rng = np.random.default_rng(7)
    xa, ya = _blobs(rng, 50, 3, 2, 1.0)
    xb, yb = _blobs(rng, 40, 4, 5, 1.0)
    for p in (0.2, 0.5, 0.8):
        m = stitch_merge(xa, ya, xb, yb, p, np.random.default_rng(1), n_classes_l=3)
        assert m.x.shape == (40, 10)  # cut to the smaller test; two halves of the wider width
        assert m.from_a.sum() == int(np.floor(p * 40 + 0.5))
        assert np.all(m.y[m.from_a] < 3) and np.all(m.y[~m.from_a] >= 3)
        again = stitch_merge(xa, ya, xb, yb, p, np.random.default_rng(1), n_classes_l=3)
        assert np.array_equal(m.x, again.x) and np.array_equal(m.y, again.y)
    same = stitch_merge(xa, ya, xa, ya, 0.5, np.random.default_rng(2), same_test=True)
    assert set(np.unique(same.y)) <= set(np.unique(ya))  # a test with itself: its own classes


TINY = SuiteSettings(
    experiment="classification", tests=("iris", "wine"), seeds=1, size=60, max_iter=20,
    hidden=(8,), merge=("sampling", "stitching"),
)  # fmt: skip


def test_classification_writes_stitching_rows_beside_sampling(tmp_path: Path) -> None:
    items = plan(TINY)
    assert {(i.merge, i.part) for i in items} == {
        ("sampling", "A"), ("sampling", "B"), ("sampling", "AB"),
        ("stitching", "AA"), ("stitching", "BB"), ("stitching", "AB"),
    }  # fmt: skip
    rows = run_suite(TINY).rows
    assert sorted(r["merge"] for r in rows) == ["sampling", "stitching"]
    sampling_only = run_suite(SuiteSettings(**{**TINY.__dict__, "merge": ("sampling",)})).rows
    assert [r for r in rows if r["merge"] == "sampling"] == sampling_only  # no number moved
    assert SuiteSettings.from_dict(TINY.to_dict()) == TINY


@pytest.mark.parametrize("merge", [("gym-style",), (), ("sampling", "sampling")])
def test_merge_setting_has_a_domain(merge: tuple[str, ...]) -> None:
    with pytest.raises(UsageError):
        SuiteSettings(experiment="classification", merge=merge)


def test_cli_writes_stitching_rows_to_any_folder_and_reruns(tmp_path: Path) -> None:
    import csv
    import io

    from typer.testing import CliRunner

    from cli.app import app

    runner = CliRunner()
    out = tmp_path / "Any Folder" / "My Run"
    args = ["similarity", "run", "--experiment", "classification", "--tests", "iris,wine",
            "--seeds", "1", "--size", "60", "--max-iter", "20", "--hidden", "8",
            "--merge", "stitching", "--alone", "whole", "--executor", "inprocess",
            "--out", str(out)]  # fmt: skip
    res = runner.invoke(app, args)
    assert res.exit_code == 0, res.output
    rows = list(csv.DictReader(io.StringIO((out / "runs.csv").read_text())))
    assert [r["merge"] for r in rows] == ["stitching"]
    assert 'merges = ["stitching"]' in (out.parent / "benchmark.toml").read_text()
    again = tmp_path / "Any Folder" / "again"
    res = runner.invoke(app, ["similarity", "run", "--from", str(out / "submission.toml"),
                              "--executor", "inprocess", "--out", str(again)])  # fmt: skip
    assert res.exit_code == 0, res.output
    assert (again / "runs.csv").read_text() == (out / "runs.csv").read_text()
    for bad in (["--experiment", "aiq-families", "--merge", "stitching"],
                ["--experiment", "aiq-families", "--alone", "whole"]):  # fmt: skip
        res = runner.invoke(app, ["similarity", "run", *bad, "--out", str(tmp_path / "z")])
        assert res.exit_code != 0 and "--" in res.output


GYM_TINY = SuiteSettings(
    experiment="gym", tests=("FrozenLake-v1", "CliffWalking"), seeds=1, steps=400,
    eval_episodes=4, merge=("sampling", "stitching"),
)  # fmt: skip


def test_gym_writes_stitching_rows_beside_sampling() -> None:
    items = plan(GYM_TINY)
    assert {(i.merge, i.part) for i in items if i.merge == "stitching"} == {
        ("stitching", "AA"), ("stitching", "BB"), ("stitching", "AB")}  # fmt: skip
    rows = run_suite(GYM_TINY).rows
    assert sorted(r["merge"] for r in rows) == ["sampling", "stitching"]
    assert all(0.0 <= r[k] <= 1.0 for r in rows for k in ("v_a", "v_b", "v_ab"))
    sampling_only = SuiteSettings(**{**GYM_TINY.__dict__, "merge": ("sampling",)})
    assert [r for r in rows if r["merge"] == "sampling"] == run_suite(sampling_only).rows
    assert "merge" not in sampling_only.to_dict()  # bundles made before stitching: unchanged
    assert SuiteSettings.from_dict(GYM_TINY.to_dict()) == GYM_TINY
    assert run_suite(GYM_TINY).rows == rows  # a pure function of the settings


@pytest.mark.parametrize("pair", [("CartPole-v1", "Taxi"), ("FrozenLake8x8", "MountainCar-v0")])
def test_stitched_environments_share_one_layout_and_drive_one_side(
    pair: tuple[str, str],
) -> None:
    from pipeline.lab.similarity import gym_suite as g

    (w_a, n_a), (w_b, n_b) = g.env_shape(pair[0]), g.env_shape(pair[1])
    half = max(w_a, w_b)
    s = g.AgentSettings(steps=300, eval_episodes=3)
    seeds = {pair[0]: 1, pair[1]: 2, "mate": 3, "noise": 4, "agent": 5, "schedule": 6}
    for part in ("AA", "BB", "AB"):
        v = g.run_stitched_env_test(pair, part, 0.5, s, seeds)
        assert 0.0 <= v <= 1.0
        assert v == g.run_stitched_env_test(pair, part, 0.5, s, seeds)
    # one input layout for the three parts: two halves of the pair's wider width
    left, right = g._Env(g.ENVS[pair[0]], 1), g._Env(g.ENVS[pair[1]], 2)
    try:
        agent = g._QAgent(s, 2 * half, max(n_a, n_b), np.random.default_rng(0))
        budget = [50]
        g._stitched_episode((left, right), 0, agent, half, np.random.default_rng(1),
                            epsilon=lambda: 1.0, budget=budget)  # fmt: skip
        assert budget[0] >= 0 and agent.q
        assert all(len(k) == 2 * half for k in agent.q)  # uint8 bins: one byte per feature
    finally:
        left.close()
        right.close()
