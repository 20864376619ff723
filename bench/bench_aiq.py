"""AIQ benchmarks: interaction cycles per second per agent, and the paper's numbers reproduced.

Throughput: each reference agent runs the first programs of the aiq-bf5 sample for 1000
cycles on one core, with the compiled kernel (timed) and with the plain-Python implementation
of the same spec (baseline, same programs, same seeds, identical results). Target: 20× the
original code's throughput measured on this machine (spec §8.4): Random 91 000, Freq 62 000,
Q(λ) 28 000, HLQ(λ) 7 200 cycles/s.

Reproduction: 10 000 runs per agent at EL 1000 (``--quick``: 1000 runs, ordering only); the
check requires every value inside the union of the paper's and the original's intervals.

External protocols: the same trivial deterministic agent (``(observation + 1) mod n``) over the
step protocol (``cmd:``, baseline) and the batched one (``cmdbatch:``, timed), 64 runs × 1000
cycles in one process, measured in the same run; identical samples are asserted first. Target:
batched ≥ 10× the step protocol's cycles/s.

Batched Python policies: one deterministic greedy Q-learner written per run (``gym:``,
baseline) and batched (``vec:``, timed) on 200 programs × 1000 cycles, identical samples asserted
first. Target: ``vec:`` ≥ 10× the ``gym:`` agent's cycles/s. The same policy as whole commands
(``gmeter aiq run --samples 1000``, one worker each, in a fresh process: start-up, sampling,
scoring and writing included), identical ``samples.csv`` rewards asserted first. Target:
``vec:`` ≥ 5× the ``gym:`` command's wall time (issue 25's check).

MC-AIXI: the compiled agent at the paper's settings (context depth 32, 100 simulations,
horizon 3) on the first aiq-bf5 programs for 1000 cycles (target: ≥ 1000 cycles per
CPU-second); the compiled agent against its plain-Python twin on a small setting (identical
actions asserted first; target ≥ 30×); and one 10 000-cycle run at the paper's settings (the
context trees have grown: the rate the long runs of Fig. 1 see; target ≥ 500). Their rates are
taken from process CPU time, as the machine is shared. The report projects from them the CPU
time of the committed Fig. 1 and Fig. 2 sweeps (:mod:`pipeline.lab.aiq.figures`) and of
paper-sized ones.

Gymnasium vector env: :class:`~pipeline.lab.aiq.gym_env.BFVectorEnv` with 64 of the aiq-bf5
programs stepped 1000 times (random actions drawn beforehand) against the compiled engine
running the Random agent on the same programs (baseline). Target: within 3× of the engine.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from bench.harness import quick

ORIGINAL = {"random": 91_000, "freq": 62_000, "q-lambda": 28_000, "hlq-lambda": 7_200}
TARGET_FACTOR = 20
N_PROGRAMS = 8 if quick() else 24
EPISODE = 1000
BENCH = Path(__file__).resolve().parents[1] / "submissions" / "aiq-bf5"
ANCHORS = {  # union of the paper's (±0.4) and the original's measured (±0.6) intervals
    "freq": (39.8, 41.14),
    "q0": (41.1, 42.3),
    "q-lambda": (43.07, 44.7),
    "hlq-lambda": (47.85, 49.5),
}
_cycles: dict[str, int] = {}
_repro: dict[str, Any] = {}
_pool: list[Any] = []


def _workload(agent: str, plain: bool) -> Any:
    from pipeline.lab.aiq.runner import execute_run
    from pipeline.metrics.aiq.runs import AIQSettings, RunItem

    bench = _bench()
    settings = AIQSettings(bench.config, EPISODE)
    items = [RunItem(p, 1, 1000 + i) for i, p in enumerate(bench.sample.programs[:N_PROGRAMS])]

    def run() -> int:
        return sum(
            execute_run(it, agent=agent, settings=settings, record=False, plain=plain).cycles
            for it in items
        )

    return run


_loaded: list[Any] = []


def _bench() -> Any:
    if not _loaded:
        from pipeline.lab.aiq.benchmark import load_benchmark

        _loaded.append(load_benchmark(BENCH))
    return _loaded[0]


def _throughput(agent: str) -> dict[str, Any]:
    fast = _workload(agent, plain=False)
    plain = _workload(agent, plain=True)
    cycles = fast()  # warm-up: loads the compiled kernels
    assert plain() == cycles
    _cycles[agent] = cycles
    want = TARGET_FACTOR * ORIGINAL[agent]

    def check(median_s: float, _base: float | None) -> bool:
        _rates_by_agent[agent] = cycles / median_s
        return cycles / median_s >= want

    return {
        "name": f"aiq cycles/s {agent}",
        "run": fast,
        "baseline": plain,
        "repeat": 5,
        "target": f">= {want:,} cycles/s (20x the original's {ORIGINAL[agent]:,})",
        "check": check,
        "note": f"{N_PROGRAMS} aiq-bf5 programs x {EPISODE} cycles, one core; baseline = the "
        "plain-Python implementation of the same spec (identical results)",
    }


def _reproduction() -> dict[str, Any]:
    from pipeline.executor import get_executor
    from pipeline.lab.aiq.engine import run_aiq
    from pipeline.metrics.aiq.runs import AIQSettings

    runs = 1000 if quick() else 10_000
    bench = _bench()

    def run() -> None:
        if not _pool:
            _pool.append(get_executor("local"))
        for agent in ("random", "freq", "q0", "q-lambda", "hlq-lambda"):
            _repro[agent] = run_aiq(agent, bench.sample, AIQSettings(bench.config, EPISODE),
                                    runs, 1, executor=_pool[0]).estimate  # fmt: skip

    def check(_m: float, _b: float | None) -> bool:
        v = {a: e.value for a, e in _repro.items()}
        ordered = v["random"] < v["freq"] < v["q0"] <= v["q-lambda"] < v["hlq-lambda"]
        if quick():
            return ordered
        r = _repro["random"]
        inside = all(lo <= v[a] <= hi for a, (lo, hi) in ANCHORS.items())
        return ordered and inside and r.ci_low <= 0 <= r.ci_high

    return {
        "name": f"aiq reproduction ({runs} runs x 5 agents, EL 1000)",
        "run": run,
        "baseline": None,
        "repeat": 1,
        "target": "ordering; values within the paper's/original's intervals (10 000 runs)",
        "check": check,
        "note": "stratified antithetic estimator on the aiq-bf5 sample, local processes",
    }


PROTOCOL_RUNS = 64
FIXTURES = Path(__file__).resolve().parents[1] / "tests" / "aiq_fixtures"
_rates: dict[str, float] = {}


def _protocols() -> dict[str, Any]:
    import math
    import shlex
    import sys

    from pipeline.lab.aiq.runner import run_agent_on_programs
    from pipeline.metrics.aiq.runs import AIQSettings

    bench = _bench()
    settings = AIQSettings(bench.config, EPISODE)
    programs = bench.sample.programs[:PROTOCOL_RUNS]
    seeds = [7000 + i for i in range(PROTOCOL_RUNS)]
    signs = [1 if i % 2 == 0 else -1 for i in range(PROTOCOL_RUNS)]

    def agent(kind: str, fixture: str) -> str:
        return f"{kind}:" + shlex.join([sys.executable, str(FIXTURES / fixture), "trivial"])

    step_agent = agent("cmd", "json_agent.py")
    batch_agent = agent("cmdbatch", "batch_agent.py")

    def runner(spec: str) -> Any:
        def run() -> int:
            res = run_agent_on_programs(spec, programs, settings, seeds, signs, record=True)
            return sum(r.cycles for r in res)

        return run

    step, batch = runner(step_agent), runner(batch_agent)

    def same(spec: str) -> list[tuple[float, int, str]]:
        res = run_agent_on_programs(spec, programs, settings, seeds, signs, record=True)
        return [(0.0 if math.isnan(r.score) else r.score, r.steps, r.actions) for r in res]

    assert same(step_agent) == same(batch_agent), "cmd: and cmdbatch: disagree"
    cycles = batch()

    def check(median_s: float, base: float | None) -> bool | None:
        _rates["cmdbatch"] = cycles / median_s
        if base:
            _rates["cmd"] = cycles / base
        return None if base is None else base / median_s >= 10

    return {
        "name": f"aiq external protocols cmdbatch vs cmd ({PROTOCOL_RUNS} runs x {EPISODE})",
        "run": batch,
        "baseline": step,
        "repeat": 3,
        "target": ">= 10x the step protocol's cycles/s (same agent, same runs)",
        "check": check,
        "note": "trivial deterministic agent ((observation+1) mod n) in a child Python process, "
        "in-process engine; identical samples asserted before timing",
    }


def _vector_env() -> dict[str, Any]:
    import numpy as np

    from pipeline.lab.aiq.gym_env import BFVectorEnv
    from pipeline.lab.aiq.runner import execute_run
    from pipeline.metrics.aiq.runs import AIQSettings, RunItem

    bench = _bench()
    programs = bench.sample.programs[:PROTOCOL_RUNS]
    env = BFVectorEnv(PROTOCOL_RUNS, programs=programs, episode_length=EPISODE)
    actions = np.random.default_rng(1).integers(0, 5, (EPISODE, PROTOCOL_RUNS))
    settings = AIQSettings(bench.config, EPISODE)
    items = [RunItem(p, 1, 1000 + i) for i, p in enumerate(programs)]

    def run() -> None:
        env.reset(seed=1)
        for k in range(EPISODE):
            env.step(actions[k])

    def engine() -> int:
        return sum(
            execute_run(it, agent="random", settings=settings, record=False).cycles
            for it in items
        )

    run()
    engine()
    cycles = PROTOCOL_RUNS * EPISODE

    def check(median_s: float, base: float | None) -> bool | None:
        _rates["vector env"] = cycles / median_s
        if base:
            _rates["compiled engine (random)"] = cycles / base
        return None if base is None else median_s <= 3 * base

    return {
        "name": f"aiq gymnasium vector env ({PROTOCOL_RUNS} envs x {EPISODE} steps)",
        "run": run,
        "baseline": engine,
        "repeat": 5,
        "target": "within 3x of the compiled engine's cycles/s (Random agent, same programs)",
        "check": check,
        "note": "BFVectorEnv.step: one compiled call per step for all machines; baseline = the "
        "compiled agent+machine kernel, one run at a time",
    }


VEC_RUNS = 200


def _vec_vs_gym() -> dict[str, Any]:
    import math

    from pipeline.lab.aiq.runner import run_agent_on_programs
    from pipeline.metrics.aiq.runs import AIQSettings

    bench = _bench()
    settings = AIQSettings(bench.config, EPISODE)
    programs = bench.sample.programs[:VEC_RUNS]
    seeds = [9000 + i for i in range(VEC_RUNS)]
    signs = [1 if i % 2 == 0 else -1 for i in range(VEC_RUNS)]
    fixture = "tests.aiq_fixtures.vec_qlearning"

    def runner(spec: str) -> Any:
        def run() -> list[tuple[float, int, str]]:
            res = run_agent_on_programs(spec, programs, settings, seeds, signs, record=True)
            return [(0.0 if math.isnan(r.score) else r.score, r.steps, r.actions) for r in res]

        return run

    gym, vec = runner(f"gym:{fixture}:make_agent"), runner(f"vec:{fixture}:make_batch")
    assert gym() == vec(), "gym: and vec: forms of one policy disagree"
    cycles = VEC_RUNS * EPISODE

    def check(median_s: float, base: float | None) -> bool | None:
        _rates["vec: policy"] = cycles / median_s
        if base:
            _rates["gym: policy"] = cycles / base
        return None if base is None else base / median_s >= 10

    return {
        "name": f"aiq_vec_vs_gym ({VEC_RUNS} runs x {EPISODE})",
        "run": vec,
        "baseline": gym,
        "repeat": 3,
        "target": ">= 10x the gym: agent's cycles/s (same policy, same runs)",
        "check": check,
        "note": "tests/aiq_fixtures/vec_qlearning.py, greedy tabular Q-learning written both "
        "ways; in-process; identical samples asserted before timing",
    }


VEC_CMD_RUNS = 200 if quick() else 1000
_cmd_cpu: dict[str, list[float]] = {}


def _vec_vs_gym_commands() -> dict[str, Any]:
    """``gym:`` against ``vec:`` as whole ``gmeter aiq run`` commands (fresh processes)."""
    import csv
    import resource
    import statistics
    import subprocess
    import sys
    import tempfile

    fixture = "tests.aiq_fixtures.vec_qlearning"
    repo = BENCH.parents[1]
    tmp = Path(tempfile.mkdtemp(prefix="gmeter-bench-vec-"))

    def command(kind: str, factory: str) -> Any:
        out = tmp / kind

        def run() -> list[tuple[str, str, str]]:
            # the benchmark owns 10 000 runs: 1000 is a trial (the command warns), which is the
            # size issue 25's check names
            before = resource.getrusage(resource.RUSAGE_CHILDREN)
            subprocess.run(
                [sys.executable, "-m", "cli", "-q", "aiq", "run", "--agent",
                 f"{kind}:{fixture}:{factory}", "--samples", str(VEC_CMD_RUNS),
                 "--episode-length", str(EPISODE), "--benchmark", str(BENCH),
                 "--workers", "1", "--out", str(out)],
                cwd=repo, check=True, capture_output=True,
            )  # fmt: skip
            after = resource.getrusage(resource.RUSAGE_CHILDREN)
            # CPU seconds of the command (all its processes): the comparison a loaded machine
            # does not move, reported beside the wall-clock ratio
            _cmd_cpu.setdefault(kind, []).append(after.ru_utime + after.ru_stime
                                                 - before.ru_utime - before.ru_stime)
            with (out / "samples.csv").open(encoding="utf-8") as f:
                return [(r["program_id"], r["sign"], r["reward"]) for r in csv.DictReader(f)]

        return run

    gym, vec = command("gym", "make_agent"), command("vec", "make_batch")
    assert gym() == vec(), "gym: and vec: commands logged different rewards"

    def check(median_s: float, base: float | None) -> bool | None:
        cycles = VEC_CMD_RUNS * EPISODE
        _rates[f"vec: command ({VEC_CMD_RUNS} runs, wall)"] = cycles / median_s
        if base:
            _rates[f"gym: command ({VEC_CMD_RUNS} runs, wall)"] = cycles / base
        for k in ("vec", "gym"):
            if _cmd_cpu.get(k):
                cpu = statistics.median(_cmd_cpu[k])
                _rates[f"{k}: command ({VEC_CMD_RUNS} runs, CPU-seconds)"] = cycles / cpu
        return None if base is None else base / median_s >= 5

    return {
        "name": f"aiq_vec_vs_gym_commands (gmeter aiq run, {VEC_CMD_RUNS} runs x {EPISODE})",
        "run": vec,
        "baseline": gym,
        "repeat": 1 if quick() else 2,
        "target": ">= 5x faster than the gym: command (same policy, identical samples.csv rewards)",
        "check": check,
        "note": "whole commands in fresh processes, one worker each (start-up, program sample, "
        "scoring and writing included); tests/aiq_fixtures/vec_qlearning.py",
    }


MC_PROGRAMS = 2 if quick() else 4
MC_TARGET = 1000  # cycles per CPU-second at the paper's settings, EL 1000
MC_LONG_TARGET = 500  # the same after 10 000 cycles (larger context trees, more cache misses)
MC_SMALL = "mc-aixi,depth=8,simulations=20"
MC_LONG = 3000 if quick() else 10_000
_mc: dict[str, float] = {}


def _mc_items(n: int, length: int) -> tuple[Any, list[Any]]:
    from pipeline.metrics.aiq.runs import AIQSettings, RunItem

    bench = _bench()
    items = [RunItem(p, 1, 1000 + i) for i, p in enumerate(bench.sample.programs[:n])]
    return AIQSettings(bench.config, length), items


def _mc_aixi_throughput() -> dict[str, Any]:
    from pipeline.lab.aiq.runner import execute_run

    settings, items = _mc_items(MC_PROGRAMS, EPISODE)

    def run() -> int:
        t0 = time.process_time()
        n = sum(execute_run(it, agent="mc-aixi", settings=settings, record=False).cycles
                for it in items)  # fmt: skip
        _mc["rate 1000"] = n / (time.process_time() - t0)
        return n

    cycles = run()  # warm-up: loads the compiled kernel
    _cycles["mc-aixi"] = cycles

    def check(_median_s: float, _base: float | None) -> bool:
        return _mc["rate 1000"] >= MC_TARGET

    return {
        "name": "aiq cycles/s mc-aixi",
        "run": run,
        "baseline": None,
        "repeat": 3,
        "target": f">= {MC_TARGET:,} cycles per CPU-second at the paper's settings "
        "(D 32, N 100, H 3)",
        "check": check,
        "note": f"{MC_PROGRAMS} aiq-bf5 programs x {EPISODE} cycles, one core, compiled; the "
        "check uses process CPU time (the machine is shared; wall time is in the table)",
    }


def _mc_aixi_vs_plain() -> dict[str, Any]:
    from pipeline.lab.aiq.runner import execute_run

    settings, items = _mc_items(2, 150)

    def runner(plain: bool) -> Any:
        def run() -> list[str]:
            return [execute_run(it, agent=MC_SMALL, settings=settings, record=True,
                                plain=plain).actions for it in items]  # fmt: skip

        return run

    fast, plain = runner(False), runner(True)
    assert fast() == plain(), "compiled and plain MC-AIXI disagree"

    def check(median_s: float, base: float | None) -> bool | None:
        return None if base is None else base / median_s >= 30

    return {
        "name": "aiq mc-aixi compiled vs plain Python (D 8, N 20, 2 x 150 cycles)",
        "run": fast,
        "baseline": plain,
        "repeat": 3,
        "target": ">= 30x the plain-Python statement of the agent (identical actions)",
        "check": check,
        "note": "identical actions asserted before timing; the plain agent is the readable spec",
    }


def _mc_aixi_long() -> dict[str, Any]:
    from pipeline.lab.aiq.runner import execute_run

    settings, items = _mc_items(1, MC_LONG)

    def run() -> int:
        t0 = time.process_time()
        n = execute_run(items[0], agent="mc-aixi", settings=settings, record=False).cycles
        _mc["rate long"] = n / (time.process_time() - t0)
        return n

    def check(_median_s: float, _base: float | None) -> bool:
        return _mc["rate long"] >= MC_LONG_TARGET

    return {
        "name": f"aiq mc-aixi one {MC_LONG:,}-cycle run (Fig. 1/2 sweep cost)",
        "run": run,
        "baseline": None,
        "repeat": 1,
        "target": f">= {MC_LONG_TARGET:,} cycles per CPU-second once the context tree has "
        "grown",
        "check": check,
        "note": "paper settings, first aiq-bf5 program (a random-number program: its context "
        "trees grow fast); its CPU-time rate projects the sweeps' cost (report section)",
    }


def _sweep_section() -> list[str]:
    """Projected CPU time of Fig. 1 and Fig. 2, as committed and paper-sized."""
    from pipeline.lab.aiq.figures import (
        FIGURE1_LENGTHS,
        FIGURE1_RUNS,
        figure1_jobs,
        figure2_jobs,
        sweep_cost,
    )

    rate_mc = _mc.get("rate long") or _mc.get("rate 1000")
    if not rate_mc:
        return []
    rates = dict(_rates_by_agent)
    for agent in ORIGINAL:  # not timed in this run (--only): one quick measurement
        if agent not in rates:
            fast = _workload(agent, plain=False)
            fast()
            t0 = time.process_time()
            rates[agent] = fast() / (time.process_time() - t0)
    rates["q0"] = rates["q-lambda"]  # the same kernel with λ = 0
    rates["mc-aixi"] = rate_mc
    committed1 = figure1_jobs()
    paper1 = figure1_jobs({a: (10_000 if a != "mc-aixi" else 1000,) * len(FIGURE1_LENGTHS)
                           for a in FIGURE1_RUNS})  # fmt: skip
    rows = [
        ("Fig. 1 as committed", committed1),
        ("Fig. 1, MC-AIXI only", [j for j in committed1 if j.agent == "mc-aixi"]),
        ("Fig. 1 paper-sized (10 000 runs; MC-AIXI 1000)", paper1),
        ("Fig. 2 as committed", figure2_jobs()),
        ("Fig. 2 with 1000 runs per cell", figure2_jobs(1000)),
    ]
    lines = ["", "### AIQ figure sweeps: projected CPU time (one core)", "",
             f"MC-AIXI at the paper's settings: {rate_mc:,.0f} cycles per CPU-second (the "
             f"{MC_LONG:,}-cycle run above); other settings scaled by simulations × (12 + "
             "depth); the other agents at their measured EL 1000 rates. Longer runs are "
             "slower still (larger context trees), so read these as lower bounds.", "",
             "| sweep | bundles | cycles | CPU hours |", "|---|---|---|---|"]  # fmt: skip
    for name, jobs in rows:
        cyc = sum(j.cycles for j in jobs)
        hours = sweep_cost(jobs, rates) / 3600
        lines.append(f"| {name} | {len(jobs)} | {cyc:,} | {hours:,.2f} |")
    return lines


_rates_by_agent: dict[str, float] = {}


def benchmarks() -> list[dict[str, Any]]:
    """The AIQ benchmarks (setup and compilation happen here, not in the timed calls)."""
    return [*(_throughput(a) for a in ORIGINAL), _mc_aixi_throughput(), _mc_aixi_vs_plain(),
            _mc_aixi_long(), _protocols(), _vec_vs_gym(), _vec_vs_gym_commands(),
            _vector_env(),
            _reproduction()]  # fmt: skip


def teardown() -> None:
    """Stop the worker pool of the reproduction run and the external agents."""
    from pipeline.lab.aiq.external import close_external_agents

    close_external_agents()
    while _pool:
        _pool.pop().close()


def report(results: list[dict[str, Any]]) -> str:
    """Markdown: cycles/s per agent against the original and the plain-Python version."""
    lines = [
        "### AIQ throughput (one core, EL 1000)",
        "",
        "| agent | cycles/s | × original | × plain Python |",
        "|---|---|---|---|",
    ]
    for r in results:
        name = r["name"]
        if not name.startswith("aiq cycles/s ") or not r.get("median_s"):
            continue
        agent = name.removeprefix("aiq cycles/s ")
        rate = _cycles.get(agent, 0) / r["median_s"]
        ratio = r.get("ratio")
        orig = f"{rate / ORIGINAL[agent]:.0f}×" if agent in ORIGINAL else "-"
        lines.append(
            f"| {agent} | {rate:,.0f} | {orig} | {'-' if ratio is None else f'{ratio:.0f}×'} |"
        )
    lines += _sweep_section()
    if _rates:
        lines += ["", "### AIQ external agents and Gymnasium (cycles/s, one process)", "",
                  "| path | cycles/s |", "|---|---|"]  # fmt: skip
        lines += [f"| {name} | {rate:,.0f} |" for name, rate in _rates.items()]
    if _repro:
        lines += [
            "",
            "### AIQ reproduction (BF(5), EL 1000)",
            "",
            "| agent | AIQ | 95% half-CI (pairs) | original's formula |",
            "|---|---|---|---|",
        ]
        for agent, e in _repro.items():
            lines.append(f"| {agent} | {e.value:.2f} | {e.half_ci:.2f} | {e.legacy_half_ci:.2f} |")
    return "\n".join(lines)
