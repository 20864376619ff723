"""Executor benchmarks: scaling on this machine, per-task overhead, and a projection to N machines.

The workload is a stand-in for gmeter's heavy items (an AIQ environment run, one Δ pair): a
tabular Q-learning agent in a random 8-state MDP for 1500 steps, seeded per item with
``derive_rng(ROOT, i)``: pure-Python loops plus small numpy calls, ~10 ms an item.
"""

from __future__ import annotations

import math
from functools import partial
from typing import Any

from bench.harness import fmt_seconds, quick
from pipeline.executor import DaskExecutor, InProcessExecutor, LocalProcessExecutor, derive_rng

ROOT = 20211
N_ITEMS = 40 if quick() else 240  # workload items per map
N_NOOP_LOCAL = 200 if quick() else 2000  # one-item tasks to measure per-task overhead
N_NOOP_DASK = 50 if quick() else 300
N_CHEAP = 5000 if quick() else 100_000  # cheap items: adaptive chunking must hide overhead
MACHINES = (1, 2, 4, 8, 16, 32, 64)

_open: list[Any] = []


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


def noop(i: int) -> int:
    """An item that costs nothing: its map time is all per-task overhead."""
    return i


def cheap(i: int) -> float:
    """A ~10 µs item."""
    return math.fsum(math.sin(i + k) for k in range(60))


def _map(ex: Any, fn: Any, n: int, chunksize: int | None = None) -> list[Any]:
    return ex.map(fn, range(n), chunksize=chunksize)


def _pool_start_stop() -> None:
    with LocalProcessExecutor(workers=2) as ex:
        ex.map(noop, range(2))


def _ratio_at_least(x: float) -> Any:
    def check(median: float, base: float | None) -> bool | None:
        return None if base is None else base / median >= x

    return check


def benchmarks() -> list[dict[str, Any]]:
    """Start the pools (setup, untimed) and return the timed benchmarks."""
    inproc = InProcessExecutor()
    local1, local2 = LocalProcessExecutor(workers=1), LocalProcessExecutor(workers=2)
    dask2 = DaskExecutor(workers=2)
    _open.extend([local1, local2, dask2])
    for ex in (local1, local2, dask2):
        ex.map(noop, range(4))  # start the workers before anything is timed
    reference = _map(inproc, episode, N_ITEMS)
    for ex in (local1, local2, dask2):
        assert _map(ex, episode, N_ITEMS) == reference, f"{ex} differs from in-process"

    base = partial(_map, inproc, episode, N_ITEMS)
    cheap_base = partial(_map, inproc, cheap, N_CHEAP)
    work = f"{N_ITEMS} Q-learning episodes (bit-identical on every executor)"
    return [
        {
            "name": "executor: workload in-process",
            "run": base,
            "baseline": None,
            "repeat": 3,
            "target": "reference",
            "check": None,
            "note": f"{work}; per-item cost = median / {N_ITEMS}.",
        },
        {
            "name": "executor: local pool, 1 worker",
            "run": partial(_map, local1, episode, N_ITEMS),
            "baseline": base,
            "repeat": 3,
            "target": ">= 0.95x baseline (overhead < 5 %)",
            "check": _ratio_at_least(0.95),
            "note": "One worker process against the in-process run: the pool's overhead.",
            "warmup": 1,
        },
        {
            "name": "executor: local pool, 2 workers",
            "run": partial(_map, local2, episode, N_ITEMS),
            "baseline": base,
            "repeat": 3,
            "target": ">= 1.6x baseline",
            "check": _ratio_at_least(1.6),
            "note": "Two worker processes on the two cores of this machine.",
            "warmup": 1,
        },
        {
            "name": "executor: Dask LocalCluster, 2 workers",
            "run": partial(_map, dask2, episode, N_ITEMS),
            "baseline": base,
            "repeat": 3,
            "target": ">= 1.5x baseline",
            "check": _ratio_at_least(1.5),
            "note": "LocalCluster(processes=True, n_workers=2, threads_per_worker=1).",
            "warmup": 1,
        },
        {
            "name": "executor: cheap items, local pool, 2 workers",
            "run": partial(_map, local2, cheap, N_CHEAP),
            "baseline": cheap_base,
            "repeat": 3,
            "target": ">= 1.2x baseline",
            "check": _ratio_at_least(1.2),
            "note": f"{N_CHEAP} items of ~10 µs: adaptive chunks amortise the per-task overhead.",
            "warmup": 1,
        },
        {
            "name": f"executor: per-task overhead, local ({N_NOOP_LOCAL} tasks)",
            "run": partial(_map, local2, noop, N_NOOP_LOCAL, 1),
            "baseline": None,
            "repeat": 3,
            "target": "< 1 ms per task",
            "check": lambda m, b: m / N_NOOP_LOCAL < 1e-3,
            "note": "No-op items, one per task, 2 workers: median / tasks = per-task overhead.",
        },
        {
            "name": f"executor: per-task overhead, Dask ({N_NOOP_DASK} tasks)",
            "run": partial(_map, dask2, noop, N_NOOP_DASK, 1),
            "baseline": None,
            "repeat": 3,
            "target": "< 10 ms per task",
            "check": lambda m, b: m / N_NOOP_DASK < 1e-2,
            "note": "As above on the Dask LocalCluster (scheduler in this process).",
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
        _open.pop().close()


def _median(results: list[dict[str, Any]], prefix: str) -> float | None:
    for r in results:
        if r["name"].startswith(prefix) and r["median_s"] is not None and not r["error"]:
            return float(r["median_s"])
    return None


def report(results: list[dict[str, Any]]) -> str:
    """Markdown: the scaling table on this machine and the projection to N machines."""
    t_in = _median(results, "executor: workload in-process")
    if t_in is None:
        return ""
    rows = [
        ("in-process", 1, t_in),
        ("local pool", 1, _median(results, "executor: local pool, 1 worker")),
        ("local pool", 2, _median(results, "executor: local pool, 2 workers")),
        ("Dask LocalCluster", 2, _median(results, "executor: Dask LocalCluster")),
    ]
    out = [
        "## Scaling on this machine (executor benchmark)",
        "",
        f"Workload: {N_ITEMS} Q-learning episodes, per item {fmt_seconds(t_in / N_ITEMS)} "
        "in-process.",
        "",
        "| executor | workers | median | speed-up vs in-process | efficiency |",
        "|---|---:|---:|---:|---:|",
    ]
    for label, w, t in rows:
        if t is not None:
            out.append(
                f"| {label} | {w} | {fmt_seconds(t)} | {t_in / t:.2f}x | {t_in / t / w:.0%} |"
            )
    o_local = _median(results, "executor: per-task overhead, local")
    o_dask = _median(results, "executor: per-task overhead, Dask")
    t2 = _median(results, "executor: Dask LocalCluster")
    if o_dask is None or t2 is None:
        return "\n".join(out)
    o_local_task = None if o_local is None else o_local / N_NOOP_LOCAL
    o_task = o_dask / N_NOOP_DASK
    t_item = t_in / N_ITEMS
    eff = min(1.0, t_in / t2 / 2)
    out += [
        "",
        "Measured per-task overhead: "
        + (f"local pool {fmt_seconds(o_local_task)}, " if o_local_task else "")
        + f"Dask {fmt_seconds(o_task)} (driver + scheduler, serial).",
        "",
        "## Projection to N machines (Dask)",
        "",
        "Amdahl-style model from the figures above, for machines like this one (c = 2 cores each):",
        "",
        "    T(N) = s + K * o + n * t_item / (N * c * e)",
        "",
        f"with t_item = {fmt_seconds(t_item)} (measured per item), o = {fmt_seconds(o_task)} "
        f"(measured Dask per-task overhead, counted as serial), e = {eff:.0%} (measured "
        "parallel efficiency of the 2-worker LocalCluster), K = n * t_item / 1 s + 4 N c tasks "
        "(adaptive chunks of ~1 s plus the small first and last chunks) and s = 2 s (connect, "
        "submit, gather). Network latency between machines (~0.1-1 ms) is not in o; "
        "it changes the result by under 1 % at these chunk sizes.",
        "",
        "| items n | " + " | ".join(f"N={n}" for n in MACHINES) + " |",
        "|---:|" + "---:|" * len(MACHINES),
    ]
    for n in (10**4, 10**5, 10**6, 10**7):
        cells = []
        for machines in MACHINES:
            cores = 2 * machines
            work = n * t_item
            tasks = work / 1.0 + 4 * cores
            t = 2.0 + tasks * o_task + work / (cores * eff)
            cells.append(_human(t))
        out.append(f"| {n:.0e} | " + " | ".join(cells) + " |")
    out += [
        "",
        f"10⁶ items at {fmt_seconds(t_item)} each are {_human(10**6 * t_item)} of work on one "
        "core. The serial part (s + K o) bounds the speed-up: adding machines stops paying "
        "once n t_item / (N c) approaches it.",
    ]
    return "\n".join(out)


def _human(seconds: float) -> str:
    if seconds < 120:
        return f"{seconds:.0f} s"
    if seconds < 7200:
        return f"{seconds / 60:.0f} min"
    return f"{seconds / 3600:.1f} h"
