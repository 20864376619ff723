"""``gmeter fa`` and ``gmeter irt``: the psychometric view of a response matrix.

Factor analysis (minres, one first factor by default) and 1PL/2PL item response theory,
the comparison the generality paper's supplement runs beside capability and spread.
Only typer/rich/stdlib at module level; the numerical code is imported inside the commands.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from cli.context import console, info

RESPONSES_HELP = "Response matrix: wide (agent + one column per item) or long (agent,item,value)."


def _check_format(fmt: str) -> None:
    from pipeline.errors import UsageError

    if fmt not in ("table", "csv", "json"):
        raise UsageError(f"--format {fmt!r}", hint="use table, csv or json")


def fa_cmd(
    responses: Annotated[Path, typer.Argument(help=RESPONSES_HELP)],
    factors: Annotated[
        int, typer.Option("--factors", help="Number of factors.", min=1, max=20)
    ] = 1,
    correlation: Annotated[
        str,
        typer.Option(
            "--correlation",
            help="pearson, or tetrachoric for 0/1 items (R psych's defaults: 0.5 in empty "
            "cells, smoothing).",
        ),
    ] = "pearson",
    fmt: Annotated[str, typer.Option("--format", help="table, csv or json.")] = "table",
) -> None:
    """Minimum-residual factor analysis on Pearson or tetrachoric correlations (unrotated).

    Prints the first factor's loadings per item, their mean and range, and the proportion of
    variance the first factor explains. Constant columns are reported and dropped. JSON:
    {"loadings": {item: value}, "mean_loading", "min_loading", "max_loading",
    "variance_explained", "warnings", ...}.
    """
    import json

    from pipeline.errors import UsageError
    from pipeline.lab.generality import psychometrics as ps

    _check_format(fmt)
    if correlation not in ("pearson", "tetrachoric"):
        raise UsageError(f"--correlation {correlation!r}", hint="use pearson or tetrachoric")
    fa = ps.factor_analysis(responses, factors, correlation)  # type: ignore[arg-type]
    if fa.dropped:
        info(f"warning: {len(fa.dropped)} constant column(s) dropped: {', '.join(fa.dropped)}")
    for w in fa.warnings:
        info(f"warning: {w}")
    summary = ps.fa_summary(fa)
    if fmt == "json":
        console.out(json.dumps(summary, indent=2, ensure_ascii=False))
        return
    if fmt == "csv":
        console.out(ps.fa_csv(fa), end="")
        return
    from rich.table import Table

    t = Table(show_edge=False)
    t.add_column("item")
    for f in range(fa.loadings.shape[1]):
        t.add_column("loading" if f == 0 else f"loading {f + 1}", justify="right")
    t.add_column("uniqueness", justify="right")
    for item, row, u in zip(fa.items, fa.loadings, fa.uniqueness, strict=True):
        t.add_row(item, *(f"{v:.3f}" for v in row), f"{u:.3f}")
    console.print(t)
    info(
        f"{fa.n_agents} agents × {len(fa.items)} items ({fa.correlation}); mean loading "
        f"{summary['mean_loading']:.3f} (from {summary['min_loading']:.3f} to "
        f"{summary['max_loading']:.3f}); first factor explains "
        f"{summary['variance_explained']:.3f} of the variance"
    )


def _fmt(v: object) -> str:
    return "—" if v is None else f"{v:.3f}" if isinstance(v, float) else str(v)


def irt_cmd(
    responses: Annotated[Path, typer.Argument(help=RESPONSES_HELP)],
    model: Annotated[str, typer.Option("--model", help="1pl or 2pl.")] = "2pl",
    persons: Annotated[
        bool,
        typer.Option(
            "--persons",
            help="Print the agents' abilities (EAP theta with standard error), one row per "
            "agent, instead of the items.",
        ),
    ] = False,
    fmt: Annotated[str, typer.Option("--format", help="table, csv or json.")] = "table",
) -> None:
    """Item parameters with standard errors, fit and abilities by marginal maximum likelihood.

    Responses in [0, 1] (graded values binarised at 0.5; NA = not attempted). CSV columns:
    item,difficulty,discrimination,p_correct,difficulty_se,discrimination_se,n_answered,
    infit,outfit,sx2,sx2_df,sx2_p,flags; with --persons: agent,theta,theta_se,answered,score.
    Convergence, reliability, Andersen's test (1PL) and warnings go to stderr (and into the
    JSON document). Items everyone passed or failed are reported and left out.
    """
    from pipeline.errors import UsageError
    from pipeline.lab.generality import psychometrics as ps

    _check_format(fmt)
    if model not in ("1pl", "2pl"):
        raise UsageError(f"--model {model!r}", hint="use 1pl or 2pl")
    run = ps.irt(responses, model)  # type: ignore[arg-type]
    res = run.result
    if res.dropped:
        info(
            f"warning: {len(res.dropped)} item(s) without a finite difficulty left out: "
            + ", ".join(res.dropped[:10])
        )
    if res.binarised:
        info(f"note: {res.binarised} graded response(s) binarised (>= 0.5 counts as correct)")
    for w in res.warnings:
        info(f"warning: {w}")
    _report(ps.irt_summary(res))
    if fmt == "json":
        console.out(ps.irt_json(run, persons))
        return
    if fmt == "csv":
        console.out(ps.persons_csv(run) if persons else ps.irt_csv(res), end="")
        return
    from rich.table import Table

    t = Table(show_edge=False)
    rows = ps.person_rows(run) if persons else ps.irt_rows(res)
    shown = PERSON_TABLE if persons else ITEM_TABLE
    for c, label in shown.items():
        t.add_column(label, justify="left" if c in ("item", "agent", "flags") else "right")
    for r in rows:
        t.add_row(*(_fmt(r[c]) for c in shown))
    console.print(t)


#: Table columns (key → header): the CSV has more.
ITEM_TABLE = {
    "item": "item",
    "difficulty": "b",
    "difficulty_se": "se(b)",
    "discrimination": "a",
    "discrimination_se": "se(a)",
    "infit": "infit",
    "outfit": "outfit",
    "sx2_p": "S-X² p",
    "flags": "flags",
}
PERSON_TABLE = {"agent": "agent", "theta": "θ", "theta_se": "se(θ)", "answered": "answered",
                "score": "score"}


def _report(summary: dict[str, object]) -> None:
    conv = summary["convergence"]
    rel = summary["reliability"]
    assert isinstance(conv, dict) and isinstance(rel, dict)
    info(
        f"{str(summary['model']).upper()} on {summary['n_agents']} agents × "
        f"{summary['n_items']} items: "
        + ("converged" if conv["converged"] else "NOT converged")
        + f" ({conv['em_iterations']} EM + {conv['newton_iterations']} Newton iterations, "
        f"largest |score| {conv['max_abs_gradient']:.1e}, log-likelihood "
        f"{conv['log_likelihood']:.3f}); reliability {_fmt(rel['empirical'])} (empirical), "
        f"{_fmt(rel['marginal'])} (marginal)"
    )
    test = summary["andersen_test"]
    if isinstance(test, dict):
        info(
            f"Andersen's LR test of the Rasch model (median split): LR = "
            f"{test['statistic']:.2f}, df = {test['df']}, p = {test['p_value']:.2g}"
        )


def register(app: typer.Typer) -> None:
    """Add ``gmeter fa`` and ``gmeter irt`` to the application."""
    app.command(
        "fa",
        help="Factor analysis (minres) of a response matrix: loadings, their mean and range, "
        "variance explained by the first factor.",
    )(fa_cmd)
    app.command(
        "irt",
        help="1PL/2PL item response theory of a response matrix: item difficulty and "
        "discrimination with standard errors, item fit, abilities (--persons), reliability.",
    )(irt_cmd)
