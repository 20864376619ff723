"""``gmeter site``: validate → ingest → score → build, in one step, in any benchmark repository.

The same four use cases the separate commands run, in order, with the repository's
``gmeter.toml``; it stops at the first step that fails (a bundle that does not validate, a
release that cannot be recovered, a benchmark whose scoring raised) and leaves the previous
site in place.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pipeline.errors import ScoringError, ValidationFailed
from pipeline.ingest import IngestReport
from pipeline.score import ScoreReport
from pipeline.site.build import BuildReport

ProgressFn = Callable[[str, int, int], None]


@dataclass(frozen=True)
class SiteRun:
    """What ``gmeter site`` did, step by step."""

    benchmarks: int
    bundles: int
    ingest: IngestReport
    score: ScoreReport
    build: BuildReport

    def as_dict(self) -> dict[str, Any]:
        """A JSON-ready summary (``gmeter site --format json``)."""
        return {
            "ok": True,
            "validate": {"benchmarks": self.benchmarks, "bundles": self.bundles},
            "ingest": ingest_summary(self.ingest),
            "score": score_summary(self.score),
            "build": build_summary(self.build),
        }


def ingest_summary(report: IngestReport) -> dict[str, Any]:
    """The counts of one ingest (JSON-ready)."""
    return {s: report.count(s) for s in ("new", "changed", "unchanged", "rejected", "retired")}


def score_summary(report: ScoreReport) -> dict[str, Any]:
    """Every (release, benchmark) scored, with its status and row count (JSON-ready)."""
    return {
        "results": [
            {"release": r.release, "benchmark": r.benchmark, "status": r.status, "rows": r.rows,
             "notes": list(r.notes)}
            for r in report.results
        ],
        "failed": len(report.failed),
    }


def build_summary(report: BuildReport) -> dict[str, Any]:
    """What a build wrote (JSON-ready)."""
    return {
        "out": str(report.out),
        "pages": report.pages,
        "files": report.files,
        "bytes": report.bytes,
        "versions": list(report.versions),
        "benchmarks": report.benchmarks,
        "seconds": round(report.seconds, 3),
    }


def build_repository_site(
    root: Path,
    db_path: Path,
    out: Path,
    *,
    progress: ProgressFn | None = None,
    step: Callable[[str], None] | None = None,
) -> SiteRun:
    """Validate, ingest, score and build the site of the repository at ``root``.

    ``root`` holds ``gmeter.toml`` and ``submissions/``; ``step`` is told the name of each step
    as it starts (progress lines for logs).

    Raises
    ------
    ValidationFailed
        When a bundle or benchmark does not validate (nothing is ingested).
    GmeterError
        When a release cannot be recorded or a benchmark fails to score; the site is not built.
    """
    from pipeline.ingest import ingest
    from pipeline.release import releases_file_for, sync_releases
    from pipeline.score import score_all
    from pipeline.site.build import build_site
    from pipeline.site.config import load_config, template_overrides
    from pipeline.store import open_store
    from pipeline.validate import clean_versions, collect

    def say(name: str) -> None:
        if step is not None:
            step(name)

    config = load_config(root)
    submissions = [Path(root) / "submissions"]
    say("validate")
    # the store's record of versions that passed every check: unchanged bundles are only read
    checked = collect(submissions, clean=clean_versions(db_path))
    if checked.errors:
        raise ValidationFailed(checked.problems)
    say("ingest")
    with open_store(db_path) as store:
        ingested = ingest(store, submissions, progress=progress, report=checked)
        history = sync_releases(store, releases_file_for(submissions))
    bad = [p for p in ingested.problems + history if p.severity == "error"]
    if bad or ingested.rejected:
        raise ValidationFailed(bad, "ingest failed")
    say("score")
    with open_store(db_path, create=False) as store:
        scored = score_all(store, progress=progress)
    if scored.failed:
        raise ScoringError(
            "; ".join(f"{r.benchmark} ({r.release}): {'; '.join(r.notes)}" for r in scored.failed),
            hint="fix the benchmark, or run `gmeter score` to see every result",
        )
    say("build")
    built = build_site(
        db_path, out, progress=progress, config=config, overrides=template_overrides(root)
    )
    return SiteRun(len(checked.benchmarks), checked.bundle_count, ingested, scored, built)



