"""The CLI for scripts: JSON summaries, a closed pipe, progress lines in logs, completion, init."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
GMETER = [sys.executable, "-m", "cli"]


def run(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "SOURCE_DATE_EPOCH": "1767312000"}
    env.pop("GMETER_DB", None)
    return subprocess.run([*GMETER, *args], capture_output=True, text=True, cwd=cwd, env=env,
                          timeout=600)


def _board(repo: Path) -> None:
    """A tiny generality board written by hand (as docs/own-site.md does)."""
    bench = repo / "submissions" / "toy"
    (bench / "reference").mkdir(parents=True)
    (bench / "lab").mkdir()
    (bench / "benchmark.toml").write_text(
        'id = "toy"\ntitle = "Toy"\ntrack = "generality"\nversion = "1.0.0"\n'
        'description = "Toy tasks."\nlicence = "CC0-1.0"\ncreated = 2026-01-01\n\n'
        '[generality]\ntransform = "intrinsic"\nnormalisation = "paper"\n', encoding="utf-8")
    (bench / "reference" / "items.csv").write_text("item,difficulty\na,0.2\nb,0.7\n",
                                                   encoding="utf-8")
    (bench / "lab" / "submission.toml").write_text(
        'submitted = 2026-01-02\ncontact = "A <a@example.org>"\nlicence = "CC0-1.0"\n'
        'description = "Two agents."\n\n[system]\nname = "Lab"\n\n[generality]\nnotes = "x"\n',
        encoding="utf-8")
    (bench / "lab" / "responses.csv").write_text(
        "agent,item,value\nx,a,1\nx,b,0\ny,a,1\ny,b,1\n", encoding="utf-8")


@pytest.fixture(scope="module")
def repo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("repo") / "board"
    done = run("init", str(root), "--title", "Toy", "--licence", "CC0-1.0",
               "--url", "https://example.org/toy/", cwd=root.parent)
    assert done.returncode == 0, done.stderr
    _board(root)
    return root


def test_init_refuses_a_non_empty_folder_without_force(repo: Path) -> None:
    done = run("init", str(repo), "--title", "T", "--licence", "CC0-1.0",
               "--url", "https://e.org/", cwd=repo.parent)
    assert done.returncode == 2 and "not empty" in done.stderr and "--force" in done.stderr
    assert (repo / ".git").is_dir()
    flows = sorted(p.name for p in (repo / ".github" / "workflows").iterdir())
    assert flows == ["check-submission.yml", "publish.yml"]
    assert (repo / "submissions" / "releases.toml").is_file()


def test_init_refuses_a_bad_licence_or_url(tmp_path: Path) -> None:
    for bad in (["--licence", "not a licence!", "--url", "https://e.org/"],
                ["--licence", "MIT", "--url", "javascript:alert(1)"]):
        done = run("init", str(tmp_path / "x"), "--title", "T", *bad, cwd=tmp_path)
        assert done.returncode == 1 and "gmeter.toml" in done.stderr, done.stderr
        assert not (tmp_path / "x").exists()


def test_ingest_score_release_print_json_summaries(repo: Path) -> None:
    done = run("ingest", "--format", "json", cwd=repo)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) | {"new": 1, "ok": True} == json.loads(done.stdout)
    done = run("score", "--format", "json", cwd=repo)
    summary = json.loads(done.stdout)
    assert summary["failed"] == 0 and {r["benchmark"] for r in summary["results"]} == {"toy"}
    done = run("release", "2026.1", "--format", "json", cwd=repo)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["name"] == "2026.1"


def test_a_closed_pipe_ends_quietly(repo: Path) -> None:
    db = repo / ".gmeter" / "gmeter.duckdb"
    if not db.exists():
        assert run("ingest", cwd=repo).returncode == 0
    cmd = " ".join([*GMETER, "query", "'select * from range(200000)'", "--format", "csv"])
    done = subprocess.run(f"set -o pipefail; {cmd} | head -1", shell=True, cwd=repo,
                          capture_output=True, text=True, executable="/bin/bash",
                          env={**os.environ, "PYTHONPATH": str(ROOT)}, timeout=300)
    assert done.returncode == 0 and done.stdout == "range\n", done.stderr
    assert done.stderr == ""


def test_progress_lines_without_a_terminal() -> None:
    from cli.context import _plain_progress

    clock = iter([0.0, 5.0, 11.0, 12.0, 30.0])
    lines: list[str] = []
    import builtins
    import time

    real_print, real_clock = builtins.print, time.monotonic
    try:
        time.monotonic = lambda: next(clock)  # type: ignore[assignment]
        builtins.print = lambda *a, **k: lines.append(" ".join(map(str, a)))  # type: ignore[assignment]
        report = _plain_progress(every=10.0)
        for done in (1, 2, 3, 4, 5):
            report("scoring", done, 5)
    finally:
        builtins.print, time.monotonic = real_print, real_clock
    assert lines == ["scoring: 3/5", "scoring: 5/5"]


def test_shell_completion_is_offered() -> None:
    done = run("--help", cwd=ROOT)
    assert "--install-completion" in done.stdout and "--show-completion" in done.stdout


def _leaf_commands() -> list[list[str]]:
    """Every command path of the app (``["aiq", "run"]`` …), found from the CLI itself."""
    import typer

    from cli.app import app

    group = typer.main.get_command(app)
    out: list[list[str]] = []

    def walk(cmd: object, path: list[str]) -> None:
        subs = getattr(cmd, "commands", None)
        if subs:
            for name, sub in sorted(subs.items()):
                walk(sub, [*path, name])
        else:
            out.append(path)

    walk(group, [])
    return out


def test_every_command_takes_quiet_and_verbose_after_its_name(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import typer.main
    import typer.testing
    from typer.testing import CliRunner

    from cli.app import app

    # CliRunner converts the whole app to click commands on every call (30 ms, 160 calls
    # here); the conversion is made once and each call still parses its own command line.
    command = typer.main.get_command(app)
    monkeypatch.setattr(typer.testing, "_get_command", lambda _app: command)
    runner = CliRunner()
    commands = _leaf_commands()
    assert len(commands) > 10
    for path in commands:
        for flag in ("-q", "--quiet", "-v", "--verbose"):
            done = runner.invoke(app, [*path, flag, "--help"])
            assert done.exit_code == 0, (path, flag, done.output)


def test_quiet_after_the_command_is_quiet(repo: Path) -> None:
    before = run("-q", "validate", "submissions", cwd=repo)
    after = run("validate", "submissions", "-q", cwd=repo)
    loud = run("validate", "submissions", cwd=repo)
    assert before.returncode == after.returncode == loud.returncode == 0, after.stderr
    assert (after.stdout, after.stderr) == (before.stdout, before.stderr)
    assert len(loud.stdout + loud.stderr) > len(after.stdout + after.stderr)


@pytest.mark.parametrize("args", [["-q", "-v", "validate", "submissions"],
                                  ["-q", "validate", "submissions", "-v"],
                                  ["validate", "submissions", "--verbose", "--quiet"]])
def test_quiet_and_verbose_together_is_a_usage_error(repo: Path, args: list[str]) -> None:
    done = run(*args, cwd=repo)
    assert done.returncode != 0 and "--quiet and --verbose" in done.stderr
    assert "Traceback" not in done.stderr


def test_version_prints_the_package_version(repo: Path) -> None:
    from pipeline import __version__

    done = run("--version", cwd=repo)
    assert done.returncode == 0 and done.stdout.strip() == f"gmeter {__version__}"
