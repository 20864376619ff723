"""Checkers of a bundle's data files: CSV columns with typed rules, and JSON well-formedness.

Tracks declare their CSV columns (:class:`Column`) and call :func:`check_csv`; every problem
names the file, the line and the column. JSON files are checked by :func:`iter_json_problems`.
Both work on the in-memory :class:`~pipeline.inputs.FileSet` and never raise on bad input.
"""

from __future__ import annotations

import csv
import io
import json
import math
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from pipeline.errors import Problem
from pipeline.inputs import FileSet
from pipeline.limits import MAX_CELL_INT, MAX_CSV_COLUMNS, bad_text, cap_per_file, loads_bounded

CONTROL_FIX = "remove the control or invisible character (write plain text)"


@dataclass(frozen=True)
class Column:
    """One CSV column's rule.

    ``kind`` is ``str``, ``int``, ``float`` (finite), ``float_or_inf``, ``bool`` (0/1/true/false)
    or ``date`` (YYYY-MM-DD). ``low``/``high`` bound numbers inclusively; ``choices`` bounds
    strings; ``required`` columns must be present, ``allow_empty`` lets a cell be blank;
    a cell equal to one of ``missing`` (e.g. ``NA``) is an explicit "no value" (parsed as None).
    """

    name: str
    kind: str = "str"
    required: bool = True
    low: float | None = None
    high: float | None = None
    choices: tuple[str, ...] | None = None
    allow_empty: bool = False
    missing: tuple[str, ...] = ()


def _parse_cell(col: Column, raw: str) -> tuple[Any, str]:
    """Parse one cell; return (value, error message or '')."""
    s = raw.strip()
    if s == "":
        return (None, "" if col.allow_empty else "is empty")
    if s in col.missing:
        return (None, "")
    bad = bad_text(s)
    if bad:
        return (None, bad)
    if col.kind == "str":
        if col.choices is not None and s not in col.choices:
            return (None, f"is {s!r}, not one of {', '.join(col.choices)}")
        return (s, "")
    if col.kind == "int":
        try:
            v: Any = int(s) if len(s) <= 32 else None
        except ValueError:
            v = None
        if v is None:
            return (None, f"is {s[:40]!r}, not a whole number")
        if abs(v) > MAX_CELL_INT:
            return (None, f"is {v:.3e}, beyond the largest accepted integer 2^64 - 1")
    elif col.kind in ("float", "float_or_inf"):
        if len(s) > 64:
            return (None, f"is {s[:20]!r}…, not a number")
        try:
            v = float(s)
        except ValueError:
            return (None, f"is {s!r}, not a number")
        if math.isnan(v):
            return (None, "is NaN")
        if math.isinf(v) and col.kind == "float":
            return (None, "is infinite")
    elif col.kind == "bool":
        low = s.lower()
        if low not in ("0", "1", "true", "false"):
            return (None, f"is {s!r}, not 0/1/true/false")
        return (low in ("1", "true"), "")
    elif col.kind == "date":
        import datetime as _dt

        try:
            v = _dt.date.fromisoformat(s)
        except ValueError:
            return (None, f"is {s!r}, not a date YYYY-MM-DD")
        return (v, "")
    else:  # pragma: no cover - programming error
        raise ValueError(col.kind)
    if col.low is not None and v < col.low:
        return (None, f"is {v}, below the minimum {col.low}")
    if col.high is not None and v > col.high:
        return (None, f"is {v}, above the maximum {col.high}")
    return (v, "")


def check_csv(
    fs: FileSet,
    path: str,
    columns: Sequence[Column],
    *,
    unique: Sequence[str] = (),
    allow_extra: bool = False,
    max_problems: int = 20,
) -> tuple[list[dict[str, Any]], list[Problem]]:
    """Check a CSV file against column rules; return the parsed rows and every problem.

    Parameters
    ----------
    fs : FileSet
        Where the file is.
    path : str
        The CSV's relative path.
    columns : sequence of Column
        The rules. Column order in the file does not matter.
    unique : sequence of str
        Columns whose combined values must not repeat (e.g. ``("agent", "item")``).
    allow_extra : bool
        Whether columns not in ``columns`` are allowed.
    max_problems : int
        Cell-level problems reported per file before summarising the rest.

    Returns
    -------
    rows, problems : list of dict, list of Problem
        ``rows`` holds parsed values (only rows without problems).
    """
    where = fs.where(path)
    problems: list[Problem] = []
    if not fs.has(path):
        return [], [Problem(where, "-", "file is missing", "add it (see docs/submitting.md)")]
    try:
        text = fs.text(path)
    except UnicodeDecodeError:
        return [], [Problem(where, "-", "is not UTF-8 text", "save the file as UTF-8")]
    reader = csv.reader(io.StringIO(text.lstrip("\ufeff"), newline=""))
    try:
        header = next(reader)
    except StopIteration:
        return [], [Problem(where, "header", "file is empty", "add a header line and rows")]
    except csv.Error as exc:
        return [], [Problem(where, "header", f"is not valid CSV ({exc})", "fix the quoting")]
    header = [h.strip() for h in header]
    if len(header) > MAX_CSV_COLUMNS:
        return [], [Problem(where, "header", f"has {len(header):,} columns, more than "
                            f"{MAX_CSV_COLUMNS:,}", "use the documented columns only")]
    by_name = {c.name: c for c in columns}
    seen: set[str] = set()
    for h in header:
        if bad_text(h):
            problems.append(Problem(where, "header", f"a column name {bad_text(h)}",
                                    CONTROL_FIX))
            continue
        if h in seen:
            problems.append(Problem(where, f"header: {h}", "column appears twice", "keep one"))
        seen.add(h)
        if h not in by_name and not allow_extra:
            problems.append(
                Problem(
                    where,
                    f"header: {h}",
                    "unknown column",
                    f"use only the columns {', '.join(c.name for c in columns)}",
                )
            )
    for c in columns:
        if c.required and c.name not in header:
            problems.append(
                Problem(where, f"header: {c.name}", "required column is missing", "add it")
            )
    if problems:
        return [], cap_per_file(problems, max_problems)
    rows: list[dict[str, Any]] = []
    keys: dict[tuple[Any, ...], int] = {}
    cell_problems = 0
    try:
        for lineno, raw in enumerate(reader, start=2):
            if not raw or all(not x.strip() for x in raw):
                continue
            if len(raw) != len(header):
                cell_problems += 1
                if cell_problems <= max_problems:
                    problems.append(
                        Problem(
                            where,
                            f"line {lineno}",
                            f"has {len(raw)} cells, the header has {len(header)}",
                            "give every row one cell per column",
                        )
                    )
                continue
            row: dict[str, Any] = {}
            bad = False
            for name, cell in zip(header, raw, strict=True):
                col = by_name.get(name)
                if col is None:
                    err = bad_text(cell)
                    value: Any = cell
                else:
                    value, err = _parse_cell(col, cell)
                if err:
                    bad = True
                    cell_problems += 1
                    if cell_problems <= max_problems:
                        problems.append(
                            Problem(
                                where,
                                f"line {lineno}: {name}",
                                err,
                                CONTROL_FIX if "control or invisible" in err
                                else "correct the value (numbers must be finite)",
                            )
                        )
                row[name] = value
            if bad:
                continue
            if unique:
                key = tuple(row.get(u) for u in unique)
                if key in keys:
                    cell_problems += 1
                    if cell_problems <= max_problems:
                        problems.append(
                            Problem(
                                where,
                                f"line {lineno}: {','.join(unique)}",
                                f"duplicate {key!r} (first on line {keys[key]})",
                                "keep one row per key",
                            )
                        )
                    continue
                keys[key] = lineno
            rows.append(row)
    except csv.Error as exc:
        problems.append(Problem(where, "-", f"is not valid CSV ({exc})", "fix the quoting"))
    if cell_problems > max_problems:
        problems.append(
            Problem(where, "-", f"{cell_problems - max_problems} more problems not shown", "")
        )
    if not rows and not problems:
        problems.append(Problem(where, "-", "has a header but no rows", "add the data rows"))
    return rows, problems


def iter_json_problems(fs: FileSet, paths: Sequence[str]) -> Iterator[Problem]:
    """Yield a problem for each of ``paths`` that is not strict UTF-8 JSON.

    ``.jsonl`` files are checked line by line. NaN and Infinity are refused. The generic
    validation runs this over every JSON file and tracks may run it again on their own
    files: the problems are equal, so the de-duplicated report lists each once.
    """
    for p in paths:
        try:
            text = fs.files[p].decode("utf-8")
        except UnicodeDecodeError:
            yield Problem(fs.where(p), "encoding", "is not UTF-8 text", "save the file as UTF-8")
            continue
        lines = p.lower().endswith(".jsonl")
        for i, doc in enumerate(text.splitlines() if lines else [text], start=1):
            if lines and not doc.strip():
                continue
            try:
                loads_bounded(doc)
            except json.JSONDecodeError as exc:
                yield Problem(fs.where(p), f"line {i if lines else exc.lineno}",
                              f"JSON does not parse ({exc.msg}, column {exc.colno})",
                              "fix the JSON syntax")
                break
            except ValueError as exc:
                yield Problem(fs.where(p), f"line {i}", str(exc),
                              "write numbers as finite JSON numbers")
                break
