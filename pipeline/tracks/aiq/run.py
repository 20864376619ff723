"""Use cases behind ``gmeter aiq run``, ``sample`` and ``compare``: load a benchmark, run, write.

The benchmark (``submissions/<id>/benchmark.toml`` with ``track = "aiq"``) fixes the machine,
the program sample (``reference/programs.csv.gz``) and the discount; the run chooses the
agent, episode length, number of runs (``--samples``), seed and method.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from pipeline.errors import UsageError
from pipeline.metrics.aiq.bf import BFConfig
from pipeline.metrics.aiq.estimator import DifferenceEstimate
from pipeline.metrics.aiq.runs import AIQSettings
from pipeline.tracks.aiq.benchmark import (  # noqa: F401  (re-exported for callers of run)
    DEFAULT_BENCHMARK,
    LoadedAIQBenchmark,
    find_benchmark,
    load_benchmark,
)
from pipeline.tracks.aiq.engine import AIQRun, run_aiq, run_aiq_difference
from pipeline.tracks.aiq.programs import (
    ProgramSample,
    generate_sample,
    gzip_bytes,
    programs_csv,
)

PROGRAMS_FILE = "reference/programs.csv.gz"
SAMPLER_FILE = "reference/sampler.json"


def run_to_bundle(
    agent: str,
    episode_length: int,
    samples: int,
    seed: int,
    out: Path,
    *,
    benchmark: Path | None = None,
    traces: bool = False,
    method: str = "stratified",
    executor: Any = None,
    progress: Any = None,
    step_timeout: float = 10.0,
) -> tuple[AIQRun, list[Path]]:
    """Run one agent on a benchmark and write the bundle (``gmeter aiq run``)."""
    from pipeline.tracks.aiq.bundle import write_bundle

    bench = load_benchmark(find_benchmark(out, benchmark))
    settings = AIQSettings(bench.config, episode_length, float(bench.settings["discount"]))
    try:
        run = run_aiq(agent, bench.sample, settings, samples, seed, method=method,
                      executor=executor, record=traces, progress=progress,
                      step_timeout=step_timeout)  # fmt: skip
    except ValueError as exc:
        raise UsageError(str(exc)) from exc
    written = write_bundle(
        run, out, program_count=len(bench.sample.programs),
        programs_sha256=bench.programs_sha256, simplify=bench.simplify, traces=traces,
    )  # fmt: skip
    return run, written


def compare_agents(
    agent_a: str,
    agent_b: str,
    episode_length: int,
    samples: int,
    seed: int,
    *,
    benchmark: Path | None = None,
    executor: Any = None,
    progress: Any = None,
) -> tuple[AIQRun, AIQRun, DifferenceEstimate]:
    """Paired test of two agents with common random numbers (``gmeter aiq compare``)."""
    bench = load_benchmark(find_benchmark(None, benchmark))
    settings = AIQSettings(bench.config, episode_length, float(bench.settings["discount"]))
    try:
        return run_aiq_difference(agent_a, agent_b, bench.sample, settings, samples, seed,
                                  executor=executor, progress=progress)  # fmt: skip
    except ValueError as exc:
        raise UsageError(str(exc)) from exc


def sample_to_folder(
    count: int,
    seed: int,
    out: Path,
    *,
    config: BFConfig,
    iterated: bool = False,
    executor: Any = None,
    progress: Any = None,
) -> tuple[ProgramSample, list[Path]]:
    """Draw a program sample and write ``programs.csv.gz`` + ``sampler.json`` into ``out``."""
    sample = generate_sample(count, config, seed, iterated=iterated, executor=executor,
                             progress=progress)  # fmt: skip
    out.mkdir(parents=True, exist_ok=True)
    a = out / "programs.csv.gz"
    a.write_bytes(gzip_bytes(programs_csv(sample)))
    b = out / "sampler.json"
    b.write_text(json.dumps(sample.stats(), indent=1) + "\n", encoding="utf-8")
    return sample, [a, b]
