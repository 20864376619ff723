"""The ``gmeter`` application: global options, error-to-exit-code mapping, command discovery.

Commands live in ``cli/*_cmds.py`` modules; each exposes ``register(app)``. They are found by
name so a new track adds its commands without editing this file. Command modules import only
typer/rich at module level, which keeps ``gmeter --help`` fast (a test measures it).
"""

from __future__ import annotations

import importlib
import pkgutil
import sys
from pathlib import Path
from typing import Annotated, Any

import typer
from typer.core import TyperGroup

from cli.context import STATE, err_console
from pipeline import __version__


class _Terminated(KeyboardInterrupt):
    """SIGTERM, raised in the main thread so every ``finally`` and ``with`` block runs."""


class _GmeterGroup(TyperGroup):
    """Map :class:`~pipeline.errors.GmeterError` to its exit code inside click.

    ``CliRunner`` and the console script then behave the same (no traceback for user errors).
    """

    def invoke(self, ctx: Any) -> Any:
        from pipeline.errors import GmeterError

        try:
            return super().invoke(ctx)
        except GmeterError as exc:
            from cli.render_errors import print_error

            print_error(exc)
            raise typer.Exit(exc.exit_code) from None
        except OSError as exc:
            # A full disk, a read-only or vanished output folder, a permission: one line.
            from cli.render_errors import print_os_error

            print_os_error(exc)
            raise typer.Exit(1) from None
        except _Terminated:
            err_console.print("error: terminated (workers stopped, nothing half-written kept)")
            raise typer.Exit(143) from None


app = typer.Typer(
    cls=_GmeterGroup,
    name="gmeter",
    help="Publish and audit measures of general machine intelligence "
    "(g-index, AIQ, generality, test similarity).",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,
)


def _version(value: bool) -> None:
    if value:
        typer.echo(f"gmeter {__version__}")
        raise typer.Exit()


@app.callback()
def main_options(
    db: Annotated[
        Path | None,
        typer.Option(
            "--db",
            envvar="GMETER_DB",
            help="The DuckDB store (default .gmeter/gmeter.duckdb; env GMETER_DB).",
        ),
    ] = None,
    quiet: Annotated[
        bool, typer.Option("--quiet", "-q", help="Print only results and errors.")
    ] = False,
    verbose: Annotated[bool, typer.Option("--verbose", "-v", help="Print more detail.")] = False,
    version: Annotated[
        bool,
        typer.Option(
            "--version", callback=_version, is_eager=True, help="Show the version and exit."
        ),
    ] = False,
) -> None:
    """Global options, given before the command."""
    STATE.db = db
    STATE.quiet = quiet
    STATE.verbose = verbose


def _register_commands() -> None:
    import cli

    for mod in sorted(m.name for m in pkgutil.iter_modules(cli.__path__)):
        if mod.endswith("_cmds"):
            importlib.import_module(f"cli.{mod}").register(app)


_register_commands()


def main() -> None:
    """Console-script entry point: run the app and map gmeter errors to exit codes.

    Click handles usage errors itself (exit 2); a :class:`~pipeline.errors.GmeterError`
    raised by a command is printed without a traceback and exits with its own code.
    """
    import signal

    from pipeline.errors import GmeterError

    def terminated(signum: int, frame: Any) -> None:
        raise _Terminated()

    # SIGTERM (a CI cancel, `kill`) unwinds like Ctrl-C: executors stop their workers and
    # temporary folders are removed, instead of the process vanishing mid-write.
    signal.signal(signal.SIGTERM, terminated)
    try:
        app()
    except GmeterError as exc:
        from cli.render_errors import print_error

        print_error(exc)
        sys.exit(exc.exit_code)
    except _Terminated:
        err_console.print("error: terminated (nothing half-written was kept)")
        sys.exit(143)
    except KeyboardInterrupt:
        err_console.print("interrupted")
        sys.exit(130)
    except OSError as exc:
        from cli.render_errors import print_os_error

        print_os_error(exc)
        sys.exit(1)

