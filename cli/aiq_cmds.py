"""``gmeter aiq ...``: the AIQ engine (replay, sample, run, verify, compare).

Only typer/rich/stdlib at module level; the engine is imported inside each command.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Annotated

import typer

from cli.context import console

aiq_app = typer.Typer(
    name="aiq",
    help="AIQ (Legg & Veness): BF reference machine, reference agents, runs and verification.",
    no_args_is_help=True,
    rich_markup_mode=None,
)


@aiq_app.command("replay")
def replay_cmd(
    program: Annotated[
        str | None,
        typer.Argument(help="The BF program (put `--` before it if it starts with '-')."),
    ] = None,
    actions: Annotated[
        str, typer.Option("--actions", "-a", help="Actions, one per cycle: 0,1,2,...")
    ] = "",
    program_opt: Annotated[
        str | None, typer.Option("--program", "-p", help="The program (alternative to PROGRAM).")
    ] = None,
    symbols: Annotated[int, typer.Option("--symbols", "-n", help="Alphabet size n.")] = 5,
    obs_cells: Annotated[int, typer.Option("--obs-cells", help="Observation cells.")] = 1,
    reverse_output: Annotated[
        bool, typer.Option("--reverse-output", help="Reward in the last output cell.")
    ] = False,
    work_tape: Annotated[int, typer.Option("--work-tape", help="Work tape cells.")] = 100_000,
    input_tape: Annotated[
        int, typer.Option("--input-tape", help="Input (history) tape cells.")
    ] = 25,
    max_steps: Annotated[
        int, typer.Option("--max-steps", help="Step limit; reaching it fails the cycle.")
    ] = 1000,
    seed: Annotated[int, typer.Option("--seed", help="Seed of the '%' random stream.")] = 0,
    as_json: Annotated[bool, typer.Option("--json", help="Print the run as JSON.")] = False,
    batch: Annotated[
        Path | None,
        typer.Option(
            "--batch",
            help="JSON-lines cases {id, program, actions, config}; one JSON line out per case "
            "('-' reads stdin).",
        ),
    ] = None,
) -> None:
    """Run PROGRAM on the BF machine with the given actions; print every cycle.

    Output (--json): {"rewards", "observations", "outputs", "steps", "failure": null|{"cycle": k}}.
    """
    from pipeline.aiq_replay import format_table, parse_actions, replay_batch, replay_case
    from pipeline.errors import GmeterError, UsageError

    if batch is not None:
        if program is not None or program_opt is not None:
            raise UsageError("--batch takes no PROGRAM", hint="put the programs in the file")
        stream = sys.stdin if str(batch) == "-" else None
        if stream is None and not batch.is_file():
            raise UsageError(f"{batch}: no such file", hint="give a JSON-lines file of cases")
        errors = 0
        with stream or batch.open(encoding="utf-8") as fh:
            for out in replay_batch(fh):
                errors += "error" in out
                sys.stdout.write(json.dumps(out) + "\n")
        sys.stdout.flush()
        if errors:
            raise GmeterError(f"{errors} case(s) could not be replayed (see their 'error')")
        return
    text = program_opt if program_opt is not None else program
    if text is None:
        raise UsageError("no program given", hint="gmeter aiq replay ',.#' --actions 0,1,2")
    case = {
        "id": None,
        "program": text,
        "actions": parse_actions(actions),
        "config": {
            "num_symbols": symbols,
            "obs_cells": obs_cells,
            "reverse_output": reverse_output,
            "work_tape_len": work_tape,
            "input_tape_len": input_tape,
            "max_steps": max_steps,
            "seed": seed,
        },
    }
    out = replay_case(case)
    if "error" in out:
        raise UsageError(str(out["error"]))
    out.pop("id")
    if as_json:
        sys.stdout.write(json.dumps(out) + "\n")
        return
    from pipeline.metrics.bf import ReplayResult

    result = ReplayResult(
        tuple(out["rewards"]),
        tuple(tuple(o) for o in out["observations"]),
        tuple(tuple(o) for o in out["outputs"]),
        tuple(out["steps"]),
        None if out["failure"] is None else out["failure"]["cycle"],
    )
    for line in format_table(text, case["actions"], result):  # type: ignore[arg-type]
        console.print(line, markup=False)


def register(app: typer.Typer) -> None:
    """Add the ``aiq`` command group to the application."""
    app.add_typer(aiq_app, name="aiq")
