"""Validation of ``aiq`` benchmarks and bundles.

A benchmark's program sample must parse and match its declared count; a bundle's ``aiq.toml``
must hold every field in its domain with the benchmark's settings, its ``samples.csv`` the
benchmark's programs in file order, and its traces (if any) must parse.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pipeline.errors import Problem
from pipeline.inputs import BenchmarkInput, BundleInput
from pipeline.tracks.aiq.settings import settings_of


def validate_benchmark(bench: BenchmarkInput) -> list[Problem]:
    """Check that the program sample parses and matches the declared count."""
    from pipeline.tracks.aiq.verify import benchmark_programs

    parsed, problems = benchmark_programs(bench)
    if parsed is None or problems:
        return problems
    s = settings_of(bench)
    where = bench.files.where(s.programs)
    count = s.program_count
    if count is not None and count != len(parsed.programs):
        problems.append(Problem(where, "program_count",
                                f"benchmark.toml says {count}, the file has "
                                f"{len(parsed.programs)}", "make them agree"))  # fmt: skip
    if not parsed.programs:
        problems.append(Problem(where, "-", "has no programs", "generate with gmeter aiq sample"))
    return problems


_COMPARED = ("num_symbols", "obs_cells", "reverse_output", "work_tape_len", "input_tape_len",
             "max_steps", "simplify", "discount", "method")  # fmt: skip


def validate_bundle(bundle: BundleInput, bench: BenchmarkInput) -> list[Problem]:
    """aiq.toml fields, samples.csv columns and values, settings equal to the benchmark's."""
    from pipeline.tracks.aiq.bundle import SAMPLES, read_rows, read_traces
    from pipeline.tracks.aiq.settings import LOG, check_log, read_log
    from pipeline.tracks.aiq.verify import benchmark_programs, check_programs

    fs = bundle.files
    log, problems = read_log(fs)
    parsed = read_rows(fs)
    problems += parsed.problems
    where = fs.where(LOG)
    s = settings_of(bench)
    problems += check_log(log, where)
    if log:
        for key in ("agent", "method", "samples", "seed", "episode_length"):
            if key not in log:
                problems.append(Problem(where, key, "is missing", "regenerate with gmeter aiq run"))
        for key in _COMPARED:
            want, have = getattr(s, key), log.get(key)
            if have is not None and want is not None and have != want:
                problems.append(Problem(where, key, f"is {have!r}, the benchmark uses {want!r}",
                                        "rerun with the benchmark's settings"))  # fmt: skip
        spec = log.get("agent")
        if isinstance(spec, str) and spec:
            from pipeline.limits import bad_name

            # the agent spec names the board's chart series: the rules of a display name
            why = bad_name(spec)
            if why:
                problems.append(Problem(where, "agent", f"{why}",
                                        "write the agent spec in plain characters, NFKC"))
        els = s.episode_lengths
        if els and log.get("episode_length") not in els:
            problems.append(Problem(where, "episode_length",
                                    f"{log.get('episode_length')!r} is not one of {els}",
                                    "use an episode length the benchmark ranks"))  # fmt: skip
        problems += _check_owned(log, parsed, s, where, fs.where(SAMPLES), bundle.id)
    progs, more = benchmark_programs(bench)
    if progs is not None and not more and parsed.rows:
        method = str(log.get("method", s.method))
        problems += check_programs(parsed, progs, method, fs.where(SAMPLES))
        problems += _check_weights(parsed, progs.strata, method, fs.where(SAMPLES))
    _, _, more = read_traces(fs)
    problems += more
    return problems


def _check_owned(
    log: Mapping[str, Any], parsed: Any, s: Any, where: str, where_rows: str, bundle_id: str = ""
) -> list[Problem]:
    """The run seed and the number of runs: the benchmark's, never the submitter's.

    With ``[aiq] seed`` declared the bundle must log exactly that root seed and the
    benchmark's ``samples`` (``samples_by_bundle[bundle_id]`` when the benchmark names the
    bundle there: a figure's points with different budgets; issue: seed shopping — the best of
    many seeds outranks an honest run); every run seed then follows
    ``run_seed(seed, program_id, sign)`` (checked with the programs) so the programs drawn and
    the agent's randomness are the benchmark's too. A benchmark without a seed keeps the old
    floor ``min_samples`` and says the seed is unowned.
    """
    from pipeline.metrics.aiq.runs import run_seed

    runs = len(parsed.rows)
    problems: list[Problem] = []
    fix = (
        "rerun with `gmeter aiq run --benchmark <this benchmark>` (it uses the benchmark's "
        "seed and samples); the benchmark owns them"
    )
    bench_seed = s.seed
    if bench_seed is None:
        if runs and runs < s.min_samples:
            problems.append(
                Problem(
                    where_rows,
                    "-",
                    f"has {runs} runs, the benchmark needs at least {s.min_samples}",
                    "rerun with more --samples",
                )
            )
        problems.append(
            Problem(
                where,
                "seed",
                "was chosen by the submitter: the benchmark declares no [aiq] seed",
                "benchmark maintainers: declare [aiq] seed and samples in benchmark.toml",
                "warning",
            )
        )
        return problems
    seed, samples = log.get("seed"), log.get("samples")
    if seed != bench_seed:
        problems.append(
            Problem(
                where,
                "seed",
                f"is {seed!r}; the benchmark owns the run seed and it is {bench_seed!r}",
                fix,
            )
        )
    want = int(s.samples_by_bundle.get(bundle_id, s.samples))
    if samples != want:
        problems.append(
            Problem(
                where,
                "samples",
                f"is {samples!r}; the benchmark owns the number of runs and it is {want}",
                fix,
            )
        )
    if runs and runs < want:
        problems.append(
            Problem(
                where_rows,
                "-",
                f"has {runs} runs, fewer than the benchmark's "
                f"{want} (the benchmark owns the number of runs)",
                fix,
            )
        )
    for row, line in zip(parsed.rows, parsed.lines, strict=True):
        if row.seed != run_seed(bench_seed, row.program_id, row.sign):
            problems.append(
                Problem(
                    where_rows,
                    f"line {line}: seed",
                    "does not follow "
                    f"run_seed({bench_seed}, program_id, sign): the benchmark "
                    "owns every run seed (and the agent's randomness)",
                    fix,
                )
            )
            break
    return problems


def _check_weights(parsed: Any, strata: Any, method: str, where: str) -> list[Problem]:
    """Logged weights (an optional column) must be the estimator's (``run_weights``)."""
    import math

    from pipeline.metrics.aiq.sampler import stratum_probabilities
    from pipeline.tracks.aiq.score import run_weights

    if all(math.isnan(r.weight) for r in parsed.rows):
        return []
    want = run_weights(method, parsed.rows, stratum_probabilities(strata))
    for r, line, w in zip(parsed.rows, parsed.lines, want, strict=True):
        if math.isnan(r.weight) or abs(r.weight - w) > 1e-9:
            return [Problem(where, f"line {line}: weight",
                            f"is {r.weight!r}, the estimator gives this run {w!r}",
                            "regenerate the bundle with `gmeter aiq run`")]  # fmt: skip
    return []
