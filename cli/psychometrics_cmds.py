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
    fmt: Annotated[str, typer.Option("--format", help="table, csv or json.")] = "table",
) -> None:
    """Minimum-residual factor analysis on Pearson correlations (unrotated).

    Prints the first factor's loadings per item, their mean and range, and the proportion of
    variance the first factor explains. Constant columns are reported and dropped. JSON:
    {"loadings": {item: value}, "mean_loading", "min_loading", "max_loading",
    "variance_explained", ...}.
    """
    import json

    from pipeline.lab.generality import psychometrics as ps

    _check_format(fmt)
    fa = ps.factor_analysis(responses, factors)
    if fa.dropped:
        info(f"warning: {len(fa.dropped)} constant column(s) dropped: {', '.join(fa.dropped)}")
    if not fa.converged:
        info("warning: the minres search did not report convergence")
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
        f"{fa.n_agents} agents × {len(fa.items)} items; mean loading "
        f"{summary['mean_loading']:.3f} (from {summary['min_loading']:.3f} to "
        f"{summary['max_loading']:.3f}); first factor explains "
        f"{summary['variance_explained']:.3f} of the variance"
    )


def irt_cmd(
    responses: Annotated[Path, typer.Argument(help=RESPONSES_HELP)],
    model: Annotated[str, typer.Option("--model", help="1pl or 2pl.")] = "2pl",
    fmt: Annotated[str, typer.Option("--format", help="table, csv or json.")] = "table",
) -> None:
    """Item difficulty and discrimination by marginal maximum likelihood (1PL/2PL IRT).

    Responses in [0, 1] (graded values binarised at 0.5; NA = not attempted). CSV columns:
    item,difficulty,discrimination,p_correct. Items everyone passed or failed are reported
    and left out (their difficulty is infinite). No standard errors: the estimator gives none.
    """
    from pipeline.errors import UsageError
    from pipeline.lab.generality import psychometrics as ps

    _check_format(fmt)
    if model not in ("1pl", "2pl"):
        raise UsageError(f"--model {model!r}", hint="use 1pl or 2pl")
    res = ps.irt(responses, model)  # type: ignore[arg-type]
    if res.dropped:
        info(
            f"warning: {len(res.dropped)} item(s) without a finite difficulty left out: "
            + ", ".join(res.dropped[:10])
        )
    if res.binarised:
        info(f"note: {res.binarised} graded response(s) binarised (>= 0.5 counts as correct)")
    if fmt == "csv":
        console.out(ps.irt_csv(res), end="")
        return
    if fmt == "json":
        console.out(ps.irt_json(res))
        return
    from rich.table import Table

    t = Table(show_edge=False)
    for c in ("item", "difficulty", "discrimination", "p_correct"):
        t.add_column(c, justify="left" if c == "item" else "right")
    for r in ps.irt_rows(res):
        t.add_row(
            r["item"],
            f"{r['difficulty']:.3f}",
            f"{r['discrimination']:.3f}",
            f"{r['p_correct']:.3f}",
        )
    console.print(t)
    info(f"{res.model.upper()} on {res.n_agents} agents × {len(res.items)} items")


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
        "discrimination by marginal maximum likelihood.",
    )(irt_cmd)
