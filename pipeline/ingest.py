"""The ``ingest`` use case: validated bundles into the store, one transaction per bundle.

* A bundle whose content hash equals its current stored version is ``unchanged`` (no write).
* A changed bundle becomes the current version; the old version stays in the store.
* A bundle with any error is ``rejected`` and writes nothing; the others still go in,
  unless ``strict`` is set, in which case nothing is written when anything is bad.
* A benchmark with an error rejects all its bundles.
* Releases listed in ``submissions/releases.toml`` are recorded (see :mod:`pipeline.release`).
* A bundle version that passed every check is recorded (``verifications``, verifier
  :data:`~pipeline.validate.VALIDATOR`): later runs do not check its content again.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pipeline.bundles import git_commit
from pipeline.errors import Problem
from pipeline.store import Store
from pipeline.validate import BENCHMARK_CONTEXT, VALIDATOR, ValidationReport, collect


@dataclass(frozen=True)
class IngestOutcome:
    """What happened to one bundle."""

    benchmark: str
    bundle: str
    status: str  # new | changed | unchanged | rejected | retired
    content_hash: str = ""
    problems: tuple[Problem, ...] = ()


@dataclass
class IngestReport:
    """The result of one ``ingest``."""

    outcomes: list[IngestOutcome] = field(default_factory=list)
    problems: list[Problem] = field(default_factory=list)
    strict_aborted: bool = False

    def count(self, status: str) -> int:
        """How many bundles ended with ``status``."""
        return sum(o.status == status for o in self.outcomes)

    @property
    def rejected(self) -> int:
        """Bundles not ingested because of errors."""
        return self.count("rejected")


def _now() -> dt.datetime:
    return dt.datetime.now(dt.UTC).replace(tzinfo=None, microsecond=0)


def ingest(
    store: Store,
    paths: Sequence[Path],
    *,
    strict: bool = False,
    progress: object = None,
    report: ValidationReport | None = None,
) -> IngestReport:
    """Validate ``paths`` and write every good bundle to ``store``.

    Parameters
    ----------
    store : Store
        An open, writable store.
    paths : sequence of Path
        Submissions root, benchmark folders or bundle folders.
    strict : bool
        Write nothing at all if any problem of severity ``error`` is found.
    progress : callable, optional
        ``progress(task, done, total)``.
    report : ValidationReport, optional
        A validation already made for ``paths`` (saves reading the files twice).
    """
    clean = store.verified_results(VALIDATOR)
    report = report or collect(paths, clean=clean)
    out = IngestReport(problems=list(report.problems))
    if strict and report.errors:
        out.strict_aborted = True
        for bench in report.benchmarks:
            for b in bench.bundles:
                out.outcomes.append(IngestOutcome(bench.id, b.id, "rejected", "",
                                                  tuple(b.problems or bench.problems)))
        return out
    from pipeline.tracks import get_track

    store.set_primary_metrics(
        {t: get_track(t).primary_metric for t in {b.track for b in report.benchmarks if b.track}}
    )
    total = report.bundle_count
    done = 0
    for bench in report.benchmarks:
        bench_errors = [p for p in bench.problems if p.severity == "error"]
        if bench_errors or bench.input is None:
            for b in bench.bundles:
                out.outcomes.append(IngestOutcome(bench.id, b.id, "rejected", "",
                                                  tuple(bench_errors or b.problems)))
            continue
        now = _now()
        inp = bench.input
        if store.current_benchmark_hash(bench.id) != inp.content_hash:
            commit = git_commit(bench.path)  # one git call, only for a version to write
            with store.transaction():
                store.put_benchmark(
                    benchmark_id=bench.id, content_hash=inp.content_hash, track=inp.track,
                    title=str(inp.manifest.get("title", bench.id)), version=inp.version,
                    description=str(inp.manifest.get("description", "")),
                    licence=str(inp.manifest.get("licence", "")),
                    created=inp.manifest.get("created"), manifest=inp.manifest,
                    source_path=bench.label, git_commit=commit, files=inp.files.files, now=now,
                )
        for b in bench.bundles:
            done += 1
            if progress is not None:
                progress("ingest", done, total)  # type: ignore[operator]
            errors = [p for p in b.problems if p.severity == "error"]
            if errors or b.input is None:
                out.outcomes.append(IngestOutcome(bench.id, b.id, "rejected", "", tuple(errors)))
                continue
            old = store.current_bundle_hash(bench.id, b.id)
            if old == b.input.content_hash:
                out.outcomes.append(IngestOutcome(bench.id, b.id, "unchanged", old))
                continue
            with store.transaction():
                store.put_bundle(
                    benchmark=bench.id, bundle_id=b.id, content_hash=b.input.content_hash,
                    manifest=b.input.manifest, source_path=b.label,
                    git_commit=git_commit(b.path), files=b.input.files.files, now=now,
                    benchmark_version=inp.version,
                )
            status = "new" if old is None else "changed"
            out.outcomes.append(IngestOutcome(bench.id, b.id, status, b.input.content_hash,
                                              tuple(b.problems)))
        # Versions that passed every check are not checked again by later runs.
        kept: dict[tuple[str, str], dict[str, Any]] = {
            (b.input.content_hash, inp.content_hash):
                {"agents": report.agents.get(b.input.content_hash, [])}
            for b in bench.bundles if b.input is not None and not b.problems}  # fmt: skip
        if not bench.problems:
            kept[(inp.content_hash, BENCHMARK_CONTEXT)] = {}
        fresh = {k: (True, v) for k, v in kept.items() if clean.get(k) != v}
        if fresh:
            store.put_verifications(VALIDATOR, fresh, now)
        # A whole benchmark was given: bundles deleted from submissions/ stop being current.
        if bench.complete:
            with store.transaction():
                gone = store.retire_missing_bundles(bench.id, [b.id for b in bench.bundles])
            for g in gone:
                out.outcomes.append(IngestOutcome(bench.id, g, "retired"))
    return out

