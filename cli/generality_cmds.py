"""``gmeter generality``: capability, spread and generality of agent characteristic curves.

* ``gmeter generality RESPONSES.csv --difficulty ITEMS.csv`` — intrinsic difficulty;
* ``gmeter generality RESPONSES.csv --transform aref|rnk|dref|opp ...`` — derived difficulty;
* ``gmeter generality --benchmark submissions/<id>`` — a benchmark recomputed with exactly its
  declared settings.

Only typer/rich/stdlib at module level; the numerical pipeline is imported inside the command.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer

from cli.context import console, info


def _fmt(v: Any) -> str:
    if isinstance(v, bool):
        return "yes" if v else ""
    if isinstance(v, float):
        if v != v:
            return "—"
        return "∞" if v == float("inf") else f"{v:.4g}"
    return str(v)


def generality_cmd(
    responses: Annotated[
        Path | None,
        typer.Argument(
            help="Response matrix: wide (agent + one column per item) or long (agent,item,value)."
        ),
    ] = None,
    benchmark: Annotated[
        Path | None,
        typer.Option(
            "--benchmark",
            help="A benchmark folder (submissions/<id>): recompute it "
            "with exactly its declared settings.",
        ),
    ] = None,
    difficulty: Annotated[
        Path | None,
        typer.Option(
            "--difficulty",
            help="Items CSV: item,difficulty (intrinsic); "
            "item,ref_mean,ref_variance for dref; item,group for --group-items.",
        ),
    ] = None,
    transform: Annotated[
        str | None,
        typer.Option(
            "--transform",
            help="Derive the difficulty: aref, rnk, dref, opp or irt "
            "(default: intrinsic, from --difficulty).",
        ),
    ] = None,
    irt_model: Annotated[
        str, typer.Option("--irt-model", help="irt: the IRT model, 1pl or 2pl.")
    ] = "2pl",
    irt_range: Annotated[
        tuple[float, float] | None,
        typer.Option(
            "--irt-range",
            help="irt: LOW HIGH onto which IRT difficulties are rescaled "
            "(default: the range of --difficulty's difficulty column, else 0 1).",
        ),
    ] = None,
    reference: Annotated[
        str | None, typer.Option("--reference", help="aref: the reference agent's name.")
    ] = None,
    convention: Annotated[
        str,
        typer.Option(
            "--convention", help="aref ties: greater_butequalhalf, greater_or_equal or greater."
        ),
    ] = "greater_butequalhalf",
    columns: Annotated[
        int, typer.Option("--columns", help="rnk/dref: grid points per item.")
    ] = 100,
    group_items: Annotated[
        bool,
        typer.Option(
            "--group-items",
            help="rnk: rank group means (groups from --difficulty's `group` column).",
        ),
    ] = False,
    distribution: Annotated[
        str, typer.Option("--distribution", help="dref reference: beta or normal.")
    ] = "beta",
    epsilon: Annotated[
        float | None, typer.Option("--epsilon", help="Binarise responses as value >= 1 - ε.")
    ] = None,
    clip_negative: Annotated[
        bool, typer.Option("--clip-negative", help="Clip negative responses to 0.")
    ] = False,
    kmin: Annotated[float | None, typer.Option("--kmin", help="Left integration limit.")] = None,
    kmax: Annotated[float | None, typer.Option("--kmax", help="Right integration limit.")] = None,
    pipeline: Annotated[
        str, typer.Option("--pipeline", help="direct, or padded (the reference's full study).")
    ] = "direct",
    normalisation: Annotated[
        str, typer.Option("--normalisation", help="Normalised generality: paper or grid.")
    ] = "paper",
    capability_range: Annotated[
        tuple[float, float] | None,
        typer.Option("--range", help="Capability range LOW HIGH for normalised generality."),
    ] = None,
    fmt: Annotated[str, typer.Option("--format", help="table, csv or json.")] = "table",
) -> None:
    """Capability, spread, generality and normalised generality per agent.

    Prints one row per agent: agent, capability, expected_difficulty, spread, generality,
    normalised_generality, abstruse. CSV keeps full precision (inf for a step curve's
    generality); JSON writes null for non-finite numbers.
    """
    from pipeline.errors import UsageError
    from pipeline.lab.generality import tables as gt

    if fmt not in ("table", "csv", "json"):
        raise UsageError(f"--format {fmt!r}", hint="use table, csv or json")
    if (responses is None) == (benchmark is None):
        raise UsageError("give either RESPONSES.csv or --benchmark FOLDER", hint="not both")
    if benchmark is not None:
        from pipeline.validate import benchmark_inputs

        rows, an = gt.benchmark_table(*benchmark_inputs(benchmark, "generality"))
    else:
        assert responses is not None
        settings: dict[str, Any] = {
            "transform": transform or "intrinsic",
            "pipeline": pipeline,
            "normalisation": normalisation,
            "kmin": kmin,
            "kmax": kmax,
            "columns": columns,
            "group_items": group_items,
            "distribution": distribution,
            "aref_convention": convention,
            "reference_agent": reference,
            "epsilon": epsilon,
            "clip_negative": clip_negative,
            "capability_range": capability_range,
            "irt_model": irt_model,
            "irt_range": irt_range,
        }
        rows, an = gt.adhoc_table(responses, difficulty=difficulty, settings=settings)
    for note in an.notes:
        info(note)
    if fmt == "csv":
        console.out(gt.to_csv(rows), end="")
    elif fmt == "json":
        console.out(gt.to_json(rows))
    else:
        from rich.table import Table

        t = Table(show_edge=False)
        for c in gt.COLUMNS:
            t.add_column(c, justify="left" if c == "agent" else "right")
        for r in rows:
            t.add_row(*(_fmt(r[c]) for c in gt.COLUMNS))
        console.print(t)
        g = an.result.normalised
        info(
            f"{len(rows)} agents; normalised generality ({g.mode}) on [{g.low:g}, {g.high:g}]; "
            f"{g.percent_abstruse:.2f} % abstruse"
        )


def register(app: typer.Typer) -> None:
    """Add ``gmeter generality`` to the application."""
    app.command(
        "generality",
        help="Capability, spread and generality of agent characteristic curves "
        "(Hernández-Orallo et al. 2021), from a response matrix or a benchmark folder.",
    )(generality_cmd)
