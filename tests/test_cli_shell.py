"""The CLI shell: fast --help, version, exit codes, no traceback for user errors."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

GMETER = [sys.executable, "-m", "cli"]
HEAVY = ("duckdb", "numpy", "altair", "pandas", "scipy", "numba", "jinja2", "networkx",
         "pydantic", "dask", "distributed")


def run(*args: str, cwd: Path | None = None, env: dict[str, str] | None = None):
    return subprocess.run([*GMETER, *args], capture_output=True, text=True, cwd=cwd,
                          env={**os.environ, **(env or {})}, timeout=120)


def test_help_imports_no_heavy_library():
    code = (
        "import sys\n"
        "from cli import app as a\n"
        "try:\n    a.app(['--help'], standalone_mode=False)\nexcept SystemExit:\n    pass\n"
        f"print([m for m in {HEAVY!r} if m in sys.modules])"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=60)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip().splitlines()[-1] == "[]"


def test_every_command_help_is_light_and_documented():
    from typer.main import get_command

    from cli.app import app

    group = get_command(app)
    for name, cmd in group.commands.items():  # type: ignore[attr-defined]
        assert cmd.help, f"command {name} has no help text"


def test_version():
    out = run("--version")
    assert out.returncode == 0
    assert out.stdout.startswith("gmeter ")


def test_usage_error_exits_2():
    out = run("validate", "--format", "yaml", "submissions")
    assert out.returncode == 2
    assert "Traceback" not in out.stderr


def test_unknown_option_exits_2():
    out = run("validate", "--no-such-option")
    assert out.returncode == 2


def test_missing_path_is_usage_error(tmp_path):
    out = run("validate", str(tmp_path / "nope"))
    assert out.returncode == 2
    assert "no such file" in out.stderr
    assert "Traceback" not in out.stderr


def test_query_without_store_is_domain_error(tmp_path):
    out = run("--db", str(tmp_path / "none.duckdb"), "query", "select 1")
    assert out.returncode == 1
    assert "no store" in out.stderr
    assert "Traceback" not in out.stderr


def test_db_from_environment(tmp_path):
    out = run("query", "select 1", env={"GMETER_DB": str(tmp_path / "env.duckdb")})
    assert out.returncode == 1
    assert "env.duckdb" in out.stderr


def test_schema_is_json():
    for which in ("benchmark", "submission"):
        out = run("schema", which)
        assert out.returncode == 0, out.stderr
        schema = json.loads(out.stdout)
        assert schema["additionalProperties"] is False
        assert "system" in schema["properties"] or which == "benchmark"


def test_query_table_prints_cells_and_headers_as_typed(db):
    """Markup is off on the console: brackets print as stored, with no escape backslash."""
    from pipeline.store import open_store

    db.parent.mkdir(parents=True)
    with open_store(db):
        pass
    out = run("--db", str(db), "query",
              "select '[release.frozen]' as \"[h]\", '[b]x[/b] [link=https://e.org]y[/link]' as v")
    assert out.returncode == 0, out.stderr
    assert "[release.frozen]" in out.stdout and "[h]" in out.stdout
    assert "[b]x[/b]" in out.stdout and "[link=https://e.org]y[/link]" in out.stdout
    assert "\\[" not in out.stdout
