"""An AIQ benchmark's ``[aiq]`` settings and its program sample, loaded for a run.

The ``[aiq]`` section of ``benchmark.toml`` (:class:`AIQBenchmarkSettings`, bounds from
:mod:`pipeline.tracks.aiq.limits`) fixes the machine, the discount, the estimator and the
program sample; :func:`load_benchmark` reads all of it for ``gmeter aiq run`` and the
Gymnasium AIQ environment.
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import Field

from pipeline.errors import GmeterError, UsageError
from pipeline.metrics.aiq.bf import BFConfig
from pipeline.tracks.aiq.limits import (
    MAX_EPISODE_LENGTH,
    MAX_INPUT_TAPE,
    MAX_PROGRAMS,
    MAX_SAMPLES,
    MAX_SEED,
    MAX_STEPS,
    MAX_WORK_TAPE,
)
from pipeline.tracks.aiq.programs import ProgramSample, maybe_gunzip, parse_programs
from pipeline.tracks.settings import StrictSettings

DEFAULT_BENCHMARK = Path("submissions") / "aiq-bf5"
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
        10_000, ge=2, le=MAX_SAMPLES, description="Recommended number of runs per bundle."
    )
    min_samples: int = Field(
        1000, ge=2, le=MAX_SAMPLES, description="Fewest runs a bundle may log."
    )


@dataclass
class LoadedAIQBenchmark:
    """What a run needs from a benchmark folder."""

    path: Path
    settings: dict[str, Any]
    config: BFConfig
    sample: ProgramSample
    programs_sha256: str

    @property
    def simplify(self) -> str:
        """``single-pass`` or ``iterated``."""
        return str(self.settings.get("simplify", "single-pass"))


def find_benchmark(out: Path | None, benchmark: Path | None) -> Path:
    """Return the benchmark folder: ``--benchmark``, the parent of ``--out``, or the default."""
    if benchmark is not None:
        return benchmark
    if out is not None and (out.resolve().parent / "benchmark.toml").is_file():
        return out.resolve().parent
    if (DEFAULT_BENCHMARK / "benchmark.toml").is_file():
        return DEFAULT_BENCHMARK
    raise UsageError(
        "no AIQ benchmark found",
        hint="pass --benchmark submissions/<id> (a folder with benchmark.toml, track aiq)",
    )


def load_benchmark(path: Path) -> LoadedAIQBenchmark:
    """Read ``benchmark.toml`` and the program sample of an AIQ benchmark folder."""
    import hashlib

    try:
        manifest = tomllib.loads((path / "benchmark.toml").read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise GmeterError(f"{path}/benchmark.toml cannot be read ({exc})") from exc
    if manifest.get("track") != "aiq":
        raise UsageError(f"{path} is not an AIQ benchmark (track = {manifest.get('track')!r})")
    try:
        settings = AIQBenchmarkSettings.model_validate(manifest.get("aiq", {})).model_dump()
    except ValueError as exc:
        raise GmeterError(f"{path}/benchmark.toml: [aiq] is invalid: {exc}") from exc
    config = BFConfig(**{k: settings[k] for k in (
        "num_symbols", "obs_cells", "reverse_output", "work_tape_len", "input_tape_len",
        "max_steps")})  # fmt: skip
    file = path / settings["programs"]
    try:
        text = maybe_gunzip(file.name, file.read_bytes())
    except (OSError, ValueError) as exc:
        raise GmeterError(f"{file}: cannot read the program sample ({exc})") from exc
    parsed = parse_programs(text)
    if parsed.errors:
        line, msg = parsed.errors[0]
        raise GmeterError(f"{file}: line {line}: {msg}")
    sample = ProgramSample(parsed.programs, parsed.strata, int(settings.get("sampler_seed", 0)),
                           config, settings["simplify"] == "iterated")  # fmt: skip
    digest = hashlib.sha256(text.encode("utf-8")).hexdigest()
    return LoadedAIQBenchmark(path, settings, config, sample, digest)
