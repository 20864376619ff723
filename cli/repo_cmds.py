"""``gmeter init`` (a benchmark repository of one's own) and ``gmeter site`` (the whole build)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer

from cli.context import STATE, console, info, progress_reporter


def _check_format(fmt: str) -> None:
    from pipeline.errors import UsageError

    if fmt not in ("text", "json"):
        raise UsageError(f"--format {fmt!r}", hint="use text or json")


def init(
    folder: Annotated[Path, typer.Argument(help="The new repository (created if missing).")],
    title: Annotated[str, typer.Option("--title", help="The site's title.")],
    licence: Annotated[str, typer.Option(
        "--licence", help="SPDX identifier of the data's licence (e.g. CC-BY-4.0).")],
    url: Annotated[str, typer.Option(
        "--url", help="Where the site is published (https://...; its path is the base path).")],
    repository: Annotated[str, typer.Option(
        "--repository", help="The repository's URL (https://github.com/OWNER/REPO).")] = "",
    description: Annotated[str, typer.Option(
        "--description", help="One sentence about the site.")] = "",
    force: Annotated[bool, typer.Option(
        "--force", help="Write into a non-empty folder (existing gmeter files are replaced).")
    ] = False,
) -> None:
    """Write a benchmark repository: gmeter.toml, submissions/, CI workflows, README, .gitignore.

    The two GitHub workflows (pull-request check, publication to GitHub Pages) install this
    gmeter version, pinned, and run gmeter directly. Runs `git init` when FOLDER is not in a
    git repository yet. Then: `gmeter new TRACK BENCHMARK/BUNDLE` and `gmeter site`.
    """
    from pipeline.repository.init import init_repository

    report = init_repository(folder, title=title, licence=licence, url=url,
                             repository=repository, description=description, force=force)
    for rel in report.written:
        info(f"wrote {folder / rel}")
    if report.git_initialised:
        info(f"initialised a git repository in {folder}")
    if not STATE.quiet:
        console.print(f"next: cd {folder} && gmeter new generality my-benchmark/my-system "
                      "&& gmeter site")


def site(
    out: Annotated[Path, typer.Option(
        "--out", "-o", help="Where the site goes (replaced atomically; default public).")
    ] = Path("public"),
    fmt: Annotated[str, typer.Option("--format", help="text or json.")] = "text",
) -> None:
    """Validate, ingest, score and build the site of the repository in the current folder.

    Reads gmeter.toml and submissions/ here; stops at the first step that fails and leaves the
    previous site in place. The same as `gmeter validate submissions`, `gmeter ingest`,
    `gmeter score` and `gmeter build`.
    """
    from pipeline.repository.site import build_repository_site

    _check_format(fmt)
    with progress_reporter() as progress:
        run = build_repository_site(Path.cwd(), STATE.db_path, out, progress=progress,
                                    step=lambda name: info(f"gmeter site: {name}"))
    if fmt == "json":
        typer.echo(json.dumps(run.as_dict(), sort_keys=True))
        return
    b = run.build
    info(f"{run.benchmarks} benchmark(s), {run.bundles} bundle(s); ingest "
         f"{run.ingest.count('new')} new, {run.ingest.count('changed')} changed; "
         f"scored {len(run.score.results)} (release, benchmark) pair(s)")
    info(f"built {b.pages} pages ({b.files} files, {b.bytes / 1e6:.1f} MB) in {b.seconds:.1f} s")
    if not STATE.quiet:
        console.print(f"site written to {b.out}")


def register(app: typer.Typer) -> None:
    """Add ``init`` and ``site`` to the app."""
    app.command("init")(init)
    app.command("site")(site)
