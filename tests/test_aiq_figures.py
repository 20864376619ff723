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
    FIGURE2_RUNS,
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


# --------------------------------------------------------------------------- on the boards
def _point(spec: str, el: int, aiq: float) -> dict:
    from pipeline.tracks.aiq.score import _mc_aixi_search

    search = _mc_aixi_search(spec)
    assert search is not None
    return {"agent": spec, "bundle": spec, "episode_length": el, "aiq": aiq,
            "ci_low": aiq - 5, "ci_high": aiq + 5, "verified": True, **search}  # fmt: skip


def test_depth_search_chart_is_figure_2() -> None:
    from pipeline.tracks.aiq.charts import draw_depth_search
    from pipeline.tracks.aiq.score import _depth_search, _mc_aixi_search

    assert _mc_aixi_search("hlq-lambda,lambda=0.9") is None
    assert _mc_aixi_search("mc-aixi")["paper_settings"] is True  # type: ignore[index]
    assert _mc_aixi_search("mc-aixi,depth=8")["paper_settings"] is False  # type: ignore[index]
    one = [_point("mc-aixi", 50_000, 40.0)]
    assert _depth_search(one) is None  # a single setting is no sweep
    grid = [_point(f"mc-aixi,depth={d},simulations={n}", 50_000, d + n / 10)
            for d in (2, 8, 32) for n in (10, 100)]  # fmt: skip
    odd = [_point("mc-aixi,depth=4,horizon=5", 50_000, 1.0),
           _point("mc-aixi,depth=4", 1000, 1.0)]  # fmt: skip
    chart = _depth_search(grid + odd)
    assert chart is not None and "50000 cycles, horizon 3" in chart["title"]
    recs = chart["records"]
    assert len(recs) == 6 and {r["series"] for r in recs} == {"10 simulations",
                                                              "100 simulations"}  # fmt: skip
    drawn = draw_depth_search(chart)
    assert len(drawn) == 1
    assert all("low" in p and "high" in p for p in drawn[0].records)


def test_boards_say_which_estimator_and_show_the_papers_mc_aixi() -> None:
    from pipeline.tracks.aiq.charts import interval_note
    from pipeline.tracks.aiq.score import _method_note, _paper_points

    assert "stratum" in _method_note("stratified")
    assert "file order" in _method_note("mc-antithetic") and "strat" not in _method_note("mc")
    assert "stratified" in interval_note("95 %", {"aiq": {"method": "stratified"}})
    assert "pair means" in interval_note("95 %", {"aiq": {"method": "mc-antithetic"}})
    assert "stratified" in interval_note("95 %", {})
    from pipeline.tracks.aiq.settings import AIQBenchmarkSettings

    paper = {(p["series"], p["episode_length"]): p["aiq"]
             for p in _paper_points(AIQBenchmarkSettings())}  # fmt: skip
    assert paper[("paper mc-aixi", 1000)] == 41.0 and paper[("paper mc-aixi", 100000)] == 59.6
    assert paper[("paper hlq-lambda", 1000)] == 49.1


# --------------------------------------------------------------------------- command line
def test_cli_runs_mc_aixi_with_traces_and_verifies(tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from cli.app import app

    runner = CliRunner()
    out = tmp_path / "mc"
    res = runner.invoke(app, ["aiq", "run", "--agent", "mc-aixi,depth=6,simulations=8",
                              "-l", "40", "-s", "40", "--traces", "--out", str(out),
                              "--benchmark", str(ROOT / "submissions" / "aiq-bf5-el10000"),
                              "--executor", "inprocess"])  # fmt: skip
    assert res.exit_code == 0, res.output
    assert 'agent_kind = "mc-aixi"' in (out / "aiq.toml").read_text()
    res = runner.invoke(app, ["aiq", "verify", str(out)])
    assert res.exit_code == 0 and "verified: 40 runs replayed exactly" in res.output


def test_cli_figure_dry_run_plans_without_running(tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from cli.app import app

    res = CliRunner().invoke(app, ["aiq", "figure", "2", "--dry-run", "--only", "-n100",
                                   "--scale", "2", "--benchmark", str(tmp_path)])  # fmt: skip
    assert res.exit_code == 0, res.output
    assert res.output.count(f"runs {2 * FIGURE2_RUNS:>6,}") == len(FIGURE2_DEPTHS)
    assert "CPU hours" in res.output and not any(tmp_path.iterdir())
    res = CliRunner().invoke(app, ["aiq", "figure", "3"])
    assert res.exit_code == 2


# --------------------------------------------------------------------------- the committed boards
def test_committed_boards_own_the_recipes_run_counts() -> None:
    fig1 = tomllib.loads((ROOT / "submissions/aiq-bf5-fig1/benchmark.toml").read_text())["aiq"]
    fig2 = tomllib.loads((ROOT / "submissions/aiq-bf5-fig2/benchmark.toml").read_text())["aiq"]
    assert fig1["seed"] == fig2["seed"] == 1
    assert fig1["episode_lengths"] == list(FIGURE1_LENGTHS)
    owned = {j.folder: fig1["samples_by_bundle"].get(j.folder, fig1["samples"])
             for j in figure1_jobs()}  # fmt: skip
    assert owned == {j.folder: j.runs for j in figure1_jobs()}
    assert fig2["samples"] == FIGURE2_RUNS and fig2["episode_lengths"] == [50_000]


def test_per_bundle_runs_are_owned(tmp_path: Path) -> None:
    from pipeline.tracks.aiq.settings import AIQBenchmarkSettings
    from pipeline.tracks.aiq.validate import _check_owned

    s = AIQBenchmarkSettings(seed=1, samples=1000, samples_by_bundle={"mc": 20})
    log = {"seed": 1, "samples": 20}

    from types import SimpleNamespace

    rows = SimpleNamespace(rows=[], lines=[])
    assert _check_owned(log, rows, s, "aiq.toml", "samples.csv", "mc") == []
    refused = _check_owned(log, rows, s, "aiq.toml", "samples.csv", "other")
    assert [p.field for p in refused] == ["samples"] and "1000" in refused[0].message
    from pipeline.lab.aiq.run import owned_seed_and_samples

    assert owned_seed_and_samples(s.model_dump(), None, None, "mc")[:2] == (20, 1)
    assert owned_seed_and_samples(s.model_dump(), None, None, "x")[:2] == (1000, 1)


def test_papers_curves_get_their_own_chart() -> None:
    from pipeline.tracks.aiq.charts import draw_episode_lengths

    measured = [{"agent": a, "series": a, "episode_length": el, "aiq": 40.0 + i,
                 "ci_low": 38.0, "ci_high": 44.0} for i, a in enumerate(("freq", "mc-aixi"))
                for el in (1000, 3000)]  # fmt: skip
    paper = [{"agent": "freq (paper)", "series": "paper freq", "episode_length": el,
              "aiq": 40.2, "source": "paper"} for el in (1000, 3000)]  # fmt: skip
    charts = draw_episode_lengths({"records": measured + paper})
    assert [c.suffix for c in charts] == ["", "-paper"]
    assert {r["series"] for r in charts[0].records} == {"freq", "mc-aixi"}
    assert {r["series"] for r in charts[1].records} == {"paper freq"}
    assert draw_episode_lengths({"records": paper}) == []  # no measured point: nothing drawn


def test_a_board_without_fig1_points_draws_no_episode_length_chart(tmp_path: Path) -> None:
    """A depth x search board (no agent at the paper's settings) shows Fig. 2, not Fig. 1."""
    from test_aiq_track import bench_input, bundle_input

    from pipeline.tracks.aiq.track import TRACK
    from pipeline.tracks.base import ScoreContext

    bench = tmp_path / "bench"
    shutil.copytree(ROOT / "submissions" / "aiq-bf5-el10000" / "reference", bench / "reference")
    manifest = (ROOT / "submissions" / "aiq-bf5-el10000" / "benchmark.toml").read_text()
    manifest = manifest.replace('"stratified"', '"mc-antithetic"').replace("[10000]", "[40]")
    (bench / "benchmark.toml").write_text(
        manifest.replace("samples = 1000\nmin_samples = 1000", "samples = 4\nmin_samples = 2")
    )
    grid = [SweepJob(f"mc-aixi,depth={d},simulations=4", 40, 4, f"d{d}", f"D{d}", 2)
            for d in (2, 4)]  # fmt: skip
    other = [SweepJob("q0", 40, 4, "q0", "Q", 1)]

    def charts(folders: list[Path]) -> set[str]:
        result = TRACK.score(bench_input(bench), [bundle_input(f) for f in folders],
                             ScoreContext())  # fmt: skip
        assert all(r.verified for r in result.rows)
        return set(result.charts)

    sweep = charts(run_jobs(grid, bench))
    assert "aiq_depth_search" in sweep and "aiq_vs_episode_length" not in sweep
    assert "aiq_vs_episode_length" in charts(run_jobs(grid + other, bench))
