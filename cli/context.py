"""Shared CLI state (global options), console output and progress helpers.

Only typer and rich are imported here; everything heavy is imported inside commands.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rich.console import Console

DEFAULT_DB = Path(".gmeter") / "gmeter.duckdb"


@dataclass
class GlobalOptions:
    """Options given before the command name (``gmeter --db X -q validate ...``)."""

    db: Path | None = None
    quiet: bool = False
    verbose: bool = False

    @property
    def db_path(self) -> Path:
        """The store path: ``--db``, else ``$GMETER_DB``, else ``.gmeter/gmeter.duckdb``."""
        if self.db is not None:
            return self.db
        env = os.environ.get("GMETER_DB")
        return Path(env) if env else DEFAULT_DB


STATE = GlobalOptions()


class SafeConsole(Console):
    """A rich console for text that may come from a bundle or the store.

    Markup is off unless a call asks for it (``markup=True``, with the untrusted parts passed
    through ``rich.markup.escape``), so a name like ``[link=…]x[/link]`` prints as typed; and
    every string it renders, table cells included, first goes through
    :func:`pipeline.untrusted.terminal`, so control, bidi and zero-width characters print as
    escapes instead of moving the cursor or reordering the line.
    """

    def render_str(self, text: str, **kwargs: Any) -> Any:
        """Escape terminal controls, then render as rich would."""
        from pipeline.untrusted import terminal

        return super().render_str(terminal(text), **kwargs)


console = SafeConsole(highlight=False, soft_wrap=True, markup=False, emoji=False)
err_console = SafeConsole(stderr=True, highlight=False, soft_wrap=True, markup=False,
                          emoji=False)


def safe_text(text: str) -> str:
    """``text`` safe for a terminal (:func:`pipeline.untrusted.terminal`)."""
    from pipeline.untrusted import terminal

    return terminal(text)


def info(message: str) -> None:
    """Print a status line unless ``--quiet``."""
    if not STATE.quiet:
        err_console.print(message)


def debug(message: str) -> None:
    """Print a line only with ``--verbose``."""
    if STATE.verbose:
        err_console.print(message, style="dim")


def _plain_progress(every: float = 10.0) -> Any:
    """A progress callback for logs: a line per task every ``every`` seconds.

    A task that took longer than that also prints its last line; short steps stay silent.
    """
    import sys
    import time

    started: dict[str, float] = {}
    shown: dict[str, float] = {}

    def report(task: str, done: int, total: int) -> None:
        now = time.monotonic()
        start = started.setdefault(task, now)
        if now - shown.get(task, start) >= every or (done >= total and now - start >= every):
            shown[task] = now
            print(f"{task}: {done}/{total}", file=sys.stderr, flush=True)

    return report


@contextmanager
def progress_reporter() -> Iterator[Any]:
    """Yield a ``progress(task, done, total)`` callback that drives a rich progress bar.

    Quiet mode gets none; without a terminal (CI logs) long steps print a plain line now and
    then (``task: done/total``, at most every 10 s and at the end) instead of a bar.
    """
    if STATE.quiet:
        yield None
        return
    if not err_console.is_terminal:
        yield _plain_progress()
        return
    from rich.progress import (
        BarColumn,
        MofNCompleteColumn,
        Progress,
        TextColumn,
        TimeElapsedColumn,
        TimeRemainingColumn,
    )

    with Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        TimeRemainingColumn(),
        console=err_console,
        transient=True,
    ) as bar:
        tasks: dict[str, Any] = {}

        def report(task: str, done: int, total: int) -> None:
            if task not in tasks:
                tasks[task] = bar.add_task(task, total=total)
            bar.update(tasks[task], completed=done, total=total)

        yield report
