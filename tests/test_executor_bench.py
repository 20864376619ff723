"""The benchmark harness (bench/harness.py) and the reusable executor CLI options."""

from __future__ import annotations

import importlib
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path
from typing import Annotated

import pytest
import typer
from typer.testing import CliRunner

from cli.executor_opts import ExecutorOpt, SchedulerOpt, WorkersOpt, open_executor

# bench/ is a folder at the repository root, not an installed package
REPO = str(Path(__file__).resolve().parents[1])
if REPO not in sys.path:
    sys.path.insert(0, REPO)
harness = importlib.import_module("bench.harness")

GOOD = """
import time
calls = []

def _fast():
    calls.append("run")

def _slow():
    time.sleep(0.002)

def benchmarks():
    return [
        {"name": "fast", "run": _fast, "baseline": _slow, "repeat": 3,
         "target": ">= 1x baseline", "check": lambda m, b: b / m >= 1, "note": "n"},
        {"name": "broken", "run": lambda: 1 / 0, "baseline": None, "repeat": 2,
         "target": "-", "check": None, "note": ""},
        {"name": "slow-again", "run": _slow, "baseline": _slow, "repeat": 2,
         "target": "-", "check": None, "note": ""},
    ]

def report(results):
    return "## extra\\n" + ",".join(r["name"] for r in results)

def teardown():
    calls.append("teardown")
"""


@pytest.fixture
def fake_pkg(tmp_path: Path) -> Iterator[str]:
    pkg = tmp_path / "fakebench"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "bench_good.py").write_text(textwrap.dedent(GOOD))
    (pkg / "bench_bad.py").write_text("def benchmarks():\n    raise RuntimeError('no data')\n")
    (pkg / "bench_crash.py").write_text("import os\n\ndef benchmarks():\n    os._exit(3)\n")
    sys.path.insert(0, str(tmp_path))
    yield "fakebench"
    sys.path.remove(str(tmp_path))
    for name in [m for m in sys.modules if m.startswith("fakebench")]:
        del sys.modules[name]


def test_run_module_times_checks_and_survives_errors(fake_pkg: str) -> None:
    results, section, error = harness.run_module(f"{fake_pkg}.bench_good")
    assert error is None
    by = {r.name: r for r in results}
    fast = by["fast"]
    assert len(fast.times_s) == 3 and fast.median_s is not None
    assert fast.baseline_median_s is not None and fast.ratio is not None and fast.ratio > 1
    assert fast.passed is True
    assert by["broken"].error is not None and "ZeroDivisionError" in by["broken"].error
    # a baseline that was just timed as a run is reused, not re-timed: one measurement
    assert by["slow-again"].baseline_times_s == by["slow-again"].times_s
    assert by["slow-again"].ratio == 1.0
    assert section == "## extra\nfast,broken,slow-again"
    assert sys.modules[f"{fake_pkg}.bench_good"].calls[-1] == "teardown"


def test_a_failing_module_is_recorded_not_raised(fake_pkg: str) -> None:
    results, _, error = harness.run_module(f"{fake_pkg}.bench_bad")
    assert results == [] and error is not None and "RuntimeError: no data" in error


def test_modules_run_in_a_fresh_process(
    fake_pkg: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PYTHONPATH", str(tmp_path))
    steps: list[str] = []
    results, section, error = harness.run_module_isolated(
        f"{fake_pkg}.bench_good", is_quick=True, on_step=steps.append
    )
    assert error is None and section.startswith("## extra")
    assert [r.name for r in results] == ["fast", "broken", "slow-again"]
    assert results[0].quick and results[0].repeat == 1 and results[0].median_s is not None
    assert steps == ["fast", "broken", "slow-again"]
    # a module that kills its interpreter is recorded, and the harness goes on
    results, _, error = harness.run_module_isolated(f"{fake_pkg}.bench_crash")
    assert results == [] and error is not None and "exited with code 3" in error


def test_only_filters_benchmarks_by_name(fake_pkg: str) -> None:
    results, _, _ = harness.run_module(f"{fake_pkg}.bench_good", only=["slow"])
    assert [r.name for r in results] == ["slow-again"]
    results, _, _ = harness.run_module(f"{fake_pkg}.bench_good", only=["good"])
    assert len(results) == 3  # the module's short name selects all of it


def test_markdown_table_and_merge(fake_pkg: str) -> None:
    results, section, _ = harness.run_module(f"{fake_pkg}.bench_good", is_quick=True)
    data = {
        "date": "2026-01-01T00:00:00+00:00",
        "commit": "abc",
        "dirty": False,
        "quick": True,
        "machine": harness.machine_info(),
        "modules_run": [f"{fake_pkg}.bench_good"],
        "benchmarks": [harness.asdict(r) for r in results],
        "module_errors": {"x.bench_bad": "RuntimeError: no data\ntrace"},
        "sections": {"good": section},
    }
    md = harness.render_markdown(data)
    assert "| benchmark | median | baseline median | ratio | target | result |" in md
    assert "| fast |" in md and "| pass |" in md and "| error |" in md
    assert "module `x.bench_bad`: RuntimeError: no data" in md and "## extra" in md
    assert data["machine"]["cores"] >= 1 and data["machine"]["versions"]["python"]
    rerun = {**data, "benchmarks": [harness.asdict(results[0])], "module_errors": {}}
    merged = harness.merge(data, rerun)
    assert [r["name"] for r in merged["benchmarks"]] == ["fast", "broken", "slow-again"]


def test_discover_finds_the_executor_benchmarks() -> None:
    assert "bench.bench_executor" in harness.discover()
    assert harness.discover(["executor"]) == ["bench.bench_executor"]


def test_long_modules_run_only_when_named_and_keep_their_last_results() -> None:
    for long in harness.LONG:
        short = long.removeprefix("bench_")
        assert f"bench.{long}" not in harness.discover()
        assert harness.discover([short]) == [f"bench.{long}"]
    old = {"benchmarks": [{"module": f"bench.{n}", "name": n} for n in harness.LONG]
           + [{"module": "bench.bench_gone", "name": "gone"}],
           "sections": {f"bench.{n}": "s" for n in harness.LONG}, "module_errors": {}}
    now = {"modules_run": ["bench.bench_cli"], "sections": {},
           "benchmarks": [{"module": "bench.bench_cli", "name": "cli"}], "module_errors": {}}
    kept = harness.keep_long(old, now)
    # a plain run keeps the long modules' figures, not those of modules that no longer exist
    assert sorted(r["name"] for r in kept["benchmarks"]) == sorted(["cli", *harness.LONG])
    assert set(kept["sections"]) == {f"bench.{n}" for n in harness.LONG}


# --------------------------------------------------------------------------- CLI options

app = typer.Typer()


@app.command()
def heavy(
    executor: ExecutorOpt = "local", workers: WorkersOpt = None, scheduler: SchedulerOpt = None
) -> None:
    with open_executor(executor, workers, scheduler) as ex:
        typer.echo(f"{ex.kind} {ex.workers} {sum(ex.map(abs, [-1, -2, 3]))}")


@app.command()
def other(name: Annotated[str, typer.Argument()] = "") -> None:  # a 2nd command keeps names
    typer.echo(name)


def test_executor_options_open_and_close_an_executor() -> None:
    runner = CliRunner()
    res = runner.invoke(app, ["heavy", "--executor", "inprocess"])
    assert res.exit_code == 0 and res.output.strip() == "inprocess 1 6"
    res = runner.invoke(app, ["heavy", "--workers", "1"])
    assert res.exit_code == 0 and res.output.strip() == "local 1 6"
    res = runner.invoke(app, ["heavy"], env={"GMETER_EXECUTOR": "inprocess"})
    assert res.output.strip() == "inprocess 1 6"
    res = runner.invoke(app, ["heavy", "--workers", "0"])
    assert res.exit_code == 2  # typer's min=1
    res = runner.invoke(app, ["heavy", "--scheduler", "tcp://127.0.0.1:1"])
    assert "only applies to --executor dask" in str(res.exception)
