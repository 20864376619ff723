"""``gmeter similarity RUNS.csv`` (``show``): a runs file on disk, read, checked and analysed.

The file needs no benchmark (any test names); reading and analysis are the track's
(:func:`~pipeline.tracks.similarity.runs.read_runs`,
:func:`~pipeline.tracks.similarity.runs.analyse_runs`).
"""

from __future__ import annotations

from pathlib import Path

from pipeline.errors import UsageError, ValidationFailed
from pipeline.inputs import FileSet
from pipeline.metrics.similarity.measure import CONVENTIONS
from pipeline.tracks.similarity.runs import RunsReport, analyse_runs, read_runs


def analyse_runs_file(
    path: Path,
    *,
    convention: str = "paper",
    confidence: float = 0.95,
    seed: int = 20211,
) -> RunsReport:
    """Read, check and analyse a runs file on its own (no benchmark: any test names).

    Raises
    ------
    UsageError
        If the file does not exist or an option is out of range.
    ValidationFailed
        With every problem of the file, if it has any.
    """
    if not path.is_file():
        raise UsageError(f"{path}: no such file", hint="give a runs.csv (see docs/similarity.md)")
    if convention not in CONVENTIONS:
        raise UsageError(f"--convention {convention!r}", hint="use paper or mixture")
    if not 0.5 < confidence < 1.0:
        raise UsageError(f"--confidence {confidence}", hint="give a level such as 0.95")
    from pipeline.bundles import read_file_bounded

    data = read_file_bounded(path, str(path), error=UsageError)  # bounded, no links
    fs = FileSet(str(path.parent) if str(path.parent) != "." else "", {path.name: data})
    rows, problems = read_runs(fs, path.name, scale=(-1e9, 1e9))  # no benchmark: any finite V
    if problems:
        raise ValidationFailed(problems, f"{path} has {len(problems)} problem(s)")
    return analyse_runs(rows, convention=convention, confidence=confidence, seed=seed)
