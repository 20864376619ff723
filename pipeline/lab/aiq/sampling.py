"""Drawing a benchmark's program sample (``gmeter aiq sample``): seeded, in blocks, on the executor.

Block ``b`` of :data:`~pipeline.tracks.aiq.programs.BLOCK` programs uses the seed
``derive_seed(seed, b)``, so the sample is the same whatever the number of workers. The files
the sample is written to are the track's (:mod:`pipeline.tracks.aiq.programs`).
"""

from __future__ import annotations

from typing import Any, NamedTuple

from pipeline.metrics.aiq.bf import BFConfig
from pipeline.metrics.aiq.sampler import REJECT_REASONS, SampleBlock
from pipeline.tracks.aiq.programs import BLOCK, ProgramSample


class _BlockJob(NamedTuple):
    block: int
    size: int
    seed: int
    config: BFConfig
    iterated: bool


def _run_block(job: _BlockJob) -> SampleBlock:
    from pipeline.metrics.aiq.sampler_fast import sample_block_fast
    from pipeline.metrics.seeds import derive_seed

    seed = derive_seed(job.seed, job.block)
    return sample_block_fast(seed, job.size, job.config, iterated=job.iterated)


def generate_sample(
    count: int,
    config: BFConfig,
    seed: int,
    *,
    iterated: bool = False,
    executor: Any = None,
    progress: Any = None,
) -> ProgramSample:
    """Draw ``count`` accepted programs (see the module docstring for the seeding)."""
    from pipeline.executor import InProcessExecutor

    if count < 1:
        raise ValueError("count must be >= 1")
    jobs = [
        _BlockJob(b, min(BLOCK, count - b * BLOCK), seed, config, iterated)
        for b in range((count + BLOCK - 1) // BLOCK)
    ]
    ex = executor or InProcessExecutor()
    blocks: list[SampleBlock] = ex.map(_run_block, jobs, label="aiq sample", progress=progress)
    out = ProgramSample([], [], seed, config, iterated, 0, dict.fromkeys(REJECT_REASONS, 0))
    out.hist_drawn = [0] * len(blocks[0].hist_drawn)
    out.hist_accepted = [0] * len(blocks[0].hist_accepted)
    for blk in blocks:
        out.programs += blk.programs
        out.strata += blk.strata
        out.drawn += blk.drawn
        for k, v in blk.rejected.items():
            out.rejected[k] += v
        out.hist_drawn = [a + b for a, b in zip(out.hist_drawn, blk.hist_drawn, strict=True)]
        out.hist_accepted = [
            a + b for a, b in zip(out.hist_accepted, blk.hist_accepted, strict=True)
        ]
    return out
