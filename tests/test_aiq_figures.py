"""The Fig. 1 / Fig. 2 sweep recipe: jobs, projected cost, bundles that verify and resume."""

from __future__ import annotations

import shutil
import tomllib
from pathlib import Path

import pytest

from pipeline.lab.aiq.figures import (
    FIGURE1_LENGTHS,
    FIGURE1_RUNS,
    FIGURE2_DEPTHS,
    FIGURE2_SIMULATIONS,
    SweepJob,
    figure1_jobs,
    figure2_jobs,
    relative_cost,
    run_jobs,
    submission_toml,
    sweep_cost,
)
from pipeline.metrics.aiq.agent_specs import parse_agent

ROOT = Path(__file__).resolve().parents[1]


def test_jobs_cover_both_figures() -> None:
    jobs = figure1_jobs()
    assert {(j.agent, j.episode_length) for j in jobs} == {
        (a, el) for a in FIGURE1_RUNS for el in FIGURE1_LENGTHS
    }
    assert len({j.folder for j in jobs}) == len(jobs)
    cells = figure2_jobs(runs=4)
    specs = [parse_agent(j.agent) for j in cells]
    grid = {(d, s) for d in FIGURE2_DEPTHS for s in FIGURE2_SIMULATIONS}
    assert {(p.param("depth"), p.param("simulations")) for p in specs} == grid
    assert all(j.runs == 4 and j.episode_length == 50_000 for j in cells)
    costs = [relative_cost(j.agent) for j in cells]
    assert costs == sorted(costs)  # cheapest first: an interrupted sweep has the most cells


def test_projected_cost() -> None:
    assert relative_cost("mc-aixi") == 1.0 and relative_cost("freq") == 1.0
    assert relative_cost("mc-aixi,simulations=50") == pytest.approx(0.5)
    assert relative_cost("mc-aixi,horizon=6") == pytest.approx(2.0)
    assert relative_cost("mc-aixi,depth=1") < relative_cost("mc-aixi,depth=2") < 1
    jobs = [SweepJob("freq", 1000, 10, "f", "F", 1), SweepJob("mc-aixi,simulations=50", 100, 4,
                                                              "m", "M", 1)]  # fmt: skip
    assert sweep_cost(jobs, {"freq": 1e4, "mc-aixi": 100.0}) == pytest.approx(1.0 + 2.0)


def test_submission_toml_is_valid_and_says_how() -> None:
    job = figure2_jobs()[0]
    doc = tomllib.loads(submission_toml(job, 1))
    assert doc["system"]["name"] == job.system
    assert f"--agent {job.agent}" in doc["description"] and "Fig. 2" in doc["description"]


def test_run_jobs_writes_bundles_that_verify_and_resume(tmp_path: Path) -> None:
    from pipeline.lab.aiq.run import verify_dir

    bench = tmp_path / "bench"
    shutil.copytree(ROOT / "submissions" / "aiq-bf5-el10000" / "reference", bench / "reference")
    manifest = (ROOT / "submissions" / "aiq-bf5-el10000" / "benchmark.toml").read_text()
    (bench / "benchmark.toml").write_text(manifest.replace('"stratified"', '"mc-antithetic"'))
    jobs = [SweepJob("mc-aixi,depth=4,simulations=5", 50, 4, "mc", "MC", 1),
            SweepJob("q0", 50, 6, "q0", "Q", 1)]  # fmt: skip
    seen: list[str] = []
    out = run_jobs(jobs, bench, report=lambda job, run: seen.append(job.folder))
    assert seen == ["mc", "q0"] and out == [bench / "mc", bench / "q0"]
    for folder in out:
        assert verify_dir(folder).verified
        log = tomllib.loads((folder / "aiq.toml").read_text())
        assert log["method"] == "mc-antithetic" and log["seed"] == 1
    seen.clear()
    run_jobs(jobs, bench, report=lambda job, run: seen.append(job.folder))
    assert seen == []  # finished bundles are kept, not rerun
