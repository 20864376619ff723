"""Replay verification of AIQ bundles (``gmeter aiq verify``, the ``aiq-replay`` integrity check).

For every logged run with a trace, the actions are fed to the BF reference machine (compiled
kernel, identical to the plain reference) with the run's program and seed; the replayed score,
step count, cycle count and status must equal the log. Rewards compare exactly up to
:data:`TOLERANCE` (the CSV holds them in full precision). When a benchmark is given, every
program and stratum must also be the benchmark's at that ``program_id`` and the programs of
each stratum must be consumed in file order (skipping none).

A bundle whose every run replays is **verified**; one without traces is **reported**.
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from pipeline.errors import Problem
from pipeline.inputs import BenchmarkInput, BundleInput, FileSet
from pipeline.metrics.aiq.bf import MACHINE_VERSION, BFConfig
from pipeline.metrics.aiq.runs import AIQSettings, run_seed
from pipeline.metrics.aiq.traces import decode_each
from pipeline.tracks.aiq.bundle import (
    SAMPLES,
    STATUS_OK,
    STATUS_OVERTIME,
    ParsedRows,
    read_rows,
    read_traces,
)
from pipeline.tracks.aiq.programs import ProgramsParse, maybe_gunzip, parse_programs
from pipeline.tracks.aiq.settings import LOG, MACHINE_KEYS, read_log

TOLERANCE = 1e-9
MAX_REPORTED = 20
#: Raise when the checks below change what a bundle's verification says (with the machine's
#: own version this names a stored result; another name means verifying again).
RULES_VERSION = 1
VERIFIER = f"aiq-replay bf-{MACHINE_VERSION} rules-{RULES_VERSION}"


@dataclass
class VerifyResult:
    """What verification found: problems, and whether the bundle counts as verified."""

    problems: list[Problem] = field(default_factory=list)
    replayed: int = 0
    has_traces: bool = False

    @property
    def verified(self) -> bool:
        """Traces present, every run replayed, no error."""
        return self.has_traces and not any(p.severity == "error" for p in self.problems)


def settings_from_log(log: Mapping[str, Any]) -> AIQSettings:
    """Build the run's settings from ``aiq.toml``; raise ValueError if they are unusable."""
    machine = {k: log[k] for k in MACHINE_KEYS if k in log}
    for k, v in machine.items():
        if not isinstance(v, int):
            raise ValueError(f"{k} must be a whole number or boolean, got {v!r}")
    cfg = BFConfig(**machine)
    length = log.get("episode_length")
    discount = log.get("discount", 1.0)
    if not isinstance(length, int) or isinstance(length, bool):
        raise ValueError("episode_length must be a whole number")
    if not isinstance(discount, int | float) or isinstance(discount, bool):
        raise ValueError("discount must be a number")
    return AIQSettings(cfg, length, float(discount))


def replay_rows(
    parsed: ParsedRows,
    traces: Mapping[tuple[int, int], str],
    settings: AIQSettings,
    where_samples: str,
    where_traces: str,
) -> tuple[list[Problem], int]:
    """Replay every run; return (problems, runs replayed)."""
    from pipeline.metrics.aiq.bf import BFProgramError
    from pipeline.metrics.aiq.bf_fast import program_arrays, replay_score_kernel, seed64

    c = settings.machine
    problems: list[Problem] = []
    replayed = 0
    compiled: dict[str, Any] = {}

    def bad(lineno: int, fld: str, msg: str, fix: str = "") -> None:
        problems.append(Problem(where_samples, f"line {lineno}: {fld}", msg, fix or
                                "regenerate the bundle with `gmeter aiq run --traces`; never "
                                "edit samples.csv by hand"))  # fmt: skip

    texts = [traces.get((row.program_id, row.sign)) for row in parsed.rows]
    # Decoded lazily in row order, many traces per array pass (bounded memory).
    decoded = decode_each((t for t in texts if t is not None), c.num_symbols)
    for row, lineno, text in zip(parsed.rows, parsed.lines, texts, strict=True):
        if len(problems) >= MAX_REPORTED:
            problems.append(Problem(where_samples, "-", "more replay problems not shown", ""))
            break
        key = (row.program_id, row.sign)
        if text is None:
            problems.append(
                Problem(
                    where_traces,
                    f"program_id {key[0]}, sign {key[1]:+d}",
                    "has no trace",
                    "regenerate with `gmeter aiq run --traces`",
                )
            )
            continue
        got = next(decoded)
        if got.actions is None:
            problems.append(Problem(where_traces, f"program_id {key[0]}, sign {key[1]:+d}",
                                    got.error, ""))  # fmt: skip
            continue
        actions = got.actions
        want = settings.episode_length if row.status == STATUS_OK else row.cycles
        if len(actions) != want:
            bad(lineno, "trace", f"the trace has {len(actions)} actions, the run needs {want}")
            continue
        try:
            ops_jump = compiled.get(row.program) or program_arrays(row.program)
        except BFProgramError as exc:
            bad(lineno, "program", str(exc))
            continue
        compiled[row.program] = ops_jump
        score, steps, cycles, failed = replay_score_kernel(
            ops_jump[0], ops_jump[1], actions, c.num_symbols, c.obs_cells,
            c.reverse_output, c.work_tape_len, c.input_tape_len, c.max_steps, seed64(row.seed),
            float(row.sign), settings.discount,
        )  # fmt: skip
        replayed += 1
        ident = f"(program_id {row.program_id}, sign {row.sign:+d}, seed {row.seed})"
        status = STATUS_OVERTIME if failed else STATUS_OK
        if status != row.status:
            bad(lineno, "status", f"logged {row.status!r} but the replay gives {status!r} {ident}")
        elif row.status == STATUS_OK and not math.isclose(
            row.reward, float(score), rel_tol=TOLERANCE, abs_tol=TOLERANCE
        ):
            bad(lineno, "reward",
                f"logged reward {row.reward!r} does not replay: the logged actions give "
                f"{float(score)!r} {ident}")  # fmt: skip
        elif int(steps) != row.steps or int(cycles) != row.cycles:
            bad(lineno, "steps",
                f"logged {row.steps} steps / {row.cycles} cycles, the replay gives "
                f"{int(steps)} / {int(cycles)} {ident}")  # fmt: skip
    return problems, replayed


_PROGRAMS_CACHE: dict[str, ProgramsParse] = {}


def benchmark_programs(bench: BenchmarkInput) -> tuple[ProgramsParse | None, list[Problem]]:
    """Parse the benchmark's program sample (cached by content)."""
    path = str(bench.settings.get("programs", "reference/programs.csv.gz"))
    fs = bench.files
    if not fs.has(path):
        return None, [Problem(fs.where(path), "-", "the benchmark's program sample is missing",
                              "generate it with `gmeter aiq sample`")]  # fmt: skip
    data = fs.files[path]
    digest = hashlib.sha256(data).hexdigest()
    if digest not in _PROGRAMS_CACHE:
        try:
            text = maybe_gunzip(path, data)
        except ValueError as exc:
            return None, [Problem(fs.where(path), "-", str(exc), "regenerate the sample")]
        _PROGRAMS_CACHE.clear()
        _PROGRAMS_CACHE[digest] = parse_programs(text)
    parsed = _PROGRAMS_CACHE[digest]
    problems = [Problem(fs.where(path), f"line {ln}", msg, "regenerate the sample")
                for ln, msg in parsed.errors]  # fmt: skip
    return parsed, problems


def check_programs(
    parsed: ParsedRows, programs: ProgramsParse, method: str, where: str
) -> list[Problem]:
    """Programs and strata must be the benchmark's, consumed in file order (per stratum)."""
    problems: list[Problem] = []
    n = len(programs.programs)
    used: dict[int, set[int]] = {}
    signs: dict[int, set[int]] = {}
    for row, lineno in zip(parsed.rows, parsed.lines, strict=True):
        pid = row.program_id
        if pid >= n:
            problems.append(
                Problem(
                    where,
                    f"line {lineno}: program_id",
                    f"{pid} is not in the benchmark's {n} programs",
                    "",
                )
            )
        elif row.program != programs.programs[pid] or row.stratum != programs.strata[pid]:
            problems.append(
                Problem(
                    where,
                    f"line {lineno}: program",
                    f"program/stratum differ from the benchmark's program {pid}",
                    "use the benchmark's program sample (gmeter aiq run does)",
                )
            )
        else:
            used.setdefault(row.stratum if method == "stratified" else 0, set()).add(pid)
            signs.setdefault(pid, set()).add(row.sign)
        if len(problems) >= MAX_REPORTED:
            return problems
    for key, ids in sorted(used.items()):
        order = [i for i, s in enumerate(programs.strata) if method != "stratified" or s == key]
        prefix = order[: len(ids)]
        if set(prefix) != ids:
            first = min(set(prefix) - ids)
            label = f"stratum {key}" if method == "stratified" else "the sample"
            problems.append(Problem(where, "program_id",
                                    f"program {first} of {label} was skipped (programs must be "
                                    "used in file order; failed runs are logged, not dropped)",
                                    "do not remove rows from samples.csv"))  # fmt: skip
    if method != "mc":
        lonely = sorted(pid for pid, s in signs.items() if s != {1, -1})
        if lonely:
            problems.append(
                Problem(
                    where,
                    "sign",
                    f"program {lonely[0]} lacks its antithetic twin ({len(lonely)} such programs)",
                    "log both runs (sign 1 and -1) of every program",
                )
            )
    return problems


def check_seeds(parsed: ParsedRows, root: Any, where: str) -> list[Problem]:
    """Warn when run seeds do not follow ``run_seed(seed, program_id, sign)``."""
    if not isinstance(root, int) or isinstance(root, bool) or root < 0:
        return [Problem(where, "seed", "aiq.toml has no valid root seed", "", "warning")]
    for row, lineno in zip(parsed.rows, parsed.lines, strict=True):
        if row.seed != run_seed(root, row.program_id, row.sign):
            return [Problem(where, f"line {lineno}: seed",
                            "run seeds do not follow run_seed(seed, program_id, sign): no common "
                            "random numbers with other bundles", "", "warning")]  # fmt: skip
    return []


def verify_bundle(bundle: BundleInput, benchmark: BenchmarkInput | None = None) -> VerifyResult:
    """Replay a bundle (and check its programs against the benchmark when given)."""
    return verify_files(bundle.files, benchmark)


def verify_files(fs: FileSet, benchmark: BenchmarkInput | None = None) -> VerifyResult:
    """:func:`verify_bundle` on a bare FileSet."""
    out = VerifyResult()
    log, problems = read_log(fs)
    out.problems += problems
    parsed = read_rows(fs)
    out.problems += parsed.problems
    if not log or not parsed.rows:
        return out
    try:
        settings = settings_from_log(log)
    except (ValueError, TypeError) as exc:
        out.problems.append(Problem(fs.where(LOG), "settings", str(exc), "regenerate the bundle"))
        return out
    method = str(log.get("method", "stratified"))
    if benchmark is not None:
        progs, more = benchmark_programs(benchmark)
        out.problems += more
        if progs is not None and not more:
            out.problems += check_programs(parsed, progs, method, fs.where(SAMPLES))
    out.problems += check_seeds(parsed, log.get("seed"), fs.where(SAMPLES))
    path, traces, more = read_traces(fs)
    out.problems += more
    if path is None:
        return out
    out.has_traces = True
    problems, out.replayed = replay_rows(
        parsed, traces, settings, fs.where(SAMPLES), fs.where(path)
    )
    out.problems += problems
    return out


def verification_context(bench: BenchmarkInput) -> str:
    """What a bundle's verification depends on besides its files: the benchmark's programs.

    The SHA-256 of the program sample's path and bytes, so a release whose benchmark differs
    only in its description reuses the verification of every unchanged bundle.
    """
    path = str(bench.settings.get("programs", "reference/programs.csv.gz"))
    data = bench.files.files.get(path)
    h = hashlib.sha256(path.encode("utf-8") + b"\0")
    h.update(b"missing" if data is None else hashlib.sha256(data).digest())
    return h.hexdigest()


def verify_reusing(
    fs: FileSet, benchmark: BenchmarkInput, kept: Mapping[str, Any] | None
) -> tuple[VerifyResult, dict[str, Any] | None]:
    """Verify ``fs`` unless ``kept`` holds its result; return (result, record to keep or None).

    ``kept`` is a record of :func:`result_record` stored under this bundle's content hash,
    :func:`verification_context` and :data:`VERIFIER`; an unreadable one is ignored.
    """
    if kept is not None:
        known = result_from_record(kept, fs.label, benchmark.files.label)
        if known is not None:
            return known, None
    fresh = verify_files(fs, benchmark)
    return fresh, result_record(fresh, fs.label, benchmark.files.label)


def result_record(result: VerifyResult, bundle_label: str, bench_label: str) -> dict[str, Any]:
    """A JSON-ready record of ``result``, its file names relative to the folders verified.

    The same content can sit in another folder in another release: the names are put back
    with the folders of the run that reads the record, so messages never show a stale path.
    """
    problems = []
    for p in result.problems:
        root, rel = "", p.file
        for name, label in (("bundle", bundle_label), ("benchmark", bench_label)):
            if label and p.file.startswith(label + "/"):
                root, rel = name, p.file[len(label) + 1 :]
                break
        problems.append({"root": root, "file": rel, "field": p.field, "message": p.message,
                         "fix": p.fix, "severity": p.severity})  # fmt: skip
    return {"has_traces": result.has_traces, "replayed": result.replayed, "problems": problems}


def result_from_record(
    record: Mapping[str, Any], bundle_label: str, bench_label: str
) -> VerifyResult | None:
    """Invert :func:`result_record`; ``None`` when the record is not one."""
    try:
        roots = {"": "", "bundle": bundle_label, "benchmark": bench_label}
        problems = []
        for d in record["problems"]:
            root = roots[d["root"]]
            file = f"{root}/{d['file']}" if root else str(d["file"])
            problems.append(Problem(file, str(d["field"]), str(d["message"]), str(d["fix"]),
                                    str(d["severity"])))  # fmt: skip
        has_traces, replayed = record["has_traces"], record["replayed"]
    except (KeyError, TypeError):
        return None
    if not isinstance(has_traces, bool) or not isinstance(replayed, int):
        return None
    return VerifyResult(problems, replayed, has_traces)


__all__: Sequence[str] = ("VERIFIER", "VerifyResult", "verification_context", "verify_bundle",
                          "verify_files", "verify_reusing")
