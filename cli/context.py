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
console = Console(highlight=False, soft_wrap=True)
err_console = Console(stderr=True, highlight=False, soft_wrap=True)


_UNSAFE = {0x7F, *range(0x80, 0xA0), *range(0x202A, 0x202F), *range(0x2066, 0x206A)}


def safe_text(text: str) -> str:
    r"""``text`` with terminal control characters escaped (``\x1b``, ``\u202e``).

    C0 controls other than newline and tab, DEL, C1 controls (``\x9b`` is a CSI) and the
    bidirectional embeddings, overrides and isolates are written as escapes, so a value
    from the store or a bundle cannot move the cursor, recolour or reorder the terminal.
    """
    if all(" " <= ch < "\x7f" or ch in "\n\t" for ch in text):
        return text
    out = []
    for ch in text:
        o = ord(ch)
        if (o < 0x20 and ch not in "\n\t") or o in _UNSAFE or 0xD800 <= o <= 0xDFFF:
            out.append(f"\\x{o:02x}" if o < 0x100 else f"\\u{o:04x}")
        else:
            out.append(ch)
    return "".join(out)


def info(message: str) -> None:
    """Print a status line unless ``--quiet``."""
    if not STATE.quiet:
        err_console.print(message)


def debug(message: str) -> None:
    """Print a line only with ``--verbose``."""
    if STATE.verbose:
        err_console.print(f"[dim]{message}[/dim]")


@contextmanager
def progress_reporter() -> Iterator[Any]:
    """Yield a ``progress(task, done, total)`` callback that drives a rich progress bar.

    Quiet mode and non-terminals get a no-op callback (CI logs stay readable).
    """
    if STATE.quiet or not err_console.is_terminal:
        yield None
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
