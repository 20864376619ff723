"""Hostile commands end in a clear one-line error: exit code, message, no traceback.

Also: validate lists manifest and content defects of one bundle together; a scaffold does not
talk about a "None benchmark"; release notes always leave a readable ``releases.toml``; an
unwritable output or store is one line; Δ of an oversized pair is "too large for exact Δ".
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from cli.app import app
from tests.conftest import GOOD

runner = CliRunner()


def _no_trace(res) -> None:  # type: ignore[no-untyped-def]
    assert "Traceback" not in res.output
    assert res.exception is None or isinstance(res.exception, SystemExit), res.exception


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    shutil.copytree(GOOD, tmp_path / "submissions")
    return tmp_path / "submissions"


def _ingest(tree: Path, db: Path) -> None:
    res = runner.invoke(app, ["--db", str(db), "ingest", str(tree)])
    assert res.exit_code == 0, res.output


def test_manifest_and_content_defects_are_listed_together(tree: Path) -> None:
    sub = tree / "gen-mini" / "alpha" / "submission.toml"
    sub.write_text(sub.read_text() + "\nthis is = = not toml\n")
    resp = tree / "gen-mini" / "alpha" / "responses.csv"
    resp.write_text(resp.read_text().replace("A1,i2,1", "A1,i2,nan"))
    beta = tree / "sim-mini" / "beta"
    (beta / "submission.toml").write_text(
        (beta / "submission.toml").read_text().replace('contact = "Test Lab <lab@example.org>"\n',
                                                       ""))
    (beta / "runs.csv").write_text((beta / "runs.csv").read_text().replace("t1,t2,0.5",
                                                                          "t1,t2,7"))
    res = runner.invoke(app, ["validate", str(tree), "--format", "json"])
    _no_trace(res)
    assert res.exit_code == 1
    found = {(Path(p["file"]).name, p["field"]) for p in json.loads(res.output)["problems"]}
    assert ("submission.toml", "line 12") in found or any(
        f == "submission.toml" and fld.startswith("line") for f, fld in found)
    assert ("responses.csv", "line 3: value") in found
    assert ("submission.toml", "contact") in found
    assert ("runs.csv", "line 2: p") in found


def test_scaffold_then_validate_names_the_track(tmp_path: Path) -> None:
    subs = tmp_path / "submissions"
    res = runner.invoke(app, ["new", "generality", "newbench/newbot", "--root", str(subs)])
    assert res.exit_code == 0, res.output
    res = runner.invoke(app, ["validate", str(subs)])
    _no_trace(res)
    assert "None benchmark" not in res.output and "does not belong" not in res.output
    assert "TODO placeholder" in res.output


def test_score_of_unknown_benchmark_and_release(tree: Path, tmp_path: Path) -> None:
    db = tmp_path / "g.duckdb"
    _ingest(tree, db)
    for args in (["--benchmark", "nosuch"], ["--release", "r9"]):
        res = runner.invoke(app, ["--db", str(db), "score", *args])
        _no_trace(res)
        assert res.exit_code == 2 and ("nosuch" in res.output or "r9" in res.output)


def test_release_notes_stay_readable(tree: Path, tmp_path: Path) -> None:
    db = tmp_path / "g.duckdb"
    _ingest(tree, db)
    rel = tree / "releases.toml"
    res = runner.invoke(app, ["--db", str(db), "release", "r1", "--date", "2024-03-01",
                              "--releases", str(rel), "--notes", 'a\rb"""\n[x]\\'])
    assert res.exit_code == 0, res.output
    before = rel.read_bytes()
    res = runner.invoke(app, ["--db", str(db), "release", "r2", "--date", "2024-03-02",
                              "--releases", str(rel), "--notes", "x\x1b[2J"])
    _no_trace(res)
    assert res.exit_code == 1 and "U+001B" in res.output
    assert rel.read_bytes() == before
    from pipeline.release import read_releases

    assert [r.notes for r in read_releases(rel)] == ['a\rb"""\n[x]\\']
    res = runner.invoke(app, ["--db", str(db), "ingest", str(tree)])
    assert res.exit_code == 0, res.output


def test_deep_toml_is_one_problem_not_a_traceback(tree: Path) -> None:
    sub = tree / "gen-mini" / "alpha" / "submission.toml"
    sub.write_text("x = " + "[" * 5000 + "]" * 5000 + "\n" + sub.read_text())
    res = runner.invoke(app, ["validate", str(tree)])
    _no_trace(res)
    assert res.exit_code == 1 and "nests 5000 levels deep" in res.output


def test_deep_folder_is_one_problem(tree: Path) -> None:
    p = tree / "gen-mini" / "alpha"
    for _ in range(60):
        p = p / "d"
    p.mkdir(parents=True)
    (p / "x.txt").write_text("x")
    res = runner.invoke(app, ["validate", str(tree)])
    _no_trace(res)
    assert res.exit_code == 1 and "nested more than 12 folders deep" in res.output


def test_unwritable_store_is_one_line(tree: Path, tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("x")
    res = runner.invoke(app, ["--db", str(blocker / "sub" / "g.duckdb"), "ingest", str(tree)])
    _no_trace(res)
    assert res.exit_code == 1 and res.output.count("\n") <= 2, res.output


def test_unwritable_output_folder_is_one_line(tree: Path, tmp_path: Path) -> None:
    db = tmp_path / "g.duckdb"
    _ingest(tree, db)
    blocker = tmp_path / "file"
    blocker.write_text("x")
    res = runner.invoke(app, ["--db", str(db), "build", "--out", str(blocker / "site")])
    _no_trace(res)
    assert res.exit_code == 1 and "error" in res.output.lower()
    assert not any(p.name.startswith(".site.build-") for p in tmp_path.iterdir())


def test_delta_of_a_pair_too_large_for_exact_delta(tmp_path: Path) -> None:
    def flow(n: int, k: int) -> list[dict[str, object]]:
        return [{"id": f"n{i}", "type": "function", "func": f"x{(i * k) % 7}",
                 "wires": [[f"n{i + 1}"]] if i + 1 < n else []} for i in range(n)]

    a, b = tmp_path / "a.json", tmp_path / "b.json"
    a.write_text(json.dumps(flow(300, 3)))
    b.write_text(json.dumps(flow(300, 5)))
    res = runner.invoke(app, ["delta", str(a), str(b)])
    _no_trace(res)
    assert res.exit_code == 1 and "too large for exact Δ" in res.output


def test_delta_of_a_deep_json_file(tmp_path: Path) -> None:
    a = tmp_path / "a.json"
    a.write_text("[" * 3000 + "]" * 3000)
    res = runner.invoke(app, ["delta", str(a), str(a)])
    _no_trace(res)
    assert res.exit_code == 1 and "nests 3000 levels deep" in res.output


def test_delta_pairs_with_a_deep_line(tmp_path: Path) -> None:
    pairs = tmp_path / "pairs.jsonl"
    pairs.write_text('{"id": 1, "a": [], "b": []}\n' + "[" * 3000 + "]" * 3000 + "\n")
    res = runner.invoke(app, ["delta", "--pairs", str(pairs)])
    _no_trace(res)
    assert res.exit_code == 1 and "nests 3000 levels deep" in res.output


def test_ingest_of_an_edited_release_is_one_error(tree: Path, tmp_path: Path) -> None:
    db = tmp_path / "g.duckdb"
    _ingest(tree, db)
    rel = tree / "releases.toml"
    res = runner.invoke(app, ["--db", str(db), "release", "r1", "--date", "2024-03-01",
                              "--releases", str(rel)])
    assert res.exit_code == 0
    rel.write_text(rel.read_text() + "\n[[release]]\nname = " + "[" * 400 + "]" * 400 + "\n")
    res = runner.invoke(app, ["--db", str(db), "ingest", str(tree)])
    _no_trace(res)
    assert res.exit_code == 1 and "releases.toml" in res.output
