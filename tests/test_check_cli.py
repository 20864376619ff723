"""``gmeter check`` on the command line, the Makefile target CI calls, and the workflows.

The workflows are not run here (they need GitHub); what they call is: every ``run:`` step is a
Makefile target, and the target runs ``gmeter check`` with the base and report it is given.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from check_fixtures import NEW, bundle, commit, generality_repo, write
from typer.testing import CliRunner

from cli.app import app

ROOT = Path(__file__).resolve().parents[1]
GMETER = Path(sys.executable).parent / "gmeter"
WORKFLOWS = ROOT / ".github" / "workflows"


@pytest.fixture
def repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    root = generality_repo(tmp_path / "repo")
    monkeypatch.chdir(root)
    return root


def test_cli_writes_the_report_and_exits_0(repo: Path) -> None:
    write(repo, bundle("toy-aref", "new-sys", NEW))
    commit(repo, "add")
    res = CliRunner().invoke(app, ["--db", "nostore.duckdb", "check", "--base", "main",
                                   "--report", "out/report.md", "--format", "json",
                                   "--executor", "inprocess"])
    assert res.exit_code == 0, res.output
    data = json.loads(res.stdout)
    assert data["exit_code"] == 0 and data["benchmarks"][0]["targets"] == ["new-sys"]
    report = (repo / "out" / "report.md").read_text(encoding="utf-8")
    assert report.startswith("<!-- gmeter-check -->") and "new-sys" in report


def test_cli_exit_1_on_an_error_and_still_writes_the_report(repo: Path) -> None:
    shutil.copytree(repo / "submissions/toy-aref/sys-a", repo / "submissions/toy-aref/copy")
    commit(repo, "copy")
    res = CliRunner().invoke(app, ["check", "--base", "main", "--report", "r.md",
                                   "--executor", "inprocess"])
    assert res.exit_code == 1
    assert "resubmission" in res.stdout and "resubmission" in (repo / "r.md").read_text()


def test_cli_rejects_a_bad_format(repo: Path) -> None:
    res = CliRunner().invoke(app, ["check", "--base", "main", "--format", "html"])
    assert res.exit_code != 0


def test_console_script_bad_base_is_a_clear_error(repo: Path) -> None:
    if not GMETER.exists():
        pytest.skip("console script not installed")
    res = subprocess.run([str(GMETER), "check", "--base", "origin/nope", "--executor",
                          "inprocess"], capture_output=True, text=True, timeout=120, check=False)
    assert res.returncode == 1
    assert "origin/nope" in res.stderr and "fetch" in res.stderr
    assert "Traceback" not in res.stderr


def _make_targets() -> set[str]:
    text = (ROOT / "Makefile").read_text(encoding="utf-8")
    return set(re.findall(r"^([a-z][a-z-]*):", text, flags=re.M))


def _steps(name: str) -> list[dict[str, object]]:
    data = yaml.safe_load((WORKFLOWS / name).read_text(encoding="utf-8"))
    return [s for job in data["jobs"].values() for s in job.get("steps", [])]


@pytest.mark.parametrize("name", ["check-submission.yml", "publish.yml"])
def test_workflow_steps_call_makefile_targets_only(name: str) -> None:
    targets = _make_targets()
    runs = [str(s["run"]) for s in _steps(name) if "run" in s]
    assert runs, f"{name} runs nothing"
    for cmd in runs:
        words = cmd.split()
        assert words[0] == "make" and words[1] in targets, cmd


def test_check_workflow_has_history_and_passes_the_base() -> None:
    steps = _steps("check-submission.yml")
    checkout = next(s for s in steps if str(s.get("uses", "")).startswith("actions/checkout"))
    assert checkout["with"]["fetch-depth"] == 0  # type: ignore[index]
    run = next(s for s in steps if "run" in s)
    assert run["run"] == "make check-submission"
    assert run["env"]["BASE"] == "origin/${{ github.base_ref }}"  # type: ignore[index]
    data = yaml.safe_load((WORKFLOWS / "check-submission.yml").read_text(encoding="utf-8"))
    assert "pull_request" in data[True] and "pull_request_target" not in data[True]


def test_publish_workflow_uploads_public() -> None:
    steps = _steps("publish.yml")
    upload = next(s for s in steps if "upload-pages-artifact" in str(s.get("uses", "")))
    assert upload["with"]["path"] == "public"  # type: ignore[index]


def test_make_check_submission_runs_gmeter_check_with_base_and_report() -> None:
    if shutil.which("make") is None:
        pytest.skip("make not installed")
    env = {**os.environ, "BASE": "origin/feature", "REPORT": "r.md"}
    res = subprocess.run(["make", "-n", "check-submission"], cwd=ROOT, env=env,
                         capture_output=True, text=True, timeout=60, check=True)
    line = [ln for ln in res.stdout.splitlines() if "gmeter check" in ln][-1]
    assert "--base ${BASE:-origin/main}" in line and "--report ${REPORT:-check-report.md}" in line
    res = subprocess.run(["make", "-n", "publish"], cwd=ROOT, capture_output=True, text=True,
                         timeout=60, check=True)
    assert "gmeter build" in res.stdout
