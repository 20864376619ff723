"""Core commands: validate, ingest, score, query, release, schema, new."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Annotated, Any

import typer

from cli.context import STATE, console, info, progress_reporter, safe_text
from cli.executor_opts import ExecutorOpt, SchedulerOpt, WorkersOpt, open_executor

Paths = Annotated[
    list[Path] | None,
    typer.Argument(help="Submissions folder, benchmark folders or bundle folders."),
]


def _check_format(fmt: str) -> None:
    from pipeline.errors import UsageError

    if fmt not in ("text", "json"):
        raise UsageError(f"--format {fmt!r}", hint="use text or json")


def _default_paths(paths: list[Path] | None) -> list[Path]:
    return paths or [Path("submissions")]


def validate(
    paths: Annotated[list[Path], typer.Argument(help="Submissions, benchmark or bundle folders.")],
    fmt: Annotated[str, typer.Option("--format", help="text or json.")] = "text",
) -> None:
    """Check benchmarks and bundles; list every problem at once (the store is not written).

    Bundle versions the store has seen pass every check are not checked again.
    """
    from pipeline.errors import UsageError
    from pipeline.validate import clean_versions, collect

    if fmt not in ("text", "json"):
        raise UsageError(f"--format {fmt!r}", hint="use text or json")
    report = collect(paths, clean=clean_versions(STATE.db_path))
    if fmt == "json":
        console.print_json(json.dumps({
            "ok": not report.errors,
            "benchmarks": len(report.benchmarks),
            "bundles": report.bundle_count,
            "problems": [p.as_dict() for p in report.problems],
        }))
    else:
        for p in report.problems:
            typer.echo(f"{p.severity}: {safe_text(str(p))}")
        info(f"checked {len(report.benchmarks)} benchmark(s), {report.bundle_count} bundle(s): "
             f"{len(report.errors)} error(s), {len(report.problems) - len(report.errors)} "
             "warning(s)")
    if report.errors:
        raise typer.Exit(1)


def ingest(
    paths: Paths = None,
    strict: Annotated[
        bool, typer.Option("--strict", help="Ingest nothing if anything is bad.")
    ] = False,
    releases: Annotated[Path | None, typer.Option(
        help="The releases file to record (default: releases.toml of the submissions folder "
        "ingested).")] = None,
    fmt: Annotated[str, typer.Option("--format", help="text or json (a summary).")] = "text",
) -> None:
    """Validate, then store every good bundle (one transaction each; unchanged ones are no-ops).

    Then record every release of releases.toml, rebuilding from git history any version a
    release names that the store lacks (a fresh clone publishes every release).
    """
    from rich.table import Table

    from pipeline.ingest import ingest as run
    from pipeline.release import releases_file_for, sync_releases
    from pipeline.repository.site import ingest_summary
    from pipeline.store import open_store

    _check_format(fmt)
    chosen = _default_paths(paths)
    rel_file = releases or releases_file_for(chosen)
    with open_store(STATE.db_path) as store, progress_reporter() as progress:
        report = run(store, chosen, strict=strict, progress=progress)
        history = sync_releases(store, rel_file) if not report.strict_aborted else []
    for p in report.problems + history:
        typer.echo(f"{p.severity}: {safe_text(str(p))}", err=True)
    table = Table(title=f"ingest into {STATE.db_path}")
    for col in ("new", "changed", "unchanged", "rejected", "retired"):
        table.add_column(col, justify="right")
    table.add_row(*(str(report.count(s)) for s in
                    ("new", "changed", "unchanged", "rejected", "retired")))
    if fmt == "json":
        typer.echo(json.dumps({
            **ingest_summary(report),
            "ok": not (report.rejected or report.strict_aborted
                       or any(p.severity == "error" for p in history)),
            "problems": [p.as_dict() for p in report.problems + history],
        }, sort_keys=True))
    elif not STATE.quiet:
        console.print(table)
        if STATE.verbose:
            for o in report.outcomes:
                console.print(f"{o.status:9} {o.benchmark}/{o.bundle} {o.content_hash[:12]}")
    if report.strict_aborted:
        typer.echo("--strict: nothing was ingested because of the errors above", err=True)
    if report.rejected or any(p.severity == "error" for p in history):
        raise typer.Exit(1)


def score(
    release: Annotated[list[str] | None, typer.Option(
        "--release", help="Release(s) to score (default: current + all recorded).")] = None,
    benchmark: Annotated[list[str] | None, typer.Option(
        "--benchmark", help="Only these benchmark ids.")] = None,
    seed: Annotated[int, typer.Option(help="Root seed for bootstrap intervals.")] = 20211,
    option: Annotated[list[str] | None, typer.Option(
        "--option", help="Track option KEY=VALUE (e.g. convention=paper).")] = None,
    executor: ExecutorOpt = "local",
    workers: WorkersOpt = None,
    scheduler: SchedulerOpt = None,
    force: Annotated[bool, typer.Option("--force", help="Recompute unchanged inputs.")] = False,
    fmt: Annotated[str, typer.Option("--format", help="text or json (a summary).")] = "text",
) -> None:
    """Compute every metric for the current state and each release; store ranked scores."""
    from rich.table import Table

    from pipeline.errors import UsageError
    from pipeline.repository.site import score_summary
    from pipeline.score import score_all
    from pipeline.store import open_store

    _check_format(fmt)
    opts: dict[str, Any] = {}
    for item in option or []:
        key, sep, value = item.partition("=")
        if not sep or not key:
            raise UsageError(f"--option {item!r}", hint="write KEY=VALUE")
        opts[key.strip()] = value.strip()
    with open_executor(executor, workers, scheduler) as ex, \
            open_store(STATE.db_path, create=False) as store, progress_reporter() as progress:
        report = score_all(store, releases=release, benchmarks=benchmark, seed=seed,
                           options=opts, executor=ex, force=force, progress=progress)
    table = Table(title="score")
    for col in ("release", "benchmark", "status", "rows"):
        table.add_column(col)
    for r in report.results:
        table.add_row(r.release, r.benchmark, r.status, str(r.rows))
    if fmt == "json":
        typer.echo(json.dumps(score_summary(report), sort_keys=True))
    elif not STATE.quiet:
        console.print(table)
    for r in report.results:
        if r.status == "incomplete":
            typer.echo(safe_text(f"warning: {r.benchmark} ({r.release}): {'; '.join(r.notes)}"),
                       err=True)
    for r in report.failed:
        typer.echo(safe_text(f"error: {r.benchmark} ({r.release}): {'; '.join(r.notes)}"),
                   err=True)
    if report.failed:
        raise typer.Exit(1)


def query(
    sql: Annotated[str, typer.Argument(help="SQL to run (read-only).")],
    fmt: Annotated[str, typer.Option("--format", help="table, csv or json.")] = "table",
) -> None:
    """Run SQL on a read-only connection to the store (see docs/schema.md)."""
    import csv

    from rich.table import Table

    from pipeline.errors import UsageError
    from pipeline.untrusted import csv_cell

    if fmt not in ("table", "csv", "json"):
        raise UsageError(f"--format {fmt!r}", hint="use table, csv or json")
    from pipeline.store import query_store

    cols, rows = query_store(STATE.db_path, sql)
    if fmt == "csv":
        w = csv.writer(sys.stdout, lineterminator="\n")
        w.writerow([csv_cell(safe_text(c)) for c in cols])
        w.writerows([[csv_cell(_cell(v)) if isinstance(v, str) else _cell(v) for v in r]
                     for r in rows])
    elif fmt == "json":
        typer.echo(json.dumps([dict(zip(cols, r, strict=True)) for r in rows], default=str,
                              indent=1))
    else:
        # The console prints with markup off, so cells go in as typed: a markup escape here
        # would print its backslash (``\[release.frozen]``).
        table = Table()
        for c in cols:
            table.add_column(safe_text(c), overflow="fold")
        for r in rows:
            table.add_row(*(_cell(v) for v in r))
        console.print(table)


def _cell(value: object) -> str:
    """A query result as printable text: control characters escaped, ``None`` empty."""
    return "" if value is None else safe_text(str(value))


def release(
    name: Annotated[str, typer.Argument(help="Release name, e.g. 2026.11.")],
    notes: Annotated[str, typer.Option(help="What changed.")] = "",
    date: Annotated[str | None, typer.Option(help="YYYY-MM-DD (default today).")] = None,
    releases: Annotated[Path, typer.Option(help="The releases file.")] = Path(
        "submissions/releases.toml"),
    freeze: Annotated[bool, typer.Option(
        "--freeze", help="Freeze an existing release recorded before releases were frozen: "
        "write its numbers as this gmeter computes them.")] = False,
    fmt: Annotated[str, typer.Option("--format", help="text or json (a summary).")] = "text",
) -> None:
    """Record an immutable release of the current versions and freeze every published number.

    The numbers go to releases/NAME.csv next to the releases file (SHA-256 in its entry):
    building the release reads them and never recomputes.
    """
    import datetime as dt

    from pipeline.errors import UsageError
    from pipeline.release import freeze_release, record_release
    from pipeline.store import open_store

    _check_format(fmt)
    try:
        day = dt.date.fromisoformat(date) if date else None
    except ValueError as exc:
        raise UsageError(f"--date {date!r} is not YYYY-MM-DD") from exc
    with open_store(STATE.db_path, create=False) as store:
        if freeze:
            rel = freeze_release(store, releases, name)
        else:
            rel = record_release(store, releases, name, date=day, notes=notes)
    frozen = f"; numbers frozen in {releases.parent / rel.frozen.path}" if rel.frozen else ""
    if fmt == "json":
        typer.echo(json.dumps({
            "name": rel.name, "date": str(rel.date), "benchmarks": len(rel.benchmarks),
            "bundles": len(rel.bundles), "releases_file": str(releases),
            "uncommitted": list(rel.uncommitted),
            "frozen": str(releases.parent / rel.frozen.path) if rel.frozen else None},
            sort_keys=True))
    info(f"recorded release {rel.name} ({rel.date}): {len(rel.benchmarks)} benchmark(s), "
         f"{len(rel.bundles)} bundle(s) in {releases}{frozen}")
    if rel.uncommitted:
        typer.echo(f"warning: {len(rel.uncommitted)} version(s) are not committed yet "
                   f"(e.g. {rel.uncommitted[0]}): commit them with {releases}; a fresh clone "
                   "finds them in the history", err=True)


def schema(
    which: Annotated[str, typer.Argument(help="benchmark or submission.")] = "submission",
) -> None:
    """Print the JSON Schema of benchmark.toml or submission.toml."""
    from pipeline.errors import UsageError
    from pipeline.manifest import json_schema

    if which not in ("benchmark", "submission"):
        raise UsageError(f"{which!r}", hint="use benchmark or submission")
    typer.echo(json.dumps(json_schema(which), indent=2, sort_keys=True))


def new(
    track: Annotated[str, typer.Argument(help="gindex, generality, aiq or similarity.")],
    name: Annotated[str, typer.Argument(help="BENCHMARK/BUNDLE, or BUNDLE with --benchmark.")],
    benchmark: Annotated[str | None, typer.Option(help="The benchmark id.")] = None,
    root: Annotated[Path, typer.Option(help="The submissions folder.")] = Path("submissions"),
) -> None:
    """Scaffold a bundle (and its benchmark if new) with commented manifests to fill in."""
    from pipeline.scaffold import scaffold

    written = scaffold(root, track, name, benchmark=benchmark)
    for p in written:
        console.print(f"wrote {p}")
    info("fill in the TODO fields, then run `gmeter validate` on the folder")


def register(app: typer.Typer) -> None:
    """Add the core commands to ``app``."""
    app.command()(validate)
    app.command()(ingest)
    app.command()(score)
    app.command()(query)
    app.command()(release)
    app.command()(schema)
    app.command()(new)
