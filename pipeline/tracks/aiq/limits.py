"""Bounds of every number an AIQ test may declare (documented in docs/aiq.md, "Limits").

Used by ``benchmark.toml`` ``[aiq]`` validation, ``aiq.toml`` validation
(:func:`pipeline.tracks.aiq.bundle.check_log`) and the ``gmeter aiq run`` options: far above
any published test, low enough that no declared value can make validation, scoring or replay
unbounded (a value outside is an error naming the file and field, never a scoring failure).
"""

from __future__ import annotations

#: Runs of one test (``samples``, ``min_samples``; the paper uses 10 000).
MAX_SAMPLES = 10_000_000
#: Cycles per run (the paper goes to 100 000).
MAX_EPISODE_LENGTH = 10_000_000
#: Programs in a benchmark's sample.
MAX_PROGRAMS = 10_000_000
#: Work-tape cells (the original: 100 000); every run allocates one tape.
MAX_WORK_TAPE = 1_000_000
#: Action-history cells (the original: 25).
MAX_INPUT_TAPE = 1_000
#: Step limit per cycle (the original: 1000).
MAX_STEPS = 1_000_000
#: Seeds are 64-bit.
MAX_SEED = 2**64 - 1
