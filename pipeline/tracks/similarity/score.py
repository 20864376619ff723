"""Scoring of the ``similarity`` track: pair similarities, dissimilarities, suite diversity.

Per bundle and configuration (agent, merge, p) the runs are analysed by
:func:`~pipeline.tracks.similarity.runs.analyse_runs`; the chart data comes from
:mod:`pipeline.tracks.similarity.board`.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from pipeline.errors import ScoringError
from pipeline.inputs import BenchmarkInput, BundleInput
from pipeline.tracks.base import ScoreContext, ScoreRow, TrackResult
from pipeline.tracks.filecheck import check_csv
from pipeline.tracks.similarity.settings import declared_tests, settings_of, submission_of
from pipeline.tracks.similarity.validate import PUBLISHED_COLUMNS


def _agent_labels(bundles: Sequence[BundleInput]) -> dict[str, str]:
    """Per bundle, the suffix that keeps score-row names unique on the board.

    The site names a row ``<system> · <agent>``; two bundles of one system (e.g. an experiment
    and its control) would give two rows called ``… · suite``. Such bundles get their id
    appended to every agent label (`` (q-lambda-episode-control)``); a system name used once
    needs nothing.
    """
    names: dict[str, int] = {}
    for b in bundles:
        names[b.system] = names.get(b.system, 0) + 1
    return {b.id: (f" ({b.id})" if names[b.system] > 1 else "") for b in bundles}


def score(bench: BenchmarkInput, bundles: Sequence[BundleInput], ctx: ScoreContext) -> TrackResult:
    """Score every bundle: pair similarities, dissimilarities, suite diversity and charts.

    Rows: ``<first>|<second>`` (``similarity`` with its interval, ``dissimilarity``) and
    ``suite`` (``diversity``), suffixed with the configuration when a bundle has several and
    with the bundle id when two bundles share a system name. A bundle whose
    ``[similarity].reported`` is set transcribes published numbers: its rows carry
    ``details.reported`` and, with ``digits``, S rounded to the published precision.
    """
    from pipeline.tracks.similarity import board
    from pipeline.tracks.similarity.runs import (
        RUNS_FILE,
        WHY_NOT_MEASURED,
        analyse_runs,
        pair_record,
        read_runs,
    )

    s = settings_of(bench)
    convention = str(ctx.options.get("convention", s.convention))
    if convention not in ("paper", "mixture"):
        raise ScoringError(
            f"unknown similarity convention {convention!r}",
            hint="use --option convention=paper or convention=mixture",
        )
    confidence = s.confidence
    tests = declared_tests(s)
    result = TrackResult(
        notes=[
            f"similarity convention: {convention}; intervals at "
            f"{confidence:.0%} (Fieller per pair mapped through eq. 3, bootstrap for diversity)"
        ]
    )
    charts: dict[str, list[dict[str, Any]]] = {
        k: [] for k in ("similarity_heatmap", "similarity_map", "similarity_flags",
                        "similarity_suites", "similarity_vs_published", "similarity_sweep")
    }  # fmt: skip
    published_rows = _published_rows(bench, s.published)
    suffixes = _agent_labels(bundles)
    for bundle in sorted(bundles, key=lambda b: b.id):
        rows, problems = read_runs(
            bundle.files,
            RUNS_FILE,
            tests=tests,
            merges=tuple(s.merges) or ("sampling", "stitching"),
            scale=s.scale,
        )
        refused = [p for p in problems if p.severity == "error"]
        if refused:  # validation refuses such a bundle; never score part of it
            result.notes.append(
                f"{bundle.id}: skipped, runs.csv has {len(refused)} problem(s), e.g. {refused[0]}"
            )
            continue
        if not rows:
            result.notes.append(
                f"{bundle.id}: skipped, runs.csv has no usable rows ({len(problems)} problems)"
            )
            continue
        own = submission_of(bundle)
        source = own.reported
        digits = own.digits if source else None
        report = analyse_runs(
            rows, tests=tests, convention=convention, confidence=confidence, seed=ctx.seed
        )
        many = len(report.configs) > 1
        result.notes += [f"{bundle.id}: {n}" for n in report.notes]
        if source:
            result.notes.append(
                f"{bundle.id}: reported numbers ({source}); they cannot be recomputed"
            )
        for cfg in report.configs:
            suffix = (f" [{cfg.config.label()}]" if many else "") + suffixes[bundle.id]
            for pr in cfg.pairs:
                e = pr.estimate
                details = pair_record(pr)
                if e.point.status == "undefined":
                    details["why"] = e.point.reason
                value = e.point.value
                ci_low, ci_high = e.ci_low, e.ci_high
                status = pr.status
                if status not in ("sufficient", "identity") and not source:
                    # Not a measurement: eq. 3's number stays in the details, the row has
                    # no value (so it never tops a "most similar" list) and no interval.
                    details["eq3_value"] = value if math.isfinite(value) else None
                    details["why"] = WHY_NOT_MEASURED[status] + (
                        f" ({e.point.reason})" if e.point.reason else ""
                    )
                    value, ci_low, ci_high = math.nan, None, None
                if source:
                    details["reported"] = source
                    if digits is not None and math.isfinite(value):
                        value = round(value, int(digits))
                        details["rounded_to"] = int(digits)
                label = pr.key + suffix
                result.rows.append(
                    ScoreRow(bundle.id, label, "similarity", value, ci_low, ci_high,
                             False, details)
                )  # fmt: skip
                result.rows.append(
                    ScoreRow(
                        bundle.id,
                        label,
                        "dissimilarity",
                        1.0 - value,
                        None if ci_high is None else 1.0 - ci_high,
                        None if ci_low is None else 1.0 - ci_low,
                        False,
                        details,
                    )
                )
            d = cfg.diversity
            result.rows.append(
                ScoreRow(
                    bundle.id,
                    "suite" + suffix,
                    "diversity",
                    d.value,
                    cfg.diversity_ci[0] if cfg.diversity_ci else None,
                    cfg.diversity_ci[1] if cfg.diversity_ci else None,
                    False,
                    {
                        "tests": list(cfg.tests),
                        "n_pairs": d.n_pairs,
                        "n_sufficient": d.n_pairs,
                        "n_missing": d.n_missing,
                        "over": f"{d.n_pairs} sufficient of {d.n_pairs + d.n_missing} pairs",
                        "agent": cfg.config.agent,
                        "merge": cfg.config.merge,
                        "p": cfg.config.p,
                        "convention": convention,
                        **({"reported": source} if source else {}),
                        **({"why": "no sufficient pair"} if math.isnan(d.value) else {}),
                    },
                )
            )
            who = bundle.system
            charts["similarity_heatmap"] += board.matrix_records(bundle.id, who, cfg, bool(source))
            charts["similarity_map"] += board.map_records(bundle.id, who, cfg)
            charts["similarity_flags"] += board.flag_records(bundle.id, who, cfg)
            charts["similarity_suites"].append(
                board.suite_record(bundle.id, who, cfg, bool(source))
            )
            if many:
                charts["similarity_sweep"] += board.sweep_records(bundle.id, who, cfg)
            if published_rows and not source:
                charts["similarity_vs_published"] += board.versus_published(
                    bundle.id, who, cfg, published_rows
                )
    for name, data in charts.items():
        if name in ("similarity_flags", "similarity_suites", "similarity_sweep"):
            # tables, not plots: wrapped so that a generic chart drawer finds nothing to draw
            if data or name != "similarity_sweep":
                result.charts[name] = {name.removeprefix("similarity_"): data}
        elif data or name in ("similarity_heatmap", "similarity_map"):
            result.charts[name] = data
    if published_rows:
        result.charts["similarity_published"] = board.published_matrix(published_rows)
    return result


def _published_rows(bench: BenchmarkInput, path: str) -> list[dict[str, Any]]:
    if not path or not bench.files.has(path):
        return []
    rows, _ = check_csv(bench.files, path, PUBLISHED_COLUMNS)
    return [{k: (v if v != "" else None) for k, v in r.items()} for r in rows]
