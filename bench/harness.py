"""The benchmark harness: discover ``bench/bench_*.py``, time every benchmark, write the results.

A benchmark module exposes ``benchmarks() -> list[dict]``; each dict has

``name`` (str), ``run`` (callable, timed), ``baseline`` (callable or None, timed in the same
run), ``repeat`` (int), ``target`` (human text), ``check`` (``(median_s, baseline_median_s) ->
bool | None``) and ``note`` (str). Optional extensions: a dict key ``warmup`` (untimed calls
before timing, default 0), a module-level ``report(results) -> str`` returning a Markdown
section for RESULTS.md (built from the measured results of that module), and a module-level
``teardown()`` called after the module's benchmarks (e.g. to stop worker pools).

Setup belongs in ``benchmarks()`` or closures, never in ``run``. ``ratio`` is
``baseline_median / median``: above 1 the benchmark is faster than its baseline. A callable
timed once in a module (as a ``run`` or a ``baseline``) is not timed again when a later
benchmark of the module names it as its baseline: one measurement, used consistently.
"""

from __future__ import annotations

import datetime as dt
import importlib
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
import traceback
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

BENCH_DIR = Path(__file__).resolve().parent
REPO = BENCH_DIR.parent
QUICK_ENV = "GMETER_BENCH_QUICK"
REQUIRED = ("name", "run", "baseline", "repeat", "target", "check", "note")


def quick() -> bool:
    """Whether this is a ``--quick`` run (modules may shrink their inputs)."""
    return os.environ.get(QUICK_ENV) == "1"


@dataclass
class Result:
    """One benchmark's measurements (one row of RESULTS.md)."""

    module: str
    name: str
    target: str = ""
    note: str = ""
    repeat: int = 0
    times_s: list[float] = field(default_factory=list)
    median_s: float | None = None
    min_s: float | None = None
    baseline_times_s: list[float] = field(default_factory=list)
    baseline_median_s: float | None = None
    baseline_min_s: float | None = None
    ratio: float | None = None
    passed: bool | None = None
    error: str | None = None
    quick: bool = False
    commit: str = ""
    date: str = ""


# --------------------------------------------------------------------------- machine


def _read(path: str) -> str:
    try:
        return Path(path).read_text(encoding="utf-8", errors="replace")
    except OSError:
        return ""


def machine_info() -> dict[str, Any]:
    """CPU model, cores, memory, load, OS and library versions of this machine."""
    cpu = next(
        (
            line.split(":", 1)[1].strip()
            for line in _read("/proc/cpuinfo").splitlines()
            if line.startswith("model name")
        ),
        platform.processor() or platform.machine(),
    )
    mem_kb = next(
        (
            int(line.split()[1])
            for line in _read("/proc/meminfo").splitlines()
            if line.startswith("MemTotal:")
        ),
        0,
    )
    try:
        usable = len(os.sched_getaffinity(0))
    except AttributeError:
        usable = os.cpu_count() or 1
    versions: dict[str, str] = {"python": platform.python_version()}
    for lib in ("numpy", "scipy", "numba", "dask", "distributed", "duckdb"):
        try:
            versions[lib] = importlib.import_module(lib).__version__
        except Exception:  # a missing library is simply not listed
            continue
    return {
        "cpu": cpu,
        "cores": os.cpu_count() or 1,
        "usable_cores": usable,
        "memory_gb": round(mem_kb / 1024**2, 1),
        "platform": platform.platform(),
        "load_avg": [round(x, 2) for x in os.getloadavg()] if hasattr(os, "getloadavg") else [],
        "versions": versions,
    }


def git_commit() -> tuple[str, bool]:
    """The HEAD commit and whether the work tree has uncommitted changes."""

    def git(*args: str) -> str:
        return subprocess.run(
            ["git", *args], cwd=REPO, capture_output=True, text=True, check=False
        ).stdout.strip()

    return git("rev-parse", "HEAD") or "unknown", bool(git("status", "--porcelain"))


# --------------------------------------------------------------------------- running


LONG = frozenset({"bench_scale"})
"""Modules that run only when ``--only`` names them (``make bench-scale``): they take long
enough that ``make bench`` keeps their last results instead of re-running them."""


def discover(only: Sequence[str] = ()) -> list[str]:
    """Module names ``bench.bench_*`` in name order (``only``: keep modules it names).

    A module of :data:`LONG` is left out unless ``only`` names it as a module.
    """
    names = sorted(p.stem for p in BENCH_DIR.glob("bench_*.py"))
    shorts = {n.removeprefix("bench_"): n for n in names}
    picked = [shorts.get(o.removeprefix("bench_")) for o in only]
    if only and all(picked):  # every NAME is a module: import only those
        return [f"bench.{n}" for n in names if n in picked]
    return [f"bench.{n}" for n in names if n not in LONG or n in picked]


def keep_long(previous: dict[str, Any] | None, current: dict[str, Any]) -> dict[str, Any]:
    """A run without ``--only``: keep the last results of the :data:`LONG` modules not run."""
    if not previous:
        return current
    skipped = {f"bench.{n}" for n in LONG} - set(current.get("modules_run", []))
    kept = [r for r in previous.get("benchmarks", []) if r.get("module") in skipped]
    sections = {m: v for m, v in previous.get("sections", {}).items() if m in skipped}
    errors = {m: v for m, v in previous.get("module_errors", {}).items() if m in skipped}
    return {**current, "benchmarks": current["benchmarks"] + kept,
            "sections": {**current.get("sections", {}), **sections},
            "module_errors": {**current.get("module_errors", {}), **errors}}  # fmt: skip


def _matches(only: Sequence[str], module: str, name: str) -> bool:
    short = module.rsplit(".", 1)[-1].removeprefix("bench_")
    return not only or any(o in (short, f"bench_{short}") or o in name for o in only)


def _time(fn: Callable[[], Any], n: int) -> list[float]:
    times = []
    for _ in range(n):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return times


def run_module(
    module: str,
    *,
    only: Sequence[str] = (),
    is_quick: bool = False,
    on_step: Callable[[str], None] | None = None,
) -> tuple[list[Result], str, str | None]:
    """Run one module's benchmarks; return results, its report section and a module error."""
    commit = git_commit()[0]
    date = dt.datetime.now(dt.UTC).replace(microsecond=0).isoformat()
    try:
        mod = importlib.import_module(module)
        specs = list(mod.benchmarks())
    except BaseException as exc:
        if isinstance(exc, KeyboardInterrupt):
            raise
        return [], "", f"{type(exc).__name__}: {exc}\n{traceback.format_exc(limit=5)}"
    results: list[Result] = []
    timed: dict[int, list[float]] = {}  # a callable timed once serves every later baseline
    try:
        for spec in specs:
            name = str(spec.get("name", "?"))
            if not _matches(only, module, name):
                continue
            res = Result(module=module, name=name, quick=is_quick, commit=commit, date=date)
            results.append(res)
            try:
                missing = [k for k in REQUIRED if k not in spec]
                if missing:
                    raise ValueError(f"benchmark dict lacks {missing}")
                res.target, res.note = str(spec["target"]), str(spec["note"])
                res.repeat = 1 if is_quick else max(1, int(spec["repeat"]))
                if on_step:
                    on_step(name)
                _time(spec["run"], int(spec.get("warmup", 0)))
                res.times_s = _time(spec["run"], res.repeat)
                res.median_s = statistics.median(res.times_s)
                res.min_s = min(res.times_s)
                timed[id(spec["run"])] = res.times_s
                base = spec["baseline"]
                if base is not None:
                    if id(base) not in timed:
                        timed[id(base)] = _time(base, res.repeat)
                    res.baseline_times_s = timed[id(base)]
                    res.baseline_median_s = statistics.median(res.baseline_times_s)
                    res.baseline_min_s = min(res.baseline_times_s)
                    if res.median_s > 0:
                        res.ratio = res.baseline_median_s / res.median_s
                check = spec["check"]
                if check is not None:
                    ok = check(res.median_s, res.baseline_median_s)
                    res.passed = None if ok is None else bool(ok)
            except KeyboardInterrupt:
                raise
            except BaseException as exc:
                res.error = f"{type(exc).__name__}: {exc}"
                res.passed = False
        section = ""
        hook = getattr(mod, "report", None)
        if callable(hook) and results:
            try:
                section = str(hook([asdict(r) for r in results]))
            except Exception as exc:
                section = f"_report failed: {type(exc).__name__}: {exc}_"
    finally:
        teardown = getattr(mod, "teardown", None)
        if callable(teardown):
            try:
                teardown()
            except Exception as exc:
                print(f"{module}.teardown failed: {exc}", file=sys.stderr)
    return results, section, None


def run_module_isolated(
    module: str,
    *,
    only: Sequence[str] = (),
    is_quick: bool = False,
    on_step: Callable[[str], None] | None = None,
) -> tuple[list[Result], str, str | None]:
    """:func:`run_module` in a fresh interpreter (``python -m bench --worker MODULE``).

    Each module then starts like a real ``gmeter`` command: no other module's data in memory
    (which would slow in-process baselines through garbage collection), no threads or pools
    left over, and a crash (segfault, ``os._exit``) is recorded instead of ending the harness.
    """
    cmd = [sys.executable, "-m", "bench", "--worker", module]
    cmd += ["--quick"] * is_quick + [arg for o in only for arg in ("--only", o)]
    payload: dict[str, Any] | None = None
    with tempfile.TemporaryFile("w+", encoding="utf-8") as err:
        with subprocess.Popen(
            cmd, cwd=REPO, stdout=subprocess.PIPE, stderr=err, text=True, encoding="utf-8"
        ) as proc:
            assert proc.stdout is not None
            try:
                for line in proc.stdout:
                    if line.startswith("STEP ") and on_step is not None:
                        on_step(line[5:].strip())
                    elif line.startswith("RESULT "):
                        payload = json.loads(line[7:])
            except BaseException:
                proc.kill()
                raise
        code = proc.returncode
        if payload is None:
            err.seek(0)
            tail = err.read()[-3000:]
            return [], "", f"the benchmark process exited with code {code}\n{tail}"
    results = [Result(**r) for r in payload["results"]]
    return results, str(payload["section"]), payload["error"]


def worker_main(module: str, only: Sequence[str], is_quick: bool) -> int:
    """The ``--worker`` side of :func:`run_module_isolated`: steps and one RESULT line."""

    def step(name: str) -> None:
        print(f"STEP {name}", flush=True)

    results, section, error = run_module(module, only=only, is_quick=is_quick, on_step=step)
    payload = {"results": [asdict(r) for r in results], "section": section, "error": error}
    print("RESULT " + json.dumps(payload), flush=True)
    return 0


# --------------------------------------------------------------------------- output


def fmt_seconds(s: float | None) -> str:
    """Human-readable duration (``-`` for none)."""
    if s is None:
        return "-"
    if s < 1e-3:
        return f"{s * 1e6:.1f} µs"
    if s < 1:
        return f"{s * 1e3:.1f} ms"
    return f"{s:.2f} s"


def verdict(r: Result | dict[str, Any]) -> str:
    """``pass``, ``FAIL``, ``error`` or ``-`` (no target check)."""
    d = r if isinstance(r, dict) else asdict(r)
    if d.get("error"):
        return "error"
    return {True: "pass", False: "FAIL", None: "-"}[d.get("passed")]


def render_markdown(data: dict[str, Any]) -> str:
    """RESULTS.md from the results.json payload."""
    m = data["machine"]
    lines = [
        "# gmeter benchmark results",
        "",
        "Written by `python -m bench` (`make bench`); do not edit by hand. Times are medians of",
        "`repeat` runs; *ratio* is baseline median / median (above 1: faster than the baseline,",
        "measured in the same run). See bench/README.md.",
        "",
        f"- **date**: {data['date']}",
        f"- **commit**: `{data['commit']}`" + (" (uncommitted changes present)" * data["dirty"]),
        f"- **machine**: {m['cpu']}, {m['cores']} cores ({m['usable_cores']} usable), "
        f"{m['memory_gb']} GB RAM, {m['platform']}",
        f"- **load average at start**: {', '.join(map(str, m.get('load_avg', [])))}"
        " (the machine may be shared: ratios are noisier than on an idle machine)",
        f"- **versions**: {', '.join(f'{k} {v}' for k, v in m['versions'].items())}",
    ]
    load = m.get("load_avg") or [0.0]
    if max(load[0], (data.get("load_avg_end") or [0.0])[0]) > m["usable_cores"]:
        lines.append(
            f"- **warning**: the machine was oversubscribed (load average {load[0]} at the start, "
            f"{(data.get('load_avg_end') or ['?'])[0]} at the end, on {m['usable_cores']} cores):"
            " other processes competed for the CPU, so parallel speed-ups and absolute times "
            "understate what an idle machine gives; `min_s` in results.json is the least "
            "disturbed repetition"
        )
    if data.get("quick"):
        lines.append("- **quick run**: one repetition, reduced inputs — not representative")
    lines += [
        "",
        "| benchmark | median | baseline median | ratio | target | result |",
        "|---|---:|---:|---:|---|---|",
    ]
    for r in data["benchmarks"]:
        ratio = "-" if r["ratio"] is None else f"{r['ratio']:.2f}x"
        name = r["name"] + (" (quick)" if r.get("quick") and not data.get("quick") else "")
        lines.append(
            f"| {name} | {fmt_seconds(r['median_s'])} | {fmt_seconds(r['baseline_median_s'])} "
            f"| {ratio} | {r['target']} | {verdict(r)} |"
        )
    errors = [r for r in data["benchmarks"] if r.get("error")]
    if errors or data.get("module_errors"):
        lines += ["", "## Errors", ""]
        lines += [f"- `{r['name']}`: {r['error']}" for r in errors]
        lines += [
            f"- module `{mod}`: {err.splitlines()[0]}"
            for mod, err in sorted(data.get("module_errors", {}).items())
        ]
    notes = [r for r in data["benchmarks"] if r.get("note")]
    if notes:
        lines += ["", "## Notes", ""]
        lines += [f"- **{r['name']}**: {r['note']}" for r in notes]
    for _module, section in sorted(data.get("sections", {}).items()):
        if section:
            lines += ["", section.rstrip()]
    return "\n".join(lines) + "\n"


def merge(previous: dict[str, Any] | None, current: dict[str, Any]) -> dict[str, Any]:
    """With ``--only``: keep earlier entries for the benchmarks not run this time."""
    if not previous:
        return current
    ran = {r["name"] for r in current["benchmarks"]}
    kept = [r for r in previous.get("benchmarks", []) if r["name"] not in ran]
    order = {r["name"]: i for i, r in enumerate(previous.get("benchmarks", []))}
    merged = sorted(
        kept + current["benchmarks"],
        key=lambda r: (r["module"], order.get(r["name"], len(order))),
    )
    sections = {**previous.get("sections", {}), **current.get("sections", {})}
    errors = {**previous.get("module_errors", {}), **current.get("module_errors", {})}
    for mod in current.get("modules_run", []):
        if mod not in current.get("module_errors", {}):
            errors.pop(mod, None)
    return {**current, "benchmarks": merged, "sections": sections, "module_errors": errors}


def write_results(data: dict[str, Any], out_dir: Path) -> tuple[Path, Path]:
    """Write results.json and RESULTS.md into ``out_dir``."""
    out_dir.mkdir(parents=True, exist_ok=True)
    js, md = out_dir / "results.json", out_dir / "RESULTS.md"
    js.write_text(json.dumps(data, indent=2, sort_keys=False) + "\n", encoding="utf-8")
    md.write_text(render_markdown(data), encoding="utf-8")
    return js, md
