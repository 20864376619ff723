"""``gmeter similarity ...``: test similarity (Pereyda & Holder 2020).

* ``gmeter similarity RUNS.csv [--format table|csv|json]`` — the matrices and the diversity
  of a runs file (the same as ``gmeter similarity show RUNS.csv``);
* ``gmeter similarity run --out DIR [--experiment aiq-families|classification|gym] ...`` — an
  experiment written as a bundle.

A first argument that is not a subcommand name is taken as RUNS.csv (write ``./run`` for a
file literally called ``run``). Only typer/rich/stdlib at module level.
"""

from __future__ import annotations

import csv
import json
import sys
from pathlib import Path
from typing import Annotated, Any

import typer
from typer.core import TyperGroup

from cli.context import info
from cli.executor_opts import ExecutorOpt, SchedulerOpt, WorkersOpt, open_executor
from cli.similarity_tables import print_tables


class _RunsOrSubcommand(TyperGroup):
    """A group whose first argument, when it is not a subcommand, goes to ``show``."""

    def parse_args(self, ctx: Any, args: list[str]) -> list[str]:  # ctx: a click Context
        if args and args[0] not in self.commands and args[0] not in ctx.help_option_names:
            args = ["show", *args]
        return super().parse_args(ctx, args)


similarity_app = typer.Typer(
    name="similarity",
    cls=_RunsOrSubcommand,
    help="Test similarity (Pereyda & Holder 2020): `gmeter similarity RUNS.csv` prints the "
    "similarity and dissimilarity matrices and the suite diversity; `gmeter similarity run` "
    "runs an experiment (AIQ environment families, scikit-learn classification or Gymnasium).",
    no_args_is_help=True,
    rich_markup_mode=None,
)


def _csv_cell(v: Any) -> str:
    if v is None:
        return ""
    if isinstance(v, bool):
        return "true" if v else "false"
    return repr(v) if isinstance(v, float) else str(v)


@similarity_app.command("show")
def show_cmd(
    runs: Annotated[
        Path, typer.Argument(help="A runs.csv: test_a,test_b,p,merge,agent,v_a,v_b,v_ab[,seed].")
    ],
    fmt: Annotated[str, typer.Option("--format", help="table, csv or json.")] = "table",
    convention: Annotated[
        str, typer.Option("--convention", help="paper (eq. 3 as published) or mixture.")
    ] = "paper",
    confidence: Annotated[float, typer.Option("--confidence", help="Interval level.")] = 0.95,
    seed: Annotated[int, typer.Option("--seed", help="Seed of the diversity bootstrap.")] = 20211,
) -> None:
    """Print the similarity and dissimilarity matrices and the diversity of RUNS.csv.

    --format csv prints one row per pair with the columns test_a, test_b, p, similarity,
    dissimilarity, sufficient (A = the easier test, p = its proportion in the merge).
    """
    from pipeline.errors import UsageError
    from pipeline.lab.similarity.show import analyse_runs_file
    from pipeline.tracks.similarity.runs import pair_rows, report_json

    if fmt not in ("table", "csv", "json"):
        raise UsageError(f"--format {fmt!r}", hint="use table, csv or json")
    report = analyse_runs_file(runs, convention=convention, confidence=confidence, seed=seed)
    if fmt == "csv":
        rows = pair_rows(report)
        cols = list(rows[0]) if rows else []
        w = csv.writer(sys.stdout, lineterminator="\n")
        w.writerow(cols)
        for r in rows:
            w.writerow([_csv_cell(r[c]) for c in cols])
        return
    data = report_json(report)
    if fmt == "json":
        sys.stdout.write(json.dumps(data, indent=1, allow_nan=False) + "\n")
        return
    print_tables(data)


@similarity_app.command("run")
def run_cmd(
    out: Annotated[
        Path,
        typer.Option(
            "--out", help="Bundle folder to write, e.g. submissions/aiq-families/q-lambda."
        ),
    ],
    experiment: Annotated[
        str | None,
        typer.Option(
            "--experiment",
            help="aiq-families (AIQ environment families, the default), classification "
            "(scikit-learn data sets, MLP baseline) or gym (Gymnasium environments, "
            "Q-learning baseline). With --from, taken from the file.",
        ),
    ] = None,
    from_: Annotated[
        Path | None,
        typer.Option(
            "--from",
            help="Take every setting from this submission.toml/benchmark.toml "
            "([similarity.experiment]); options given too override it.",
        ),
    ] = None,
    tests: Annotated[
        str | None,
        typer.Option(
            "--tests",
            help="Comma-separated tests. aiq-families: copy, lagged, shifted, other, short, "
            "long; classification: digits, digits-inverted, digits-rotated, iris, wine, "
            "breast-cancer, cartpole-passive, cartpole-pixels; gym: CartPole-v0, CartPole-v1, "
            "MountainCar-v0, Acrobot-v1, FrozenLake-v1, FrozenLake8x8, Taxi, CliffWalking.",
        ),
    ] = None,
    agent: Annotated[
        str | None,
        typer.Option(
            "--agent", help="aiq-families: reference agent spec, e.g. hlq-lambda,lambda=0.9."
        ),
    ] = None,
    programs: Annotated[
        int | None, typer.Option("--programs", help="aiq-families: programs per family.")
    ] = None,
    seeds: Annotated[int | None, typer.Option("--seeds", help="Replicates.")] = None,
    root_seed: Annotated[int | None, typer.Option("--root-seed", help="Root seed.")] = None,
    episode_length: Annotated[
        int | None, typer.Option("--episode-length", help="aiq-families: cycles per lifetime.")
    ] = None,
    p: Annotated[
        str | None,
        typer.Option(
            "--p",
            help="Proportion of the first test in a merge; classification and gym accept a "
            "comma-separated sweep, e.g. 0.1,0.3,0.5,0.7,0.9 (the paper's Fig. 3).",
        ),
    ] = None,
    symbols: Annotated[
        int | None, typer.Option("--symbols", help="aiq-families: BF alphabet size.")
    ] = None,
    merge_unit: Annotated[
        str | None,
        typer.Option(
            "--merge-unit",
            help="aiq-families: cycle (one lifetime, the experiment) or episode (the control).",
        ),
    ] = None,
    hidden: Annotated[
        str | None,
        typer.Option(
            "--hidden",
            help="classification: hidden units per layer; a comma-separated list sweeps the "
            "network size (the paper's Fig. 2), e.g. 64,32,16,8.",
        ),
    ] = None,
    max_iter: Annotated[
        int | None, typer.Option("--max-iter", help="classification: training epochs.")
    ] = None,
    size: Annotated[
        int | None,
        typer.Option("--size", help="classification: at most this many elements per test."),
    ] = None,
    steps: Annotated[
        int | None, typer.Option("--steps", help="gym: training steps per run (the budget).")
    ] = None,
    eval_episodes: Annotated[
        int | None, typer.Option("--eval-episodes", help="gym: greedy episodes scored per run.")
    ] = None,
    merge: Annotated[
        str | None,
        typer.Option(
            "--merge",
            help="classification and gym: sampling (the paper's method, the default), "
            "stitching (its Fig. 2 contrast: AB scored against AA and BB; gym: two environments "
            "side by side, one driven) or sampling,stitching.",
        ),
    ] = None,
    alone: Annotated[
        str | None,
        typer.Option(
            "--alone",
            help="classification and gym, sampling merge: how V_A and V_B are measured. "
            "matched (default): on what the merge took from each test, so they change with p; "
            "whole: once on each whole test, fixed across p (the paper's Fig. 3 lines).",
        ),
    ] = None,
    contact: Annotated[str, typer.Option("--contact", help="contact of submission.toml.")] = (
        "gmeter similarity run (see docs/similarity.md)"
    ),
    licence: Annotated[str, typer.Option("--licence", help="Licence of the written files.")] = (
        "CC0-1.0"
    ),
    force: Annotated[bool, typer.Option("--force", help="Overwrite a non-empty --out.")] = False,
    executor: ExecutorOpt = "local",
    workers: WorkersOpt = None,
    scheduler: SchedulerOpt = None,
) -> None:
    """Run a similarity experiment and write it as a similarity bundle.

    aiq-families (default): families of BF environments are the tests, merged inside one
    lifetime. classification: scikit-learn's bundled data sets, merged by the paper's sampling
    (and with --merge stitching its stitching) method, an MLPClassifier as the baseline. gym:
    Gymnasium's built-in environments, episodes
    drawn from either, a tabular Q-learner as the baseline. The parent folder gets a
    benchmark.toml declaring the tests if it has none; the written submission.toml records
    every setting: `--from` it reproduces runs.csv.
    """
    from cli.context import progress_reporter
    from pipeline.lab.similarity.run import RunOptions, plan_run, run_planned
    from pipeline.tracks.similarity.runs import report_json

    plan = plan_run(RunOptions(
        experiment=experiment, from_file=from_, tests=tests, agent=agent, programs=programs,
        seeds=seeds, root_seed=root_seed, episode_length=episode_length, p=p, symbols=symbols,
        merge_unit=merge_unit, hidden=hidden, max_iter=max_iter, size=size, steps=steps,
        eval_episodes=eval_episodes, merge=merge, alone=alone,
    ))  # fmt: skip
    with open_executor(executor, workers, scheduler) as ex, progress_reporter() as progress:
        report = run_planned(plan, out, contact=contact, licence=licence, force=force,
                             executor=ex, progress=progress)  # fmt: skip
    for path in report.written:
        info(f"wrote {path}")
    info(report.summary)
    print_tables(report_json(report.analysis))


def register(app: typer.Typer) -> None:
    """Add the ``similarity`` command group to the application."""
    app.add_typer(similarity_app, name="similarity")
