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
from pipeline.inputs import BenchmarkInput, BundleInput, FileSet
from pipeline.lab.generality.matrix import read_matrix
from pipeline.tracks.generality.analysis import Analysis, Population, analyse, assemble
from pipeline.tracks.generality.data import (
    BundleData,
    ItemTable,
    read_bundle,
    read_items,
)
from pipeline.tracks.generality.settings import BenchmarkSettings, settings_of
from pipeline.untrusted import csv_cell

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


def _read_items_file(path: Path | None, s: BenchmarkSettings) -> ItemTable | None:
    if path is None:
        return None
    from pipeline.bundles import read_file_bounded

    data = read_file_bounded(path, str(path), error=UsageError)
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
    for label, path, what in (
        ("RESPONSES.csv", responses, "a response file is a CSV, wide or long"),
        ("--difficulty", difficulty, "an items file is a CSV with item,difficulty"),
    ):
        if path is not None and not Path(path).is_file():
            raise UsageError(f"{path}: no such file ({label})", hint=f"check the path; {what}")
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
    pop = read_matrix(responses)
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
    if s.transform in ("intrinsic", "irt") and not s.clip_negative:
        present = pop.values[~np.isnan(pop.values)]
        if present.size and (present.min() < lo or present.max() > hi):
            raise GmeterError(
                f"responses must lie in [0, 1] for transform {s.transform!r}",
                hint="rescale them, or use --clip-negative for rewards in [-1, 1]",
            )
    an = analyse(s, items, pop, seed=seed)
    return table_rows(an), an


def _cell(v: Any) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, float):
        return repr(v) if math.isfinite(v) else ("inf" if v > 0 else "-inf" if v < 0 else "nan")
    if isinstance(v, int):
        return str(v)
    return csv_cell(v)  # agent names come from the response file: never a formula


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
