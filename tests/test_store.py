"""The DuckDB store: migrations, atomic writes, views, read-only access, export."""

from __future__ import annotations

import datetime as dt

import duckdb
import pytest

from pipeline.errors import StoreError
from pipeline.store import MIGRATIONS, open_store

NOW = dt.datetime(2026, 1, 2, 3, 4, 5)


def _bundle(store, bundle_id="b1", chash="h1", files=None):
    store.put_bundle(benchmark="bench", bundle_id=bundle_id, content_hash=chash,
                     manifest={"system": {"name": "Sys " + bundle_id}, "submitted": "2025-01-01"},
                     source_path=f"submissions/bench/{bundle_id}", git_commit=None,
                     files=files or {"submission.toml": b"x"}, now=NOW)


def test_migrations_recorded_once(tmp_path):
    db = tmp_path / "s.duckdb"
    with open_store(db) as s:
        assert s.schema_version() == MIGRATIONS[-1][0]
    with open_store(db) as s:
        assert s.migrate() == []
        _, rows = s.query("select version, name from schema_migrations order by version")
        assert [r[0] for r in rows] == [m[0] for m in MIGRATIONS]


def test_newer_schema_is_refused(tmp_path):
    db = tmp_path / "s.duckdb"
    with open_store(db) as s:
        s.con.execute("insert into schema_migrations values (999, 'future', now())")
    with pytest.raises(StoreError, match="schema version 999"):
        with open_store(db):
            pass


def test_bundle_versions_keep_history(tmp_path):
    with open_store(tmp_path / "s.duckdb") as s:
        _bundle(s, chash="h1")
        _bundle(s, chash="h2", files={"submission.toml": b"y"})
        assert s.current_bundle_hash("bench", "b1") == "h2"
        assert [b.content_hash for b in s.bundles(current_only=False)] == ["h1", "h2"]
        assert s.bundle_files("h1") == {"submission.toml": b"x"}
        _bundle(s, chash="h1")  # going back re-uses the stored version
        assert s.current_bundle_hash("bench", "b1") == "h1"
        assert len(s.bundles(current_only=False)) == 2


def test_transaction_rolls_back(tmp_path):
    with open_store(tmp_path / "s.duckdb") as s:
        with pytest.raises(RuntimeError):
            with s.transaction():
                _bundle(s)
                raise RuntimeError("boom")
        assert s.bundles(current_only=False) == []
        _, rows = s.query("select count(*) from bundle_files")
        assert rows == [(0,)]


def test_scores_replace_and_views(tmp_path):
    with open_store(tmp_path / "s.duckdb") as s:
        s.put_benchmark(benchmark_id="bench", content_hash="bh", track="aiq", title="B",
                        version="1.0.0", description="d", licence="MIT", created=None,
                        manifest={"id": "bench"}, source_path="submissions/bench",
                        git_commit=None, files={"benchmark.toml": b"id='bench'"}, now=NOW)
        _bundle(s)
        s.set_primary_metrics({"aiq": "aiq"})
        rows = [{"bundle": "b1", "content_hash": "h1", "agent": "Sys b1", "metric": m,
                 "value": v, "ci_low": None, "ci_high": None, "rank": 1, "verified": True,
                 "details": {"x": float("inf")}}
                for m, v in (("aiq", 41.5), ("other", float("nan")))]
        for _ in range(2):  # replacing twice leaves one copy
            s.replace_scores(release="current", benchmark="bench", benchmark_hash="bh",
                             track="aiq", rows=rows, charts={"c": [1, 2]},
                             code_version="t", seed=1, options={}, notes=[], now=NOW)
        _, lb = s.query("select agent, metric, value, system_name from leaderboard")
        assert lb == [("Sys b1", "aiq", 41.5, "Sys b1")]
        _, hist = s.query("select count(*) from score_history")
        assert hist == [(2,)]


def test_read_only_rejects_writes(tmp_path):
    db = tmp_path / "s.duckdb"
    with open_store(db):
        pass
    with open_store(db, read_only=True) as s:
        with pytest.raises(StoreError):
            s.query("create table x (a int)")
    with pytest.raises(StoreError, match="no store"):
        with open_store(tmp_path / "missing.duckdb", read_only=True):
            pass


def test_export_parquet_and_csv(tmp_path):
    with open_store(tmp_path / "s.duckdb") as s:
        _bundle(s)
        s.export_table("bundle_files", tmp_path / "f.parquet", "parquet")
        s.export_table("bundle_files", tmp_path / "f.csv", "csv")
    assert duckdb.sql(f"select count(*) from '{tmp_path / 'f.parquet'}'").fetchall() == [(1,)]
    header = (tmp_path / "f.csv").read_text().splitlines()[0]
    assert "content" not in header.split(",")  # blobs stay out of the exports
    cols = duckdb.sql(f"select * from '{tmp_path / 'f.parquet'}'").columns
    assert "content" not in cols and "sha256" in cols
