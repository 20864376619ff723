"""An AIQ benchmark folder's ``[aiq]`` settings and its program sample, loaded for a run.

The ``[aiq]`` section of ``benchmark.toml``
(:class:`~pipeline.tracks.aiq.settings.AIQBenchmarkSettings`) fixes the machine, the discount,
the estimator and the program sample; :func:`load_benchmark` reads all of it for
``gmeter aiq run`` and the Gymnasium AIQ environment.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pipeline.errors import GmeterError, UsageError
from pipeline.metrics.aiq.bf import BFConfig
from pipeline.tracks.aiq.programs import ProgramSample, maybe_gunzip, parse_programs
from pipeline.tracks.aiq.settings import AIQBenchmarkSettings

DEFAULT_BENCHMARK = Path("submissions") / "aiq-bf5"


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

    from pipeline.bundles import display, read_file_bounded
    from pipeline.limits import read_toml_file

    manifest = read_toml_file(path / "benchmark.toml", label=display(path / "benchmark.toml"))
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
        text = maybe_gunzip(file.name, read_file_bounded(file))
    except ValueError as exc:
        raise GmeterError(f"{file}: cannot read the program sample ({exc})") from exc
    parsed = parse_programs(text)
    if parsed.errors:
        line, msg = parsed.errors[0]
        raise GmeterError(f"{file}: line {line}: {msg}")
    sample = ProgramSample(parsed.programs, parsed.strata, int(settings.get("sampler_seed", 0)),
                           config, settings["simplify"] == "iterated")  # fmt: skip
    digest = hashlib.sha256(text.encode("utf-8")).hexdigest()
    return LoadedAIQBenchmark(path, settings, config, sample, digest)
