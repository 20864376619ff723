"""AIQ bundle files: ``samples.csv`` and the traces, their rows and their reading with problems.

A bundle (``submissions/<benchmark>/<bundle>/``) holds:

* ``aiq.toml``: flat settings (agent, method, samples, seed, episode_length, discount, the
  machine's settings, simplify, program_count, programs_sha256, traces) and a ``[result]``
  table (aiq, half_ci, ci_low, ci_high, legacy_half_ci, se_p, pairs, runs, failed_runs,
  stages) — read and checked by :mod:`pipeline.tracks.aiq.settings`;
* ``samples.csv``: one row per run — ``program_id, program, stratum, sign, seed, reward,
  steps, cycles, status, stage`` (``reward`` empty when ``status`` is ``overtime``);
* ``traces/actions.csv.gz`` (optional): ``program_id, sign, actions`` with one character per
  action (``0-9a-zA-Z``), gzip-compressed; with it the bundle can be replayed (verified).

``gmeter aiq run`` writes them (:mod:`pipeline.lab.aiq.bundle`).
"""

from __future__ import annotations

import csv
import io
import math
from dataclasses import dataclass
from typing import NamedTuple

from pipeline.errors import Problem
from pipeline.inputs import FileSet
from pipeline.tracks.aiq.programs import maybe_gunzip
from pipeline.tracks.filecheck import Column, check_csv

STATUS_OK = "ok"
STATUS_OVERTIME = "overtime"


@dataclass(frozen=True)
class SampleRow:
    """One run as logged in ``samples.csv`` (``reward`` is NaN for a failed run)."""

    program_id: int
    program: str
    stratum: int
    sign: int
    seed: int
    reward: float
    steps: int
    cycles: int
    status: str
    stage: int
    actions: str = ""
    weight: float = math.nan


SAMPLES = "samples.csv"
TRACES = "traces/actions.csv.gz"
TRACE_FILES = ("traces/actions.csv.gz", "traces/actions.csv")
SAMPLE_COLUMNS = (
    Column("program_id", "int", low=0),
    Column("program", "str"),
    Column("stratum", "int", low=1, high=20),
    Column("sign", "int", low=-1, high=1),
    Column("seed", "int", low=0, high=2**64 - 1),
    Column("reward", "float", low=-100, high=100, allow_empty=True),
    Column("steps", "int", low=0),
    Column("cycles", "int", low=0),
    Column("status", "str", choices=(STATUS_OK, STATUS_OVERTIME)),
    Column("stage", "int", low=0),
    # the run's share of the AIQ (sum of weight × reward = AIQ); optional: older bundles lack it
    Column("weight", "float", required=False, low=0, high=1, allow_empty=True),
)


# --------------------------------------------------------------------------- reading
class ParsedRows(NamedTuple):
    """Rows of ``samples.csv`` with their line numbers."""

    rows: list[SampleRow]
    lines: list[int]
    problems: list[Problem]


def read_rows(fs: FileSet) -> ParsedRows:
    """Parse and check ``samples.csv`` (columns, values, duplicates, status vs reward)."""
    parsed, problems = check_csv(fs, SAMPLES, SAMPLE_COLUMNS, unique=("program_id", "sign"))
    where = fs.where(SAMPLES)
    rows: list[SampleRow] = []
    lines: list[int] = []
    raw_lines = _row_lines(fs) if parsed else {}  # check_csv drops bad rows: find line numbers
    for d in parsed:
        key = (d["program_id"], d["sign"])
        lineno = raw_lines.get(key, 0)
        if d["sign"] not in (1, -1):
            problems.append(
                Problem(where, f"line {lineno}: sign", f"is {d['sign']}", "use 1 or -1")
            )
            continue
        ok = d["status"] == STATUS_OK
        if ok == (d["reward"] is None):
            problems.append(
                Problem(where, f"line {lineno}: reward",
                        "must be a number for status ok and empty for overtime",
                        "regenerate the bundle with `gmeter aiq run`")
            )  # fmt: skip
            continue
        rows.append(
            SampleRow(
                d["program_id"],
                d["program"],
                d["stratum"],
                d["sign"],
                d["seed"],
                float(d["reward"]) if ok else math.nan,
                d["steps"],
                d["cycles"],
                d["status"],
                d["stage"],
                weight=math.nan if d.get("weight") is None else float(d["weight"]),
            )
        )
        lines.append(lineno)
    return ParsedRows(rows, lines, problems)


def _row_lines(fs: FileSet) -> dict[tuple[int, int], int]:
    """Map (program_id, sign) → line number in samples.csv (first occurrence)."""
    out: dict[tuple[int, int], int] = {}
    reader = csv.reader(io.StringIO(fs.text(SAMPLES).lstrip("\ufeff"), newline=""))
    header = [h.strip() for h in next(reader, [])]
    try:
        ip, isg = header.index("program_id"), header.index("sign")
    except ValueError:
        return out
    for lineno, raw in enumerate(reader, start=2):
        try:
            out.setdefault((int(raw[ip]), int(raw[isg])), lineno)
        except (ValueError, IndexError):
            continue
    return out


def read_traces(fs: FileSet) -> tuple[str | None, dict[tuple[int, int], str], list[Problem]]:
    """Return (path or None, (program_id, sign) → actions, problems) of the traces file."""
    path = next((p for p in TRACE_FILES if fs.has(p)), None)
    if path is None:
        return None, {}, []
    where = fs.where(path)
    try:
        text = maybe_gunzip(path, fs.files[path])
    except ValueError as exc:
        return (
            path,
            {},
            [Problem(where, "-", str(exc), "regenerate with `gmeter aiq run --traces`")],
        )
    out: dict[tuple[int, int], str] = {}
    problems: list[Problem] = []
    reader = csv.reader(io.StringIO(text, newline=""))
    if [h.strip() for h in next(reader, [])] != ["program_id", "sign", "actions"]:
        return path, {}, [Problem(where, "header", "must be program_id,sign,actions", "")]
    for lineno, raw in enumerate(reader, start=2):
        if not raw:
            continue
        try:
            key = (int(raw[0]), int(raw[1]))
            out[key] = raw[2]
        except (ValueError, IndexError):
            problems.append(Problem(where, f"line {lineno}", "is not program_id,sign,actions", ""))
            if len(problems) > 20:
                break
    return path, out, problems
