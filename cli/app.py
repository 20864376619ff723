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


def _quiet_pipe() -> None:
    """The reader of our output went away (``gmeter query … | head``): end quietly.

    stdout is pointed at /dev/null so the interpreter's final flush does not fail again.
    """
    import os

    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError):
        pass


class _Terminated(KeyboardInterrupt):
    """SIGTERM, raised in the main thread so every ``finally`` and ``with`` block runs."""


def _set_flag(name: str, value: bool) -> None:
    if not value:
        return
    other = "verbose" if name == "quiet" else "quiet"
    if getattr(STATE, other):
        from pipeline.errors import UsageError

        raise UsageError("--quiet and --verbose together", hint="give one of them")
    setattr(STATE, name, True)


def _late_flags(
    quiet: Annotated[
        bool,
        typer.Option("--quiet", "-q", hidden=True, expose_value=False,
                     callback=lambda value: _set_flag("quiet", value)),
    ] = False,
    verbose: Annotated[
        bool,
        typer.Option("--verbose", "-v", hidden=True, expose_value=False,
                     callback=lambda value: _set_flag("verbose", value)),
    ] = False,
) -> None:
    """Holds the two global flags every command also accepts after its name."""


def _late_params() -> list[Any]:
    holder = typer.Typer()
    holder.command()(_late_flags)
    return list(typer.main.get_command(holder).params)


_LATE_PARAMS: list[Any] = []


def _accept_global_flags(cmd: Any) -> None:
    """Let ``cmd`` (and every command below it) take ``-q``/``-v`` after its name.

    A command with an option of the same spelling keeps its own; the added ones are hidden
    in its help (the ``gmeter`` help lists them once).
    """
    if not _LATE_PARAMS:
        _LATE_PARAMS.extend(_late_params())
    for sub in getattr(cmd, "commands", {}).values():
        _accept_global_flags(sub)
    taken = {opt for p in cmd.params for opt in getattr(p, "opts", [])}
    for param in _LATE_PARAMS:
        if not taken & set(param.opts):
            cmd.params.append(param)


class _GmeterGroup(TyperGroup):
    """Map :class:`~pipeline.errors.GmeterError` to its exit code inside click.

    ``CliRunner`` and the console script then behave the same (no traceback for user errors).
    Every command also accepts the global ``-q``/``-v`` after its name.
    """

    def get_command(self, ctx: Any, cmd_name: str) -> Any:
        cmd = super().get_command(ctx, cmd_name)
        if cmd is not None:
            _accept_global_flags(cmd)
        return cmd

    def invoke(self, ctx: Any) -> Any:
        from pipeline.errors import GmeterError

        try:
            return super().invoke(ctx)
        except GmeterError as exc:
            from cli.render_errors import print_error

            print_error(exc)
            raise typer.Exit(exc.exit_code) from None
        except ImportError as exc:
            # An optional dependency (numba, scikit-learn, ...) missing: name the extra.
            from cli.extras import missing_extra
            from cli.render_errors import print_error

            extra = missing_extra(exc)
            if extra is None:
                raise
            print_error(extra)
            raise typer.Exit(extra.exit_code) from None
        except BrokenPipeError:
            _quiet_pipe()
            raise typer.Exit(0) from None
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
    add_completion=True,
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
        bool,
        typer.Option(
            "--quiet", "-q", help="Print only results and errors (before or after the command)."
        ),
    ] = False,
    verbose: Annotated[
        bool,
        typer.Option("--verbose", "-v", help="Print more detail (before or after the command)."),
    ] = False,
    version: Annotated[
        bool,
        typer.Option(
            "--version", callback=_version, is_eager=True, help="Show the version and exit."
        ),
    ] = False,
) -> None:
    """Global options, given before the command (``-q``/``-v`` also after it)."""
    from pipeline.errors import UsageError

    if quiet and verbose:
        raise UsageError("--quiet and --verbose together", hint="give one of them")
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
    except BrokenPipeError:
        _quiet_pipe()
        sys.exit(0)
    except OSError as exc:
        from cli.render_errors import print_os_error

        print_os_error(exc)
        sys.exit(1)

