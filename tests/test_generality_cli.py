"""``gmeter generality``: ad-hoc matrices (wide and long) and benchmark folders."""

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

ROOT = Path(__file__).resolve().parents[1]
runner = CliRunner()
HEADER = [
    "agent",
    "capability",
    "expected_difficulty",
    "spread",
    "generality",
    "normalised_generality",
    "abstruse",
]


@pytest.fixture
def files(tmp_path: Path) -> dict[str, Path]:
    wide = tmp_path / "wide.csv"
    wide.write_text("agent,q1,q2,q3,q4\na,1,1,0.5,0\nb,1,1,1,1\n")
    longf = tmp_path / "long.csv"
    longf.write_text(
        "agent,item,value\n"
        + "".join(
            f"{a},{i},{v}\n"
            for a, vals in (("a", (1, 1, 0.5, 0)), ("b", (1, 1, 1, 1)))
            for i, v in zip(("q1", "q2", "q3", "q4"), vals, strict=True)
        )
    )
    diff = tmp_path / "items.csv"
    diff.write_text("item,difficulty\nq1,1\nq2,2\nq3,3\nq4,4\n")
    return {"wide": wide, "long": longf, "diff": diff}


def rows(output: str) -> list[dict[str, str]]:
    return list(csv.DictReader(io.StringIO(output)))


@pytest.mark.parametrize("kind", ["wide", "long"])
def test_intrinsic_csv(files, kind):
    res = runner.invoke(
        app,
        [
            "generality",
            str(files[kind]),
            "--difficulty",
            str(files["diff"]),
            "--kmin",
            "0",
            "--format",
            "csv",
        ],
    )
    assert res.exit_code == 0, res.output
    assert res.output.splitlines()[0] == ",".join(HEADER)
    a, b = rows(res.output)
    assert (a["agent"], a["capability"], a["spread"]) == ("a", "3.0", "0.5773502691896247")
    assert a["expected_difficulty"] == "1.5555555555555554"  # spec E1, kmin 0
    assert (b["generality"], b["abstruse"]) == ("inf", "false")


def test_json_and_table(files):
    res = runner.invoke(
        app,
        [
            "generality",
            str(files["wide"]),
            "--transform",
            "rnk",
            "--columns",
            "5",
            "--format",
            "json",
        ],
    )
    assert res.exit_code == 0, res.output
    data = json.loads(res.output)
    assert [d["agent"] for d in data] == ["a", "b"] and set(data[0]) == set(HEADER)
    res = runner.invoke(
        app,
        [
            "generality",
            str(files["wide"]),
            "--transform",
            "aref",
            "--reference",
            "a",
            "--normalisation",
            "grid",
            "--range",
            "0",
            "1",
        ],
    )
    assert res.exit_code == 0, res.output
    assert "capability" in res.output


def test_benchmark_folder_csv_matches_the_published_table():
    res = runner.invoke(
        app, ["generality", "--benchmark", str(ROOT / "submissions/wccc-2005"), "--format", "csv"]
    )
    assert res.exit_code == 0, res.output
    table = {r["agent"]: r for r in rows(res.output)}
    assert len(table) == 12
    assert round(float(table["Zappa"]["capability"]), 2) == 10.12


def test_user_errors_exit_codes(files, tmp_path):
    # the app maps user errors to exit codes: 2 for usage, 1 for domain errors; no traceback
    usage = [
        ([str(files["wide"])], "--difficulty"),  # intrinsic without --difficulty
        ([str(files["wide"]), "--benchmark", str(tmp_path)], "not both"),
        ([str(files["wide"]), "--difficulty", str(files["diff"]), "--format", "xml"], "xml"),
    ]
    for args, text in usage:
        res = runner.invoke(app, ["generality", *args])
        assert res.exit_code == 2 and text in res.output, (args, res.output)
    bad = tmp_path / "bad.csv"
    bad.write_text("agent,q1\na,1.5\n")
    res = runner.invoke(app, ["generality", str(bad), "--difficulty", str(files["diff"])])
    assert res.exit_code == 1 and "[0, 1]" in res.output
    res = runner.invoke(app, ["generality", "--benchmark", str(tmp_path)])
    assert res.exit_code == 1 and "benchmark.toml" in res.output
    assert "Traceback" not in res.output


def test_help_does_not_import_numpy():
    code = (
        "import sys; from cli.app import app; "
        "print('numpy' in sys.modules, 'pipeline.tracks.generality.track' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT)
    assert out.stdout.split() == ["False", "False"]


FIXTURES = ROOT / "tests/data/generality"


def test_fixture_benchmark_folder():
    res = runner.invoke(
        app, ["generality", "--benchmark", str(FIXTURES / "e13-opp"), "--format", "csv"]
    )
    assert res.exit_code == 0, res.output
    cap = {r["agent"]: float(r["capability"]) for r in rows(res.output)}
    assert cap == {"P1": 1.75, "P2": 1.5, "P3": 1.25}  # spec E13


def test_broken_fixture_reports_every_problem():
    res = runner.invoke(app, ["generality", "--benchmark", str(FIXTURES / "broken-bundle")])
    assert res.exit_code == 1
    for text in ("NaN", "above the maximum", "duplicate", "not an item"):
        assert text in res.output, text


def test_missing_files_are_named_before_any_option_is_judged(tmp_path):
    res = runner.invoke(app, ["generality", str(tmp_path / "nope.csv")])
    assert res.exit_code == 2
    assert "nope.csv: no such file (RESPONSES.csv)" in res.output
    assert "--difficulty FILE" not in res.output
    resp = tmp_path / "r.csv"
    resp.write_text("agent,item,value\na,i1,1\n")
    res = runner.invoke(app, ["generality", str(resp), "--difficulty", str(tmp_path / "d.csv")])
    assert res.exit_code == 2 and "d.csv: no such file (--difficulty)" in res.output


def test_a_response_file_beyond_csv_limits_is_an_error_not_a_traceback(tmp_path):
    big = tmp_path / "big.csv"
    big.write_text("agent,i1,i2\na,1,0\nb," + "1" * 200_000 + ",1\n")
    commands = (["fa", str(big)], ["irt", str(big)],
                ["generality", str(big), "--transform", "rnk"])
    for cmd in commands:
        res = runner.invoke(app, cmd)
        assert res.exit_code == 1, (cmd, res.output)
        assert "big.csv is not valid CSV (field larger than field limit" in res.output
