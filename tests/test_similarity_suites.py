"""Similarity experiments on public suites: merge rules, reported tables, classification, Gym."""

from __future__ import annotations

import csv
import io
import math
from pathlib import Path

import numpy as np
import pytest

from pipeline.errors import UsageError
from pipeline.lab.similarity import reported
from pipeline.lab.similarity.suites import SuiteSettings, plan, run_suite
from pipeline.metrics.similarity.measure import similarity
from pipeline.metrics.similarity.merge import (
    implied_v_ab,
    merge_counts,
    normalise_return,
    offset_classes,
    pad_features,
    sample_merge,
    split_episodes,
)

ROOT = Path(__file__).resolve().parents[1]
PH = ROOT / "submissions" / "pereyda-holder-2020"


# ----------------------------------------------------------------------------- merge rules
def test_merge_counts_cut_the_larger_test_and_split_by_p() -> None:
    assert merge_counts(1797, 150, 0.5) == (75, 75)  # digits cut to iris's 150
    assert merge_counts(10, 7, 0.5) == (4, 3)  # 3.5 rounds half up, on A's side
    assert merge_counts(100, 100, 0.1) == (10, 90)
    assert merge_counts(3, 3, 0.1) == (0, 3)  # 0.3 rounds to 0: all from B
    with pytest.raises(ValueError):
        merge_counts(10, 10, 1.0)
    with pytest.raises(ValueError):
        merge_counts(0, 10, 0.5)


def test_padding_and_class_offsets() -> None:
    x = np.array([[1.0, 2.0]])
    assert pad_features(x, 4).tolist() == [[1.0, 2.0, 0.0, 0.0]]
    with pytest.raises(ValueError):
        pad_features(x, 1)
    assert offset_classes(np.array([0, 2]), 10).tolist() == [10, 12]


def test_sample_merge_on_a_tiny_pair() -> None:
    xa = np.arange(12.0).reshape(6, 2)  # 6 elements, 2 features, classes 0..2
    ya = np.array([0, 1, 2, 0, 1, 2])
    xb = np.ones((4, 3))  # 4 elements, 3 features, classes 0..1
    yb = np.array([0, 1, 0, 1])
    m = sample_merge(xa, ya, xb, yb, 0.25, np.random.default_rng(1), n_classes_a=3)
    assert m.x.shape == (4, 3)  # min(6, 4) = 4 elements, padded to 3 features
    assert m.from_a.tolist() == [True, False, False, False]  # round(0.25 * 4) = 1 from A
    assert m.x[0, 2] == 0.0  # A's row zero-padded
    assert set(m.y[~m.from_a].tolist()) <= {3, 4}  # B's classes follow A's three
    again = sample_merge(xa, ya, xb, yb, 0.25, np.random.default_rng(1), n_classes_a=3)
    assert np.array_equal(m.x, again.x) and np.array_equal(m.y, again.y)


def test_episode_split_and_return_normalisation() -> None:
    assert split_episodes(30, 0.5) == (15, 15)
    assert split_episodes(5, 0.3) == (2, 3)
    assert normalise_return(250.0, 0.0, 500.0) == 0.5
    assert normalise_return(-250.0, -200.0, -13.0) == 0.0  # clipped below
    assert normalise_return(9.0, -200.0, 8.0) == 1.0  # clipped above
    with pytest.raises(ValueError):
        normalise_return(1.0, 1.0, 1.0)


def test_implied_v_ab_inverts_eq3_and_refuses_the_undetermined() -> None:
    v = implied_v_ab(0.75, 0.25, 0.5)  # (1 - 0.5 * 0.5) / 2 = 0.375
    assert v == 0.375 and similarity(0.75, 0.25, v).value == 0.5
    assert implied_v_ab(0.25, 0.75, 0.5) == 0.375  # either order
    with pytest.raises(ValueError):
        implied_v_ab(0.5, 0.5, 0.1)
    with pytest.raises(ValueError):
        implied_v_ab(0.9, 0.1, 1.5)


# ----------------------------------------------------------------------------- reported tables
PUBLISHED = {0.216, 0.290, 0.171, 0.557, 0.221, 0.651, 0.083, 0.080, 0.079, 0.652}


@pytest.mark.parametrize(
    ("bundle", "table"),
    [("table-2", "table2_similarity.csv"), ("table-3", "table3_similarity_with_cartpole.csv")],
)
def test_reported_bundles_are_what_the_tables_give(bundle: str, table: str) -> None:
    acc = reported.read_accuracies((PH / "reference" / "table1_accuracy.csv").read_text())
    matrix = reported.read_matrix((PH / "reference" / table).read_text())
    text = reported.runs_csv(reported.reported_runs(acc, matrix))
    assert (PH / bundle / "runs.csv").read_text() == text


def test_reported_tables_round_trip_through_eq3() -> None:
    rows = list(csv.DictReader(io.StringIO((PH / "table-3" / "runs.csv").read_text())))
    got = set()
    for r in rows:
        s = similarity(float(r["v_a"]), float(r["v_b"]), float(r["v_ab"]))
        assert s.status == "ok"
        assert abs(s.value - round(s.value, 3)) < 1e-12
        got.add(round(s.value, 3))
    assert got == PUBLISHED


def test_reported_scores_are_the_published_values_exactly() -> None:
    from pipeline.inputs import BenchmarkInput, BundleInput, FileSet
    from pipeline.tracks.base import ScoreContext
    from pipeline.tracks.similarity.score import score

    bench_tests = [{"id": t} for t in reported.TEST_IDS.values()]
    bench = BenchmarkInput(
        "pereyda-holder-2020", "similarity", "1", {}, {"tests": bench_tests},
        FileSet("b", {}),
    )  # fmt: skip
    bundle = BundleInput(
        "table-3", "pereyda-holder-2020", {"system": {"name": "CNN"}},
        {"reported": "Tables 1 and 3", "digits": 3},
        FileSet("b/table-3", {"runs.csv": (PH / "table-3" / "runs.csv").read_bytes()}),
    )  # fmt: skip
    res = score(bench, [bundle], ScoreContext())
    values = {r.value for r in res.rows if r.metric == "similarity"}
    assert values == PUBLISHED  # exact doubles: 0.216 is 0.216
    assert all(r.details and r.details["reported"] for r in res.rows)


# ----------------------------------------------------------------------------- settings
@pytest.mark.parametrize(
    "bad",
    [
        {"seeds": 0},
        {"seeds": 10_000},
        {"p": (1.0,)},
        {"p": (float("nan"),)},
        {"hidden": (0,)},
        {"size": 10**9},
        {"tests": ("digits",)},
        {"tests": ("digits", "mnist")},
        {"test_fraction": 0.9},
        {"alone": "sometimes"},
        {"experiment": "atari"},
    ],
)
def test_classification_settings_have_domains(bad: dict[str, object]) -> None:
    with pytest.raises(UsageError):
        SuiteSettings(**{"experiment": "classification", **bad})  # type: ignore[arg-type]


@pytest.mark.parametrize(
    "bad", [{"steps": 10**9}, {"alpha": 0.0}, {"gamma": 1.0}, {"bins": 1}, {"eval_episodes": 0}]
)
def test_gym_settings_have_domains(bad: dict[str, object]) -> None:
    with pytest.raises(UsageError):
        SuiteSettings(**{"experiment": "gym", "tests": ("CartPole-v1", "Taxi"), **bad})  # type: ignore[arg-type]


def test_settings_round_trip_and_gym_aliases() -> None:
    s = SuiteSettings(experiment="gym", tests=("CartPole-v1", "Taxi-v3", "CliffWalking-v1"))
    assert s.tests == ("CartPole-v1", "Taxi", "CliffWalking")
    assert SuiteSettings.from_dict(s.to_dict()) == s
    with pytest.raises(UsageError):
        SuiteSettings.from_dict({**s.to_dict(), "surprise": 1})


# ----------------------------------------------------------------------------- small real runs
TINY_CLS = SuiteSettings(
    experiment="classification", tests=("digits", "digits-inverted", "wine"), seeds=1,
    size=120, max_iter=40, hidden=(16,),
)  # fmt: skip


def test_classification_run_is_deterministic_and_bounded() -> None:
    a = run_suite(TINY_CLS).rows
    b = run_suite(TINY_CLS).rows
    assert a == b
    assert len(a) == 3 and len(plan(TINY_CLS)) == 9  # matched: A, B and AB per pair
    for r in a:
        assert all(0.0 <= r[k] <= 1.0 for k in ("v_a", "v_b", "v_ab"))


def test_local_executor_gives_the_in_process_numbers(local_pool) -> None:  # type: ignore[no-untyped-def]
    assert run_suite(TINY_CLS, executor=local_pool).rows == run_suite(TINY_CLS).rows


def test_gym_run_is_deterministic_and_bounded() -> None:
    s = SuiteSettings(
        experiment="gym", tests=("CartPole-v1", "FrozenLake-v1"), seeds=1, steps=600,
        eval_episodes=3,
    )  # fmt: skip
    a = run_suite(s).rows
    assert a == run_suite(s).rows
    assert all(0.0 <= a[0][k] <= 1.0 for k in ("v_a", "v_b", "v_ab"))


@pytest.mark.slow
def test_known_similar_variant_scores_above_unrelated_pairs() -> None:
    s = SuiteSettings(
        experiment="classification", tests=("digits", "digits-inverted", "wine"), seeds=3,
        size=400, max_iter=60,
    )  # fmt: skip
    res = run_suite(s)
    by: dict[tuple[str, str], list[dict[str, object]]] = {}
    for r in res.rows:
        by.setdefault((str(r["test_a"]), str(r["test_b"])), []).append(r)

    def s_of(pair: tuple[str, str]) -> float:
        rows = by[pair]
        mean = [float(np.mean([float(r[k]) for r in rows])) for k in ("v_a", "v_b", "v_ab")]  # type: ignore[arg-type]
        return similarity(*mean).value

    assert s_of(("digits", "digits-inverted")) > s_of(("digits", "wine"))
    assert s_of(("digits", "digits-inverted")) > s_of(("digits-inverted", "wine"))


def test_sufficient_and_insufficient_agents_are_told_apart() -> None:
    ok = similarity(0.9, 0.5, 0.6)
    assert ok.status == "ok" and math.isclose(ok.value, 0.5)
    bad = similarity(0.9, 0.85, 0.7)  # the merge below both tests: the agent is insufficient
    assert bad.status == "insufficient" and bad.value == 1.0


def test_cartpole_controller_balances() -> None:
    import gymnasium as gym

    from pipeline.lab.similarity.gym_suite import balancing_action, cartpole_passive

    env = gym.make("CartPole-v1")
    obs, _ = env.reset(seed=3)
    steps = 0
    for steps in range(1, 501):  # noqa: B007 - the count is the result
        obs, _, term, trunc, _ = env.step(balancing_action(obs))
        if term or trunc:
            break
    env.close()
    assert steps >= 400
    x, y = cartpole_passive(50, seed=1)
    assert x.shape == (50, 4) and set(y.tolist()) <= {0, 1}
    x2, y2 = cartpole_passive(50, seed=1)
    assert np.array_equal(x, x2) and np.array_equal(y, y2)


# ----------------------------------------------------------------------------- CLI
def test_cli_gym_run_show_and_rerun(tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from cli.app import app

    runner = CliRunner()
    out = tmp_path / "bench" / "q"
    args = ["similarity", "run", "--experiment", "gym", "--tests", "CartPole-v1,FrozenLake-v1",
            "--seeds", "1", "--steps", "400", "--eval-episodes", "2", "--executor", "inprocess",
            "--out", str(out)]  # fmt: skip
    res = runner.invoke(app, args)
    assert res.exit_code == 0, res.output
    rows = list(csv.DictReader(io.StringIO((out / "runs.csv").read_text())))
    assert len(rows) == 1 and all(0.0 <= float(rows[0][k]) <= 1.0 for k in ("v_a", "v_b", "v_ab"))
    shown = runner.invoke(app, ["similarity", "show", str(out / "runs.csv"), "--format", "csv"])
    assert shown.exit_code == 0
    header = "test_a,test_b,p,similarity,dissimilarity,sufficient,status"
    assert shown.stdout.splitlines()[0] == header
    again = tmp_path / "bench" / "q2"
    res = runner.invoke(app, ["similarity", "run", "--from", str(out / "submission.toml"),
                              "--executor", "inprocess", "--out", str(again)])  # fmt: skip
    assert res.exit_code == 0, res.output
    assert (again / "runs.csv").read_text() == (out / "runs.csv").read_text()
    wrong = runner.invoke(
        app,
        ["similarity", "run", "--from", str(out / "submission.toml"),
         "--experiment", "classification", "--out", str(tmp_path / "x")],
    )  # fmt: skip
    assert wrong.exit_code != 0 and "records a gym experiment" in wrong.output
    bad = runner.invoke(app, ["similarity", "run", "--experiment", "gym", "--hidden", "8",
                              "--out", str(tmp_path / "bench" / "y")])  # fmt: skip
    assert bad.exit_code != 0 and "--hidden" in bad.output
