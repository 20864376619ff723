"""``gmeter aiq figure``: rerun Legg & Veness's Figure 1 or 2 (a sweep of ``gmeter aiq run``).

Only typer/rich/stdlib at module level; the sweep is imported inside the command. Registered on
the ``aiq`` group of :mod:`cli.aiq_cmds`.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer

from cli.context import console, info, progress_reporter
from cli.executor_opts import ExecutorOpt, SchedulerOpt, WorkersOpt, open_executor


def figure_cmd(
    figure: Annotated[
        int,
        typer.Argument(
            min=1,
            max=2,
            help="1: AIQ against episode length, six agents; 2: MC-AIXI over context depth "
            "x simulations at 50 000 cycles.",
        ),
    ],
    benchmark: Annotated[
        Path | None,
        typer.Option(
            "--benchmark",
            help="The figure's AIQ benchmark folder (default submissions/aiq-bf5-fig1 or -fig2).",
        ),
    ] = None,
    scale: Annotated[
        float,
        typer.Option(
            "--scale", min=0.001, help="Multiply every bundle's runs (e.g. 10 on a cluster)."
        ),
    ] = 1.0,
    only: Annotated[
        str | None,
        typer.Option("--only", help="Only bundles whose folder contains this, e.g. el100000."),
    ] = None,
    seed: Annotated[
        int, typer.Option("--seed", min=0, max=2**64 - 1, help="Root seed of every run.")
    ] = 1,
    force: Annotated[
        bool, typer.Option("--force", help="Rerun bundles that exist (default: keep them).")
    ] = False,
    dry_run: Annotated[
        bool, typer.Option("--dry-run", help="Print the bundles and projected CPU time only.")
    ] = False,
    executor: ExecutorOpt = "local",
    workers: WorkersOpt = None,
    scheduler: SchedulerOpt = None,
) -> None:
    """Write every bundle of a figure with traces (resumable: finished bundles are kept)."""
    from pipeline.errors import UsageError
    from pipeline.lab.aiq.figures import (
        DEFAULT_RATES,
        FIGURE_BENCHMARKS,
        figure_jobs,
        run_jobs,
        sweep_cost,
    )

    try:
        jobs = figure_jobs(figure, scale=scale, only=only)
    except ValueError as exc:
        raise UsageError(str(exc)) from exc
    folder = benchmark or FIGURE_BENCHMARKS[figure]
    for job in jobs:
        console.print(f"{job.folder:24s} {job.agent:40s} EL {job.episode_length:>7,} "
                      f"runs {job.runs:>6,}", markup=False)  # fmt: skip
    hours = sweep_cost(jobs, DEFAULT_RATES) / 3600
    console.print(f"{len(jobs)} bundles, about {hours:.2f} CPU hours at the committed machine's "
                  "rates (make bench)", markup=False)  # fmt: skip
    if dry_run:
        return

    def report(job: Any, run: Any) -> None:
        e = run.estimate
        console.print(f"{job.folder}: AIQ {e.value:.2f} ± {e.half_ci:.2f} ({e.pairs} pairs)",
                      markup=False)  # fmt: skip

    with open_executor(executor, workers, scheduler) as ex, progress_reporter() as progress:
        written = run_jobs(jobs, folder, seed=seed, executor=ex, progress=progress,
                           skip_existing=not force, report=report)  # fmt: skip
    info(f"{len(written)} bundles in {folder} (gmeter aiq verify replays each)")


def register(app: typer.Typer) -> None:
    """Add ``figure`` to the ``aiq`` command group (registered by :mod:`cli.aiq_cmds`)."""
    del app  # the group exists already: cli/aiq_cmds.py registers before this module
    from cli.aiq_cmds import aiq_app

    aiq_app.command("figure")(figure_cmd)
