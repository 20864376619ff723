"""Executor benchmarks: scaling on this machine, per-task overhead, and a projection to N machines.

Two workloads stand for gmeter's heavy items:

* an AIQ-like episode: a tabular Q-learning agent in a random 8-state MDP for 1500 steps,
  seeded per item with ``derive_rng(ROOT, i)`` (pure-Python loops, ~5-10 ms an item);
* a Δ matrix: the exact divergence (maximum-weight clique search,
  :func:`pipeline.metrics.gindex.delta.delta_value`) of every pair of synthetic 30-node flows,
  generated deterministically (~5 ms a pair).
"""

from __future__ import annotations

import json
import math
import subprocess
import sys
import tempfile
import time
from functools import partial
from pathlib import Path
from typing import Any

from bench.harness import fmt_seconds, quick
from pipeline.executor import (
    DaskExecutor,
    InProcessExecutor,
    LocalProcessExecutor,
    _pack,
    _run_packed,
)
from pipeline.metrics.gindex.delta import delta_value
from pipeline.metrics.gindex.flows import NormalFlow, normalise_flow
from pipeline.metrics.seeds import derive_rng

ROOT = 20211
N_ITEMS = 40 if quick() else 1600  # workload items per map
N_NOOP_LOCAL = 200 if quick() else 2000  # one-item tasks to measure per-task overhead
N_NOOP_DASK = 50 if quick() else 300
N_CHEAP = 5000 if quick() else 100_000  # cheap items: adaptive chunking must hide overhead
N_FLOWS = 10 if quick() else 60  # Δ matrix over N_FLOWS synthetic flows: N(N-1)/2 pairs
FLOW_NODES = 30
FLOW_TYPES = ("function", "debug", "http in", "http response", "change", "switch", "template")
MACHINES = (1, 2, 4, 8, 16, 32, 64)

_open: list[Any] = []
_procs: list[subprocess.Popen[bytes]] = []  # the dask scheduler and worker processes


def episode(i: int, states: int = 8, actions: int = 3, steps: int = 1500) -> float:
    """Mean reward of a Q-learning agent on the random MDP of item ``i`` (deterministic)."""
    rng = derive_rng(ROOT, i)
    trans = rng.integers(0, states, size=(states, actions))
    reward = rng.random((states, actions))
    explore = rng.random(steps)
    random_actions = rng.integers(0, actions, size=steps)
    q = [[0.0] * actions for _ in range(states)]
    r_table, t_table = reward.tolist(), trans.tolist()
    s, total = 0, 0.0
    for t in range(steps):
        row = q[s]
        a = int(random_actions[t]) if explore[t] < 0.1 else row.index(max(row))
        r, s2 = r_table[s][a], t_table[s][a]
        row[a] += 0.1 * (r + 0.9 * max(q[s2]) - row[a])
        total += r
        s = s2
    return total / steps


def synthetic_flow(k: int, n: int = FLOW_NODES) -> list[dict[str, Any]]:
    """A deterministic Node-RED-like flow: ``n`` nodes of 7 types, a random DAG of wires."""
    rng = derive_rng(ROOT, "flow", k)
    types = rng.integers(0, len(FLOW_TYPES), size=n)
    nodes = []
    for i in range(n):
        targets = sorted({int(j) for j in rng.integers(i + 1, n + 1, size=2) if j < n})
        nodes.append(
            {
                "id": f"n{i}",
                "type": FLOW_TYPES[int(types[i])],
                "name": f"node{int(rng.integers(0, 4))}",
                "func": f"return {int(rng.integers(0, 3))};",
                "outputs": 1,
                "wires": [[f"n{j}" for j in targets]],
            }
        )
    return nodes


def delta_pair(flows: list[NormalFlow], ij: tuple[int, int]) -> float:
    """Δ of one pair of normalised flows: the work item of a Δ matrix."""
    return delta_value(flows[ij[0]], flows[ij[1]])


def noop(i: int) -> int:
    """An item that costs nothing: its map time is all per-task overhead."""
    return i


def cheap(i: int) -> float:
    """A ~10 µs item."""
    return math.fsum(math.sin(i + k) for k in range(60))


def _map(ex: Any, fn: Any, n: int, chunksize: int | None = None) -> list[Any]:
    return ex.map(fn, range(n), chunksize=chunksize)


def _map_items(ex: Any, fn: Any, items: list[Any]) -> list[Any]:
    return ex.map(fn, items, label="bench")


def _dask_cluster(workers: int) -> DaskExecutor:
    """Start ``dask scheduler`` and ``dask worker`` processes (as docs/scale.md says) and connect.

    A LocalCluster would run its scheduler in this process, whose event-loop threads would
    then slow the in-process baselines measured here.
    """
    folder = Path(tempfile.mkdtemp(prefix="gmeter-bench-dask-"))
    sched_file = folder / "scheduler.json"
    dask = [sys.executable, "-m", "dask"]

    def start(*args: str) -> None:
        out = subprocess.DEVNULL
        _procs.append(subprocess.Popen([*dask, *args], stdout=out, stderr=out))

    start("scheduler", "--host", "127.0.0.1", "--port", "0", "--no-dashboard",
          "--scheduler-file", str(sched_file))  # fmt: skip
    deadline = time.monotonic() + 60
    while not sched_file.exists() or not sched_file.read_text():
        if time.monotonic() > deadline:
            raise RuntimeError("the dask scheduler did not start within 60 s")
        time.sleep(0.1)
    time.sleep(0.2)  # the file is written in one go; let it land
    address = json.loads(sched_file.read_text())["address"]
    start("worker", address, "--nworkers", str(workers), "--nthreads", "1", "--no-dashboard",
          "--host", "127.0.0.1")  # fmt: skip
    ex = DaskExecutor(scheduler=address)
    ex.client.wait_for_workers(workers, timeout=60)
    return ex


def _pool_start_stop() -> None:
    with LocalProcessExecutor(workers=2) as ex:
        ex.map(noop, range(2))


def _static_split(pool: Any, fn: Any, items: list[Any], workers: int = 2) -> list[Any]:
    """The machine's parallel ceiling: one interleaved share per process, no scheduling at all.

    The shares run through the executor's worker entry point, so bound data is unpickled
    once per worker process and reused, exactly as the executors do.
    """
    packed = _pack(fn)
    shares = [items[k::workers] for k in range(workers)]
    return list(pool.map(_run_packed, [packed] * workers, [0] * workers, shares))


def _ratio_at_least(x: float) -> Any:
    def check(median: float, base: float | None) -> bool | None:
        return None if base is None else base / median >= x

    return check


def _family(
    title: str,
    fn: Any,
    items: list[Any],
    execs: dict[str, Any],
    raw: Any,
    note: str,
    with_one_worker: bool,
) -> list[dict[str, Any]]:
    """In-process, a static 2-process split (the ceiling), and the executors against it."""
    base = partial(_map_items, execs["inprocess"], fn, items)
    ceiling = partial(_static_split, raw, fn, items)
    out: list[dict[str, Any]] = [
        {
            "name": f"executor: {title} in-process",
            "run": base,
            "baseline": None,
            "repeat": 3,
            "target": "reference",
            "check": None,
            "note": note,
        },
        {
            "name": f"executor: {title}, 2 processes, static split",
            "run": ceiling,
            "baseline": base,
            "repeat": 3,
            "target": "the machine's parallel ceiling",
            "check": None,
            "note": "No executor: a bare process pool, one interleaved half of the items each. "
            "Its ratio is what 2 processes can give on this machine.",
            "warmup": 1,
        },
    ]
    if with_one_worker:
        out.append(
            {
                "name": f"executor: {title}, local pool, 1 worker",
                "run": partial(_map_items, execs["local1"], fn, items),
                "baseline": base,
                "repeat": 3,
                "target": ">= 0.95x baseline (overhead < 5 %)",
                "check": _ratio_at_least(0.95),
                "note": "One worker process against in-process: the pool's own overhead.",
                "warmup": 1,
            }
        )
    out += [
        {
            "name": f"executor: {title}, local pool, 2 workers",
            "run": partial(_map_items, execs["local2"], fn, items),
            "baseline": ceiling,
            "repeat": 3,
            "target": ">= 0.95x the static split",
            "check": _ratio_at_least(0.95),
            "note": "Adaptive chunks, progress, error handling: at most 5 % slower than the "
            "ideal static split.",
            "warmup": 1,
        },
        {
            "name": f"executor: {title}, Dask, 2 workers",
            "run": partial(_map_items, execs["dask2"], fn, items),
            "baseline": ceiling,
            "repeat": 3,
            "target": ">= 0.8x the static split",
            "check": _ratio_at_least(0.8),
            "note": "A `dask scheduler` process and `dask worker --nworkers 2 --nthreads 1` "
            "on this machine, reached over TCP as a remote cluster would be.",
            "warmup": 1,
        },
    ]
    return out


def benchmarks() -> list[dict[str, Any]]:
    """Start the pools (setup, untimed) and return the timed benchmarks."""
    import multiprocessing as mp
    from concurrent.futures import ProcessPoolExecutor

    execs = {
        "inprocess": InProcessExecutor(),
        "local1": LocalProcessExecutor(workers=1),
        "local2": LocalProcessExecutor(workers=2),
        "dask2": _dask_cluster(2),
    }
    raw = ProcessPoolExecutor(2, mp_context=mp.get_context("forkserver"))
    _open.extend([*execs.values(), raw])
    episodes = list(range(N_ITEMS))
    flows = [normalise_flow(synthetic_flow(k), "reference") for k in range(N_FLOWS)]
    pairs = [(i, j) for i in range(N_FLOWS) for j in range(i + 1, N_FLOWS)]
    dfn = partial(delta_pair, flows)
    # start every worker, and check bit-identical results before anything is timed
    for fn, items in ((episode, episodes), (dfn, pairs)):
        reference = _map_items(execs["inprocess"], fn, items)
        for ex in list(execs.values())[1:]:
            assert _map_items(ex, fn, items) == reference, f"{ex} differs from in-process"
        _static_split(raw, fn, items)

    cheap_items = list(range(N_CHEAP))
    return [
        *_family(
            "episodes",
            episode,
            episodes,
            execs,
            raw,
            f"{N_ITEMS} Q-learning episodes (AIQ-like), bit-identical on every executor; "
            f"per-item cost = median / {N_ITEMS}.",
            with_one_worker=True,
        ),
        *_family(
            "Δ matrix",
            dfn,
            pairs,
            execs,
            raw,
            f"Δ of {len(pairs)} pairs of {N_FLOWS} synthetic {FLOW_NODES}-node flows (exact "
            "clique search), bit-identical on every executor; per-pair cost = median / pairs.",
            with_one_worker=False,
        ),
        {
            "name": "executor: cheap items, local pool, 2 workers",
            "run": partial(_map_items, execs["local2"], cheap, cheap_items),
            "baseline": partial(_static_split, raw, cheap, cheap_items),
            "repeat": 3,
            "target": ">= 0.9x the static split",
            "check": _ratio_at_least(0.9),
            "note": f"{N_CHEAP} items of ~10 µs against a static 2-process split: adaptive "
            "chunks amortise the per-task overhead.",
            "warmup": 1,
        },
        {
            "name": f"executor: per-task overhead, local ({N_NOOP_LOCAL} tasks)",
            "run": partial(_map, execs["local2"], noop, N_NOOP_LOCAL, 1),
            "baseline": None,
            "repeat": 3,
            "target": "< 1 ms per task",
            "check": lambda m, b: m / N_NOOP_LOCAL < 1e-3,
            "note": "No-op items, one per task, 2 workers: median / tasks = per-task overhead.",
        },
        {
            "name": f"executor: per-task overhead, Dask ({N_NOOP_DASK} tasks)",
            "run": partial(_map, execs["dask2"], noop, N_NOOP_DASK, 1),
            "baseline": None,
            "repeat": 3,
            "target": "< 10 ms per task",
            "check": lambda m, b: m / N_NOOP_DASK < 1e-2,
            "note": "As above on the Dask cluster (scheduler and workers in their own processes).",
        },
        {
            "name": "executor: local pool start + stop (2 workers)",
            "run": _pool_start_stop,
            "baseline": None,
            "repeat": 3,
            "target": "< 2 s",
            "check": lambda m, b: m < 2.0,
            "note": "Paid once per gmeter command that uses the pool.",
        },
    ]


def teardown() -> None:
    """Stop the pools and the cluster."""
    while _open:
        obj = _open.pop()
        if hasattr(obj, "close"):
            obj.close()
        else:
            obj.shutdown()
    while _procs:
        proc = _procs.pop()  # workers first, then the scheduler
        proc.terminate()
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def _median(results: list[dict[str, Any]], prefix: str) -> float | None:
    for r in results:
        if r["name"].startswith(prefix) and r["median_s"] is not None and not r["error"]:
            return float(r["median_s"])
    return None


def project(n: float, t_item: float, machines: int, o_task: float, eff: float) -> float:
    """Projected wall time of ``n`` items on ``machines`` machines of 2 cores (see report)."""
    cores = 2 * machines
    work = n * t_item
    tasks = work / 1.0 + 4 * cores
    return 2.0 + tasks * o_task + work / (cores * eff)


def report(results: list[dict[str, Any]]) -> str:
    """Markdown: the scaling tables on this machine and the projection to N machines."""
    n_pairs = N_FLOWS * (N_FLOWS - 1) // 2
    workloads = [
        ("Q-learning episodes (AIQ-like)", "executor: episodes", N_ITEMS),
        ("Δ matrix pairs", "executor: Δ matrix", n_pairs),
    ]
    out = ["## Scaling on this machine (1 vs 2 workers)", ""]
    measured: dict[str, tuple[float, float]] = {}  # workload -> (t_item, 2-core efficiency)
    for title, prefix, n in workloads:
        t_in = _median(results, f"{prefix} in-process")
        if t_in is None:
            continue
        out += [
            f"**{title}**: {n} items, {fmt_seconds(t_in / n)} per item in-process.",
            "",
            "| run | processes | median | speed-up vs in-process | efficiency |",
            "|---|---:|---:|---:|---:|",
        ]
        rows = [
            ("in-process", 1, t_in),
            ("static split, no executor (ceiling)", 2, _median(results, f"{prefix}, 2 proc")),
            ("local pool", 1, _median(results, f"{prefix}, local pool, 1 worker")),
            ("local pool", 2, _median(results, f"{prefix}, local pool, 2 workers")),
            ("Dask (scheduler + 2 workers)", 2, _median(results, f"{prefix}, Dask")),
        ]
        for label, w, t in rows:
            if t is not None:
                out.append(
                    f"| {label} | {w} | {fmt_seconds(t)} | {t_in / t:.2f}x | {t_in / t / w:.0%} |"
                )
        out.append("")
        t_two = _median(results, f"{prefix}, local pool, 2 workers")
        if t_two is not None:
            measured[title] = (t_in / n, min(1.0, t_in / t_two / 2))
    o_local = _median(results, "executor: per-task overhead, local")
    o_dask = _median(results, "executor: per-task overhead, Dask")
    if o_dask is None or not measured:
        return "\n".join(out)
    o_task = o_dask / N_NOOP_DASK
    out += [
        "Measured per-task overhead (one-item tasks, 2 workers): "
        + (f"local pool {fmt_seconds(o_local / N_NOOP_LOCAL)}, " if o_local else "")
        + f"Dask {fmt_seconds(o_task)}.",
        "",
        "## Projection to N machines (Dask)",
        "",
        "An Amdahl-style model from the measured figures, for machines like this one "
        "(c = 2 cores each):",
        "",
        "    T(N) = s + K * o + n * t_item / (N * c * e)",
        "",
        f"n items of measured cost t_item; o = {fmt_seconds(o_task)}, the measured Dask per-task "
        "overhead, counted as fully serial (an upper bound: the scheduler overlaps it with "
        "work); K = n * t_item / 1 s + 4 N c tasks (adaptive chunks of ~1 s plus the one-item "
        "first chunks and the shrinking tail); e, the efficiency of 2 workers on the 2 cores "
        "measured with the local pool (the Dask-specific cost is already in K o); s = 2 s for "
        "connecting, submitting and gathering. Network "
        "latency between machines (~0.1-1 ms a task) is not in o: at ~1 s chunks it adds under "
        "0.1 %. The serial part s + K o bounds the speed-up: more machines stop paying once "
        "n t_item / (N c) approaches it.",
        "",
    ]
    sizes: dict[str, list[tuple[str, float]]] = {
        "Q-learning episodes (AIQ-like)": [(f"{n:.0e} episodes", n) for n in (1e4, 1e5, 1e6, 1e7)],
        "Δ matrix pairs": [
            (f"{f:,} flows ({f * (f - 1) // 2:.1e} pairs)", f * (f - 1) / 2)
            for f in (300, 1000, 3000, 10000)
        ],
    }
    for title, (t_item, eff) in measured.items():
        out += [
            f"**{title}** (t_item = {fmt_seconds(t_item)}, e = {eff:.0%}):",
            "",
            "| work | " + " | ".join(f"N={m}" for m in MACHINES) + " |",
            "|---|" + "---:|" * len(MACHINES),
        ]
        for label, count in sizes[title]:
            cells = [_human(project(count, t_item, m, o_task, eff)) for m in MACHINES]
            out.append(f"| {label} | " + " | ".join(cells) + " |")
        out.append("")
    return "\n".join(out).rstrip()


def _human(seconds: float) -> str:
    if seconds < 120:
        return f"{seconds:.0f} s"
    if seconds < 7200:
        return f"{seconds / 60:.0f} min"
    if seconds < 3 * 86400:
        return f"{seconds / 3600:.1f} h"
    return f"{seconds / 86400:.0f} d"
