"""g-index commands: ``delta``, ``omega``, ``gindex`` and ``import maya-experiment``.

Only typer, rich and the standard library at module level; numpy and the metrics are imported
inside the commands so ``gmeter --help`` stays fast.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Any

import typer

from cli.context import console, info
from cli.executor_opts import ExecutorOpt, SchedulerOpt, WorkersOpt, open_executor

ConventionOpt = Annotated[
    str,
    typer.Option(
        "--convention",
        help="Δ convention: reference (the companion code's exact semantics) or paper "
        "(the paper's definition: symmetric similarity, strict edge rule).",
    ),
]
JsonOpt = Annotated[bool, typer.Option("--json", help="Print JSON instead of text.")]
DomainsOpt = Annotated[
    Path,
    typer.Option(
        "--domains",
        help="Folder of reference programs, one sub-folder per domain (<domain>/*.json).",
        exists=True,
        file_okay=False,
    ),
]
OrderOpt = Annotated[
    Path | None,
    typer.Option(
        "--domain-order",
        help="File listing one domain name per line: the order that symmetrises the domain "
        "distances. Default: domain-order.txt in or next to --domains, else the authors' order "
        "for the 16 published domains, else sorted.",
        exists=True,
        dir_okay=False,
    ),
]


def _convention(value: str) -> str:
    from pipeline.errors import UsageError

    if value not in ("reference", "paper"):
        raise UsageError(f"unknown convention {value!r}", hint="use reference or paper")
    return value


def _domains(folder: Path) -> dict[str, list[Any]]:
    from pipeline.lab.gindex.files import read_domains

    return read_domains(folder)


def _order(order_file: Path | None, folder: Path, names: list[str]) -> list[str]:
    from pipeline.lab.gindex.files import choose_domain_order

    chosen = choose_domain_order(order_file, folder, names)
    info(chosen.source)
    return chosen.order


def _read_json(path: Path) -> Any:
    from pipeline.lab.gindex.files import read_json

    return read_json(path)


# --------------------------------------------------------------------------- delta
def delta_cmd(
    a: Annotated[Path | None, typer.Argument(help="First flow (a node list or {\"flow\": ...}).",
                                             exists=True, dir_okay=False)] = None,
    b: Annotated[Path | None, typer.Argument(help="Second flow.", exists=True,
                                             dir_okay=False)] = None,
    convention: ConventionOpt = "reference",
    as_json: JsonOpt = False,
    pairs: Annotated[
        Path | None,
        typer.Option("--pairs", help="JSON-lines file of {\"id\", \"a\", \"b\"} (flows inline; "
                     "- for stdin): one JSON line out per pair, computed in parallel."),
    ] = None,
    executor: ExecutorOpt = "local",
    workers: WorkersOpt = None,
    scheduler: SchedulerOpt = None,
) -> None:
    """Divergence Δ between two flow programs (exact maximum-weight clique)."""
    from pipeline.errors import GmeterError, UsageError

    conv = _convention(convention)
    if pairs is not None:
        if a is not None or b is not None:
            raise UsageError("give either two flow files or --pairs, not both")
        _delta_pairs(pairs, conv, executor, workers, scheduler)
        return
    if a is None or b is None:
        raise UsageError("give two flow files (or --pairs FILE)")
    from pipeline.metrics.gindex.delta import DeltaTooLarge, delta_timed
    from pipeline.metrics.gindex.flows import FlowError

    try:
        res, seconds = delta_timed(_read_json(a), _read_json(b), conv)
    except FlowError as exc:
        raise GmeterError(str(exc), hint="the flow must be a list of node objects with ids") \
            from exc
    except DeltaTooLarge as exc:
        raise GmeterError(f"{a.name} vs {b.name}: {exc}",
                          hint="Δ ≤ 1 is the only bound gmeter gives for such a pair") from exc
    if not res.exact:
        info("warning: the clique search hit its budget; Δ is an upper bound")
    if as_json:
        typer.echo(json.dumps(res.as_dict(seconds=seconds)))
    else:
        typer.echo(repr(res.delta))
        info(f"Σw = {res.sum_w!r}, n_a = {res.n_a}, n_b = {res.n_b}, "
             f"{len(res.mapping)} nodes mapped, {seconds:.4f} s")


def _delta_pairs(path: Path, conv: str, executor: str, workers: int | None,
                 scheduler: str | None) -> None:
    from pipeline.errors import GmeterError
    from pipeline.lab.gindex.files import read_pairs
    from pipeline.metrics.gindex.delta import pair_record

    items, bad = read_pairs(path, conv)
    kind = "inprocess" if executor == "local" and len(items) < 16 else executor
    with open_executor(kind, workers, scheduler) as ex:
        results = ex.map(pair_record, items, label="delta")
    out = iter(results)
    errors = 0
    for k in range(len(items) + len(bad)):
        rec = bad[k] if k in bad else next(out)
        errors += "error" in rec
        typer.echo(json.dumps(rec))
    if errors:
        raise GmeterError(f"{errors} pair(s) could not be computed (see their error field)")


# --------------------------------------------------------------------------- omega
def omega_cmd(
    tasks: Annotated[list[Path] | None, typer.Argument(
        help="Task programs: print Ω(T', C_i) to every domain (paper eq. 6). Without them: "
        "the domain-distance matrix.", exists=True, dir_okay=False)] = None,
    domains: DomainsOpt = Path("submissions/maya-fbp-16/reference/domains"),
    domain_order: OrderOpt = None,
    convention: ConventionOpt = "reference",
    as_json: JsonOpt = False,
    executor: ExecutorOpt = "local",
    workers: WorkersOpt = None,
    scheduler: SchedulerOpt = None,
) -> None:
    """Domain distances Ω (the companion code's matrix) or Ω of task programs."""
    conv = _convention(convention)
    flows = _domains(domains)
    if tasks:
        from pipeline.metrics.gindex.omega import generalisation_level, omega_task

        out: list[dict[str, Any]] = []
        for t in tasks:
            om = omega_task(_read_json(t), flows, conv)
            low = min(om.values())
            out.append({"task": str(t), "omega": om, "omega_min": low,
                        "level": generalisation_level(low).label})
        if as_json:
            typer.echo(json.dumps(out))
        else:
            for rec in out:
                console.print(f"{rec['task']}: Ω = {rec['omega_min']:.3f} ({rec['level']})")
                for d, v in sorted(rec["omega"].items(), key=lambda kv: kv[1]):
                    console.print(f"  {d:<24} {v:.3f}")
        return
    from pipeline.metrics.gindex.omega import domain_distance_matrix

    order = _order(domain_order, domains, sorted(flows))
    kind = "inprocess" if executor == "local" and len(flows) <= 32 else executor
    with open_executor(kind, workers, scheduler) as ex:
        dd = domain_distance_matrix(flows, order, conv, map_fn=ex.map)
    if as_json:
        typer.echo(json.dumps({"order": list(dd.order), "matrix": dd.matrix.tolist(),
                               "convention": conv}))
        return
    from rich.table import Table

    table = Table(title=f"Ω between domains ({conv} convention)")
    table.add_column("domain")
    for i in range(len(order)):
        table.add_column(str(i + 1), justify="right")
    for i, d in enumerate(order):
        table.add_row(f"{i + 1} {d}", *(f"{v:.3f}" for v in dd.matrix[i]))
    console.print(table)


# --------------------------------------------------------------------------- gindex
def gindex_cmd(
    experiment: Annotated[Path, typer.Argument(help="A published experiment file "
                                               "(companion code's experiments/*.json).",
                                               exists=True, dir_okay=False)],
    domains: DomainsOpt,
    domain_order: OrderOpt = None,
    convention: ConventionOpt = "reference",
    as_json: JsonOpt = False,
) -> None:
    """The g-index of a published experiment (the companion code's per-domain form)."""
    from pipeline.errors import GmeterError
    from pipeline.executor import InProcessExecutor
    from pipeline.lab.gindex.published import experiment_g_index

    conv = _convention(convention)
    flows = _domains(domains)
    order = _order(domain_order, domains, sorted(flows))
    try:
        exp, g = experiment_g_index(_read_json(experiment), flows, order, conv,
                                    executor=InProcessExecutor())
    except ValueError as exc:
        raise GmeterError(f"{experiment}: {exc}") from exc
    if as_json:
        rec = g.as_dict()
        rec.update({
            "experiment": str(experiment), "model": exp.model_name, "convention": conv,
            "domain_order": order, "compute": exp.compute,
            "training_samples": sum(n for _, n in exp.train),
            "average_performance": None if exp.divergence is None else 1 - exp.divergence,
        })
        typer.echo(json.dumps(rec))
        return
    from rich.table import Table

    table = Table(title=f"{exp.model_name}: task contributions")
    for col in ("task domain", "θ", "Ω to nearest other", "contribution"):
        table.add_column(col, justify="left" if col == "task domain" else "right")
    for t in g.tasks:
        other = min((v for c, v in t.omega.items() if c != t.task), default=float("nan"))
        table.add_row(t.task, f"{t.theta:.4f}", f"{other:.3f}", f"{t.contribution:.3f}")
    console.print(table)
    console.print(f"E = log2 compute = {g.E:.4f}   ρ = {next(iter(g.rho.values()), 0):g}")
    console.print(f"g-index = {g.g_index!r}")


# --------------------------------------------------------------------------- import
import_app = typer.Typer(
    name="import",
    help="Convert published result files into bundles.",
    no_args_is_help=True,
    rich_markup_mode=None,
)


@import_app.command("maya-experiment")
def import_maya_experiment(
    file: Annotated[Path, typer.Argument(help="experiments/<name>.json of the companion "
                                         "code.", exists=True, dir_okay=False)],
    out: Annotated[Path | None, typer.Option("--out", help="Bundle folder to write (default: "
                                             "./<id>).")] = None,
    bundle_id: Annotated[str | None, typer.Option("--id", help="Bundle id (default: from "
                                                  "the file name, e.g. gpt2-345m-2).")] = None,
    system: Annotated[str | None, typer.Option("--system", help="System display name "
                                               "(default: from the model name).")] = None,
    force: Annotated[bool, typer.Option("--force", help="Overwrite an existing folder.")] = False,
) -> None:
    """Convert a published g-index experiment into a reported gindex bundle."""
    from pipeline.lab.gindex.files import write_maya_bundle

    target, count = write_maya_bundle(file, out, bundle_id, system, force)
    info(f"wrote {count} files to {target}")
    typer.echo(str(target))


def register(app: typer.Typer) -> None:
    """Add ``delta``, ``omega`` and the ``import`` group (``gindex``: cli/gindex_run_cmds.py)."""
    app.command("delta")(delta_cmd)
    app.command("omega")(omega_cmd)
    app.add_typer(import_app, name="import")
