"""AIQ bundle files: writing what ``gmeter aiq run`` produced, reading it back with problems.

A bundle (``submissions/<benchmark>/<bundle>/``) holds:

* ``aiq.toml``: flat settings (agent, method, samples, seed, episode_length, discount, the
  machine's settings, simplify, program_count, programs_sha256, traces) and a ``[result]``
  table (aiq, half_ci, ci_low, ci_high, legacy_half_ci, se_p, pairs, runs, failed_runs,
  stages);
* ``samples.csv``: one row per run — ``program_id, program, stratum, sign, seed, reward,
  steps, cycles, status, stage`` (``reward`` empty when ``status`` is ``overtime``);
* ``traces/actions.csv.gz`` (optional): ``program_id, sign, actions`` with one character per
  action (``0-9a-zA-Z``), gzip-compressed; with it the bundle can be replayed (verified).
"""

from __future__ import annotations

import csv
import io
import math
import tomllib
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, NamedTuple

from pipeline.errors import Problem
from pipeline.toml_writer import toml_value
from pipeline.tracks.aiq.engine import STATUS_OK, STATUS_OVERTIME, AIQRun, SampleRow
from pipeline.tracks.aiq.limits import (
    MAX_EPISODE_LENGTH,
    MAX_INPUT_TAPE,
    MAX_PROGRAMS,
    MAX_SAMPLES,
    MAX_SEED,
    MAX_STEPS,
    MAX_WORK_TAPE,
)
from pipeline.tracks.aiq.programs import gzip_bytes, maybe_gunzip
from pipeline.tracks.base import FileSet
from pipeline.tracks.filecheck import Column, check_csv

LOG = "aiq.toml"
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
)
MACHINE_KEYS = (
    "num_symbols", "obs_cells", "reverse_output", "work_tape_len", "input_tape_len", "max_steps",
)  # fmt: skip

#: ``aiq.toml`` field → (kind, low, high); kinds ``int``, ``bool``, ``float`` (finite), ``str``.
LOG_DOMAINS: dict[str, tuple[str, float, float]] = {
    "samples": ("int", 2, MAX_SAMPLES),
    "seed": ("int", 0, MAX_SEED),
    "episode_length": ("int", 1, MAX_EPISODE_LENGTH),
    "discount": ("float", 0.0, 1.0),
    "num_symbols": ("int", 2, 127),
    "obs_cells": ("int", 0, 8),
    "reverse_output": ("bool", 0, 1),
    "work_tape_len": ("int", 1, MAX_WORK_TAPE),
    "input_tape_len": ("int", 1, MAX_INPUT_TAPE),
    "max_steps": ("int", 1, MAX_STEPS),
    "program_count": ("int", 1, MAX_PROGRAMS),
    "preset_episode_length": ("int", 1, MAX_EPISODE_LENGTH),
    "agent": ("str", 1, 2000),
    "agent_kind": ("str", 1, 40),
    "method": ("str", 1, 40),
    "simplify": ("str", 1, 40),
    "programs_sha256": ("str", 0, 64),
    "traces": ("str", 0, 200),
    "gmeter_version": ("str", 0, 40),
}
#: ``[result]`` fields (informational; the score is recomputed): finite or NaN, bounded.
RESULT_DOMAINS: dict[str, tuple[str, float, float]] = {
    "aiq": ("float", -100.0, 100.0),
    "half_ci": ("float", 0.0, 1e6),
    "ci_low": ("float", -1e6, 1e6),
    "ci_high": ("float", -1e6, 1e6),
    "legacy_half_ci": ("float", 0.0, 1e6),
    "se_p": ("float", 0.0, 1e6),
    "pairs": ("int", 0, MAX_SAMPLES),
    "runs": ("int", 0, MAX_SAMPLES),
    "failed_runs": ("int", 0, MAX_SAMPLES),
}


def _domain_problem(value: Any, kind: str, low: float, high: float, nan_ok: bool) -> str:
    """Return what is wrong with ``value`` for its domain, or ``""``."""
    if kind == "bool":
        return "" if isinstance(value, bool) else f"must be true or false, not {value!r}"
    if kind == "str":
        if not isinstance(value, str):
            return f"must be a string, not {type(value).__name__}"
        return "" if low <= len(value) <= high else f"must have {low:g}..{high:g} characters"
    if kind == "int":
        if isinstance(value, bool) or not isinstance(value, int):
            return f"must be a whole number, not {value!r}"
        return "" if low <= value <= high else f"is {value}, outside {int(low)}..{int(high)}"
    if isinstance(value, bool) or not isinstance(value, int | float):
        return f"must be a number, not {value!r}"
    if math.isnan(value) and nan_ok:
        return ""
    if not math.isfinite(value):
        return f"must be a finite number, not {value!r}"
    if kind == "float" and low == 0.0 and high == 1.0:  # the discount: 0 < d <= 1
        return "" if 0.0 < value <= 1.0 else f"is {value!r}, outside (0, 1]"
    return "" if low <= value <= high else f"is {value!r}, outside {low:g}..{high:g}"


def check_log(log: Mapping[str, Any], where: str) -> list[Problem]:
    """Every ``aiq.toml`` field with a domain (:data:`LOG_DOMAINS`) that is outside it.

    Unknown top-level keys are reported too: the log is written by ``gmeter aiq run`` only.
    """
    fix = "regenerate the bundle with `gmeter aiq run`; never edit aiq.toml by hand"
    problems: list[Problem] = []
    for key, value in log.items():
        if key == "result":
            if not isinstance(value, dict):
                problems.append(Problem(where, "result", "must be a table", fix))
                continue
            for rkey, rvalue in value.items():
                if rkey == "stages":
                    ok = (
                        isinstance(rvalue, list)
                        and len(rvalue) <= 64
                        and all(
                            isinstance(x, int) and not isinstance(x, bool) and 0 <= x <= MAX_SAMPLES
                            for x in rvalue
                        )
                    )
                    if not ok:
                        msg = f"must be at most 64 whole numbers in 0..{MAX_SAMPLES}"
                        problems.append(Problem(where, "result.stages", msg, fix))
                    continue
                dom = RESULT_DOMAINS.get(rkey)
                msg = "is not a known field" if dom is None else _domain_problem(rvalue, *dom, True)
                if msg:
                    problems.append(Problem(where, f"result.{rkey}", msg, fix))
            continue
        dom = LOG_DOMAINS.get(key)
        msg = "is not a known field" if dom is None else _domain_problem(value, *dom, False)
        if msg:
            problems.append(Problem(where, key, msg, fix))
        if len(problems) >= 20:
            break
    return problems


def log_toml(
    run: AIQRun, *, program_count: int, programs_sha256: str, simplify: str, traces: str
) -> str:
    """Return the text of ``aiq.toml`` for a finished run."""
    from pipeline import __version__

    m = run.settings.machine
    e = run.estimate
    top: dict[str, Any] = {
        "gmeter_version": __version__,
        "agent": run.agent.text,
        "agent_kind": run.agent.kind,
        "method": run.method,
        "samples": run.budget,
        "seed": run.seed,
        "episode_length": run.settings.episode_length,
        "discount": run.settings.discount,
        **{k: getattr(m, k) for k in MACHINE_KEYS},
        "simplify": simplify,
        "program_count": program_count,
        "programs_sha256": programs_sha256,
        "traces": traces,
    }
    if run.agent.preset is not None:
        top["preset_episode_length"] = run.agent.preset
    result = {
        "aiq": e.value,
        "half_ci": e.half_ci,
        "ci_low": e.ci_low,
        "ci_high": e.ci_high,
        "legacy_half_ci": e.legacy_half_ci,
        "se_p": e.se_p,
        "pairs": e.pairs,
        "runs": len(run.rows),
        "failed_runs": sum(r.status != STATUS_OK for r in run.rows),
        "stages": run.stages,
    }
    lines = ["# AIQ run written by `gmeter aiq run`; do not edit (gmeter aiq verify replays it)"]
    lines += [f"{k} = {toml_value(v)}" for k, v in top.items()]
    lines += ["", "[result]"] + [f"{k} = {toml_value(v)}" for k, v in result.items()]
    return "\n".join(lines) + "\n"


def samples_csv(rows: Sequence[SampleRow]) -> str:
    """Return the text of ``samples.csv`` (rewards in full precision)."""
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow([c.name for c in SAMPLE_COLUMNS])
    for r in rows:
        reward = "" if r.status != STATUS_OK else repr(float(r.reward))
        w.writerow([r.program_id, r.program, r.stratum, r.sign, r.seed, reward, r.steps,
                    r.cycles, r.status, r.stage])  # fmt: skip
    return buf.getvalue()


def traces_csv(rows: Sequence[SampleRow]) -> str:
    """Return the text of the traces file (before compression)."""
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(["program_id", "sign", "actions"])
    for r in rows:
        w.writerow([r.program_id, r.sign, r.actions])
    return buf.getvalue()


def submission_template(system: str, description: str) -> str:
    """Return a ``submission.toml`` to complete (written only when the bundle has none)."""
    import datetime as dt

    today = dt.date.today().isoformat()
    return (
        f"submitted = {today}\n"
        'contact = "TODO: your name <you@example.org>"\n'
        'licence = "CC-BY-4.0"\n'
        f"description = {toml_value(description)}\n\n"
        "[system]\n"
        f"name = {toml_value(system)}\n"
    )


def write_bundle(
    run: AIQRun,
    out: Path,
    *,
    program_count: int,
    programs_sha256: str,
    simplify: str,
    traces: bool,
) -> list[Path]:
    """Write ``aiq.toml``, ``samples.csv`` (+ traces; + a submission.toml template if missing)."""
    out.mkdir(parents=True, exist_ok=True)
    written: list[Path] = []
    files: dict[str, bytes] = {
        LOG: log_toml(
            run, program_count=program_count, programs_sha256=programs_sha256,
            simplify=simplify, traces=TRACES if traces else "",
        ).encode(),
        SAMPLES: samples_csv(run.rows).encode(),
    }  # fmt: skip
    if traces:
        files[TRACES] = gzip_bytes(traces_csv(run.rows))
    elif (out / TRACES).exists():
        (out / TRACES).unlink()
    if not (out / "submission.toml").exists():
        files["submission.toml"] = submission_template(
            run.agent.text,
            f"AIQ of {run.agent.text} at episode length {run.settings.episode_length}, "
            f"{run.budget} runs ({run.method}), seed {run.seed}.",
        ).encode()
    for rel, data in files.items():
        path = out / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
        written.append(path)
    return written


# --------------------------------------------------------------------------- reading
class ParsedRows(NamedTuple):
    """Rows of ``samples.csv`` with their line numbers."""

    rows: list[SampleRow]
    lines: list[int]
    problems: list[Problem]


def read_log(fs: FileSet) -> tuple[dict[str, Any], list[Problem]]:
    """Parse ``aiq.toml``; problems if missing or not TOML."""
    where = fs.where(LOG)
    if not fs.has(LOG):
        return {}, [Problem(where, "-", "file is missing", "write it with `gmeter aiq run`")]
    try:
        return tomllib.loads(fs.text(LOG)), []
    except (UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        return {}, [Problem(where, "-", f"is not valid TOML ({exc})", "regenerate the bundle")]


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


def log_settings(log: Mapping[str, Any]) -> dict[str, Any]:
    """Return the machine/test settings of a log, for comparison with the benchmark's."""
    keys = (*MACHINE_KEYS, "episode_length", "discount", "simplify", "method", "program_count")
    return {k: log[k] for k in keys if k in log}
