"""Small tolerant readers shared by the integrity checks.

Integrity checks run after validation, but a bundle with validation errors is still looked at
(a submitter should see every finding at once), so these readers never raise: what they
cannot read they skip.
"""

from __future__ import annotations

import csv
import datetime as dt
import hashlib
import io
import json
import math
import re
from collections.abc import Mapping
from typing import Any

from pipeline.tracks.base import BundleInput, FileSet

MANIFEST = "submission.toml"


def sha(data: bytes) -> str:
    """Return the SHA-256 hex digest."""
    return hashlib.sha256(data).hexdigest()


def data_files(bundle: BundleInput) -> dict[str, bytes]:
    """Return the bundle's files without its manifest (the results proper)."""
    return {p: d for p, d in bundle.files.files.items() if p != MANIFEST}


def read_csv(fs: FileSet, path: str) -> tuple[list[str], list[dict[str, str]]]:
    """Return (header, rows) of a CSV file; empty when it is missing or unreadable."""
    if path not in fs.files:
        return [], []
    try:
        text = fs.files[path].decode("utf-8").lstrip("\ufeff")
        reader = csv.reader(io.StringIO(text, newline=""))
        header = [h.strip() for h in next(reader)]
        rows = []
        for raw in reader:
            if len(raw) != len(header):
                continue
            rows.append({h: c.strip() for h, c in zip(header, raw, strict=True)})
        return header, rows
    except (UnicodeDecodeError, StopIteration, csv.Error):
        return [], []


def to_float(s: Any) -> float | None:
    """Return a finite float, or ``None``."""
    try:
        v = float(s)
    except (TypeError, ValueError):
        return None
    return v if math.isfinite(v) else None


def to_date(s: Any) -> dt.date | None:
    """Return a date from ``YYYY-MM-DD`` (or a date object), or ``None``."""
    if isinstance(s, dt.date) and not isinstance(s, dt.datetime):
        return s
    if isinstance(s, dt.datetime):
        return s.date()
    try:
        return dt.date.fromisoformat(str(s).strip()[:10])
    except ValueError:
        return None


def read_json(fs: FileSet, path: str) -> Any:
    """Return the parsed JSON, or ``None``."""
    try:
        return json.loads(fs.files[path].decode("utf-8"))
    except (KeyError, UnicodeDecodeError, ValueError):
        return None


def read_toml(fs: FileSet, path: str) -> dict[str, Any] | None:
    """Return the parsed TOML, or ``None``."""
    import tomllib

    try:
        return tomllib.loads(fs.files[path].decode("utf-8"))
    except (KeyError, UnicodeDecodeError, tomllib.TOMLDecodeError):
        return None


def flat(mapping: Mapping[str, Any], prefix: str = "") -> dict[str, Any]:
    """Flatten ``{"a": {"b": 1}}`` to ``{"a.b": 1}`` (lists are kept as values)."""
    out: dict[str, Any] = {}
    for k, v in mapping.items():
        key = f"{prefix}{k}"
        if isinstance(v, Mapping):
            out.update(flat(v, key + "."))
        else:
            out[key] = v
    return out


def plural(n: int, word: str) -> str:
    """Return ``1 file`` / ``3 files``."""
    return f"{n} {word}{'' if n == 1 else 's'}"


def listing(items: list[str], limit: int = 5) -> str:
    """Join items as ``a, b, c`` or ``a, b, c, d, e and 7 more``."""
    items = list(items)
    if len(items) <= limit:
        return ", ".join(items)
    return ", ".join(items[:limit]) + f" and {len(items) - limit} more"


_EMAIL = re.compile(r"[A-Za-z0-9._%+-]+@[A-Za-z0-9.-]+\.[A-Za-z]{2,}")


def same_submitter(a: BundleInput, b: BundleInput) -> bool:
    """Whether two bundles name the same contact (an e-mail in common, or the same text).

    Reusing one's own results is reported as a warning, copying someone else's as an error.
    """
    ca, cb = str(a.manifest.get("contact", "")), str(b.manifest.get("contact", ""))
    ea = {e.lower() for e in _EMAIL.findall(ca)}
    eb = {e.lower() for e in _EMAIL.findall(cb)}
    if ea and eb:
        return bool(ea & eb)
    return bool(ca.strip()) and ca.strip().casefold() == cb.strip().casefold()
