"""Validation of ``similarity`` benchmarks and bundles.

A benchmark's optional published-values file must name declared tests; a bundle's ``runs.csv``
is checked by :func:`~pipeline.tracks.similarity.runs.read_runs` (columns, finite numbers,
``0 < p < 1``, declared tests and merges, duplicates).
"""

from __future__ import annotations

from pipeline.errors import Problem
from pipeline.inputs import BenchmarkInput, BundleInput
from pipeline.tracks.filecheck import Column, check_csv
from pipeline.tracks.similarity.settings import declared_tests, settings_of

PUBLISHED_COLUMNS = (
    Column("test_a"),
    Column("test_b"),
    Column("similarity", "float", low=-1.0, high=1.0),
    Column("merge", required=False, allow_empty=True, choices=("sampling", "stitching")),
    Column("p", "float", required=False, allow_empty=True, low=0.0, high=1.0),
    Column("note", required=False, allow_empty=True),
)


def validate_benchmark(bench: BenchmarkInput) -> list[Problem]:
    """Check the benchmark's optional published-values file against its declared tests."""
    s = settings_of(bench)
    path = s.published
    if not path:
        return []
    fs = bench.files
    if not path.startswith("reference/"):
        return [
            Problem(
                fs.where("benchmark.toml"),
                "similarity.published",
                f"{path!r} is not under reference/",
                "put the file in reference/",
            )
        ]
    rows, problems = check_csv(fs, path, PUBLISHED_COLUMNS, unique=("test_a", "test_b", "merge"))
    known = set(declared_tests(s))
    for n, r in enumerate(rows, start=1):
        for col in ("test_a", "test_b"):
            if r[col] not in known:
                problems.append(
                    Problem(
                        fs.where(path),
                        f"row {n}: {col}",
                        f"unknown test {r[col]!r}",
                        "declare it under [similarity].tests",
                    )
                )
    return problems


def validate_bundle(bundle: BundleInput, bench: BenchmarkInput) -> list[Problem]:
    """Check ``runs.csv``: columns, numbers, ``0 < p < 1``, V in scale, tests, duplicates."""
    from pipeline.tracks.similarity.runs import RUNS_FILE, read_runs

    s = settings_of(bench)
    _, problems = read_runs(
        bundle.files,
        RUNS_FILE,
        tests=declared_tests(s),
        merges=tuple(s.merges),
        scale=s.scale,
    )
    return problems
