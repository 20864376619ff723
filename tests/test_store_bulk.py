"""Bulk inserts write exactly the rows executemany writes; the store's writers use them."""

from __future__ import annotations

import datetime as dt
import math

import duckdb
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import pipeline.store as store_module
from pipeline.store import open_store
from pipeline.store.bulk import TYPES, insert_rows, insert_rows_each

NOW = dt.datetime(2026, 1, 2, 3, 4, 5, 678901)
COLUMNS = [(f"c_{t}", t) for t in TYPES]
TEXT = st.text(st.characters(blacklist_categories=["Cs"]), max_size=12)
VALUES = {
    "varchar": TEXT | st.integers(-10**6, 10**6) | st.booleans(),
    "json": st.sampled_from(['{"a":1}', "[]", "null", '"x"', '{"k":[1.5,"é\\u0000"]}']),
    "blob": st.binary(max_size=16),
    "double": st.floats(allow_nan=True, allow_infinity=True) | st.integers(-10**9, 10**9),
    "integer": st.integers(-(2**31), 2**31 - 1),
    "bigint": st.integers(-(2**63), 2**63 - 1),
    "boolean": st.booleans(),
    "timestamp": st.datetimes(dt.datetime(1, 1, 1), dt.datetime(9999, 12, 31)),
    "date": st.dates() | st.datetimes(dt.datetime(1, 1, 1), dt.datetime(9999, 12, 31)),
}
ROWS = st.lists(st.tuples(*[st.none() | VALUES[t] for _, t in COLUMNS]), max_size=25)


def _tables(con: duckdb.DuckDBPyConnection) -> None:
    ddl = ", ".join(f"{name} {kind}" for name, kind in COLUMNS)
    for table in ("each", "bulk"):
        con.execute(f"create or replace table {table} ({ddl})")


def _same_tables(con: duckdb.DuckDBPyConnection, a: str, b: str) -> None:
    """Same rows in the same order; repr tells NULL from NaN and -0.0 from 0.0."""
    assert repr(con.execute(f"from {a}").fetchall()) == repr(con.execute(f"from {b}").fetchall())


_CON = duckdb.connect()


@settings(max_examples=60, deadline=None)
@given(ROWS)
def test_bulk_rows_equal_executemany_rows(rows):
    con = _CON
    _tables(con)
    insert_rows_each(con, "each", COLUMNS, rows)
    insert_rows(con, "bulk", COLUMNS, rows)
    _same_tables(con, "each", "bulk")


def test_nan_is_not_null_and_minus_zero_keeps_its_sign():
    con = duckdb.connect()
    _tables(con)
    row = [None] * len(COLUMNS)
    nan, neg, null = list(row), list(row), list(row)
    i = [t for _, t in COLUMNS].index("double")
    nan[i], neg[i] = math.nan, -0.0
    insert_rows(con, "bulk", COLUMNS, [nan, neg, null])
    got = con.execute("select c_double is null, isnan(c_double), signbit(c_double) from bulk")
    assert got.fetchall() == [(False, True, False), (False, False, True), (True, None, None)]


def test_nothing_to_insert_and_unknown_types():
    con = duckdb.connect()
    con.execute("create table t (a varchar)")
    assert insert_rows(con, "t", [("a", "varchar")], []) == 0
    with pytest.raises(ValueError, match="unknown column type"):
        insert_rows(con, "t", [("a", "uuid")], [["x"]])
    assert con.execute("select count(*) from t").fetchone() == (0,)
    assert not [r for r in con.execute("show tables").fetchall() if "bulk" in r[0]]


def _fill(s, n_rows: int) -> None:
    s.put_benchmark(benchmark_id="bench", content_hash="bh", track="aiq", title="B",
                    version="1.0.0", description="d", licence="MIT", created=None,
                    manifest={"id": "bench"}, source_path="submissions/bench", git_commit=None,
                    files={"benchmark.toml": b"id='bench'", "ref/x.bin": bytes(range(256))},
                    now=NOW)  # fmt: skip
    for k in range(3):
        s.put_bundle(benchmark="bench", bundle_id=f"b{k}", content_hash=f"h{k}",
                     manifest={"system": {"name": f"S{k}"}}, source_path=f"s/b{k}",
                     git_commit=None, files={"submission.toml": b"x", "a\u00e9.csv": b"\0" * k},
                     now=NOW)  # fmt: skip
    s.put_release("r1", dt.date(2026, 1, 1), "n", "t",
                  [("bench", f"b{k}", f"h{k}") for k in range(3)], {"bench": "bh"})
    values = [1.5, math.nan, math.inf, -math.inf, -0.0, None]
    rows = [{"bundle": f"b{i % 3}", "content_hash": f"h{i % 3}", "agent": f"agent é {i}",
             "metric": ("aiq", "other")[i % 2], "value": values[i % 6] if i % 6 != 5 else 2.0,
             "ci_low": values[(i + 1) % 6], "ci_high": None, "rank": None if i % 4 else i,
             "verified": bool(i % 3), "details": None if i % 5 else {"i": i, "x": math.inf}}
            for i in range(n_rows)]  # fmt: skip
    s.replace_scores(release="current", benchmark="bench", benchmark_hash="bh", track="aiq",
                     rows=rows, charts={"c": [1]}, code_version="t", seed=1, options={},
                     notes=["n"], now=NOW)  # fmt: skip
    s.put_verifications("v", {("h0", "ctx"): (True, {"a": [1]}), ("h1", "ctx"): (False, {})},
                        NOW)  # fmt: skip


@pytest.mark.parametrize("n_rows", [0, 200])
def test_store_writers_fill_the_same_tables_as_row_by_row_inserts(tmp_path, monkeypatch,
                                                                  n_rows):  # fmt: skip
    with open_store(tmp_path / "bulk.duckdb") as s:
        _fill(s, n_rows)
    monkeypatch.setattr(store_module, "insert_rows", insert_rows_each)
    with open_store(tmp_path / "each.duckdb") as s:
        _fill(s, n_rows)
    con = duckdb.connect()
    con.execute(f"attach '{tmp_path / 'bulk.duckdb'}' as bulk (read_only)")
    con.execute(f"attach '{tmp_path / 'each.duckdb'}' as each (read_only)")
    tables = [r[0] for r in con.execute(
        "select table_name from information_schema.tables where table_catalog = 'bulk' "
        "and table_type = 'BASE TABLE' and table_name <> 'schema_migrations'").fetchall()]
    assert {"scores", "bundle_files", "benchmark_files", "release_bundles",
            "verifications"} <= set(tables)  # fmt: skip
    for table in tables:
        _same_tables(con, f"bulk.{table}", f"each.{table}")
    assert con.execute("select count(*) from bulk.scores").fetchone() == (n_rows,)
