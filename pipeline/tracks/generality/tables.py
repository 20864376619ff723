"""Per-agent generality tables: the use case behind ``gmeter generality``.

Two entry points, both returning one row per agent with the columns of :data:`COLUMNS`:

* :func:`adhoc_table` — any response matrix on disk (wide: ``agent`` + one column per item;
  long: ``agent,item,value``) with the difficulty given (``--difficulty``) or derived by a
  transformation (``--transform``), all settings as options;
* :func:`benchmark_table` — a benchmark folder recomputed with exactly its declared settings
  (the numbers ``make site`` stores).
"""

from __future__ import annotations

import csv
import io
import json
import math
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from pipeline.errors import GmeterError, UsageError, ValidationFailed
from pipeline.tracks.base import BenchmarkInput, BundleInput, FileSet
from pipeline.tracks.generality.track import (
    Analysis,
    BenchmarkSettings,
    BundleData,
    ItemTable,
    Population,
    analyse,
    assemble,
    read_bundle,
    read_items,
    settings_of,
)

COLUMNS = (
    "agent",
    "capability",
    "expected_difficulty",
    "spread",
    "generality",
    "normalised_generality",
    "abstruse",
)


def table_rows(an: Analysis) -> list[dict[str, Any]]:
    """One dict per scored agent with the :data:`COLUMNS` (floats at full precision)."""
    res = an.result
    agents = [a for a, k in zip(an.population.agents, an.kept, strict=True) if k]
    return [
        {
            "agent": a,
            "capability": float(res.indicators.capability[j]),
            "expected_difficulty": float(res.indicators.expected_difficulty[j]),
            "spread": float(res.indicators.spread[j]),
            "generality": float(res.indicators.generality[j]),
            "normalised_generality": float(res.normalised.gamma[j]),
            "abstruse": bool(res.normalised.abstruse[j]),
        }
        for j, a in enumerate(agents)
    ]


def benchmark_table(
    bench: BenchmarkInput, bundles: Sequence[BundleInput], *, seed: int = 20211
) -> tuple[list[dict[str, Any]], Analysis]:
    """Recompute a validated benchmark with its declared settings (no bootstrap).

    The folder is read and validated by :func:`pipeline.validate.benchmark_inputs`.
    """
    s = settings_of(bench).model_copy(update={"bootstrap": 0})
    items, _ = read_items(bench.files, s)
    data: list[tuple[str, BundleData]] = []
    for b in bundles:
        bd, _ = read_bundle(b.files, s)
        if bd is not None:
            data.append((b.id, bd))
    if not data:
        raise GmeterError(f"{bench.id} has no bundle", hint="add a bundle with responses.csv")
    an = analyse(s, items, assemble(items, data), seed=seed)
    return table_rows(an), an


def _read_matrix(path: Path) -> Population:
    """Read a wide or long response file as a population (one pseudo-bundle ``input``)."""
    try:
        text = path.read_text(encoding="utf-8-sig")
    except OSError as exc:
        raise UsageError(f"cannot read {path}: {exc.strerror}") from exc
    except UnicodeDecodeError as exc:
        raise GmeterError(f"{path} is not UTF-8 text", hint="save it as UTF-8") from exc
    rows = [r for r in csv.reader(io.StringIO(text, newline="")) if r and any(c.strip() for c in r)]
    if len(rows) < 2:
        raise GmeterError(f"{path} has no data rows", hint="give a header and one row per agent")
    header = [h.strip() for h in rows[0]]
    if sorted(header) == ["agent", "item", "value"]:
        fs = FileSet(path.name, {"responses.csv": text.encode("utf-8")})
        bd, problems = read_bundle(
            fs, BenchmarkSettings.model_validate({"transform": "rnk"})
        )  # any finite value
        if bd is None or problems:
            raise ValidationFailed(problems, f"{path} has problems")
        return assemble(None, [("input", bd)])
    items = header[1:]
    if not items or len(set(items)) != len(items) or any(not i for i in items):
        raise GmeterError(
            f"{path}: the header must be agent + one distinct column per item (wide) or "
            "agent,item,value (long)"
        )
    agents = [r[0].strip() for r in rows[1:]]
    if len(set(agents)) != len(agents) or not all(agents):
        raise GmeterError(f"{path}: agent names must be present and distinct")
    values = np.full((len(agents), len(items)), np.nan)
    for j, r in enumerate(rows[1:], start=2):
        if len(r) != len(header):
            raise GmeterError(f"{path}: line {j} has {len(r)} cells, the header {len(header)}")
        for k, cell in enumerate(r[1:]):
            cell = cell.strip()
            if cell in ("", "NA"):
                continue
            try:
                values[j - 2, k] = float(cell)
            except ValueError as exc:
                raise GmeterError(
                    f"{path}: line {j}, {items[k]}: {cell!r} is not a number"
                ) from exc
    if not np.isfinite(values[~np.isnan(values)]).all():
        raise GmeterError(f"{path}: values must be finite numbers")
    return Population(tuple(agents), ("input",) * len(agents), tuple(items), values, {})


def _read_items_file(path: Path | None, s: BenchmarkSettings) -> ItemTable | None:
    if path is None:
        return None
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise UsageError(f"cannot read {path}: {exc.strerror}") from exc
    fs = FileSet(path.parent.name, {path.name: data})
    items, problems = read_items(fs, s.model_copy(update={"items_file": path.name}))
    if problems or items is None:
        raise ValidationFailed(problems, f"{path} has problems")
    return items


def adhoc_table(
    responses: Path,
    *,
    difficulty: Path | None = None,
    settings: dict[str, Any] | None = None,
    seed: int = 20211,
) -> tuple[list[dict[str, Any]], Analysis]:
    """Compute the table of an arbitrary response file.

    Parameters
    ----------
    responses : Path
        Wide or long CSV.
    difficulty : Path, optional
        Items CSV (``item,difficulty``, or ``item,ref_mean,ref_variance`` for DRef,
        ``item,group`` for grouped Rnk).
    settings : dict
        :class:`BenchmarkSettings` fields (``transform``, ``kmin``, ...).
    seed : int
        Seed of the bootstrap (off unless ``settings["bootstrap"]`` is set).
    """
    try:
        s = BenchmarkSettings.model_validate({"bootstrap": 0, **(settings or {})})
    except Exception as exc:  # pydantic's message names the field
        raise UsageError(f"invalid options: {exc}") from exc
    if s.transform in ("intrinsic", "dref") and difficulty is None:
        raise UsageError(
            f"transform {s.transform!r} needs --difficulty FILE",
            hint="or choose --transform aref|rnk|opp",
        )
    items = _read_items_file(difficulty, s)
    pop = _read_matrix(responses)
    if items is not None:
        unknown = sorted(set(pop.items) - set(items.items))
        if unknown:
            raise GmeterError(
                f"{len(unknown)} item(s) of {responses.name} have no difficulty: "
                + ", ".join(unknown[:5]),
                hint=f"add them to {difficulty}",
            )
        col = {n: k for k, n in enumerate(pop.items)}
        values = np.full((len(pop.agents), len(items.items)), np.nan)
        for k, name in enumerate(items.items):
            if name in col:
                values[:, k] = pop.values[:, col[name]]
        pop = Population(pop.agents, pop.bundles, items.items, values, pop.dates)
    lo, hi = (0.0, 1.0)
    if s.transform == "intrinsic" and not s.clip_negative:
        present = pop.values[~np.isnan(pop.values)]
        if present.size and (present.min() < lo or present.max() > hi):
            raise GmeterError(
                "responses must lie in [0, 1] for intrinsic difficulty",
                hint="rescale them, or use --clip-negative for rewards in [-1, 1]",
            )
    an = analyse(s, items, pop, seed=seed)
    return table_rows(an), an


def _cell(v: Any) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, float):
        return repr(v) if math.isfinite(v) else ("inf" if v > 0 else "-inf" if v < 0 else "nan")
    return str(v)


def to_csv(rows: Sequence[dict[str, Any]]) -> str:
    """Render the table as CSV with full-precision floats (``inf`` for an infinite generality)."""
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(COLUMNS)
    for r in rows:
        w.writerow([_cell(r[c]) for c in COLUMNS])
    return buf.getvalue()


def to_json(rows: Sequence[dict[str, Any]]) -> str:
    """Render the table as JSON; non-finite numbers become null (JSON has no infinity)."""
    clean = [
        {k: (None if isinstance(v, float) and not math.isfinite(v) else v) for k, v in r.items()}
        for r in rows
    ]
    return json.dumps(clean, indent=2, ensure_ascii=False)
