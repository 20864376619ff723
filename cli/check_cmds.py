"""``gmeter check``: what CI runs on a pull request (validate, recompute, compare, integrity)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer

from cli.context import STATE, info, progress_reporter, safe_text
from cli.executor_opts import ExecutorOpt, SchedulerOpt, WorkersOpt, open_executor


def check(
    paths: Annotated[list[Path] | None, typer.Argument(
        help="Bundle or benchmark folders to check (default: what --base shows changed).")] = None,
    base: Annotated[str | None, typer.Option(
        "--base", help="Git ref the pull request goes into, e.g. origin/main: check the "
        "bundles added or changed since the merge base.")] = None,
    report: Annotated[Path | None, typer.Option(
        "--report", help="Also write the Markdown report to this file (a PR comment).")] = None,
    fmt: Annotated[str, typer.Option(
        "--format", help="What to print: text, markdown or json.")] = "text",
    submissions: Annotated[Path, typer.Option(
        "--submissions", help="The submissions folder.")] = Path("submissions"),
    seed: Annotated[int, typer.Option(help="Root seed (as for gmeter score).")] = 20211,
    option: Annotated[list[str] | None, typer.Option(
        "--option", help="Track option KEY=VALUE (as for gmeter score).")] = None,
    executor: ExecutorOpt = "local",
    workers: WorkersOpt = None,
    scheduler: SchedulerOpt = None,
) -> None:
    """Validate, recompute and compare the bundles of a pull request; report integrity findings.

    Exit code 1 when anything is an error; warnings pass. The store is never written: scores
    are recomputed in a scratch copy. See docs/submitting.md.
    """
    from pipeline.check.report import render, to_markdown
    from pipeline.check.run import check as run
    from pipeline.errors import UsageError

    if fmt not in ("text", "markdown", "json"):
        raise UsageError(f"--format {fmt!r}", hint="use text, markdown or json")
    opts: dict[str, Any] = {}
    for item in option or []:
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            raise UsageError(f"--option {item!r}", hint="write KEY=VALUE")
        opts[key.strip()] = value.strip()
    with open_executor(executor, workers, scheduler) as ex, progress_reporter() as progress:
        result = run(paths=paths or [], base=base, submissions=submissions, seed=seed,
                     options=opts, executor=ex, store_path=STATE.db_path, progress=progress)
    if report is not None:
        report.parent.mkdir(parents=True, exist_ok=True)
        report.write_text(to_markdown(result), encoding="utf-8")
        info(f"wrote {report}")
    # the report quotes bundle text (names, file names): escaped once more for the terminal
    typer.echo(safe_text(render(result, fmt)), nl=False)
    if result.exit_code:
        raise typer.Exit(result.exit_code)


def register(app: typer.Typer) -> None:
    """Add ``check`` to ``app``."""
    app.command()(check)
