"""Settings of the ``aiq`` track: the ``[aiq]`` sections and the run log ``aiq.toml``.

:class:`AIQBenchmarkSettings` (the ``[aiq]`` section of ``benchmark.toml``: the machine, the
discount, the estimator and the program sample, bounds from :mod:`pipeline.tracks.aiq.limits`),
:class:`AIQSubmissionSettings` (the optional ``[aiq]`` section of ``submission.toml``) and the
flat settings a bundle logs in ``aiq.toml`` (:data:`LOG_DOMAINS`, :func:`check_log`). The one
place of the track that parses TOML (:func:`read_log`). Validation and scoring read the
benchmark's section typed (:func:`settings_of`).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Annotated, Any, Literal

from pydantic import Field, StringConstraints

from pipeline.errors import Problem
from pipeline.inputs import BenchmarkInput, FileSet
from pipeline.limits import MAX_CELL_INT, parse_toml
from pipeline.tracks.aiq.limits import (
    MAX_EPISODE_LENGTH,
    MAX_INPUT_TAPE,
    MAX_PROGRAMS,
    MAX_SAMPLES,
    MAX_SEED,
    MAX_STEPS,
    MAX_WORK_TAPE,
)
from pipeline.tracks.settings import StrictSettings

_Strict = StrictSettings


class AIQBenchmarkSettings(_Strict):
    """The ``[aiq]`` section of ``benchmark.toml``: the test every bundle must have run."""

    num_symbols: int = Field(5, ge=2, le=127, description="BF alphabet size n (blank (n-1)//2).")
    obs_cells: int = Field(1, ge=0, le=8, description="Observation cells on the output tape.")
    reverse_output: bool = Field(False, description="Reward in the last output cell.")
    work_tape_len: int = Field(
        100_000, ge=1, le=MAX_WORK_TAPE, description="Cells of the circular work tape."
    )
    input_tape_len: int = Field(
        25, ge=1, le=MAX_INPUT_TAPE, description="Action-history cells (one less readable)."
    )
    max_steps: int = Field(
        1000, ge=1, le=MAX_STEPS, description="A cycle reaching this many steps fails."
    )
    simplify: Literal["single-pass", "iterated"] = Field(
        "single-pass",
        description="Pointless-code removal of the sampler: the original's single ordered pass, "
        "or iterated to a fixed point (Vadinský fork).",
    )
    discount: float = Field(
        1.0, gt=0, le=1, allow_inf_nan=False, description="Reward discount (1 = undiscounted)."
    )
    episode_lengths: list[Annotated[int, Field(ge=1, le=MAX_EPISODE_LENGTH)]] = Field(
        default_factory=lambda: [1000],
        max_length=64,
        description="Episode lengths a bundle may use (empty: any); each is its own ranking.",
    )
    programs: str = Field(
        "reference/programs.csv.gz",
        description="The program sample (id,stratum,program; gzip allowed) under the folder.",
    )
    program_count: int | None = Field(
        None, ge=1, le=MAX_PROGRAMS, description="Programs in the sample (checked when given)."
    )
    sampler_seed: int = Field(0, ge=0, le=MAX_SEED, description="Seed the sample was drawn with.")
    sampler_file: str = Field(
        "reference/sampler.json",
        description="Sampler statistics (rejections, length histograms) for the charts.",
    )
    method: Literal["stratified", "mc-antithetic", "mc"] = Field(
        "stratified", description="Estimator every bundle must use."
    )
    samples: int = Field(
        10_000,
        ge=2,
        le=MAX_SAMPLES,
        description="Runs of the test (with ``seed``: every bundle runs exactly this many).",
    )
    samples_by_bundle: dict[
        Annotated[str, StringConstraints(min_length=1, max_length=200)],
        Annotated[int, Field(ge=2, le=MAX_SAMPLES)],
    ] = Field(
        default_factory=dict,
        max_length=1000,
        description="Runs of named bundles (folder name → runs) where they differ from "
        "``samples``: a figure whose points have different budgets. Owned like ``samples``.",
    )
    min_samples: int = Field(
        1000,
        ge=2,
        le=MAX_SAMPLES,
        description="Fewest runs a bundle may log (only when the benchmark declares no seed).",
    )
    seed: int | None = Field(
        None,
        ge=0,
        le=MAX_SEED,
        description="The root seed of every run (programs drawn, machine and agent randomness): "
        "declared, the benchmark owns the seed and the number of runs, and a bundle with another "
        "seed or another ``samples`` is refused (common random numbers, nothing to shop).",
    )


class AIQSubmissionSettings(_Strict):
    """The optional ``[aiq]`` section of ``submission.toml``."""

    agent: str = Field("", max_length=2000, description="The agent and how it was configured.")
    code_url: str = Field("", max_length=500, description="Where the agent's code is published.")


LOG = "aiq.toml"


MACHINE_KEYS = (
    "num_symbols", "obs_cells", "reverse_output", "work_tape_len", "input_tape_len", "max_steps",
)  # fmt: skip


#: ``aiq.toml`` field → (kind, low, high); kinds ``int``, ``bool``, ``float`` (finite), ``str``.
LOG_DOMAINS: dict[str, tuple[str, float, float]] = {
    "samples": ("int", 2, MAX_SAMPLES),
    "seed": ("int", 0, MAX_SEED),
    "episode_length": ("int", 1, MAX_EPISODE_LENGTH),
    "discount": ("float", 0.0, 1.0),
    "num_symbols": ("int", 2, 127),
    "obs_cells": ("int", 0, 8),
    "reverse_output": ("bool", 0, 1),
    "work_tape_len": ("int", 1, MAX_WORK_TAPE),
    "input_tape_len": ("int", 1, MAX_INPUT_TAPE),
    "max_steps": ("int", 1, MAX_STEPS),
    "program_count": ("int", 1, MAX_PROGRAMS),
    "preset_episode_length": ("int", 1, MAX_EPISODE_LENGTH),
    "agent": ("str", 1, 2000),
    "agent_kind": ("str", 1, 40),
    "method": ("str", 1, 40),
    "simplify": ("str", 1, 40),
    "programs_sha256": ("str", 0, 64),
    "traces": ("str", 0, 200),
    "gmeter_version": ("str", 0, 40),
}


#: ``[result]`` fields (informational; the score is recomputed): finite or NaN, bounded.
RESULT_DOMAINS: dict[str, tuple[str, float, float]] = {
    "aiq": ("float", -100.0, 100.0),
    "half_ci": ("float", 0.0, 1e6),
    "ci_low": ("float", -1e6, 1e6),
    "ci_high": ("float", -1e6, 1e6),
    "legacy_half_ci": ("float", 0.0, 1e6),
    "se_p": ("float", 0.0, 1e6),
    "pairs": ("int", 0, MAX_SAMPLES),
    "runs": ("int", 0, MAX_SAMPLES),
    "failed_runs": ("int", 0, MAX_SAMPLES),
}


#: ``[training]`` fields (declared by the submitter or measured by ``gmeter aiq run``).
TRAINING_DOMAINS: dict[str, tuple[str, float, float]] = {
    "seed": ("int", 0, MAX_SEED),
    "steps": ("int", 0, 10**15),
    "checkpoint_setting": ("str", 1, 100),
    "checkpoint": ("str", 1, 255),
    "checkpoint_sha256": ("str", 64, 64),
    "libraries": ("str", 0, 1000),
}


def _domain_problem(value: Any, kind: str, low: float, high: float, nan_ok: bool) -> str:
    """Return what is wrong with ``value`` for its domain, or ``""``."""
    if kind == "bool":
        return "" if isinstance(value, bool) else f"must be true or false, not {value!r}"
    if kind == "str":
        if not isinstance(value, str):
            return f"must be a string, not {type(value).__name__}"
        return "" if low <= len(value) <= high else f"must have {low:g}..{high:g} characters"
    if kind == "int":
        if isinstance(value, bool) or not isinstance(value, int):
            return f"must be a whole number, not {value!r}"
        return "" if low <= value <= high else f"is {value}, outside {int(low)}..{int(high)}"
    if isinstance(value, bool) or not isinstance(value, int | float):
        return f"must be a number, not {value!r}"
    if math.isnan(value) and nan_ok:
        return ""
    if not math.isfinite(value):
        return f"must be a finite number, not {value!r}"
    if kind == "float" and low == 0.0 and high == 1.0:  # the discount: 0 < d <= 1
        return "" if 0.0 < value <= 1.0 else f"is {value!r}, outside (0, 1]"
    return "" if low <= value <= high else f"is {value!r}, outside {low:g}..{high:g}"


def settings_of(bench: BenchmarkInput) -> AIQBenchmarkSettings:
    """The benchmark's ``[aiq]`` section as its model (validated by the manifest already)."""
    return AIQBenchmarkSettings.model_validate(dict(bench.settings))


def check_log(log: Mapping[str, Any], where: str) -> list[Problem]:
    """Every ``aiq.toml`` field with a domain (:data:`LOG_DOMAINS`) that is outside it.

    Unknown top-level keys are reported too: the log is written by ``gmeter aiq run`` only.
    """
    fix = "regenerate the bundle with `gmeter aiq run`; never edit aiq.toml by hand"
    problems: list[Problem] = []
    for key, value in log.items():
        if key == "result":
            if not isinstance(value, dict):
                problems.append(Problem(where, "result", "must be a table", fix))
                continue
            for rkey, rvalue in value.items():
                if rkey == "stages":
                    ok = (
                        isinstance(rvalue, list)
                        and len(rvalue) <= 64
                        and all(
                            isinstance(x, int) and not isinstance(x, bool) and 0 <= x <= MAX_SAMPLES
                            for x in rvalue
                        )
                    )
                    if not ok:
                        msg = f"must be at most 64 whole numbers in 0..{MAX_SAMPLES}"
                        problems.append(Problem(where, "result.stages", msg, fix))
                    continue
                dom = RESULT_DOMAINS.get(rkey)
                msg = "is not a known field" if dom is None else _domain_problem(rvalue, *dom, True)
                if msg:
                    problems.append(Problem(where, f"result.{rkey}", msg, fix))
            continue
        if key == "training":
            if not isinstance(value, dict):
                problems.append(Problem(where, "training", "must be a table", fix))
                continue
            for tkey, tvalue in value.items():
                tdom = TRAINING_DOMAINS.get(tkey)
                msg = "is not a known field" if tdom is None else _domain_problem(
                    tvalue, *tdom, False)  # fmt: skip
                if msg:
                    problems.append(Problem(where, f"training.{tkey}", msg, fix))
            continue
        dom = LOG_DOMAINS.get(key)
        msg = "is not a known field" if dom is None else _domain_problem(value, *dom, False)
        if msg:
            problems.append(Problem(where, key, msg, fix))
        if len(problems) >= 20:
            break
    return problems


def read_log(fs: FileSet) -> tuple[dict[str, Any], list[Problem]]:
    """Parse ``aiq.toml``; problems if missing or not TOML."""
    where = fs.where(LOG)
    if not fs.has(LOG):
        return {}, [Problem(where, "-", "file is missing", "write it with `gmeter aiq run`")]
    # The bounded reader of every manifest: size, nesting, integers, control characters.
    parsed, problems = parse_toml(where, fs.files[LOG], max_int=MAX_CELL_INT)
    if parsed is None:
        return {}, [Problem(p.file, p.field, p.message,
                            f"{p.fix}; regenerate the bundle with `gmeter aiq run`".lstrip("; "))
                    for p in problems]
    return parsed, []


def log_settings(log: Mapping[str, Any]) -> dict[str, Any]:
    """Return the machine/test settings of a log, for comparison with the benchmark's."""
    keys = (*MACHINE_KEYS, "episode_length", "discount", "simplify", "method", "program_count")
    return {k: log[k] for k in keys if k in log}
