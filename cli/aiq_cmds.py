"""``gmeter aiq ...``: the AIQ engine (replay, sample, run, verify, compare).

``gmeter aiq figure`` lives in :mod:`cli.aiq_figure_cmds`. Only typer/rich/stdlib at module
level; the engine is imported inside each command.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Annotated

import typer

from cli.context import console, info, progress_reporter
from cli.executor_opts import ExecutorOpt, SchedulerOpt, WorkersOpt, open_executor

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
    from pipeline.errors import GmeterError, UsageError
    from pipeline.lab.aiq.replay import (
        format_table,
        parse_actions,
        replay_batch_file,
        replay_case,
    )

    if batch is not None:
        if program is not None or program_opt is not None:
            raise UsageError("--batch takes no PROGRAM", hint="put the programs in the file")
        errors = 0
        for out in replay_batch_file(batch):
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
    from pipeline.metrics.aiq.bf import ReplayResult

    result = ReplayResult(
        tuple(out["rewards"]),
        tuple(tuple(o) for o in out["observations"]),
        tuple(tuple(o) for o in out["outputs"]),
        tuple(out["steps"]),
        None if out["failure"] is None else out["failure"]["cycle"],
    )
    for line in format_table(text, case["actions"], result):  # type: ignore[arg-type]
        console.print(line, markup=False)


@aiq_app.command("run")
def run_cmd(
    agent: Annotated[
        str,
        typer.Option(
            "--agent",
            help="random | freq | q0 | q-lambda | hlq-lambda | mc-aixi [,key=value...], "
            "module:Class, cmd:PROGRAM ARGS (JSON lines, one percept per message), "
            "cmdbatch:PROGRAM ARGS "
            "(batched JSON lines, many runs per message), gym:module:factory[,key=value...] "
            "(a Gymnasium policy factory) or vec:module:factory[,key=value...] (a batched "
            "policy: every run of a batch per call); see docs/aiq.md.",
        ),
    ],
    out: Annotated[Path, typer.Option("--out", help="Bundle folder to write.")],
    episode_length: Annotated[
        int,
        typer.Option("--episode-length", "-l", min=1, max=10_000_000, help="Cycles per run."),
    ] = 1000,
    samples: Annotated[
        int | None,
        typer.Option("--samples", "-s", min=2, max=10_000_000, help="Runs (default: benchmark's)."),
    ] = None,
    seed: Annotated[
        int | None,
        typer.Option("--seed", min=0, max=2**64 - 1, help="Root seed (default: benchmark's)."),
    ] = None,
    traces: Annotated[
        bool, typer.Option("--traces", help="Log every run's actions (makes it verifiable).")
    ] = False,
    benchmark: Annotated[
        Path | None,
        typer.Option(
            "--benchmark",
            help="AIQ benchmark folder (default: the parent of --out if it is one, else "
            "submissions/aiq-bf5).",
        ),
    ] = None,
    method: Annotated[
        str | None,
        typer.Option("--method", help="stratified | mc-antithetic | mc (default: benchmark's)."),
    ] = None,
    step_timeout: Annotated[
        float,
        typer.Option(
            "--step-timeout",
            min=0.001,
            help="Seconds an external program may take per reply (cmdbatch: per batched reply).",
        ),
    ] = 10.0,
    executor: ExecutorOpt = "local",
    workers: WorkersOpt = None,
    scheduler: SchedulerOpt = None,
) -> None:
    """Test an agent on the benchmark's BF programs and write a bundle (aiq.toml, samples.csv)."""
    from pipeline.lab.aiq.run import run_to_bundle

    with open_executor(executor, workers, scheduler) as ex, progress_reporter() as progress:
        run, written = run_to_bundle(
            agent, episode_length, samples, seed, out, benchmark=benchmark, traces=traces,
            method=method, executor=ex, progress=progress, step_timeout=step_timeout,
            notify=lambda note: info(f"warning: {note}"),
        )  # fmt: skip
    e = run.estimate
    console.print(
        f"AIQ {e.value:.2f} ± {e.half_ci:.2f} (95%, {e.pairs} pairs, {e.runs} runs; "
        f"the original's interval would print ± {e.legacy_half_ci:.2f})",
        markup=False,
    )
    for path in written:
        info(f"wrote {path}")


@aiq_app.command("verify")
def verify_cmd(
    bundle: Annotated[Path, typer.Argument(help="The bundle folder (aiq.toml, samples.csv).")],
) -> None:
    """Replay every logged run of a bundle and check its rewards, steps and status."""
    from pipeline.errors import ValidationFailed
    from pipeline.lab.aiq.run import verify_dir

    result = verify_dir(bundle)
    errors = [p for p in result.problems if p.severity == "error"]
    if errors:
        raise ValidationFailed(
            result.problems, f"{len(errors)} problem(s): the bundle does not verify"
        )
    for p in result.problems:
        info(f"warning {p}")
    if result.verified:
        console.print(f"verified: {result.replayed} runs replayed exactly", markup=False)
    else:
        console.print(
            "reported: no traces to replay (rerun with --traces to make it verifiable)",
            markup=False,
        )


@aiq_app.command("sample")
def sample_cmd(
    out: Annotated[Path, typer.Option("--out", help="Folder for programs.csv.gz, sampler.json.")],
    count: Annotated[int, typer.Option("--count", min=1, help="Accepted programs.")] = 100_000,
    seed: Annotated[int, typer.Option("--seed", min=0, help="Sampler seed.")] = 1,
    symbols: Annotated[int, typer.Option("--symbols", "-n", help="Alphabet size n.")] = 5,
    obs_cells: Annotated[int, typer.Option("--obs-cells", help="Observation cells.")] = 1,
    reverse_output: Annotated[
        bool, typer.Option("--reverse-output", help="Reward in the last output cell.")
    ] = False,
    max_steps: Annotated[int, typer.Option("--max-steps", help="Step limit per cycle.")] = 1000,
    iterated: Annotated[
        bool, typer.Option("--iterated", help="Iterate pointless-code removal to a fixed point.")
    ] = False,
    executor: ExecutorOpt = "local",
    workers: WorkersOpt = None,
    scheduler: SchedulerOpt = None,
) -> None:
    """Draw a benchmark's program sample (accepted programs with their strata)."""
    from pipeline.errors import UsageError
    from pipeline.lab.aiq.run import sample_to_folder
    from pipeline.metrics.aiq.bf import BFConfig

    try:
        config = BFConfig(symbols, obs_cells, reverse_output, max_steps=max_steps)
    except ValueError as exc:
        raise UsageError(str(exc)) from exc
    with open_executor(executor, workers, scheduler) as ex, progress_reporter() as progress:
        sample, written = sample_to_folder(
            count, seed, out, config=config, iterated=iterated, executor=ex, progress=progress
        )
    rate = count / max(sample.drawn, 1)
    console.print(f"{count} programs accepted of {sample.drawn} drawn ({rate:.1%})", markup=False)
    for path in written:
        info(f"wrote {path}")


@aiq_app.command("compare")
def compare_cmd(
    agent_a: Annotated[
        str, typer.Option("--agent", help="First agent (as for run, gym: and cmdbatch: too).")
    ],
    agent_b: Annotated[str, typer.Option("--versus", help="Second agent.")],
    episode_length: Annotated[
        int, typer.Option("--episode-length", "-l", min=1, max=10_000_000)
    ] = 1000,
    samples: Annotated[
        int, typer.Option("--samples", "-s", min=2, max=10_000_000, help="Runs per agent.")
    ] = 2000,
    seed: Annotated[int, typer.Option("--seed", min=0, max=2**64 - 1)] = 1,
    benchmark: Annotated[Path | None, typer.Option("--benchmark", help="AIQ benchmark.")] = None,
    executor: ExecutorOpt = "local",
    workers: WorkersOpt = None,
    scheduler: SchedulerOpt = None,
) -> None:
    """Paired AIQ difference of two agents (same programs and seeds: common random numbers)."""
    from pipeline.lab.aiq.run import compare_agents

    with open_executor(executor, workers, scheduler) as ex, progress_reporter() as progress:
        a, b, d = compare_agents(
            agent_a, agent_b, episode_length, samples, seed, benchmark=benchmark, executor=ex,
            progress=progress,
        )  # fmt: skip
    for run in (a, b):
        e = run.estimate
        console.print(f"{run.agent.text}: AIQ {e.value:.2f} ± {e.half_ci:.2f}", markup=False)
    console.print(
        f"difference: {d.value:.2f} ± {d.half_ci:.2f} (95%, paired over {d.pairs} programs)",
        markup=False,
    )


def register(app: typer.Typer) -> None:
    """Add the ``aiq`` command group to the application."""
    app.add_typer(aiq_app, name="aiq")
