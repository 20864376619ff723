"""Use cases behind ``gmeter aiq run``, ``sample``, ``compare`` and ``verify``: load, run, write.

The benchmark (``submissions/<id>/benchmark.toml`` with ``track = "aiq"``) fixes the machine,
the program sample (``reference/programs.csv.gz``) and the discount; the run chooses the
agent, episode length and method. The run seed and the number of runs are the benchmark's
(``[aiq] seed`` and ``samples``); ``--seed``/``--samples`` only choose them on a benchmark that
declares no seed (see :func:`owned_seed_and_samples`).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from pipeline.errors import GmeterError, UsageError
from pipeline.inputs import BenchmarkInput, FileSet
from pipeline.lab.aiq.benchmark import find_benchmark, load_benchmark
from pipeline.lab.aiq.engine import AIQRun, run_aiq, run_aiq_difference
from pipeline.lab.aiq.sampling import generate_sample
from pipeline.metrics.aiq.bf import BFConfig
from pipeline.metrics.aiq.estimator import DifferenceEstimate
from pipeline.metrics.aiq.runs import AIQSettings
from pipeline.tracks.aiq.programs import ProgramSample, gzip_bytes, programs_csv
from pipeline.tracks.aiq.verify import VerifyResult, verify_files

PROGRAMS_FILE = "reference/programs.csv.gz"
SAMPLER_FILE = "reference/sampler.json"


def owned_seed_and_samples(
    settings: dict[str, Any], samples: int | None, seed: int | None, bundle: str = ""
) -> tuple[int, int, list[str]]:
    """Return the run's ``(samples, seed, notes)``: by default the benchmark's.

    A benchmark with ``[aiq] seed`` owns both (the runs of ``bundle``, the folder name, come
    from ``samples_by_bundle`` when it is named there); an explicit other value still runs (a
    quick trial) but the notes say that validate will refuse the bundle.
    """
    by_bundle = settings.get("samples_by_bundle") or {}
    bench_seed = settings.get("seed")
    bench_samples = int(by_bundle.get(bundle, settings.get("samples", 10_000)))
    samples = bench_samples if samples is None else samples
    if bench_seed is None:
        return samples, (1 if seed is None else seed), []
    seed = int(bench_seed) if seed is None else seed
    notes = [
        f"{name} {given} is not the benchmark's {owned}: the benchmark owns it, so validate "
        "refuses this bundle (drop the option to run the benchmark's)"
        for name, given, owned in (
            ("--seed", seed, bench_seed),
            ("--samples", samples, bench_samples),
        )
        if given != owned
    ]
    return samples, seed, notes


def run_to_bundle(
    agent: str,
    episode_length: int,
    samples: int | None,
    seed: int | None,
    out: Path,
    *,
    benchmark: Path | None = None,
    traces: bool = False,
    method: str | None = None,
    executor: Any = None,
    progress: Any = None,
    step_timeout: float = 10.0,
    notify: Any = None,
) -> tuple[AIQRun, list[Path]]:
    """Run one agent on a benchmark and write the bundle (``gmeter aiq run``)."""
    from pipeline.lab.aiq.bundle import write_bundle

    bench = load_benchmark(find_benchmark(out, benchmark))
    samples, seed, notes = owned_seed_and_samples(bench.settings, samples, seed, out.name)
    method = str(bench.settings.get("method", "stratified")) if method is None else method
    for note in notes:  # the bundle will be refused: say so before the (long) run
        if notify is not None:
            notify(note)
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


def verify_dir(path: Path) -> VerifyResult:
    """Verify the bundle folder ``path`` (with its benchmark when the parent folder is one)."""
    from pipeline.bundles import display, is_benchmark_dir, read_folder

    if not path.is_dir():
        raise GmeterError(f"{path}: no such folder", hint="give the bundle folder")
    read = read_folder(path, display(path))
    fs = FileSet(display(path), read.files)
    bench = _load_benchmark(path.parent) if is_benchmark_dir(path.parent) else None
    out = verify_files(fs, bench)
    out.problems = read.problems + out.problems
    return out


def _load_benchmark(folder: Path) -> BenchmarkInput | None:
    """Return the parent benchmark for the programs check (None unless an AIQ benchmark)."""
    from pipeline.bundles import display, read_file_bounded
    from pipeline.errors import GmeterError
    from pipeline.limits import read_toml_file

    try:
        manifest = read_toml_file(folder / "benchmark.toml",
                                  label=display(folder / "benchmark.toml"))
    except GmeterError:
        return None  # validate reports the benchmark's own problems
    if manifest.get("track") != "aiq":
        return None
    settings = dict(manifest.get("aiq", {}))
    rel = str(settings.get("programs", "reference/programs.csv.gz"))
    files: dict[str, bytes] = {}
    p = folder / rel
    if p.is_file() and not p.is_symlink():
        try:
            files[rel] = read_file_bounded(p)
        except GmeterError:
            pass  # the programs check then says the sample is missing
    return BenchmarkInput(str(manifest.get("id", folder.name)), "aiq",
                          str(manifest.get("version", "")), manifest, settings,
                          FileSet(display(folder), files))  # fmt: skip
