"""Frozen releases: every published number of a release in one committed CSV file.

A cited number must never change silently. ``gmeter release NAME`` writes every score,
chart and score-run record of the release to ``submissions/releases/NAME.csv`` and records
the file's SHA-256 in ``releases.toml``; building a release reads that file and never
recomputes it. Recomputing an old release with newer code only produces *errata* (how many
values differ, shown on the release's page), never a replacement.

The file is plain CSV (RFC 4180, UTF-8, LF line ends), one row per record::

    kind,benchmark,bundle,content_hash,agent,metric,value,ci_low,ci_high,rank,verified,
    code_version,name,json

``kind`` is ``score`` (``json`` = the score's details), ``chart`` (``name`` = chart name,
``json`` = its data) or ``run`` (``content_hash`` = the benchmark's content hash, ``name`` =
the track, ``json`` = seed, options and notes). Numbers are written with :func:`repr`, so
reading gives back exactly the binary value that was published. Text cells go through
:func:`pipeline.untrusted.csv_cell` (a spreadsheet never evaluates a formula from a bundle;
the escape is undone on reading).
"""

from __future__ import annotations

import csv
import hashlib
import io
import json
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pipeline.errors import Problem
from pipeline.untrusted import csv_cell, csv_uncell

COLUMNS = ("kind", "benchmark", "bundle", "content_hash", "agent", "metric", "value",
           "ci_low", "ci_high", "rank", "verified", "code_version", "name", "json")
MAX_FROZEN_BYTES = 256 * 1024 * 1024
"""Largest frozen file read (a release of every board is a few megabytes)."""
FOLDER = "releases"
"""Where frozen files live, relative to the folder of ``releases.toml``."""


class FrozenError(Exception):
    """A frozen file that cannot be used: ``problem`` names the file and what to do."""

    def __init__(self, problem: Problem) -> None:
        super().__init__(problem.message)
        self.problem = problem


@dataclass(frozen=True)
class FrozenBenchmark:
    """The published numbers of one benchmark in a frozen release."""

    benchmark_hash: str
    track: str
    code_version: str
    seed: int
    options: dict[str, Any]
    notes: list[str]
    rows: list[dict[str, Any]] = field(default_factory=list)
    charts: dict[str, Any] = field(default_factory=dict)


def file_name(release: str) -> str:
    """The frozen file's path relative to ``releases.toml``'s folder (names are path-safe)."""
    return f"{FOLDER}/{release}.csv"


def sha256_of(data: bytes) -> str:
    """Hex SHA-256 of ``data``."""
    return hashlib.sha256(data).hexdigest()


def _num(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    return repr(float(value))


def _json_text(value: Any) -> str:
    return "" if value is None else json.dumps(value, sort_keys=True, separators=(",", ":"),
                                               allow_nan=True)


def render(rows: Mapping[str, Sequence[Mapping[str, Any]]]) -> bytes:
    """The frozen CSV of a release's stored rows (:meth:`Store.release_rows`)."""
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(COLUMNS)
    for r in rows["runs"]:
        extra = {"seed": r.get("seed"), "options": r.get("options") or {},
                 "notes": list(r.get("notes") or [])}
        w.writerow(["run", csv_cell(r["benchmark"]), "", csv_cell(r["benchmark_hash"] or ""),
                    "", "", "", "", "", "", "", csv_cell(r["code_version"]),
                    csv_cell(r["track"]), csv_cell(_json_text(extra))])
    for r in rows["charts"]:
        w.writerow(["chart", csv_cell(r["benchmark"]), "", "", "", "", "", "", "", "", "", "",
                    csv_cell(r["name"]), csv_cell(_json_text(r["data"]))])
    for r in rows["scores"]:
        w.writerow(["score", csv_cell(r["benchmark"]), csv_cell(r["bundle"]),
                    csv_cell(r["content_hash"]), csv_cell(r["agent"]), csv_cell(r["metric"]),
                    _num(r["value"]), _num(r["ci_low"]), _num(r["ci_high"]), _num(r["rank"]),
                    _num(bool(r["verified"])), csv_cell(r["code_version"]), "",
                    csv_cell(_json_text(r["details"]))])
    return buf.getvalue().encode("utf-8")


def _float(text: str) -> float | None:
    return None if text == "" else float(text)


def parse(data: bytes, where: str) -> dict[str, FrozenBenchmark]:
    """Benchmark id → its frozen numbers.

    Raises
    ------
    FrozenError
        When the file is not a frozen release file (naming the line).
    """
    def bad(line: int, what: str) -> FrozenError:
        return FrozenError(Problem(where, f"line {line}", what,
                                   "restore the file `gmeter release` wrote (git checkout)"))

    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise bad(0, "is not UTF-8 text") from exc
    # A chart's JSON is one cell and may be megabytes; the module's limit is process-wide.
    limit = csv.field_size_limit(max(len(data), 1024))
    try:
        return _parse(text, bad)
    finally:
        csv.field_size_limit(limit)


def _parse(text: str, bad: Callable[[int, str], FrozenError]) -> dict[str, FrozenBenchmark]:
    reader = csv.reader(io.StringIO(text, newline=""))
    out: dict[str, FrozenBenchmark] = {}
    pending: list[tuple[int, list[str]]] = []
    try:
        header = next(reader, None)
        if header is None or tuple(header) != COLUMNS:
            raise bad(1, "does not start with the frozen release header")
        for line, raw in enumerate(reader, start=2):
            if len(raw) != len(COLUMNS):
                raise bad(line, f"has {len(raw)} cells, not {len(COLUMNS)}")
            cells = dict(zip(COLUMNS, raw, strict=True))
            kind = cells["kind"]
            bench = csv_uncell(cells["benchmark"])
            if kind == "run":
                extra = json.loads(csv_uncell(cells["json"]) or "{}")
                if bench in out or not isinstance(extra, dict):
                    raise bad(line, f"repeats or garbles the run of {bench!r}")
                seed = extra.get("seed")
                out[bench] = FrozenBenchmark(
                    csv_uncell(cells["content_hash"]), csv_uncell(cells["name"]),
                    csv_uncell(cells["code_version"]),
                    int(seed) if isinstance(seed, int) else 0,
                    dict(extra.get("options") or {}),
                    [str(n) for n in extra.get("notes") or []])
            elif kind in ("chart", "score"):
                pending.append((line, raw))
            else:
                raise bad(line, f"has an unknown kind {kind!r}")
        for line, raw in pending:
            cells = dict(zip(COLUMNS, raw, strict=True))
            bench = csv_uncell(cells["benchmark"])
            if bench not in out:
                raise bad(line, f"belongs to {bench!r}, which has no run row")
            payload = json.loads(csv_uncell(cells["json"])) if cells["json"] else None
            if cells["kind"] == "chart":
                out[bench].charts[csv_uncell(cells["name"])] = payload
                continue
            out[bench].rows.append({
                "bundle": csv_uncell(cells["bundle"]),
                "content_hash": csv_uncell(cells["content_hash"]),
                "agent": csv_uncell(cells["agent"]), "metric": csv_uncell(cells["metric"]),
                "value": _float(cells["value"]), "ci_low": _float(cells["ci_low"]),
                "ci_high": _float(cells["ci_high"]),
                "rank": None if cells["rank"] == "" else int(cells["rank"]),
                "verified": cells["verified"] == "true", "details": payload,
            })
    except FrozenError:
        raise
    except (csv.Error, ValueError, TypeError, AttributeError) as exc:
        raise bad(reader.line_num, f"cannot be read ({type(exc).__name__}: {exc})") from exc
    return out


def read(path: Path, sha256: str, *, shown: str | None = None) -> dict[str, FrozenBenchmark]:
    """Read a frozen file after checking its SHA-256 against ``releases.toml``'s.

    Raises
    ------
    FrozenError
        When the file is missing, too large, a link, changed (tampered) or malformed; the
        problem names the file.
    """
    where = shown or str(path)
    if path.is_symlink() or (path.exists() and not path.is_file()):
        raise FrozenError(Problem(where, "-", "is not a regular file",
                                  "restore the file `gmeter release` wrote (git checkout)"))
    try:
        size = path.stat().st_size
        if size > MAX_FROZEN_BYTES:
            raise FrozenError(Problem(where, "-", f"is {size:,} bytes, over the limit",
                                      "restore the file `gmeter release` wrote"))
        data = path.read_bytes()
    except FileNotFoundError as exc:
        raise FrozenError(Problem(where, "-", "is missing",
                                  "restore it from git history; releases.toml names it")) from exc
    except OSError as exc:
        raise FrozenError(Problem(where, "-", f"cannot be read ({exc.strerror})",
                                  "check the file's permissions")) from exc
    got = sha256_of(data)
    if got != sha256:
        raise FrozenError(Problem(
            where, "sha256",
            f"has SHA-256 {got[:16]}…, releases.toml records {sha256[:16]}…: the frozen file "
            "was changed (tampered) and is refused",
            "restore the committed file (`git checkout -- FILE`); a published release is never "
            "edited — recomputing it only adds errata"))
    return parse(data, where)


def _same(a: Any, b: Any) -> bool:
    if a is None or b is None:
        return a is None and b is None
    if isinstance(a, float) or isinstance(b, float):
        fa, fb = float(a), float(b)
        if math.isnan(fa) or math.isnan(fb):
            return math.isnan(fa) and math.isnan(fb)
        return fa == fb or math.isclose(fa, fb, rel_tol=1e-12, abs_tol=1e-300)
    return bool(a == b)


def differences(frozen: Sequence[Mapping[str, Any]],
                fresh: Sequence[Mapping[str, Any]]) -> tuple[int, int, list[str]]:
    """(values compared, values that differ, a few examples) between two sets of score rows.

    A value is one of value, interval ends, rank and verified of one (bundle, agent, metric);
    a row present on one side only counts each of its values as differing.
    """
    fields = ("value", "ci_low", "ci_high", "rank", "verified")
    a = {(r["bundle"], r["agent"], r["metric"]): r for r in frozen}
    b = {(r["bundle"], r["agent"], r["metric"]): r for r in fresh}
    compared = differ = 0
    examples: list[str] = []
    for key in sorted(set(a) | set(b)):
        for f in fields:
            compared += 1
            x, y = a.get(key, {}).get(f), b.get(key, {}).get(f)
            if key not in a or key not in b or not _same(x, y):
                differ += 1
                if len(examples) < 5:
                    examples.append(f"{'/'.join(key)} {f}: {x!r} → {y!r}")
    return compared, differ, examples
