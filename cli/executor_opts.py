"""Reusable ``--executor/--workers/--scheduler`` options for commands that do heavy work.

Use them in a command::

    from cli.executor_opts import ExecutorOpt, SchedulerOpt, WorkersOpt, open_executor

    def score(executor: ExecutorOpt = "local", workers: WorkersOpt = None,
              scheduler: SchedulerOpt = None) -> None:
        with open_executor(executor, workers, scheduler) as ex:
            ...  # pass ex to the pipeline use case

Only typer and the standard library are imported here; :mod:`pipeline.executor` (and Dask) is
imported when :func:`open_executor` runs, so ``gmeter --help`` stays fast.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Annotated, Any

import typer

EXECUTOR_HELP = (
    "Where heavy work runs: local (a process per core, the default), inprocess (one process, "
    "for debugging) or dask (a Dask cluster; see --scheduler). Env GMETER_EXECUTOR."
)

ExecutorOpt = Annotated[
    str,
    typer.Option("--executor", envvar="GMETER_EXECUTOR", help=EXECUTOR_HELP, show_default=True),
]
WorkersOpt = Annotated[
    int | None,
    typer.Option(
        "--workers",
        min=1,
        envvar="GMETER_WORKERS",
        help="Worker processes for local (and a private Dask cluster); default: all cores. "
        "Env GMETER_WORKERS.",
    ),
]
SchedulerOpt = Annotated[
    str | None,
    typer.Option(
        "--scheduler",
        envvar="GMETER_SCHEDULER",
        help="Dask scheduler address, e.g. tcp://10.0.0.5:8786 (with --executor dask); without "
        "it a local Dask cluster is started. Env GMETER_SCHEDULER.",
    ),
]


@contextmanager
def open_executor(
    executor: str = "local", workers: int | None = None, scheduler: str | None = None
) -> Iterator[Any]:
    """Yield the executor the options name and close its workers afterwards.

    Raises
    ------
    pipeline.errors.UsageError
        Unknown executor, or ``--scheduler`` without ``--executor dask`` (exit code 2).
    pipeline.errors.GmeterError
        The Dask scheduler cannot be reached.
    """
    from pipeline.executor import get_executor

    ex = get_executor(executor, workers=workers, scheduler=scheduler)
    try:
        yield ex
    finally:
        ex.close()
