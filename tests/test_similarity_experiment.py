"""The AIQ families experiment: merged-episode kernel, settings, reproducibility, bundle, CLI."""

from __future__ import annotations

import csv
import io
import math
from dataclasses import asdict
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from cli.app import app
from pipeline.errors import UsageError
from pipeline.lab.similarity.experiment import (
    FAMILIES,
    ExperimentSettings,
    run_experiment,
    runs_csv,
    settings_from_manifest,
)
from pipeline.metrics.aiq.agents_fast import run_episode
from pipeline.metrics.aiq.bf_fast import program_arrays, seed64
from pipeline.metrics.aiq.merged_episode import run_merged_episode

ROOT = Path(__file__).resolve().parents[1]
COMMITTED = ROOT / "submissions" / "aiq-families"
MACHINE = (5, 1, False, 100_000, 25, 1000)
AGENTS = {
    0: np.array([0.0]),
    1: np.array([0.07]),
    2: np.array([0.0, 0.5, 0.5, 0.04, 0.6]),
    3: np.array([0.0, 0.0, 0.95, 0.04, 0.7]),
}
COPY = ",.#"  # reward = current action: a copy environment
TINY = ExperimentSettings(
    tests=("copy", "lagged", "other"), programs=6, seeds=2, episode_length=100, block=200
)


# ----------------------------------------------------------------------------- the kernel
@pytest.mark.parametrize("kind", sorted(AGENTS))
def test_merged_episode_with_p_one_is_an_ordinary_run(kind: int) -> None:
    oa, ja = program_arrays(COPY)
    ob, jb = program_arrays("+.,.#")
    for sign in (1.0, -1.0):
        single = run_episode(
            oa, ja, *MACHINE, kind, AGENTS[kind], 300, sign, 1.0, seed64(11), seed64(12), False
        )[0]
        on_a = run_merged_episode(
            oa,
            ja,
            ob,
            jb,
            *MACHINE,
            kind,
            AGENTS[kind],
            300,
            sign,
            1.0,
            seed64(11),
            seed64(99),
            seed64(12),
            seed64(5),
        )
        on_b = run_merged_episode(
            ob,
            jb,
            oa,
            ja,
            *MACHINE,
            kind,
            AGENTS[kind],
            300,
            sign,
            0.0,
            seed64(99),
            seed64(11),
            seed64(12),
            seed64(5),
        )
        assert on_a[0] == single and on_b[0] == single  # bit-identical
        assert on_a[2] == 300 and on_b[2] == 0


def test_merged_episode_schedule_and_range() -> None:
    oa, ja = program_arrays(COPY)
    ob, jb = program_arrays("+.,.#")
    a = run_merged_episode(
        oa,
        ja,
        ob,
        jb,
        *MACHINE,
        2,
        AGENTS[2],
        2000,
        1.0,
        0.3,
        seed64(1),
        seed64(2),
        seed64(3),
        seed64(4),
    )
    b = run_merged_episode(
        oa,
        ja,
        ob,
        jb,
        *MACHINE,
        2,
        AGENTS[2],
        2000,
        1.0,
        0.3,
        seed64(1),
        seed64(2),
        seed64(3),
        seed64(4),
    )
    assert a == b  # deterministic
    score, failed, on_a = a
    assert not failed and -100.0 <= score <= 100.0
    # Binomial(2000, 0.3): sd = sqrt(2000 * 0.21) = 20.5; 600 +- 5 sd
    assert abs(on_a - 600) < 103


def test_merged_episode_step_limit_fails_the_run() -> None:
    oa, ja = program_arrays("+[]#")  # '+' leaves the blank, then loops forever
    ob, jb = program_arrays(COPY)
    score, failed, _ = run_merged_episode(
        oa,
        ja,
        ob,
        jb,
        *MACHINE,
        0,
        AGENTS[0],
        50,
        1.0,
        0.5,
        seed64(1),
        seed64(2),
        seed64(3),
        seed64(4),
    )
    assert failed and math.isnan(score)


# ----------------------------------------------------------------------------- settings
def test_families() -> None:
    assert FAMILIES["copy"].accepts(1, 30) and not FAMILIES["copy"].accepts(2, 30)
    assert FAMILIES["short"].accepts(7, 9) and not FAMILIES["short"].accepts(7, 10)
    assert FAMILIES["long"].accepts(12, 24) and not FAMILIES["long"].accepts(12, 23)
    assert FAMILIES["other"].accepts(20, 5) and not FAMILIES["other"].accepts(10, 5)


def test_settings_validation_and_round_trip() -> None:
    s = ExperimentSettings()
    d = s.to_dict()
    assert d["agent_spec"].startswith("q-lambda,") and d["tests"][0] == "copy"
    again = ExperimentSettings.from_dict(d)
    assert again.to_dict() == d
    for bad in (
        {"tests": ("copy", "nope")},
        {"tests": ("copy",)},
        {"p": 1.0},
        {"merge_unit": "block"},
        {"programs": 1},
        {"seeds": 0},
    ):
        with pytest.raises(UsageError):
            ExperimentSettings(**bad)  # type: ignore[arg-type]
    with pytest.raises(UsageError, match="unknown experiment setting"):
        ExperimentSettings.from_dict({"colour": 1})
    with pytest.raises(UsageError):
        ExperimentSettings(agent="cmd:python x.py").spec()
    with pytest.raises(UsageError):
        ExperimentSettings(agent="nonsense").spec()


# ----------------------------------------------------------------------------- runs
def test_small_experiment_rows_and_reproducibility() -> None:
    first = run_experiment(TINY)
    assert len(first.rows) == 3 * TINY.seeds  # 3 pairs per replicate
    assert {r["seed"] for r in first.rows} == {"1", "2"}
    assert all(r["merge"] == "sampling" and r["agent"] == "q-lambda" for r in first.rows)
    for r in first.rows:
        for k in ("v_a", "v_b", "v_ab"):
            assert -100.0 <= r[k] <= 100.0
    # the same settings (as recorded) give the same numbers, bit for bit
    again = run_experiment(ExperimentSettings.from_dict(TINY.to_dict()))
    assert runs_csv(again.rows) == runs_csv(first.rows)
    # common random numbers: V of a family is the same in every pair of a replicate
    rep = [r for r in first.rows if r["seed"] == "1"]
    v_copy = {r["v_a"] for r in rep if r["test_a"] == "copy"}
    assert len(v_copy) == 1 or first.failed_runs > 0


def test_episode_control_reuses_single_runs() -> None:
    ctl = run_experiment(ExperimentSettings(**{**asdict(TINY), "merge_unit": "episode"}))
    cyc = run_experiment(TINY)
    # the family scores are the same runs in both designs
    assert [r["v_a"] for r in ctl.rows] == [r["v_a"] for r in cyc.rows]
    assert ctl.total_runs == 2 * TINY.programs * len(TINY.tests) * TINY.seeds


# ----------------------------------------------------------------------------- bundle + CLI
def test_cli_run_writes_a_valid_bundle_and_reruns_identically(tmp_path: Path) -> None:
    out = tmp_path / "bench" / "q"
    args = [
        "similarity",
        "run",
        "--out",
        str(out),
        "--tests",
        "copy,lagged,other",
        "--programs",
        "6",
        "--seeds",
        "2",
        "--episode-length",
        "100",
        "--executor",
        "inprocess",
    ]
    runner = CliRunner()
    res = runner.invoke(app, args)
    assert res.exit_code == 0, res.output
    assert (out / "runs.csv").is_file() and (tmp_path / "bench" / "benchmark.toml").is_file()
    s = settings_from_manifest(out / "submission.toml")
    assert s.tests == ("copy", "lagged", "other") and s.programs == 6

    from pipeline.validate import collect

    report = collect([tmp_path / "bench"])
    assert report.errors == [], report.errors

    again = tmp_path / "bench" / "q2"
    res2 = runner.invoke(
        app,
        [
            "similarity",
            "run",
            "--from",
            str(out / "submission.toml"),
            "--out",
            str(again),
            "--executor",
            "inprocess",
        ],
    )
    assert res2.exit_code == 0, res2.output
    assert (again / "runs.csv").read_bytes() == (out / "runs.csv").read_bytes()

    shown = runner.invoke(app, ["similarity", str(out / "runs.csv"), "--format", "csv"])
    assert shown.exit_code == 0, shown.output
    rows = list(csv.DictReader(io.StringIO(shown.stdout)))
    assert len(rows) == 3
    assert list(rows[0]) == ["test_a", "test_b", "p", "similarity", "dissimilarity", "sufficient",
                             "status"]

    busy = runner.invoke(app, ["similarity", "run", "--out", str(out), "--executor", "inprocess"])
    assert busy.exit_code == 2 and "already holds files" in busy.output


# ----------------------------------------------------------------------------- committed
def _bundles() -> list[Path]:
    return sorted(p.parent for p in COMMITTED.glob("*/submission.toml"))


def test_committed_benchmark_validates_and_scores() -> None:
    from pipeline.tracks import get_track
    from pipeline.tracks.base import ScoreContext
    from pipeline.validate import collect

    assert _bundles(), "submissions/aiq-families has no bundle"
    report = collect([COMMITTED])
    assert report.errors == [], report.errors
    bench = report.benchmarks[0]
    assert bench.input is not None
    inputs = [b.input for b in bench.bundles if b.input is not None]
    res = get_track("similarity").score(bench.input, inputs, ScoreContext())
    sims = [r for r in res.rows if r.metric == "similarity"]
    assert sims and all(r.ci_low is not None for r in sims if r.details["status"] == "ok")


@pytest.mark.slow
@pytest.mark.parametrize("bundle", [p.name for p in _bundles()])
def test_committed_bundle_reruns_from_its_recorded_settings(bundle: str, tmp_path: Path) -> None:
    # The published numbers, recomputed from the settings in submission.toml alone.
    src = COMMITTED / bundle
    settings = settings_from_manifest(src / "submission.toml")
    rows = run_experiment(settings).rows
    fresh = list(csv.DictReader(io.StringIO(runs_csv(rows))))
    published = list(csv.DictReader(io.StringIO((src / "runs.csv").read_text("utf-8"))))
    assert len(fresh) == len(published)
    for a, b in zip(fresh, published, strict=True):
        assert (a["test_a"], a["test_b"], a["seed"]) == (b["test_a"], b["test_b"], b["seed"])
        for k in ("v_a", "v_b", "v_ab"):
            assert float(a[k]) == pytest.approx(float(b[k]), rel=1e-9, abs=1e-9)


def test_committed_episode_control_reads_unrelated() -> None:
    # Merging whole environments (fresh agent each) gives E[V_AB] = (V_A + V_B)/2, i.e. S = 0:
    # the 95 % intervals of the control cover 0 up to chance. With 15 pairs, 3 or more misses
    # happen with probability 0.036 if the intervals hold their level (binomial), so at most 2.
    from pipeline.lab.similarity.show import analyse_runs_file

    report = analyse_runs_file(COMMITTED / "q-lambda-episode-control" / "runs.csv")
    pairs = report.configs[0].pairs
    assert len(pairs) == 15
    misses = []
    for pr in pairs:
        e = pr.estimate
        assert e.ci_low is not None and e.ci_high is not None
        if not e.ci_low <= 0.0 <= e.ci_high:
            misses.append(pr.key)
    assert len(misses) <= 2, misses
    assert report.configs[0].diversity_ci is not None
    lo, hi = report.configs[0].diversity_ci
    assert lo <= 1.0 <= hi
