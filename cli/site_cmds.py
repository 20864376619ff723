"""``gmeter build``: write the static site from the store."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer

from cli.context import STATE, console, info, progress_reporter


def build(
    out: Annotated[
        Path,
        typer.Option(
            "--out", "-o", help="Where the site goes (replaced atomically; default public)."
        ),
    ] = Path("public"),
    full: Annotated[
        bool, typer.Option("--full", help="Make every file again (ignore the previous build).")
    ] = False,
    fmt: Annotated[str, typer.Option("--format", help="text or json (a summary).")] = "text",
) -> None:
    """Build the static site (leaderboards, releases, charts, data, API, feed) from the store.

    The store is opened read-only. The site is written to a temporary folder, every internal
    link is checked, and only then does it replace OUT; a failed build leaves OUT as it was.
    Set SOURCE_DATE_EPOCH to fix the build date (builds are byte-identical either way).
    Only files whose inputs changed since the last build of OUT are made again (nothing when
    the store did not change); the result is the same as with --full.
    """
    from pipeline.errors import UsageError
    from pipeline.repository.site import build_summary
    from pipeline.site.build import build_site
    from pipeline.site.config import load_config, template_overrides

    if fmt not in ("text", "json"):
        raise UsageError(f"--format {fmt!r}", hint="use text or json")

    config = load_config(Path.cwd())
    with progress_reporter() as progress:
        report = build_site(
            STATE.db_path,
            out,
            progress=progress,
            incremental=not full,
            config=config,
            overrides=template_overrides(Path.cwd()),
        )
    if fmt == "json":
        typer.echo(json.dumps(build_summary(report), sort_keys=True))
        return
    info(
        f"built {report.pages} pages ({report.files} files, {report.bytes / 1e6:.1f} MB) for "
        f"{report.benchmarks} benchmark(s) and {len(report.versions)} version(s) "
        f"in {report.seconds:.1f} s"
    )
    if not STATE.quiet:
        console.print(f"site written to {report.out}")


def register(app: typer.Typer) -> None:
    """Add ``build`` to the app."""
    app.command("build")(build)
