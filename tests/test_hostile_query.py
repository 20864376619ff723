"""``gmeter query`` is sandboxed: it reads the store and nothing else, and writes nothing.

Each statement below is an attempt to read a local file, write one (including over the store
itself), reach the network or loosen the sandbox. Every one must fail with a one-line error
(exit 1, no traceback), leave the store byte-identical and usable, and create no file.
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

import pytest
from typer.testing import CliRunner

from cli.app import app

runner = CliRunner()


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    import shutil

    from pipeline.ingest import ingest
    from pipeline.store import open_store
    from tests.conftest import GOOD

    root = tmp_path_factory.mktemp("query")
    shutil.copytree(GOOD, root / "submissions")
    db = root / "store" / "g.duckdb"
    with open_store(db) as s:
        ingest(s, [root / "submissions"])
    return db


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _files(root: Path) -> set[str]:
    return {str(p) for p in root.rglob("*")}


ATTACKS = [
    "copy (select 'x') to '{db}'",
    "copy (select 'x') to '{dir}/out.csv'",
    "copy bundles to '{dir}/out.parquet' (format parquet)",
    "export database '{dir}/export'",
    "attach '{dir}/other.duckdb' as other",
    "attach '{dir}/../store/new.duckdb' as again",
    "select * from read_text('/etc/passwd')",
    "select * from read_csv('/etc/passwd')",
    "select * from read_csv_auto('/etc/hostname')",
    "select * from read_blob('/etc/passwd')",
    "select * from read_blob('{dir}/../store/*')",
    "select * from read_json('/etc/passwd')",
    "select * from read_parquet('{dir}/x.parquet')",
    "select * from '/etc/passwd'",
    "select * from glob('/etc/*')",
    "install httpfs",
    "load httpfs",
    "load '{dir}/evil.duckdb_extension'",
    "set enable_external_access = true",
    "set lock_configuration = false",
    "set temp_directory = '{dir}/spill'",
    "pragma profiling_output = '{dir}/profile.txt'",
    "set profiling_output = '{dir}/profile.txt'",
    "pragma enable_profiling",
    "set allowed_directories = ['/']",
    "create table stolen as select 1",
    "insert into scores select * from scores",
    "drop table bundles",
    "delete from bundles",
    "update bundles set current = false",
    "checkpoint; copy (select 1) to '{dir}/late.csv'",
]


@pytest.mark.parametrize("sql", ATTACKS)
def test_query_cannot_escape_the_store(sql: str, store: Path, tmp_path: Path) -> None:
    before = _digest(store)
    outside = tmp_path / "outside"
    outside.mkdir()
    seen = _files(store.parent) | _files(outside)
    res = runner.invoke(app, ["--db", str(store), "query",
                              sql.format(db=store, dir=outside)])
    assert res.exit_code == 1, res.output
    assert "Traceback" not in res.output
    assert res.exception is None or isinstance(res.exception, SystemExit)
    assert "error: query failed:" in res.output
    assert _digest(store) == before
    assert _files(store.parent) | _files(outside) == seen
    ok = runner.invoke(app, ["--db", str(store), "query", "select count(*) from bundles",
                             "--format", "csv"])
    assert ok.exit_code == 0 and ok.output.splitlines() == ["count_star()", "2"]


def test_query_reads_the_store(store: Path) -> None:
    res = runner.invoke(app, ["--db", str(store), "query",
                              "select id from bundles order by id", "--format", "json"])
    assert res.exit_code == 0
    assert [r["id"] for r in __import__("json").loads(res.output)] == ["alpha", "beta"]


def test_timestamptz_prints_without_pytz(store: Path) -> None:
    res = runner.invoke(app, ["--db", str(store), "query",
                              "select timestamptz '2024-01-02 03:04:05+00' as t, "
                              "[timestamptz '2024-01-02 03:04:05+00'] as l", "--format", "csv"])
    assert res.exit_code == 0, res.output
    header, row = res.output.splitlines()
    assert header == "t,l" and row.startswith("2024-01-02")


@pytest.mark.parametrize("fmt", ["table", "csv"])
def test_terminal_escapes_in_results_are_escaped(store: Path, fmt: str) -> None:
    sql = ("select chr(27) || '[2J' || chr(7) || chr(155) || 'x' || chr(8238) as "
           "\"h\u001b[31m\"")
    res = runner.invoke(app, ["--db", str(store), "query", sql, "--format", fmt])
    assert res.exit_code == 0, res.output
    for bad in ("\x1b", "\x07", "\x9b", "\u202e"):
        assert bad not in res.output
    assert "\\x1b[2J\\x07\\x9bx\\u202e" in res.output


def test_query_on_a_file_that_is_not_a_store(tmp_path: Path) -> None:
    fake = tmp_path / "fake.duckdb"
    fake.write_text("x\n")
    res = runner.invoke(app, ["--db", str(fake), "query", "select 1"])
    assert res.exit_code == 1 and "Traceback" not in res.output
    assert fake.read_text() == "x\n"


def test_query_on_a_missing_store_creates_nothing(tmp_path: Path) -> None:
    res = runner.invoke(app, ["--db", str(tmp_path / "none.duckdb"), "query", "select 1"])
    assert res.exit_code == 1 and "no store" in res.output
    assert os.listdir(tmp_path) == []
