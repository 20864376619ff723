"""The ``score`` use case: run each benchmark's track over its bundles, store ranked scores.

Scores are computed for the working state (release ``current``) and for every recorded
release, each from the exact benchmark and bundle versions it names (content hashes), so the
site can show history. The inputs are rebuilt from the *stored files* — never from the
working tree — so ``gmeter score`` and ``gmeter check`` agree byte for byte on the same inputs.
A benchmark whose inputs, seed, options and code version are unchanged is skipped unless
``force`` is given; one whose inputs equal another release's (the same benchmark and bundle
versions) copies that release's scores instead of computing them again, so a release costs
only what differs from the others (``force`` computes each distinct input once per run).
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from pipeline import __version__
from pipeline.bundles import SEALED_ENV
from pipeline.errors import Problem, ScoringError, UsageError
from pipeline.executor.base import Executor
from pipeline.inputs import BenchmarkInput, BundleInput, FileSet
from pipeline.manifest import load_benchmark_manifest, load_submission_manifest
from pipeline.ranking import min_ranks, ranked_pool
from pipeline.store import CURRENT, Store
from pipeline.store.frozen import differences
from pipeline.tracks import get_track, sort_key_sign
from pipeline.tracks.base import ScoreContext, ScoreRow

CODE_VERSION = f"gmeter {__version__}"


@dataclass
class BenchmarkScore:
    """The outcome for one (release, benchmark)."""

    release: str
    benchmark: str
    status: str  # scored | reused | unchanged | failed | empty | incomplete | frozen
    rows: int = 0
    notes: list[str] = field(default_factory=list)


@dataclass
class ScoreReport:
    """The outcome of one ``score`` run."""

    results: list[BenchmarkScore] = field(default_factory=list)

    @property
    def failed(self) -> list[BenchmarkScore]:
        """Benchmarks whose scoring raised an error."""
        return [r for r in self.results if r.status == "failed"]


def benchmark_input(store: Store, benchmark_id: str, content_hash: str) -> BenchmarkInput:
    """Rebuild a :class:`BenchmarkInput` from the files stored for that version."""
    rec = store.benchmark_record(benchmark_id, content_hash)
    files = store.benchmark_files(content_hash)
    manifest, settings, problems = load_benchmark_manifest(
        f"{rec.source_path}/benchmark.toml", files.get("benchmark.toml", b""), benchmark_id
    )
    if manifest is None or any(p.severity == "error" for p in problems):
        raise ScoringError(f"stored benchmark {benchmark_id} no longer validates",
                           hint="; ".join(str(p) for p in problems[:3]))
    return BenchmarkInput(benchmark_id, rec.track, rec.version, manifest, settings,
                          FileSet(rec.source_path, files), content_hash)


def bundle_input(store: Store, bench: BenchmarkInput, bundle_id: str, chash: str) -> BundleInput:
    """Rebuild a :class:`BundleInput` from the files stored for that version."""
    rec = store.bundle_record(bench.id, bundle_id, chash)
    files = store.bundle_files(chash)
    manifest, settings, _ = load_submission_manifest(
        f"{rec.source_path}/submission.toml", files.get("submission.toml", b""), bench.track,
        today=dt.date.max,
    )
    return BundleInput(bundle_id, bench.id, manifest or rec.manifest, settings,
                       FileSet(rec.source_path, files), chash)


def rank_rows(rows: Sequence[ScoreRow]) -> list[int | None]:
    """Competition ranks (1 = best, ties share the lowest rank) per metric.

    The direction comes from the metric registry; descriptive metrics (direction ``none``)
    are ranked higher-first for display only. NaN values get no rank; ``inf`` ranks as the
    largest value. One definition with the site's: :func:`pipeline.ranking.min_ranks`.
    Where a metric has verified rows, only they are ranked; reported rows get no rank
    (:func:`pipeline.ranking.ranked_pool`).
    """
    ranks: list[int | None] = [None] * len(rows)
    by_metric: dict[str, list[int]] = {}
    for i, r in enumerate(rows):
        by_metric.setdefault(r.metric, []).append(i)
    for metric, idx in by_metric.items():
        direction = "lower" if sort_key_sign(metric) < 0 else "higher"
        # reported rows never outrank verified ones: rank over the verified where any exist
        pool = ranked_pool([rows[i].verified for i in idx])
        values = [rows[i].value if p else None for i, p in zip(idx, pool, strict=True)]
        for i, rank in zip(idx, min_ranks(values, direction), strict=True):
            ranks[i] = rank
    return ranks


def _track_options(options: dict[str, Any], bench_id: str) -> dict[str, Any]:
    """The options a track sees: a sealed set given as a folder is read here, into memory."""
    if not options.get("sealed"):
        return options
    from pipeline.bundles import read_sealed
    from pipeline.tracks.gindex.sealed import SEALED_FILES

    return {**options, SEALED_FILES: read_sealed(str(options["sealed"]), bench_id)}


def input_key(bench_hash: str, bundle_hashes: Sequence[str], seed: int,
              options: dict[str, Any]) -> str:
    """What a (release, benchmark) score is a function of: SHA-256 of its inputs.

    The benchmark version, the bundle versions (as a sorted multiset of content hashes), the
    seed, the options and :data:`CODE_VERSION`; never the release's name, so two releases
    that hold the same versions share one key and one computation.
    """
    h = hashlib.sha256()
    h.update(json.dumps([bench_hash, sorted(bundle_hashes), seed, options, CODE_VERSION],
                        sort_keys=True).encode())
    return h.hexdigest()


@dataclass(frozen=True)
class BenchmarkScores:
    """What scoring one benchmark gives: rows for the ``scores`` table, charts and notes.

    Attributes
    ----------
    rows : list of dict
        One dict per score (the columns of ``scores`` without release/benchmark), with the
        bundle's content hash and the rank added; sorted by metric, bundle and agent.
    charts : dict
        Chart name → JSON-ready chart data (the ``charts`` table).
    notes : list of str
        The track's notes for the board.
    """

    rows: list[dict[str, Any]]
    charts: dict[str, Any]
    notes: list[str]


def score_benchmark(
    bench: BenchmarkInput, bundles: Sequence[BundleInput], ctx: ScoreContext
) -> BenchmarkScores:
    """Score one benchmark: the track's rows with content hashes and ranks added."""
    spec = get_track(bench.track)
    result = spec.score(bench, list(bundles), ctx)
    hashes = {b.id: b.content_hash for b in bundles}
    ranks = rank_rows(result.rows)
    rows = []
    for r, rank in zip(result.rows, ranks, strict=True):
        if r.bundle not in hashes:
            raise ScoringError(f"track {bench.track} returned a score for unknown bundle "
                               f"{r.bundle!r}")
        rows.append({
            "bundle": r.bundle, "content_hash": hashes[r.bundle], "agent": r.agent,
            "metric": r.metric, "value": float(r.value), "ci_low": r.ci_low,
            "ci_high": r.ci_high, "rank": rank, "verified": r.verified, "details": r.details,
        })
    rows.sort(key=lambda d: (d["metric"], d["bundle"], d["agent"]))
    return BenchmarkScores(rows, dict(result.charts), list(result.notes))


def score_all(
    store: Store,
    *,
    releases: Sequence[str] | None = None,
    benchmarks: Sequence[str] | None = None,
    seed: int = 20211,
    options: dict[str, Any] | None = None,
    executor: Executor | None = None,
    force: bool = False,
    progress: Callable[[str, int, int], None] | None = None,
    now: dt.datetime | None = None,
) -> ScoreReport:
    """Score ``releases`` (default: ``current`` and every recorded release).

    A failure in one benchmark is recorded and the others go on; the caller decides the exit
    code from :attr:`ScoreReport.failed`.
    """
    options = dict(options or {})
    # A sealed test set given by the environment (the publish workflow, from a secret) is an
    # input of the scores like an option: it enters the key, so giving it later rescores.
    sealed = os.environ.get(SEALED_ENV)
    if sealed and "sealed" not in options:
        options["sealed"] = sealed
    report = ScoreReport()
    recorded = [r[0] for r in store.releases()]
    names = list(releases) if releases else [CURRENT, *recorded]
    unknown = sorted(set(names) - {CURRENT, *recorded})
    if unknown:
        raise UsageError(f"--release {unknown[0]}: no such release in the store",
                         hint="known: " + ", ".join([CURRENT, *recorded]))
    if benchmarks:
        known = {b.id for b in store.benchmarks(current_only=False)}
        missing = sorted(set(benchmarks) - known)
        if missing:
            raise UsageError(f"--benchmark {missing[0]}: no such benchmark in the store",
                             hint="run `gmeter ingest` first, or give one of: "
                             + ", ".join(sorted(known)[:20]))
    now = now or dt.datetime.now(dt.UTC).replace(tzinfo=None, microsecond=0)
    done: dict[tuple[str, str], str] = {}  # (benchmark, input key) → release scored in this run
    for release in names:
        if release != CURRENT and store.release_file(release) is not None:
            # A frozen release is never recomputed: its published numbers came from its
            # committed file; this code's numbers only become errata on its page.
            report.results.append(_errata(store, release, seed, options, force,
                                          ScoreContext(seed=seed, executor=executor,
                                                       options=options, progress=progress,
                                                       verifications=StoreMemo(store, now)),
                                          now))
            continue
        if release == CURRENT:
            members = {b.id: b.content_hash for b in store.benchmarks()}
            by_bench: dict[str, list[tuple[str, str]]] = {}
            for rec in store.bundles():
                by_bench.setdefault(rec.benchmark, []).append((rec.id, rec.content_hash))
        else:
            members = store.release_benchmarks(release)
            by_bench = {}
            for bench_id, bundle_id, chash in store.release_members(release):
                by_bench.setdefault(bench_id, []).append((bundle_id, chash))
        for gone in sorted(set(store.scored_benchmarks(release)) - set(members)):
            store.delete_scores(release, gone)
        for bench_id, bench_hash in sorted(members.items()):
            if benchmarks and bench_id not in benchmarks:
                continue
            lacking = _lacking(store, bench_id, bench_hash, by_bench.get(bench_id, []))
            if lacking:
                # A historical version missing from the store: this (release, benchmark) is
                # left as it was, never a failure of the run (ingest rebuilds it from git).
                report.results.append(BenchmarkScore(
                    release, bench_id, "incomplete",
                    notes=[f"not scored: {len(lacking)} version(s) missing from the store "
                           f"({', '.join(lacking[:3])}); run `gmeter ingest`, which rebuilds "
                           "them from git history"]))
                continue
            try:
                members_of = sorted(by_bench.get(bench_id, []))
                # The key needs content hashes only: nothing is read when it is unchanged.
                key = input_key(bench_hash, [h for _, h in members_of], seed, options)
                if not force and store.score_input_key(release, bench_id) == key:
                    report.results.append(BenchmarkScore(release, bench_id, "unchanged"))
                    continue
                # The same inputs scored for another release (earlier, or in this run under
                # --force): copy, do not compute again.
                source = done.get((bench_id, key)) if force else \
                    store.release_scored_with(bench_id, key, exclude=release)
                if source is not None:
                    copied = store.copy_scores(source, release, bench_id)
                    report.results.append(BenchmarkScore(release, bench_id, "reused", copied,
                                                         [f"same inputs as {source}"]))
                    continue
                bench = benchmark_input(store, bench_id, bench_hash)
                bundles = [bundle_input(store, bench, b, h) for b, h in members_of]
                ctx = ScoreContext(seed=seed, executor=executor,
                                   options=_track_options(options, bench_id),
                                   progress=progress, verifications=StoreMemo(store, now))
                if bundles:
                    scored = score_benchmark(bench, bundles, ctx)
                    rows, charts, notes = scored.rows, scored.charts, scored.notes
                else:
                    rows, charts, notes = [], {}, ["no bundles yet"]
                store.replace_scores(
                    release=release, benchmark=bench_id, benchmark_hash=bench_hash,
                    track=bench.track, rows=rows, charts=charts, code_version=CODE_VERSION,
                    seed=seed, options={**options, "input_key": key}, notes=notes, now=now,
                )
                done[(bench_id, key)] = release
                status = "scored" if bundles else "empty"
                report.results.append(BenchmarkScore(release, bench_id, status, len(rows), notes))
            except Exception as exc:  # one benchmark's failure must not stop the others
                report.results.append(BenchmarkScore(release, bench_id, "failed",
                                                     notes=[f"{type(exc).__name__}: {exc}"]))
    return report


def _errata(store: Store, release: str, seed: int, options: dict[str, Any], force: bool,
            ctx: ScoreContext, now: dt.datetime) -> BenchmarkScore:
    """Recompute a frozen release with this code and keep how many values differ.

    The frozen numbers stay what the release publishes; the erratum ("recomputed with gmeter
    X: n values differ") is shown on the release's page. Kept per code version and skipped
    when the inputs are unchanged.
    """
    members = store.release_benchmarks(release)
    by_bench: dict[str, list[tuple[str, str]]] = {}
    for bench_id, bundle_id, chash in store.release_members(release):
        by_bench.setdefault(bench_id, []).append((bundle_id, chash))
    frozen_file = store.release_file(release) or ("", "")
    keys: list[str] = [frozen_file[1]]
    for bench_id, bench_hash in sorted(members.items()):
        lacking = _lacking(store, bench_id, bench_hash, by_bench.get(bench_id, []))
        if lacking:
            return BenchmarkScore(release, "(frozen)", "frozen", notes=[
                f"errata not computed: {len(lacking)} version(s) missing from the store"])
        keys.append(input_key(bench_hash, [h for _, h in sorted(by_bench.get(bench_id, []))],
                              seed, options))
    key = hashlib.sha256(json.dumps(keys).encode()).hexdigest()
    if not force and store.erratum_key(release, CODE_VERSION) == key:
        return BenchmarkScore(release, "(frozen)", "frozen")  # checked from hashes: nothing read
    inputs = []
    for bench_id, bench_hash in sorted(members.items()):
        bench = benchmark_input(store, bench_id, bench_hash)
        bundles = [bundle_input(store, bench, b, h) for b, h in sorted(by_bench.get(bench_id, []))]
        inputs.append((bench, bundles))
    published = store.release_rows(release)["scores"]
    compared = differ = 0
    examples: list[str] = []
    for bench, bundles in inputs:
        old = [r for r in published if r["benchmark"] == bench.id]
        try:
            fresh = score_benchmark(bench, bundles, ctx).rows if bundles else []
        except Exception as exc:  # a benchmark the new code cannot score differs entirely
            fresh = []
            examples.append(f"{bench.id}: {type(exc).__name__}")
        c, d, ex = differences(old, fresh)
        compared, differ = compared + c, differ + d
        examples += [f"{bench.id}: {e}" for e in ex][: max(0, 10 - len(examples))]
    store.put_erratum(release, CODE_VERSION, key, compared, differ, examples, now)
    return BenchmarkScore(release, "(frozen)", "frozen", compared, notes=[
        f"recomputed with {CODE_VERSION}: {differ} of {compared} values differ (errata)"])


@dataclass(frozen=True)
class StoreMemo:
    """The store's ``verifications`` table as a track's :class:`VerificationMemo`."""

    store: Store
    now: dt.datetime

    def recall(
        self, verifier: str, keys: Sequence[tuple[str, str]]
    ) -> Mapping[tuple[str, str], Mapping[str, Any]]:
        """Kept results of ``verifier`` for these (content hash, context) keys."""
        return self.store.verifications(verifier, keys)

    def keep(
        self, verifier: str, results: Mapping[tuple[str, str], tuple[bool, Mapping[str, Any]]]
    ) -> None:
        """Store fresh results, stamped with this score run's time."""
        self.store.put_verifications(verifier, results, self.now)


def _lacking(store: Store, bench_id: str, bench_hash: str,
             bundles: Sequence[tuple[str, str]]) -> list[str]:
    """The versions of one (release, benchmark) that the store does not hold."""
    out = [] if store.has_benchmark_version(bench_id, bench_hash) else [bench_id]
    out += [f"{bench_id}/{b}" for b, h in sorted(bundles)
            if not store.has_bundle_version(bench_id, b, h)]
    return out


def problems_of(report: ScoreReport) -> list[Problem]:
    """Failed benchmarks as problems (for the CLI's error listing)."""
    return [Problem(f"{r.benchmark} ({r.release})", "score", "; ".join(r.notes),
                    "see `gmeter score -v`; fix the bundle or report a gmeter bug")
            for r in report.failed]
