"""Validation of ``generality`` benchmarks and bundles.

:func:`validate_benchmark` checks the ``[generality]`` settings against the reference files
(items, difficulties, Beta references); :func:`validate_bundle` checks ``responses.csv``
(columns, values in the benchmark's domain, duplicates, known items, every item answered, no
``NA`` for Opp) and ``agents.csv``. Every problem is reported at once as a
:class:`~pipeline.errors.Problem`; the readers are :mod:`pipeline.tracks.generality.data`.
"""

from __future__ import annotations

import numpy as np

from pipeline.errors import Problem
from pipeline.inputs import BenchmarkInput, BundleInput
from pipeline.tracks.filecheck import Column, check_csv
from pipeline.tracks.generality.data import (
    coverage_problems,
    read_bundle,
    read_items,
)
from pipeline.tracks.generality.settings import RESPONSES, settings_of


def validate_benchmark(bench: BenchmarkInput) -> list[Problem]:
    """Check the settings against the reference files (items, difficulties, references)."""
    where = bench.files.where("benchmark.toml")
    try:
        s = settings_of(bench)
    except Exception as exc:
        return [Problem(where, "generality", str(exc), "correct the [generality] section")]
    problems: list[Problem] = []
    items, more = read_items(bench.files, s)
    problems += more
    if items is not None and s.transform == "dref" and s.distribution == "beta":
        from pipeline.metrics.generality.transforms import beta_parameters

        mu = np.array(items.column("ref_mean"), dtype=float)
        var = np.array(items.column("ref_variance"), dtype=float)
        with np.errstate(divide="ignore", invalid="ignore"):
            a, b = beta_parameters(mu, var)
        for k in np.flatnonzero(~((a > 0) & (b > 0))):
            problems.append(
                Problem(
                    bench.files.where(s.items_file),
                    f"item {items.items[k]}",
                    "the Beta reference needs 0 < ref_mean < 1 and "
                    "0 < ref_variance < ref_mean (1 - ref_mean)",
                    "correct the reference mean or variance",
                )
            )
    if s.pipeline == "padded" and (s.kmin is not None or s.kmax is not None):
        problems.append(
            Problem(
                where,
                "generality.kmin",
                "kmin/kmax are ignored by the padded pipeline (its limits come from the "
                "difficulties)",
                "remove them",
                severity="warning",
            )
        )
    if s.raw_scale is not None and s.transform == "opp":
        problems.append(
            Problem(
                where,
                "generality.raw_scale",
                "Opp cells are game scores in [0, 1]; a raw scale does not apply",
                "remove raw_scale",
            )
        )
    if s.transform != "intrinsic" and (
        s.epsilon is not None or s.clip_negative or s.difficulty_bins
    ):
        problems.append(
            Problem(
                where,
                "generality",
                "epsilon, clip_negative and difficulty_bins apply to intrinsic difficulty only",
                "remove them or use transform = 'intrinsic'",
            )
        )
    return problems


def validate_bundle(bundle: BundleInput, bench: BenchmarkInput) -> list[Problem]:
    """Check ``responses.csv`` (columns, domain, duplicates, items, coverage) and ``agents.csv``."""
    try:
        s = settings_of(bench)
    except Exception:
        return []  # the benchmark's own validation reports it
    problems: list[Problem] = []
    data, more = read_bundle(bundle.files, s)
    problems += more
    if data is not None:
        seen = set(data.item)
    else:  # report unknown items of the readable rows too: every problem at once
        rows, _ = check_csv(
            bundle.files, RESPONSES, [Column("item", required=False)], allow_extra=True
        )
        seen = {str(r["item"]) for r in rows if r.get("item")}
    items, _ = read_items(bench.files, s)
    if data is not None:
        problems += coverage_problems(
            bundle.files, data, items.items if items is not None else None, s
        )
    if items is not None:
        known = set(items.items)
        unknown = sorted(seen - known)
        for i in unknown[:20]:
            problems.append(
                Problem(
                    bundle.files.where(RESPONSES),
                    f"item {i}",
                    "is not an item of this benchmark",
                    f"use the item names of {bench.files.where(s.items_file)}",
                )
            )
        if len(unknown) > 20:
            problems.append(
                Problem(
                    bundle.files.where(RESPONSES),
                    "item",
                    f"{len(unknown) - 20} more unknown items not shown",
                    "",
                )
            )
    return problems
