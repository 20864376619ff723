"""The benchmark's program sample: its data and its files.

A sample is ``count`` accepted programs with their strata, drawn in blocks of :data:`BLOCK`
programs by ``gmeter aiq sample`` (:mod:`pipeline.lab.aiq.sampling`). Files (benchmark-owned,
under ``reference/``):

* ``programs.csv`` or ``programs.csv.gz``: ``id,stratum,program`` in draw order (``id`` =
  0-based line index). The estimator consumes programs per stratum in this order.
* ``sampler.json``: seed, size, settings, rejection counts and program-length histograms
  (drawn vs accepted; paper Fig. 3).
"""

from __future__ import annotations

import csv
import gzip
import io
import zlib
from dataclasses import dataclass, field
from typing import Any, NamedTuple

from pipeline.metrics.aiq.bf import OPCODES, BFConfig
from pipeline.metrics.aiq.sampler import (
    NUM_STRATA,
    stratum_probabilities,
)

BLOCK = 1000
#: Largest decompressed file accepted (a guard against decompression bombs).
MAX_DECOMPRESSED = 512 * 1024 * 1024


@dataclass
class ProgramSample:
    """Accepted programs with strata and the sampler's statistics."""

    programs: list[str]
    strata: list[int]
    seed: int = 0
    config: BFConfig = field(default_factory=BFConfig)
    iterated: bool = False
    drawn: int = 0
    rejected: dict[str, int] = field(default_factory=dict)
    hist_drawn: list[int] = field(default_factory=list)
    hist_accepted: list[int] = field(default_factory=list)

    @property
    def p(self) -> list[float]:
        """Stratum probabilities (index 0…20)."""
        return stratum_probabilities(self.strata)

    def by_stratum(self) -> dict[int, list[int]]:
        """Program ids of each stratum, in file order."""
        out: dict[int, list[int]] = {i: [] for i in range(NUM_STRATA)}
        for pid, s in enumerate(self.strata):
            out[s].append(pid)
        return out

    def stats(self) -> dict[str, Any]:
        """Return the JSON of ``sampler.json``."""
        return {
            "seed": self.seed,
            "count": len(self.programs),
            "block": BLOCK,
            "simplify": "iterated" if self.iterated else "single-pass",
            "machine": self.config.to_dict(),
            "drawn": self.drawn,
            "rejected": self.rejected,
            "hist_drawn": self.hist_drawn,
            "hist_accepted": self.hist_accepted,
            "p": [round(x, 8) for x in self.p],
        }


# --------------------------------------------------------------------------- files
def gunzip_limited(data: bytes, limit: int = MAX_DECOMPRESSED) -> bytes:
    """Decompress gzip data, refusing more than ``limit`` bytes; raise ValueError if corrupt."""
    d = zlib.decompressobj(16 + zlib.MAX_WBITS)
    try:
        out = d.decompress(data, limit + 1)
    except zlib.error as exc:
        raise ValueError(f"is not valid gzip data ({exc})") from exc
    if len(out) > limit or d.unconsumed_tail:
        raise ValueError(f"decompresses to more than {limit // 2**20} MiB")
    return out


def maybe_gunzip(path: str, data: bytes) -> str:
    """Return the UTF-8 text of a file, decompressing ``*.gz``; raise ValueError if unreadable."""
    raw = gunzip_limited(data) if path.endswith(".gz") else data
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ValueError(f"is not UTF-8 text (byte {exc.start})") from exc


def programs_csv(sample: ProgramSample) -> str:
    """Return the ``id,stratum,program`` CSV text of a sample."""
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(["id", "stratum", "program"])
    for i, (s, prog) in enumerate(zip(sample.strata, sample.programs, strict=True)):
        w.writerow([i, s, prog])
    return buf.getvalue()


def gzip_bytes(text: str) -> bytes:
    """Gzip text reproducibly (no file name, time stamp 0)."""
    return gzip.compress(text.encode("utf-8"), compresslevel=9, mtime=0)


class ProgramsParse(NamedTuple):
    """The programs file parsed: programs and strata by id, and line-level errors."""

    programs: list[str]
    strata: list[int]
    errors: list[tuple[int, str]]


def parse_programs(text: str) -> ProgramsParse:
    """Parse ``id,stratum,program`` (ids must be 0, 1, 2, … in order); collect errors."""
    from pipeline.metrics.aiq.bf import BFProgramError, compile_program

    programs: list[str] = []
    strata: list[int] = []
    errors: list[tuple[int, str]] = []
    reader = csv.reader(io.StringIO(text.lstrip("\ufeff"), newline=""))
    try:
        header = next(reader, None)
    except csv.Error as exc:
        return ProgramsParse([], [], [(1, f"not CSV: {exc}")])
    if header is None or [h.strip() for h in header] != ["id", "stratum", "program"]:
        return ProgramsParse([], [], [(1, "header must be id,stratum,program")])
    lineno = 1
    try:
        for lineno, row in enumerate(reader, start=2):
            if not row:
                continue
            if len(errors) >= 20:
                errors.append((lineno, "more errors not shown"))
                break
            if len(row) != 3:
                errors.append((lineno, f"has {len(row)} cells, not 3"))
                continue
            try:
                pid, stratum = int(row[0]), int(row[1])
            except ValueError:
                errors.append((lineno, "id and stratum must be whole numbers"))
                continue
            if pid != len(programs):
                errors.append((lineno, f"id {pid} out of order (expected {len(programs)})"))
                continue
            if not 1 <= stratum < NUM_STRATA:
                errors.append((lineno, f"stratum {stratum} is not in 1..{NUM_STRATA - 1}"))
                continue
            if not _well_formed(row[2]):
                try:  # the precise message (which symbol, which bracket)
                    compile_program(row[2])
                except BFProgramError as exc:
                    errors.append((lineno, f"program: {exc}"))
                    continue
            programs.append(row[2])
            strata.append(stratum)
    except csv.Error as exc:  # a cell over csv's field limit, a NUL byte, ...
        errors.append((lineno + 1, f"not CSV: {exc}"))
    return ProgramsParse(programs, strata, errors)


_NOT_BRACKETS = {ord(c): None for c in OPCODES if c not in "[]"}


_NEST_PASSES = 8
"""Passes of the pair removal below; each removes one level of nesting, so the check stays
linear. Deeper programs (rare in a sample) are left to the instruction-by-instruction check."""


def _well_formed(program: str) -> bool:
    """Whether :func:`~pipeline.metrics.aiq.bf.compile_program` would accept ``program``.

    The same rule (only BF symbols, balanced brackets) in C-speed string operations: a
    benchmark's sample holds 100,000 programs, and checking each one instruction by instruction
    in Python cost about a second on every ``gmeter aiq run``. ``False`` for brackets nested
    deeper than :data:`_NEST_PASSES` means "not decided here": the caller then compiles.
    """
    if program.strip(OPCODES):
        return False  # strip() keeps everything from the first symbol outside the alphabet
    nest = program.translate(_NOT_BRACKETS)
    for _ in range(_NEST_PASSES):
        if "[]" not in nest:
            break
        nest = nest.replace("[]", "")
    return not nest
