"""The ``check`` use case: what CI runs on a pull request that adds or changes bundles.

1. **Find** the bundles under review: those the pull request adds or changes
   (:mod:`pipeline.check.gitdiff`, against the merge base of ``--base`` and ``HEAD``), or the
   bundle / benchmark folders given on the command line.
2. **Validate** every affected benchmark as it is in the work tree (all problems at once).
3. **Recompute** in a scratch store (a temporary DuckDB file; the real store is never
   written): the affected benchmarks as they were at the base are ingested and scored, then
   the work tree's versions, each with :func:`pipeline.score.score_all` — the very code
   ``gmeter score`` runs, on inputs rebuilt from stored files, so both agree byte for byte.
   Whole benchmarks are scored, because on a populational benchmark (generality with ARef,
   Rnk or Opp) one new bundle changes everyone's difficulty and hence everyone's scores.
4. **Compare** before and after: each new entry's scores with intervals, rank, tie group and
   whom it overtakes; what changes for the others; entries removed.
5. **Integrity** (:mod:`pipeline.tracks.review`) and **stale markers** (entries last submitted
   under an older benchmark version).

Without ``--base`` the "before" state is the benchmark without the named bundles.
"""

from __future__ import annotations

import datetime as dt
import tempfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pipeline.bundles import LoadedBenchmark, display, is_benchmark_dir, is_bundle_dir
from pipeline.check.model import (
    BenchmarkCheck,
    CheckReport,
    Entry,
    NewEntry,
    OtherChange,
    compare,
    entries_of,
)
from pipeline.check.view import StaleEntry, StoreFacts
from pipeline.errors import Problem, UsageError
from pipeline.tracks.review import Finding, Ownership


@dataclass
class _State:
    loaded: LoadedBenchmark | None
    rows: list[dict[str, Any]]
    failed: list[str]


def _score_state(store: Any, bench: LoadedBenchmark | None, bench_id: str, *, seed: int,
                 options: dict[str, Any], executor: Any,
                 progress: Callable[[str, int, int], None] | None) -> _State:
    """Ingest one state of a benchmark into the scratch store, score it, read the rows."""
    from pipeline.ingest import ingest
    from pipeline.score import score_all
    from pipeline.store import CURRENT
    from pipeline.validate import ValidationReport

    if bench is None:
        return _State(None, [], [])
    if any(p.severity == "error" for p in bench.problems):
        # ingest refuses a benchmark whose own files do not validate: nothing to score.
        return _State(bench, [], ["the benchmark's own files do not validate"])
    problems = list(bench.problems) + [p for b in bench.bundles for p in b.problems]
    ingest(store, [bench.path], report=ValidationReport([bench], problems))
    res = score_all(store, releases=[CURRENT], benchmarks=[bench_id], seed=seed,
                    options=options, executor=executor, force=True, progress=progress)
    failed = ["; ".join(r.notes) for r in res.failed]
    return _State(bench, read_scores(store, bench_id), failed)


def _derive_before(before: LoadedBenchmark, after_rows: list[dict[str, Any]], *, seed: int,
                   options: dict[str, Any], executor: Any,
                   progress: Callable[[str, int, int], None] | None) -> _State:
    """Derive the base state's rows of a non-populational benchmark without rescoring it all.

    A track that is not populational scores every bundle independently of the others (its
    :class:`~pipeline.tracks.base.TrackSpec` says so), so an unchanged bundle has the same
    rows before and after; only the base versions of changed or deleted bundles are scored,
    and the ranks are recomputed over the base population.
    """
    from pipeline.score import CODE_VERSION, rank_rows, score_benchmark
    from pipeline.tracks.base import ScoreContext, ScoreRow

    assert before.input is not None
    after_hash = {r["bundle"]: r["content_hash"] for r in after_rows}
    good = [b.input for b in before.bundles if b.input is not None
            and not any(p.severity == "error" for p in b.problems)]
    rows = [dict(r) for r in after_rows
            if any(b.id == r["bundle"] and b.content_hash == r["content_hash"] for b in good)]
    rescore = [b for b in good if after_hash.get(b.id) != b.content_hash]
    failed: list[str] = []
    if rescore:
        ctx = ScoreContext(seed=seed, executor=executor, options=options, progress=progress)
        try:
            more = score_benchmark(before.input, rescore, ctx).rows
        except Exception as exc:  # reported like a failed score run
            failed.append(f"{type(exc).__name__}: {exc}")
            more = []
        rows += [{**r, "code_version": CODE_VERSION} for r in more]
    ranks = rank_rows([ScoreRow(r["bundle"], r["agent"], r["metric"], r["value"],
                                verified=bool(r.get("verified"))) for r in rows])
    for r, rank in zip(rows, ranks, strict=True):
        r["rank"] = rank
    rows.sort(key=lambda d: (d["metric"], d["bundle"], d["agent"]))
    return _State(before, rows, failed)


def read_scores(store: Any, bench_id: str) -> list[dict[str, Any]]:
    """Read a benchmark's ``current`` score rows as dicts (the columns ``score`` writes)."""
    rows: list[dict[str, Any]] = store.current_scores(bench_id)
    return rows


def _resolve_paths(paths: Sequence[Path]) -> dict[Path, set[str] | None]:
    """Benchmark folder → named bundle ids (``None`` = every bundle)."""
    out: dict[Path, set[str] | None] = {}
    for raw in paths:
        p = Path(raw)
        if not p.exists():
            raise UsageError(f"{raw}: no such file or folder", hint="check the path")
        p = (p.parent if p.is_file() else p).resolve()
        if is_benchmark_dir(p):
            out[p] = None
        elif is_bundle_dir(p) and is_benchmark_dir(p.parent):
            cur = out.setdefault(p.parent, set())
            if cur is not None:
                cur.add(p.name)
        else:
            raise UsageError(f"{raw}: neither a benchmark nor a bundle folder",
                             hint="give submissions/<benchmark> or submissions/<benchmark>/"
                             "<bundle>")
    return out


def check(
    *,
    paths: Sequence[Path] = (),
    base: str | None = None,
    submissions: Path = Path("submissions"),
    seed: int = 20211,
    options: dict[str, Any] | None = None,
    executor: Any = None,
    store_path: Path | None = None,
    today: dt.date | None = None,
    progress: Callable[[str, int, int], None] | None = None,
) -> CheckReport:
    """Check the bundles a pull request adds or changes (``base``) or those in ``paths``.

    Parameters
    ----------
    paths : sequence of Path
        Bundle or benchmark folders to check; with ``base``, they narrow the review.
    base : str, optional
        The git ref the pull request goes into (``origin/main``).
    submissions : Path
        The submissions folder.
    seed, options, executor
        As for ``gmeter score`` (the same values give the same numbers).
    store_path : Path, optional
        An existing store whose bundle history extends the resubmission check (read only).
    today : date, optional
        "Now" for date checks (tests).
    progress : callable, optional
        ``progress(task, done, total)`` for long scoring work.

    Raises
    ------
    UsageError
        Neither ``base`` nor ``paths``, or a path that is not a benchmark or bundle.
    GmeterError
        The base ref is unknown, or not in a git repository.
    """
    from pipeline.check.view import CheckView, make_view

    if base is None and not paths:
        raise UsageError("nothing to check", hint="give --base REF (e.g. origin/main) or "
                         "bundle folders")
    today = today or dt.date.today()
    options = dict(options or {})
    named = _resolve_paths(paths) if paths else None
    view: CheckView = make_view(submissions, base, named)
    report = CheckReport(view.mode, view.base, view.base_commit, view.merge_base, seed=seed)
    report.findings = view.pr_findings()
    report.outside = view.outside
    facts = view.store_facts(store_path, report.notes)
    with tempfile.TemporaryDirectory(prefix="gmeter-check-") as tmp:
        from pipeline.store import open_store

        # An in-memory DuckDB: nothing to clean up, no fsync per transaction.
        with open_store(Path(":memory:")) as store:
            for bench_id in view.benchmarks():
                bc = _check_benchmark(view, bench_id, store, Path(tmp), facts=facts, seed=seed,
                                      options=options, executor=executor, today=today,
                                      progress=progress)
                report.benchmarks.append(bc)
    if not report.benchmarks:
        report.notes.append("no bundle or benchmark under submissions/ is added or changed")
    return report


def _check_benchmark(view: Any, bench_id: str, store: Any, tmp: Path, *,
                     facts: StoreFacts, seed: int, options: dict[str, Any],
                     executor: Any, today: dt.date,
                     progress: Callable[[str, int, int], None] | None) -> BenchmarkCheck:
    from pipeline.check.registry import run_benchmark_checks
    from pipeline.tracks import get_track, metric_info
    from pipeline.tracks.review import IntegrityContext
    from pipeline.validate import load_benchmark

    after_path = view.work_path(bench_id)
    bc = BenchmarkCheck(bench_id, display(after_path), None,
                        targets=view.targets(bench_id), deleted=view.deleted(bench_id))
    if not is_benchmark_dir(after_path):
        if after_path.is_dir():
            bc.status = "invalid"
            bc.unscored = list(bc.targets)
            bc.problems.append(Problem(f"{bc.label}/benchmark.toml", "-", "file is missing",
                                       "a benchmark folder needs a benchmark.toml (`gmeter "
                                       "new` writes one); maintainers add benchmarks"))
        else:
            bc.status = "removed"
            bc.notes.append("the benchmark is removed by this pull request")
            bc.findings = _removed_findings(view, bench_id, tmp)
        return bc
    after = load_benchmark(after_path, today=today)
    before = view.before(bench_id, after, tmp)
    bc.track = after.track
    targets = set(bc.targets)
    bench_changed = bool(view.benchmark_files(bench_id))
    bc.problems = sorted(set(after.problems) | {
        p for b in after.bundles for p in b.problems
        if b.id in targets or (bench_changed and p.severity == "error")})
    if (after.input is None or after.track is None
            or any(p.severity == "error" for p in after.problems)):
        bc.status = "invalid"
        bc.unscored = sorted(targets)
        return bc
    spec = get_track(after.track)
    inp = after.input
    bc.title = str(inp.manifest.get("title", bench_id))
    bc.version = inp.version
    bc.populational = spec.populational_for(inp.settings)
    bc.primary_metric = spec.primary_metric
    direction = metric_info(spec.primary_metric, spec.name).direction
    bc.direction = "lower" if direction == "lower" else "higher"
    independent = (not bc.populational and before is not None and before.input is not None
                   and before.input.content_hash == inp.content_hash)
    if not independent:
        st_before = _score_state(store, before, bench_id, seed=seed, options=options,
                                 executor=executor, progress=progress)
    st_after = _score_state(store, after, bench_id, seed=seed, options=options,
                            executor=executor, progress=progress)
    if independent:
        assert before is not None
        st_before = _derive_before(before, st_after.rows, seed=seed, options=options,
                                   executor=executor, progress=progress)
    if st_after.failed:
        bc.status = "failed"
        bc.notes += [f"scoring failed: {f}" for f in st_after.failed]
    if st_before.failed:
        bc.notes += [f"the base state could not be scored: {f}" for f in st_before.failed]
    bc.rows = st_after.rows
    compare(bc, entries_of(st_before.rows, bc.primary_metric, bc.direction),
            entries_of(st_after.rows, bc.primary_metric, bc.direction))
    scored = {r["bundle"] for r in st_after.rows}
    bc.unscored = sorted(t for t in targets if t not in scored and bc.status != "failed")
    inputs = {b.id: b.input for b in after.bundles if b.input is not None}
    ctx = IntegrityContext(
        benchmark=inp,
        targets=[inputs[t] for t in sorted(targets) if t in inputs],
        peers=[b for i, b in sorted(inputs.items()) if i not in targets],
        known_hashes=_known(bench_id, before, facts.history, set(bc.deleted)),
        today=today,
        benchmark_changed=view.benchmark_files(bench_id),
        base_benchmark=before.input if before is not None else None,
        ownership=view.ownership(bench_id),
        scores=st_after.rows,
    )
    # A finding that repeats a validation problem (the AIQ replay re-reads the log) is dropped,
    # and so is context (info) about a bundle that does not even validate.
    shown = {(p.file, p.field, p.message) for p in bc.problems}
    broken = {b.label for b in after.bundles
              if b.id in targets and any(p.severity == "error" for p in b.problems)}
    bc.findings = [f for f in run_benchmark_checks(ctx)
                   if (f.file, f.field, f.message) not in shown
                   and not (f.severity == "info" and _inside(f.file, broken))]
    bc.stale = view.stale(bench_id, inp.version, exclude=targets)
    scored_on = facts.scored_on.get(bench_id)
    if scored_on is not None and scored_on[0] and scored_on[0] != inp.content_hash:
        published = sorted({r["bundle"] for r in st_before.rows} - targets)
        bc.stale += [StaleEntry(b, scored_on[1] or scored_on[0][:10], "", "scored")
                     for b in published]
    return bc


def _removed_findings(view: Any, bench_id: str, tmp: Path) -> list[Finding]:
    """Who owned the bundles of a benchmark the pull request deletes entirely."""
    from pipeline.check.generic import foreign_edit
    from pipeline.tracks.review import IntegrityContext

    base = view.before(bench_id, None, tmp)
    if base is None or base.input is None:
        return []
    ctx = IntegrityContext(benchmark=base.input, targets=[], ownership=view.ownership(bench_id))
    removal = Finding("warning", "benchmark-change", display(view.work_path(bench_id)), "-",
                      f"removes the benchmark {bench_id!r} and its {len(base.bundles)} bundles",
                      "only maintainers remove benchmarks; its scores stay in the recorded "
                      "releases")
    return [removal, *foreign_edit(ctx)]


def _inside(path: str, folders: set[str]) -> bool:
    """Whether ``path`` is one of ``folders`` or below one."""
    return any(path == d or path.startswith(d + "/") for d in folders)


def _known(bench_id: str, before: LoadedBenchmark | None, history: dict[str, list[str]],
           moved: set[str]) -> dict[str, list[str]]:
    """Content hash → labels of the benchmark's published bundles (base state + history).

    Bundles the pull request deletes are left out: re-adding the same files under a new
    name is a move (the ownership check looks at the deletion).
    """
    out: dict[str, list[str]] = {}
    for h, labels in history.items():
        for lbl in labels:
            bench, _, bundle = lbl.partition("/")
            if bench == bench_id and bundle not in moved:
                out.setdefault(h, []).append(lbl)
    for b in before.bundles if before is not None else []:
        if b.input is not None and b.id not in moved:
            out.setdefault(b.input.content_hash, []).append(f"{bench_id}/{b.id}")
    return out


__all__ = ["BenchmarkCheck", "CheckReport", "Entry", "NewEntry", "OtherChange", "Ownership",
           "StaleEntry", "check", "compare", "entries_of", "read_scores"]
