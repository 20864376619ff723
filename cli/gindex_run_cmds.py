"""``gmeter gindex``: a published experiment's g-index, or ``gindex run`` of a system.

``gmeter gindex EXPERIMENT ...`` (as before) goes to ``gindex experiment``; ``gmeter gindex run
--system cmd:PROGRAM ...`` runs a program-synthesis system on a benchmark's test tasks and
writes a verified bundle (:mod:`pipeline.lab.gindex.harness`).
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer
from typer.core import TyperGroup

from cli.context import info
from cli.gindex_cmds import gindex_cmd


class _ExperimentOrSubcommand(TyperGroup):
    """A group whose first argument, when it is not a subcommand, goes to ``experiment``."""

    def parse_args(self, ctx: Any, args: list[str]) -> list[str]:  # ctx: a click Context
        if args and args[0] not in self.commands and args[0] not in ctx.help_option_names:
            args = ["experiment", *args]
        return super().parse_args(ctx, args)


gindex_app = typer.Typer(
    name="gindex",
    cls=_ExperimentOrSubcommand,
    help="The g-index (Venkatasubramanian et al. 2021): `gmeter gindex EXPERIMENT.json "
    "--domains DIR` recomputes a published experiment; `gmeter gindex run --system "
    "cmd:PROGRAM ...` runs a system on a benchmark's tasks and writes a verified bundle.",
    no_args_is_help=True,
    rich_markup_mode=None,
)
gindex_app.command("experiment")(gindex_cmd)


@gindex_app.command("run")
def run_cmd(
    system: Annotated[str, typer.Option(
        "--system", help="cmd:PROGRAM ARGS: reads one JSON line per task "
        '{"task", "domain", "prompt"}, answers one line {"program": [...]}.')],
    benchmark: Annotated[Path, typer.Option(
        "--benchmark", help="A g-index benchmark folder (e.g. submissions/maya-fbp-16).")],
    curriculum: Annotated[Path, typer.Option(
        "--curriculum", help="CSV domain,num_samples: what the system was trained on.")],
    compute: Annotated[float, typer.Option(
        "--compute", help="Training compute in the benchmark's unit (PFLOP·s).", min=0.0)],
    out: Annotated[Path, typer.Option("--out", help="Bundle folder to write.")],
    name: Annotated[str | None, typer.Option(
        "--name", help="System name for submission.toml (default: the program's name).")] = None,
    contact: Annotated[str, typer.Option(
        "--contact", help="Contact for submission.toml.")] = "not given",
    timeout: Annotated[float, typer.Option(
        "--timeout", help="Seconds the system may take per task.", min=0.001)] = 60.0,
    curriculum_samples: Annotated[Path | None, typer.Option(
        "--curriculum-samples", help="Folder of <domain>.jsonl training samples (one JSON "
        "object per line) copied into the bundle: its curriculum size is then counted and "
        "the entry verified; without it the entry is reported.")] = None,
) -> None:
    """Run a system on every test task and write programs/<task>.json and a bundle."""
    from pipeline.lab.gindex.harness import run_system

    res = run_system(system, benchmark, curriculum, compute, out, name=name, contact=contact,
                     timeout=timeout, curriculum_samples=curriculum_samples)  # fmt: skip
    for w in res.warnings:
        info(f"warning: {w}")
    info(f"{res.tasks} programs ({res.empty} empty) in {res.seconds:.1f} s; the bundle validates")
    typer.echo(str(res.out))


def register(app: typer.Typer) -> None:
    """Add the ``gindex`` group."""
    app.add_typer(gindex_app, name="gindex")
