"""``gmeter similarity RUNS.csv`` and ``gmeter similarity show`` (the run subcommand: see
test_similarity_experiment.py)."""

from __future__ import annotations

import csv
import io
import json
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from cli.app import app

RUNS = (
    "test_a,test_b,p,merge,agent,v_a,v_b,v_ab,seed\n"
    "c100,c10,0.5,sampling,cnn,0.5,0.8,0.6,1\n"  # c10 is the easier test: A
    "c100,c10,0.5,sampling,cnn,0.52,0.78,0.61,2\n"
    "mnist,c10,0.5,sampling,cnn,0.99,0.8,0.895,1\n"
    "mnist,c10,0.5,sampling,cnn,0.98,0.81,0.89,2\n"
    "mnist,c100,0.5,sampling,cnn,0.99,0.5,0.6,1\n"
    "mnist,c100,0.5,sampling,cnn,0.98,0.52,0.62,2\n"
)
GMETER = [sys.executable, "-c", "from cli.app import main; main()"]


@pytest.fixture
def runs_file(tmp_path: Path) -> Path:
    p = tmp_path / "runs.csv"
    p.write_text(RUNS, encoding="utf-8")
    return p


def test_csv_format_columns_and_orientation(runs_file: Path) -> None:
    res = CliRunner().invoke(app, ["similarity", str(runs_file), "--format", "csv"])
    assert res.exit_code == 0, res.output
    rows = list(csv.DictReader(io.StringIO(res.stdout)))
    assert list(rows[0]) == [
        "test_a",
        "test_b",
        "p",
        "similarity",
        "dissimilarity",
        "sufficient",
        "status",
    ]
    pair = {(r["test_a"], r["test_b"]): r for r in rows}
    # c10 vs c100: means V_A = 0.79 (c10), V_B = 0.51, V_AB = 0.605:
    # S = (0.79 + 0.51 - 1.21)/0.28 = 0.09/0.28
    r = pair[("c10", "c100")]
    assert float(r["similarity"]) == pytest.approx(0.09 / 0.28)
    assert float(r["dissimilarity"]) == pytest.approx(1 - 0.09 / 0.28)
    assert r["sufficient"] == "true" and r["p"] == "0.5"
    assert ("mnist", "c10") in pair and ("mnist", "c100") in pair  # A = the easier test


def test_options_before_the_file_and_show_subcommand(runs_file: Path) -> None:
    runner = CliRunner()
    a = runner.invoke(app, ["similarity", "--format", "csv", str(runs_file)])
    b = runner.invoke(app, ["similarity", "show", str(runs_file), "--format", "csv"])
    assert a.exit_code == b.exit_code == 0
    assert a.stdout == b.stdout


def test_json_format(runs_file: Path) -> None:
    res = CliRunner().invoke(app, ["similarity", str(runs_file), "--format", "json"])
    assert res.exit_code == 0, res.output
    data = json.loads(res.stdout)
    cfg = data["configs"][0]
    assert cfg["tests"] == ["c10", "c100", "mnist"]
    m = cfg["similarity"]
    assert all(m[i][j] == m[j][i] for i in range(3) for j in range(3))
    assert [m[i][i] for i in range(3)] == [1.0, 1.0, 1.0]
    assert cfg["diversity"] == pytest.approx(
        sum(1 - m[i][j] for i in range(3) for j in range(i + 1, 3)) / 3
    )
    assert len(cfg["map"]) == 3 and cfg["diversity_ci"] is not None


def test_table_format(runs_file: Path) -> None:
    res = CliRunner().invoke(app, ["similarity", str(runs_file)])
    assert res.exit_code == 0, res.output
    assert "similarity matrix" in res.stdout and "diversity" in res.stdout


def test_group_help_lists_commands() -> None:
    res = CliRunner().invoke(app, ["similarity", "--help"])
    assert res.exit_code == 0 and "show" in res.stdout


def test_user_errors_have_exit_codes(tmp_path: Path) -> None:
    missing = subprocess.run(
        [*GMETER, "similarity", str(tmp_path / "nope.csv")],
        capture_output=True,
        text=True,
        check=False,
    )
    assert missing.returncode == 2 and "no such file" in missing.stderr
    assert "Traceback" not in missing.stderr
    bad = tmp_path / "bad.csv"
    bad.write_text(
        "test_a,test_b,p,merge,agent,v_a,v_b,v_ab\na,b,0,sampling,x,1,0,nan\n", encoding="utf-8"
    )
    res = subprocess.run(
        [*GMETER, "similarity", str(bad), "--format", "csv"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert res.returncode == 1, res.stderr
    assert "NaN" in res.stderr and "Traceback" not in res.stderr
    fmt = subprocess.run(
        [*GMETER, "similarity", str(bad), "--format", "xml"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert fmt.returncode == 2
