"""Bulk inserts: Python rows become NumPy columns that DuckDB reads in one statement.

``executemany`` sends a parameter set per row (about a millisecond each on a file store);
:func:`insert_rows` builds one typed NumPy array per column, registers the arrays as a
relation and runs a single ``insert ... select``. The table ends up with exactly the rows
``executemany`` would have written (``tests/test_store_bulk.py`` compares both on hostile
values): NULL stays NULL, and NaN stays NaN, which DuckDB's NumPy scan would otherwise read as
NULL, so every nullable column travels with a mask and doubles with a NaN flag.
"""

from __future__ import annotations

import datetime as dt
import itertools
import math
from collections.abc import Sequence
from typing import Any

import numpy as np

#: Column types :func:`insert_rows` knows (the DuckDB type names used in the schema).
TYPES = ("varchar", "json", "blob", "double", "integer", "bigint", "boolean", "timestamp", "date")
_names = itertools.count()


def insert_rows(
    con: Any,
    table: str,
    columns: Sequence[tuple[str, str]],
    rows: Sequence[Sequence[Any]],
) -> int:
    """Insert ``rows`` into ``table`` in one statement; return how many.

    Parameters
    ----------
    con : duckdb.DuckDBPyConnection
        The store's connection (inside the caller's transaction, if any); typed ``Any`` here
        because duckdb is imported by the store's face module only.
    table : str
        A table of the schema (never user text).
    columns : sequence of (name, type)
        Every column of ``table`` in order, with its type from :data:`TYPES`.
    rows : sequence of sequences
        One value per column; ``None`` is NULL.
    """
    if not rows:
        return 0
    data: dict[str, np.ndarray] = {}
    exprs: list[str] = []
    for i, (name, kind) in enumerate(columns):
        values = [row[i] for row in rows]
        expr = _column(data, f"c{i}", kind, values)
        exprs.append(f'{expr} as "{name}"')
    view = f"gmeter_bulk_{next(_names)}"
    finish = getattr(con, "complete", None)
    if finish is not None:  # DuckDB >= 2 registers only once the last execute() is read out
        finish()
    con.register(view, data)
    try:
        con.execute(f"insert into {table} select {', '.join(exprs)} from {view}")
    finally:
        con.unregister(view)
    return len(rows)


def insert_rows_each(
    con: Any,
    table: str,
    columns: Sequence[tuple[str, str]],
    rows: Sequence[Sequence[Any]],
) -> int:
    """The row-by-row reference of :func:`insert_rows` (``executemany``; tests and bench)."""
    if rows:
        marks = ",".join("?" * len(columns))
        con.executemany(f"insert into {table} values ({marks})", [list(r) for r in rows])
    return len(rows)


def _column(data: dict[str, np.ndarray], col: str, kind: str, values: list[Any]) -> str:
    """Add the arrays of one column to ``data``; return the SQL expression that reads them."""
    nulls = np.fromiter((v is None for v in values), bool, len(values))
    data[f"{col}_null"] = nulls
    if kind in ("varchar", "json", "blob"):
        empty: Any = b"" if kind == "blob" else ""
        arr = np.empty(len(values), dtype=object)
        arr[:] = [empty if v is None else (v if isinstance(v, str | bytes) else _text(v))
                  for v in values]  # fmt: skip
        data[col] = arr
    elif kind == "double":
        floats = [0.0 if v is None else float(v) for v in values]
        nan = np.fromiter((math.isnan(f) for f in floats), bool, len(floats))
        arr = np.asarray(floats, np.float64)
        arr[nan] = 0.0  # NumPy NaN would be read as NULL: flag it and rebuild it in SQL
        data[col] = arr
        data[f"{col}_nan"] = nan
        return (f"case when {col}_null then null when {col}_nan then 'nan'::double "
                f"else {col} end")  # fmt: skip
    elif kind in ("integer", "bigint"):
        data[col] = np.asarray([0 if v is None else int(v) for v in values], np.int64)
    elif kind == "boolean":
        data[col] = np.asarray([bool(v) for v in values], bool)
    elif kind == "timestamp":
        data[col] = np.asarray([np.datetime64(v if v is not None else 0, "us")
                                for v in values], "datetime64[us]")  # fmt: skip
    elif kind == "date":
        # DuckDB scans day-resolution NumPy dates poorly; microseconds at midnight cast exactly.
        data[col] = np.asarray([np.datetime64(_day(v), "us") for v in values], "datetime64[us]")
    else:
        raise ValueError(f"unknown column type {kind!r}; known: {', '.join(TYPES)}")
    return f"case when {col}_null then null else cast({col} as {kind}) end"


def _day(value: Any) -> Any:
    """A date (or datetime) as a NumPy day; NULL dates are masked, so any placeholder does."""
    if value is None:
        return 0
    if isinstance(value, dt.datetime):
        return value.date()
    return value


def _text(value: Any) -> str:
    """A non-string bound to a VARCHAR column, spelled as DuckDB spells a bound parameter."""
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)
