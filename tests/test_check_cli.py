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
        if words[1:2] == ["-C"]:  # make -C base TARGET: the base checkout's Makefile
            words = [words[0], *words[3:]]
        assert words[0] == "make" and words[1] in targets, cmd


def test_check_workflow_runs_the_base_gmeter_on_the_pull_request_as_data() -> None:
    data = yaml.safe_load((WORKFLOWS / "check-submission.yml").read_text(encoding="utf-8"))
    # the workflow file itself comes from the base branch: a pull request cannot rewrite it
    assert "pull_request_target" in data[True] and "pull_request" not in data[True]
    steps = _steps("check-submission.yml")
    checkouts = [s for s in steps if str(s.get("uses", "")).startswith("actions/checkout")]
    by_path = {c["with"]["path"]: c["with"] for c in checkouts}  # type: ignore[index]
    assert by_path["base"]["ref"] == "${{ github.event.pull_request.base.sha }}"
    assert by_path["pr"]["ref"] == "${{ github.event.pull_request.head.sha }}"
    assert by_path["pr"]["fetch-depth"] == 0
    assert all(c["persist-credentials"] is False for c in by_path.values())
    (run,) = [s for s in steps if "run" in s]
    assert run["run"] == "make -C base check-submission"  # the base's Makefile, never the PR's
    assert run["env"]["BASE"] == "${{ github.event.pull_request.base.sha }}"  # type: ignore[index]
    assert run["env"]["TREE"].endswith("/pr")  # type: ignore[index]


def test_init_check_workflow_takes_its_verdict_from_the_base_branch(tmp_path: Path) -> None:
    """The workflow `gmeter init` writes: base's file and pin, the pull request as data only."""
    done = CliRunner().invoke(app, ["init", str(tmp_path / "site"), "--title", "T", "--licence",
                                    "CC-BY-4.0", "--url", "https://example.org/t/"])
    assert done.exit_code == 0, done.output
    text = (tmp_path / "site" / ".github" / "workflows" / "check-submission.yml").read_text(
        encoding="utf-8")
    data = yaml.safe_load(text)
    # GitHub takes a pull_request_target workflow (and its pinned version) from the base branch
    assert "pull_request_target" in data[True] and "pull_request" not in data[True]
    assert data["permissions"] == {"contents": "read"}
    (job,) = data["jobs"].values()
    steps = job["steps"]
    order = [str(s.get("uses", "")) or str(s.get("run", "")) for s in steps]
    install = next(i for i, s in enumerate(order) if "pip install" in s)
    checkout = next(i for i, s in enumerate(order) if s.startswith("actions/checkout"))
    assert install < checkout  # gmeter is in place before any of the pull request's files
    pr = steps[checkout]["with"]
    assert pr["ref"] == "${{ github.event.pull_request.head.sha }}" and pr["path"] == "pr"
    assert pr["persist-credentials"] is False and pr["fetch-depth"] == 0
    (run,) = [s for s in steps if str(s.get("run", "")).startswith("gmeter check")]
    assert run["working-directory"] == "pr" and run["env"]["PYTHONSAFEPATH"] == "1"
    assert run["env"]["BASE"] == "${{ github.event.pull_request.base.sha }}"
    assert '"gmeter[aiq,similarity]==' in steps[install]["run"]  # pinned, with the scoring extras


def test_publish_workflow_uploads_public() -> None:
    steps = _steps("publish.yml")
    upload = next(s for s in steps if "upload-pages-artifact" in str(s.get("uses", "")))
    assert upload["with"]["path"] == "public"  # type: ignore[index]


def test_make_check_submission_installs_the_base_gmeter() -> None:
    if shutil.which("make") is None:
        pytest.skip("make not installed")
    env = {**os.environ, "BASE": "origin/feature", "REPORT": "r.md"}
    res = subprocess.run(["make", "-n", "check-submission"], cwd=ROOT, env=env,
                         capture_output=True, text=True, timeout=60, check=True)
    assert ".ci/check-submission" in res.stdout and "$base" in res.stdout
    assert ".venv/bin/gmeter" not in res.stdout  # never this tree's own gmeter
    script = (ROOT / ".ci" / "check-submission").read_text(encoding="utf-8")
    assert 'git archive --format=tar "$commit"' in script and "PYTHONSAFEPATH=1" in script
    res = subprocess.run(["make", "-n", "publish"], cwd=ROOT, capture_output=True, text=True,
                         timeout=60, check=True)
    assert "gmeter site" in res.stdout
