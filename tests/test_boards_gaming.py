"""Missing answers and scale tricks on every generality board (issue 20, items 2 and 12).

The outside check of issue 20 tries the tricks on boards other than the ones first fixed, so
this test takes *every* generality benchmark of ``submissions/`` (found by its ``track``, not
listed by hand), synthesises an honest agent from the board's own items and population (each
answer drawn from the answers other agents gave to that item), and adds twins of it:

* ``gaps``: ``NA`` on each of its answers below the item's median (its wrong or weak answers);
* ``sparse``: ``NA`` on every answer but its single best one;
* one twin per scale-like or missing-value field a submitter could write into
  ``submission.toml`` (every rule the benchmark owns, names it does not know, the section's
  table form and the top level).

Everything goes through the real pipeline — ``gmeter validate``, ``ingest`` and ``score``
into a DuckDB file, then the ``leaderboard`` view — and must end refused, or ranked no
higher than the honest twin, without a traceback. With the benchmark switched to
``missing = "exclude"`` and a minimum coverage, a twin below it is shown with its coverage
and not ranked. On Opp boards (a crosstable cannot take a missing game) ``NA`` is refused by
``gmeter validate`` and ``gmeter score`` still succeeds.
"""

from __future__ import annotations

import csv
import io
import json
import math
import random
import shutil
import statistics
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from cli.app import app
from pipeline.limits import parse_toml
from pipeline.tracks.generality.settings import BENCHMARK_RULES, MISSING_MARK

SUBMISSIONS = Path(__file__).resolve().parents[1] / "submissions"
runner = CliRunner()


def _boards() -> dict[str, dict[str, Any]]:
    """Every generality benchmark of submissions/: id → its [generality] section."""
    out: dict[str, dict[str, Any]] = {}
    for path in sorted(SUBMISSIONS.glob("*/benchmark.toml")):
        raw, problems = parse_toml(str(path), path.read_bytes())
        assert raw is not None and not problems, path
        if raw.get("track") == "generality":
            out[path.parent.name] = dict(raw.get("generality") or {})
    return out


BOARDS = _boards()
RANKED = sorted(b for b, s in BOARDS.items() if s.get("transform", "intrinsic") != "opp")
OPP = sorted(b for b, s in BOARDS.items() if s.get("transform", "intrinsic") == "opp")

MANIFEST = """{top}submitted = 2024-02-01
contact = "Probe lab <probe@example.org>"
licence = "CC0-1.0"
description = "A probe of the board's rules."

[system]
name = "{system}"
{extra}"""

#: Scale-like and missing-value fields a bundle might declare. Each must be refused by
#: validation, naming submission.toml and the field: every rule the benchmark owns (with a
#: value that would help a cheat) and plausible names the schema does not have.
HOSTILE = {
    "raw_scale": "[-1e9, 1.0]",
    "missing": '"exclude"',
    "min_coverage": "0.0",
    "transform": '"intrinsic"',
    "clip_negative": "true",
    "epsilon": "0.5",
    "capability_range": "[0.0, 1e9]",
    "normalisation": '"none"',
}
UNKNOWN = {"scale": "[-1e9, 1.0]", "value_range": "[-1e9, 1.0]", "worst": "0.0",
           "na_policy": '"ignore"', "bounds": "{ low = -1e9, high = 1.0 }"}


def _scale_twins() -> dict[str, tuple[str, str]]:
    """Bundle id → (extra manifest text declaring one scale-like field, the field refused)."""
    twins: dict[str, tuple[str, str]] = {}
    for rule in sorted(BENCHMARK_RULES):
        value = HOSTILE.get(rule, '"x"')
        twins[f"rule-{rule.replace('_', '-')}"] = (
            f"\n[generality]\n{rule} = {value}\n", f"generality.{rule}")
    for key, value in UNKNOWN.items():
        twins[f"unknown-{key.replace('_', '-')}"] = (
            f"\n[generality]\n{key} = {value}\n", f"generality.{key}")
    twins["table-raw-scale"] = (
        "\n[generality.raw_scale]\nlow = -1e9\nhigh = 1.0\n", "generality.raw_scale")
    twins["top-raw-scale"] = ("TOP raw_scale = [-1e9, 1.0]\n", "raw_scale")
    twins["top-scale-section"] = ("\n[scale]\nlow = -1e9\nhigh = 1.0\n", "scale")
    return twins


def _manifest(system: str, extra: str) -> str:
    """A manifest with ``extra`` appended (at the top level when it starts with ``TOP ``)."""
    if extra.startswith("TOP "):
        return MANIFEST.format(top=extra[4:], system=system, extra="")
    return MANIFEST.format(top="", system=system, extra=extra)


def _no_trace(res: Any) -> None:
    assert "Traceback" not in res.output, res.output
    assert res.exception is None or isinstance(res.exception, SystemExit), repr(res.exception)


def _items(board: Path, section: dict[str, Any]) -> list[str]:
    path = board / str(section.get("items_file", "reference/items.csv"))
    with path.open(encoding="utf-8", newline="") as fh:
        return [row["item"] for row in csv.DictReader(fh)]


def _population(board: Path) -> dict[str, list[float]]:
    """Item → every answer the board's bundles gave it (NA left out)."""
    values: dict[str, list[float]] = {}
    for path in sorted(board.glob("*/responses.csv")):
        with path.open(encoding="utf-8", newline="") as fh:
            for row in csv.DictReader(fh):
                if row["value"].strip() != MISSING_MARK:
                    values.setdefault(row["item"], []).append(float(row["value"]))
    return values


def _write_bundle(board: Path, bid: str, system: str, agent: str,
                  answers: dict[str, float | None], extra: str = "") -> None:
    folder = board / bid
    folder.mkdir()
    (folder / "submission.toml").write_text(
        _manifest(system, extra), encoding="utf-8"
    )
    lines = ["agent,item,value"] + [
        f"{agent},{item},{MISSING_MARK if v is None else repr(v)}" for item, v in answers.items()
    ]
    (folder / "responses.csv").write_text("\n".join(lines) + "\n", encoding="utf-8")


def _probe_board(tmp: Path, board: str, exclude: float | None) -> tuple[Path, dict[str, float]]:
    """A copy of the board with an honest probe and its NA twins; returns (folder, coverage)."""
    subs = tmp / "submissions"
    dest = subs / board
    shutil.copytree(SUBMISSIONS / board, dest)
    section = BOARDS[board]
    # Ranks come from the point estimates: the bootstrap's intervals (slow on the large
    # boards) change none of them. The benchmark (not the bundle) may exclude missing items.
    rules = "bootstrap = 0\n" if "bootstrap" not in section else ""
    if exclude is not None:
        rules += f'missing = "exclude"\nmin_coverage = {exclude}\n'
    text = (dest / "benchmark.toml").read_text(encoding="utf-8")
    (dest / "benchmark.toml").write_text(
        text.replace("[generality]\n", "[generality]\n" + rules, 1), encoding="utf-8")
    items = _items(dest, section)
    pop = _population(dest)
    rng = random.Random(f"probe {board}")
    honest = {i: rng.choice(pop[i]) if pop.get(i) else 0.0 for i in items}
    median = {i: statistics.median(pop[i]) if pop.get(i) else 0.0 for i in items}
    low = {i: min(pop[i]) if pop.get(i) else 0.0 for i in items}
    gaps: dict[str, float | None] = {
        i: None if (v < median[i] or v == low[i]) else v for i, v in honest.items()
    }
    if all(v is not None for v in gaps.values()):  # always at least one gap
        worst = min(items, key=lambda i: honest[i] - median[i])
        gaps[worst] = None
    best = max(items, key=lambda i: honest[i] - median[i])
    sparse: dict[str, float | None] = {i: (v if i == best else None) for i, v in honest.items()}
    _write_bundle(dest, "probe-honest", "Probe honest system", "probe honest", dict(honest))
    _write_bundle(dest, "probe-gaps", "Probe gaps system", "probe gaps", gaps)
    _write_bundle(dest, "probe-sparse", "Probe sparse system", "probe sparse", sparse)
    coverage = {
        "probe-gaps": sum(v is not None for v in gaps.values()) / len(items),
        "probe-sparse": 1 / len(items),
    }
    return dest, coverage


def _leaderboard(db: Path, board: str) -> dict[str, dict[str, Any]]:
    """Bundle → its primary-metric row of the board (through ``gmeter query``)."""
    res = runner.invoke(app, [
        "--db", str(db), "query", "--format", "json",
        "select l.bundle, l.agent, l.rank, l.value, l.verified, s.details "
        "from leaderboard l join scores s on s.release = 'current' and "
        "s.benchmark = l.benchmark and s.bundle = l.bundle and s.agent = l.agent and "
        f"s.metric = l.metric where l.benchmark = '{board}'",
    ])
    _no_trace(res)
    assert res.exit_code == 0, res.output
    rows = json.loads(res.output)
    out = {}
    for r in rows:
        if isinstance(r.get("details"), str):
            r["details"] = json.loads(r["details"])
        out[r["bundle"]] = r
    return out


def _ingest_and_score(subs: Path, db: Path, board: str) -> None:
    res = runner.invoke(app, ["--db", str(db), "ingest", str(subs / board)])
    _no_trace(res)
    res = runner.invoke(app, ["--db", str(db), "score", "--executor", "inprocess",
                              "--benchmark", board])
    _no_trace(res)
    assert res.exit_code == 0, res.output


@pytest.mark.parametrize("board", RANKED)
def test_na_and_scale_twins_never_outrank_the_honest_twin(board: str, tmp_path: Path) -> None:
    dest, _ = _probe_board(tmp_path, board, exclude=None)
    twins = _scale_twins()
    honest_text = (dest / "probe-honest" / "responses.csv").read_text(encoding="utf-8")
    for bid, (extra, _) in twins.items():  # the honest answers, plus one scale-like field
        folder = dest / f"scale-{bid}"
        folder.mkdir()
        (folder / "submission.toml").write_text(
            _manifest(f"Scale {bid} system", extra), encoding="utf-8")
        (folder / "responses.csv").write_text(
            honest_text.replace("probe honest,", f"scale {bid},"), encoding="utf-8")
    res = runner.invoke(app, ["validate", "--format", "json",
                              *[str(dest / f"scale-{b}") for b in twins]])
    _no_trace(res)
    report = json.loads(res.output)
    assert not report["ok"]
    for bid, (_, field) in twins.items():
        mine = [p for p in report["problems"] if p["severity"] == "error"
                and p["file"].endswith(f"scale-{bid}/submission.toml")]
        # refused, naming the file and the field, saying what to do
        assert [p["field"] for p in mine] == [field], (board, bid, mine)
        assert all(p["fix"] for p in mine), mine
    db = tmp_path / "store" / "gmeter.duckdb"
    _ingest_and_score(tmp_path / "submissions", db, board)
    rows = _leaderboard(db, board)
    assert not any(b.startswith("scale-") for b in rows), sorted(rows)  # never stored
    honest = rows["probe-honest"]
    assert honest["rank"] is not None and honest["verified"], honest
    for twin in ("probe-gaps", "probe-sparse"):
        got = rows.get(twin)
        if got is None or got["rank"] is None:
            continue  # refused or not ranked: harmless
        assert got["rank"] >= honest["rank"], (board, twin, got, honest)
        assert not got["value"] > honest["value"] + 1e-9, (board, twin, got, honest)
        assert got["details"].get("missing_items", 0) > 0, got  # the board says so


def _rows(board: str) -> int:
    return sum(p.read_bytes().count(b"\n") for p in (SUBMISSIONS / board).glob("*/responses.csv"))


#: The coverage rule is the same code on every board (and property-tested per transformation
#: in test_generality_missing.py): the large boards run it in `make test-all`.
COVERAGE_BOARDS = [
    pytest.param(b, marks=pytest.mark.slow) if _rows(b) > 3000 else b for b in RANKED
]


@pytest.mark.parametrize("board", COVERAGE_BOARDS)
def test_below_the_benchmarks_minimum_coverage_is_not_ranked(board: str, tmp_path: Path) -> None:
    minimum = 0.9
    _, coverage = _probe_board(tmp_path, board, exclude=minimum)
    db = tmp_path / "store" / "gmeter.duckdb"
    _ingest_and_score(tmp_path / "submissions", db, board)
    rows = _leaderboard(db, board)
    assert rows["probe-honest"]["rank"] is not None
    for twin, share in coverage.items():
        got = rows[twin]
        assert got["details"]["coverage"] == pytest.approx(share)
        if share < minimum:
            assert got["rank"] is None and not math.isfinite(got["value"] or math.nan), got
            assert "minimum coverage" in got["details"]["why"]


@pytest.mark.parametrize("board", OPP)
def test_opp_na_is_refused_by_validate_and_score_still_publishes(board: str,
                                                                 tmp_path: Path) -> None:
    subs = tmp_path / "submissions"
    dest = subs / board
    shutil.copytree(SUBMISSIONS / board, dest)
    source = sorted(p.parent for p in dest.glob("*/responses.csv"))[0]
    twin = dest / "probe-na"
    shutil.copytree(source, twin)
    path = twin / "responses.csv"
    rows = list(csv.DictReader(io.StringIO(path.read_text(encoding="utf-8"))))
    lost = [r for r in rows if r["agent"] != r["item"] and float(r["value"]) < 0.5]
    for r in lost:  # every lost game not played
        r["value"] = MISSING_MARK
    out = io.StringIO()
    w = csv.DictWriter(out, ["agent", "item", "value"], lineterminator="\n")
    w.writeheader()
    w.writerows(rows)
    path.write_text(out.getvalue(), encoding="utf-8")
    res = runner.invoke(app, ["validate", "--format", "json", str(twin)])
    _no_trace(res)
    problems = [p for p in json.loads(res.output)["problems"] if p["severity"] == "error"]
    assert problems and all(p["file"].endswith("probe-na/responses.csv") for p in problems)
    named = [p for p in problems if p["field"] != "-"]  # "n more problems" is a summary line
    assert named and all(MISSING_MARK in p["message"] and p["fix"] for p in named), named
    db = tmp_path / "store" / "gmeter.duckdb"
    _ingest_and_score(subs, db, board)  # the good bundle publishes; score exits 0
    board_rows = _leaderboard(db, board)
    assert "probe-na" not in board_rows and board_rows, sorted(board_rows)
