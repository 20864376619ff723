"""How gmeter errors look on the terminal (no traceback for user errors)."""

from __future__ import annotations

from rich.markup import escape

from cli.context import err_console
from pipeline.errors import GmeterError, ValidationFailed


def print_error(exc: GmeterError) -> None:
    """Print ``exc`` (and every problem it carries) to stderr."""
    if isinstance(exc, ValidationFailed):
        for p in exc.problems:
            style = "red" if p.severity == "error" else "yellow"
            err_console.print(f"[{style}]{p.severity}[/{style}] {escape(str(p))}", markup=True)
    err_console.print(f"[red]error:[/red] {escape(str(exc))}", markup=True)
