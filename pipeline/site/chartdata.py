"""Shaping chart data for :mod:`pipeline.site.charts`: JSON-safe records and labelled matrices.

Records from chart data (:func:`pipeline.tracks.presentation.as_records`) are read where the
tracks' drawers read them too.

Plain Python, no Altair: what is computed here is tested on its own.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from typing import Any

from pipeline.tracks.presentation import Records


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
