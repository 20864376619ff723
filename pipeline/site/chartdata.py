"""Shaping chart data for :mod:`pipeline.site.charts`: JSON-safe records and labelled matrices.

Plain Python, no Altair: what is computed here is tested on its own.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from typing import Any

Records = list[dict[str, Any]]


def humanise(name: str) -> str:
    """``domain_distance`` → ``Domain distance``."""
    text = re.sub(r"[_\-]+", " ", str(name)).strip()
    return text[:1].upper() + text[1:] if text else "Chart"


def _num(v: Any) -> Any:
    if isinstance(v, bool) or not isinstance(v, int | float):
        return v
    f = float(v)
    if not math.isfinite(f):
        return None
    if f == 0:
        return 0.0
    return float(f"{f:.6g}")


def clean(records: Sequence[Mapping[str, Any]]) -> Records:
    """Make records JSON-safe: NaN/inf → ``null`` (Vega cannot plot them), 6 significant digits."""
    return [{str(k): _num(v) for k, v in sorted(r.items())} for r in records]


def _is_num(v: Any) -> bool:
    return isinstance(v, int | float) and not isinstance(v, bool)


def as_records(data: Any) -> Records | None:
    """Return records from chart data, or ``None``.

    Accepted: a list of dicts, ``{"records"|"points"|"values"|"data"|"rows": [...]}``, a
    ``{name: number}`` mapping or a ``{series: [numbers]}`` mapping.
    """
    if isinstance(data, Mapping):
        for key in ("records", "points", "values", "data", "rows"):
            inner = data.get(key)
            if isinstance(inner, list) and inner and all(isinstance(r, Mapping) for r in inner):
                return [dict(r) for r in inner]
        items = sorted(data.items(), key=lambda kv: str(kv[0]))
        if items and all(_is_num(v) for _, v in items):
            return [{"name": str(k), "value": v} for k, v in items]
        if items and all(
            isinstance(v, list) and v and all(_is_num(x) for x in v) for _, v in items
        ):
            return [
                {"series": str(k), "index": i, "value": x}
                for k, v in items
                for i, x in enumerate(v)
            ]
        return None
    if isinstance(data, list) and data:
        if all(isinstance(r, Mapping) for r in data):
            return [dict(r) for r in data]
        if all(_is_num(x) for x in data):
            return [{"index": i, "value": x} for i, x in enumerate(data)]
    return None


def as_matrix(data: Any) -> tuple[tuple[list[str], list[str]], list[list[float | None]]] | None:
    """Return a labelled matrix from chart data, or ``None``.

    Accepted: ``{"labels": L, "matrix"|"values": M}`` (square), ``{"rows": R, "cols"|
    "columns": C, "matrix"|"values": M}``, or ``{row: {col: number}}``.
    """
    if not isinstance(data, Mapping):
        return None
    m = data.get("matrix", data.get("values"))
    if isinstance(m, list) and m and all(isinstance(r, list) for r in m):
        rows = data.get("rows", data.get("labels"))
        cols = data.get("cols", data.get("columns", data.get("labels")))
        if (
            isinstance(rows, list)
            and isinstance(cols, list)
            and len(rows) == len(m)
            and all(len(r) == len(cols) for r in m)
        ):
            vals = [[float(v) if _is_num(v) else None for v in r] for r in m]
            return ([str(x) for x in rows], [str(x) for x in cols]), vals
        return None
    if data and all(isinstance(v, Mapping) and v for v in data.values()):
        row_keys = [str(k) for k in data]
        col_keys: list[str] = []
        for v in data.values():
            for c in v:
                if str(c) not in col_keys:
                    col_keys.append(str(c))
        if not all(_is_num(x) for v in data.values() for x in v.values()):
            return None
        by = {str(k): {str(c): float(x) for c, x in v.items()} for k, v in data.items()}
        vals2: list[list[float | None]] = [[by[r].get(c) for c in col_keys] for r in row_keys]
        return (row_keys, col_keys), vals2
    return None
