"""Shared AIQ test helpers: a small benchmark folder cut from the committed aiq-bf5 sample."""

from __future__ import annotations

import functools
from pathlib import Path

from pipeline.tracks.aiq.programs import ProgramSample, gzip_bytes, maybe_gunzip, parse_programs

ROOT = Path(__file__).resolve().parents[2]
BENCH = ROOT / "submissions" / "aiq-bf5"


@functools.cache
def reference_sample(count: int = 4000) -> ProgramSample:
    """The first ``count`` programs of the committed aiq-bf5 sample."""
    text = maybe_gunzip("p.gz", (BENCH / "reference" / "programs.csv.gz").read_bytes())
    lines = text.splitlines()[: count + 1]
    parsed = parse_programs("\n".join(lines) + "\n")
    return ProgramSample(parsed.programs, parsed.strata)


def small_benchmark(folder: Path, count: int = 4000, **settings: object) -> Path:
    """Write an AIQ benchmark with ``count`` programs into ``folder``; return it."""
    text = maybe_gunzip("p.gz", (BENCH / "reference" / "programs.csv.gz").read_bytes())
    lines = text.splitlines()[: count + 1]
    (folder / "reference").mkdir(parents=True, exist_ok=True)
    (folder / "reference" / "programs.csv.gz").write_bytes(gzip_bytes("\n".join(lines) + "\n"))
    (folder / "reference" / "sampler.json").write_bytes(
        (BENCH / "reference" / "sampler.json").read_bytes()
    )
    extra = "".join(f"{k} = {v!r}\n".replace("'", '"') for k, v in settings.items())
    (folder / "benchmark.toml").write_text(
        f'id = "{folder.name}"\ntitle = "small AIQ"\ntrack = "aiq"\nversion = "1.0.0"\n'
        'description = "test"\nlicence = "CC0-1.0"\ncreated = 2026-01-01\n\n[aiq]\n'
        f"episode_lengths = [100, 200]\nprogram_count = {count}\nmin_samples = 20\n{extra}",
        encoding="utf-8",
    )
    return folder
