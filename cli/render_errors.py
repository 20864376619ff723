"""How gmeter errors look on the terminal (no traceback for user errors)."""

from __future__ import annotations

from rich.markup import escape

from cli.context import err_console, safe_text
from pipeline.errors import GmeterError, ValidationFailed


def print_error(exc: GmeterError) -> None:
    """Print ``exc`` (and every problem it carries) to stderr."""
    if isinstance(exc, ValidationFailed):
        for p in exc.problems:
            style = "red" if p.severity == "error" else "yellow"
            err_console.print(f"[{style}]{p.severity}[/{style}] {escape(safe_text(str(p)))}",
                              markup=True)
    err_console.print(f"[red]error:[/red] {escape(safe_text(str(exc)))}", markup=True)


_OS_HINTS = {
    "ENOSPC": "free some disk space and run the command again",
    "EDQUOT": "free some disk space and run the command again",
    "EROFS": "the folder is on a read-only file system: choose another with --out / --db",
    "EACCES": "check the permissions of the folder, or choose another with --out / --db",
    "EPERM": "check the permissions of the folder, or choose another with --out / --db",
    "ENOENT": "check the path",
}


def print_os_error(exc: OSError) -> None:
    """One line for an operating-system error (full disk, read-only folder, permissions)."""
    import errno

    code = errno.errorcode.get(exc.errno or 0, "")
    where = f" {exc.filename}" if exc.filename else ""
    hint = _OS_HINTS.get(code, "check the file system")
    text = f"{exc.strerror or exc}{':' if where else ''}{where} — {hint}"
    err_console.print(f"[red]error:[/red] {escape(safe_text(text))}", markup=True)
