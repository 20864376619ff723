"""Reading an ad-hoc response file (wide or long) as a population matrix.

Shared by ``gmeter generality RESPONSES.csv`` (:mod:`~pipeline.lab.generality.tables`) and
``gmeter fa``/``gmeter irt`` (:mod:`~pipeline.lab.generality.psychometrics`).
"""

from __future__ import annotations

import csv
import io
from pathlib import Path

import numpy as np

from pipeline.errors import GmeterError, UsageError, ValidationFailed
from pipeline.inputs import FileSet
from pipeline.tracks.generality.analysis import Population, assemble
from pipeline.tracks.generality.data import read_bundle
from pipeline.tracks.generality.settings import BenchmarkSettings


def read_matrix(path: Path) -> Population:
    """Read a wide or long response file as a population (one pseudo-bundle ``input``).

    Wide: ``agent`` + one column per item, an empty cell or ``NA`` = no response. Long:
    ``agent,item,value`` with ``NA`` for no response. NaN and infinite values are errors.
    """
    from pipeline.bundles import read_file_bounded

    data = read_file_bounded(path, str(path), error=UsageError)
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise GmeterError(f"{path} is not UTF-8 text", hint="save it as UTF-8") from exc
    try:
        rows = [r for r in csv.reader(io.StringIO(text, newline=""))
                if r and any(c.strip() for c in r)]
    except csv.Error as exc:  # a cell over csv's field limit, a stray quote or NUL, ...
        raise GmeterError(f"{path} is not valid CSV ({exc})",
                          hint="fix the quoting; a cell holds one response") from exc
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
                v = float(cell)
            except ValueError as exc:
                raise GmeterError(
                    f"{path}: line {j}, {items[k]}: {cell!r} is not a number",
                    hint="write NA (or leave the cell empty) for no response",
                ) from exc
            if not np.isfinite(v):
                raise GmeterError(
                    f"{path}: line {j}, {items[k]}: {cell!r} is not a finite number",
                    hint="write NA (or leave the cell empty) for no response",
                )
            values[j - 2, k] = v
    return Population(tuple(agents), ("input",) * len(agents), tuple(items), values, {})
