"""``python -m bench [--quick] [--only NAME]...``: run the benchmarks, write results and a table."""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path
from typing import Any

from bench import harness


def _parse(argv: list[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(
        prog="python -m bench",
        description="Run bench/bench_*.py; write bench/results.json and bench/RESULTS.md.",
    )
    p.add_argument(
        "--quick", action="store_true", help="one repetition and reduced inputs (a smoke run)"
    )
    p.add_argument(
        "--only",
        action="append",
        default=[],
        metavar="NAME",
        help="a module (executor or bench_executor) or part of a benchmark name; repeatable. "
        "Results of the other benchmarks are kept from the previous results.json",
    )
    p.add_argument(
        "--out", type=Path, default=harness.BENCH_DIR, help="output folder (default bench/)"
    )
    p.add_argument("--list", action="store_true", help="list the benchmark modules and exit")
    p.add_argument(
        "--in-process",
        action="store_true",
        help="run every module in this process (debugging) instead of one fresh process each",
    )
    p.add_argument("--worker", metavar="MODULE", help=argparse.SUPPRESS)
    return p.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    """Run the benchmarks; the exit code is 1 if a benchmark errored (not if one missed)."""
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
    from rich.table import Table

    args = _parse(argv)
    console = Console(stderr=True, highlight=False)
    if args.quick:
        os.environ[harness.QUICK_ENV] = "1"
    if args.worker:
        return harness.worker_main(args.worker, args.only, args.quick)
    modules = harness.discover(args.only)
    if args.list:
        print("\n".join(modules))
        return 0
    commit, dirty = harness.git_commit()
    data: dict[str, Any] = {
        "date": harness.dt.datetime.now(harness.dt.UTC).replace(microsecond=0).isoformat(),
        "commit": commit,
        "dirty": dirty,
        "quick": args.quick,
        "only": args.only,
        "machine": harness.machine_info(),
        "modules_run": modules,
        "benchmarks": [],
        "module_errors": {},
        "sections": {},
    }
    with Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        console=console,
        transient=True,
    ) as bar:
        task = bar.add_task("modules", total=len(modules))
        for module in modules:

            def step(name: str, module: str = module) -> None:
                bar.update(task, description=f"{module.removeprefix('bench.')}: {name}")

            step("setup")
            run = harness.run_module if args.in_process else harness.run_module_isolated
            results, section, error = run(module, only=args.only, is_quick=args.quick, on_step=step)
            data["benchmarks"] += [harness.asdict(r) for r in results]
            data["sections"][module] = section
            if error:
                data["module_errors"][module] = error
                console.print(f"[red]{module} failed:[/red] {error.splitlines()[0]}")
            bar.advance(task)
    data["load_avg_end"] = (
        [round(x, 2) for x in os.getloadavg()] if hasattr(os, "getloadavg") else []
    )
    previous = args.out / "results.json"
    old = json.loads(previous.read_text(encoding="utf-8")) if previous.exists() else None
    data = harness.merge(old, data) if args.only else harness.keep_long(old, data)
    js, md = harness.write_results(data, args.out)

    table = Table(title=f"gmeter benchmarks ({commit[:10]})")
    for col in ("benchmark", "median", "baseline", "ratio", "target", "result"):
        table.add_column(col, justify="right" if col in ("median", "baseline", "ratio") else "left")
    for r in data["benchmarks"]:
        ratio = "-" if r["ratio"] is None else f"{r['ratio']:.2f}x"
        v = harness.verdict(r)
        style = {"pass": "green", "FAIL": "red", "error": "red"}.get(v, "")
        table.add_row(
            r["name"],
            harness.fmt_seconds(r["median_s"]),
            harness.fmt_seconds(r["baseline_median_s"]),
            ratio,
            r["target"],
            f"[{style}]{v}[/{style}]" if style else v,
        )
    Console(highlight=False).print(table)
    console.print(f"wrote {js} and {md}")
    errored = any(r.get("error") for r in data["benchmarks"]) or data["module_errors"]
    return 1 if errored else 0


if __name__ == "__main__":
    sys.exit(main())
