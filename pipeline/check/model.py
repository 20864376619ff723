"""The data of a ``gmeter check`` report, and the comparison of two standings.

Pure: no I/O. :mod:`pipeline.check.run` fills these from the scratch store;
:mod:`pipeline.check.report` renders them.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from pipeline.check.view import StaleEntry
from pipeline.errors import Problem
from pipeline.ranking import pooled_groups, ranked_pool, same_value
from pipeline.score import CODE_VERSION
from pipeline.tracks.review import Finding

Key = tuple[str, str]
"""(bundle id, agent): one leaderboard entry."""


@dataclass(frozen=True)
class Entry:
    """One entry's primary score (and all its metrics) in one state of a benchmark."""

    bundle: str
    agent: str
    content_hash: str
    value: float
    ci_low: float | None
    ci_high: float | None
    rank: int | None
    group: int | None
    verified: bool
    code_version: str
    metrics: dict[str, tuple[float, float | None, float | None]]

    @property
    def key(self) -> Key:
        """(bundle, agent)."""
        return (self.bundle, self.agent)


@dataclass(frozen=True)
class NewEntry:
    """An entry of a bundle under review, placed in the new standing."""

    entry: Entry
    of: int
    overtakes: tuple[Entry, ...]
    before: Entry | None


@dataclass(frozen=True)
class OtherChange:
    """How an existing entry moves because of the pull request."""

    bundle: str
    agent: str
    metric_changes: tuple[tuple[str, float | None, float | None], ...]
    rank_before: int | None
    rank_after: int | None


@dataclass
class BenchmarkCheck:
    """Everything ``check`` found for one affected benchmark."""

    id: str
    label: str
    track: str | None
    title: str = ""
    version: str = ""
    populational: bool = False
    primary_metric: str = ""
    direction: str = "higher"
    targets: list[str] = field(default_factory=list)
    deleted: list[str] = field(default_factory=list)
    status: str = "scored"  # scored | failed | invalid | removed
    new_entries: list[NewEntry] = field(default_factory=list)
    unscored: list[str] = field(default_factory=list)
    others: list[OtherChange] = field(default_factory=list)
    removed: list[Entry] = field(default_factory=list)
    entries_before: int = 0
    entries_after: int = 0
    problems: list[Problem] = field(default_factory=list)
    findings: list[Finding] = field(default_factory=list)
    stale: list[StaleEntry] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    rows: list[dict[str, Any]] = field(default_factory=list)

    @property
    def error_count(self) -> int:
        """Errors: validation, integrity, scoring failures and bundles left unscored."""
        return (sum(p.severity == "error" for p in self.problems)
                + sum(f.severity == "error" for f in self.findings)
                + (self.status == "failed") + len(self.unscored))

    @property
    def warning_count(self) -> int:
        """Warnings: validation and integrity warnings."""
        return (sum(p.severity != "error" for p in self.problems)
                + sum(f.severity == "warning" for f in self.findings))


@dataclass
class CheckReport:
    """The result of ``gmeter check``."""

    mode: str  # git | paths
    base: str = ""
    base_commit: str = ""
    merge_base: str = ""
    code_version: str = CODE_VERSION
    seed: int = 20211
    benchmarks: list[BenchmarkCheck] = field(default_factory=list)
    findings: list[Finding] = field(default_factory=list)
    outside: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    @property
    def errors(self) -> int:
        """How many errors (any makes the check fail)."""
        return sum(b.error_count for b in self.benchmarks) + sum(
            f.severity == "error" for f in self.findings)

    @property
    def warnings(self) -> int:
        """How many warnings."""
        return sum(b.warning_count for b in self.benchmarks) + sum(
            f.severity == "warning" for f in self.findings)

    @property
    def exit_code(self) -> int:
        """1 on any error, else 0 (warnings pass)."""
        return 1 if self.errors else 0

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready (``--format json``)."""
        def conv(o: Any) -> Any:
            if dataclasses.is_dataclass(o) and not isinstance(o, type):
                return {f.name: conv(getattr(o, f.name)) for f in dataclasses.fields(o)}
            if isinstance(o, dict):
                return {str(k): conv(v) for k, v in o.items()}
            if isinstance(o, list | tuple):
                return [conv(v) for v in o]
            if isinstance(o, float) and not math.isfinite(o):
                return None if math.isnan(o) else ("inf" if o > 0 else "-inf")
            if isinstance(o, dt.date):
                return o.isoformat()
            return o

        out = conv(self)
        out.update(errors=self.errors, warnings=self.warnings, exit_code=self.exit_code)
        return out


# --------------------------------------------------------------------------- standings
def entries_of(rows: Sequence[dict[str, Any]], metric: str, direction: str) -> list[Entry]:
    """Build the standing of ``metric`` from score rows, best first (then bundle, agent).

    Tie groups are the site's (:func:`pipeline.ranking.rank_groups`, LMArena's "rank (UB)"),
    so the report of a pull request shows the groups the board will show.
    """
    by_key: dict[Key, dict[str, tuple[float, float | None, float | None]]] = {}
    prim: dict[Key, dict[str, Any]] = {}
    for r in rows:
        k = (r["bundle"], r["agent"])
        by_key.setdefault(k, {})[r["metric"]] = (r["value"], r["ci_low"], r["ci_high"])
        if r["metric"] == metric:
            prim[k] = r
    keys = sorted(prim)
    groups = pooled_groups([(prim[k]["value"], prim[k]["ci_low"], prim[k]["ci_high"])
                            for k in keys], direction,
                           ranked_pool([bool(prim[k]["verified"]) for k in keys]))
    out = [Entry(k[0], k[1], prim[k]["content_hash"], prim[k]["value"], prim[k]["ci_low"],
                 prim[k]["ci_high"], prim[k]["rank"], g, bool(prim[k]["verified"]),
                 prim[k]["code_version"], by_key[k])
           for k, g in zip(keys, groups, strict=True)]
    out.sort(key=lambda e: (e.rank is None, e.rank or 0, e.bundle, e.agent))
    return out


def compare(bc: BenchmarkCheck, before: list[Entry], after: list[Entry]) -> None:
    """Fill ``bc``'s new entries, changes for others and removed entries."""
    old = {e.key: e for e in before}
    new = {e.key: e for e in after}
    targets = set(bc.targets)
    ranked = [e for e in after if e.rank is not None]
    for e in after:
        if e.bundle not in targets:
            continue
        prev = old.get(e.key)
        passed = tuple(
            o for o in ranked
            if o.bundle not in targets and e.rank is not None and o.rank is not None
            and o.rank > e.rank and (prev is None or prev.rank is None or (
                o.key in old and old[o.key].rank is not None
                and old[o.key].rank <= prev.rank))  # type: ignore[operator]
        )
        bc.new_entries.append(NewEntry(e, len(ranked), passed, prev))
    for k, e in new.items():
        if e.bundle in targets or k not in old:
            continue
        o = old[k]
        moved = tuple(
            (m, old_m[0] if old_m else None, new_m[0] if new_m else None)
            for m in sorted(set(o.metrics) | set(e.metrics))
            for old_m, new_m in [(o.metrics.get(m), e.metrics.get(m))]
            if not same_value(old_m[0] if old_m else None, new_m[0] if new_m else None)
        )
        if moved or o.rank != e.rank:
            bc.others.append(OtherChange(e.bundle, e.agent, moved, o.rank, e.rank))
    bc.others.sort(key=lambda c: (c.rank_after is None, c.rank_after or 0, c.bundle, c.agent))
    bc.removed = [o for k, o in old.items() if k not in new and o.bundle not in targets]
    bc.entries_before, bc.entries_after = len(before), len(after)


# --------------------------------------------------------------------------- the use case
