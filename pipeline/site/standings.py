"""Standings, histories and changelogs: the pure logic behind the site's tables.

Everything here is a function of a :class:`pipeline.store.rows.Snapshot` (or parts of it); nothing
reads files or the store. The page assembly in :mod:`pipeline.site.model` only formats and
links what this module computes; ranks, tie groups and number formats come from
:mod:`pipeline.ranking`, shared with ``gmeter check``.
"""

from __future__ import annotations

import datetime as dt
import math
from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from pipeline.ranking import (
    fmt_num,
    min_ranks,
    pooled,
    pooled_groups,
    ranked_pool,
    same_value,
    usable,
)
from pipeline.site.pages import Sparkline
from pipeline.store.rows import RunRecord, ScoreRecord, Snapshot

CURRENT = "current"

EntryKey = tuple[str, str]
"""(bundle id, agent): one row of a leaderboard."""

ScoreIndex = dict[tuple[str, str], dict[EntryKey, dict[str, ScoreRecord]]]
"""(release, benchmark) → entry → metric → score."""


@dataclass(frozen=True)
class Version:
    """One version of the site: a release, or ``current`` (the working state)."""

    name: str
    date: dt.date
    is_release: bool
    notes: str = ""

    @property
    def label(self) -> str:
        """``release 2024.1 (2024-03-01)``, or ``current`` for the working state."""
        if not self.is_release:
            return "current"
        return f"release {self.name} ({self.date.isoformat()})"


@dataclass(frozen=True)
class Entry:
    """One ranked entry of a benchmark in a version."""

    bundle: str
    agent: str
    content_hash: str
    primary: ScoreRecord
    metrics: Mapping[str, ScoreRecord]
    rank: int | None
    group: int | None
    apart: bool = False
    """A reported entry on a board with verified ones: listed after them, never ranked."""


@dataclass(frozen=True)
class Standing:
    """A benchmark's entries in one version, in display order (rank, then ids)."""

    version: str
    benchmark: str
    metric: str
    direction: str
    entries: tuple[Entry, ...]
    others: tuple[tuple[EntryKey, Mapping[str, ScoreRecord]], ...] = ()

    def by_key(self) -> dict[EntryKey, Entry]:
        """Entries keyed by (bundle, agent)."""
        return {(e.bundle, e.agent): e for e in self.entries}


@dataclass(frozen=True)
class Change:
    """One difference between two versions of a benchmark's standing.

    ``kind`` is ``new``, ``removed``, ``changed`` (a value moved) or ``rank`` (a rank moved).
    """

    kind: str
    bundle: str
    agent: str
    detail: str
    why: str = ""


# --------------------------------------------------------------------------- numbers


def _conventional(rec: ScoreRecord) -> tuple[float, str, str] | None:
    """The (value, label, note) a track asks the board to show (``details.display``)."""
    d = rec.display
    if not isinstance(d, Mapping):
        return None
    raw = d.get("value")
    if isinstance(raw, str) and raw in ("inf", "-inf"):
        v = float(raw)
    elif isinstance(raw, int | float) and not isinstance(raw, bool) and math.isfinite(raw):
        v = float(raw)
    else:
        return None
    label = str(d.get("label") or "")[:24]
    note = str(d.get("note") or "")[:400]
    return v, label, note


def shown_value(rec: ScoreRecord | None) -> tuple[str, str, str]:
    """``(text, mark, tooltip)`` of a score as a board shows it.

    A track may mark a value with a documented convention (``details.display``, e.g. a step
    curve's spread shown as 0 instead of a 2.9·10⁻⁶ float artefact): the board then shows
    the convention with a short ``mark`` and puts the computed value in the tooltip; the
    downloads keep the computed value.
    """
    if rec is None:
        return "—", "", ""
    conv = _conventional(rec)
    if conv is None:
        return fmt_num(rec.value), "", ""
    v, label, note = conv
    raw = "—" if rec.value is None else repr(rec.value)
    tip = f"{note}. Computed value: {raw}" if note else f"Computed value: {raw}"
    return fmt_num(v), label, tip


# --------------------------------------------------------------------------- versions


def site_versions(snapshot: Snapshot) -> list[Version]:
    """Releases oldest first, then ``current`` when it holds scores or current benchmarks."""
    versions = [
        Version(r.name, r.date, True, r.notes)
        for r in sorted(snapshot.releases, key=lambda r: (r.date, r.name))
        if r.name != CURRENT
    ]
    has_current = any(s.release == CURRENT for s in snapshot.scores) or any(
        b.current for b in snapshot.benchmarks
    )
    if has_current or not versions:
        versions.append(Version(CURRENT, snapshot.site_date, False))
    return versions


def index_scores(scores: Sequence[ScoreRecord]) -> ScoreIndex:
    """Group scores by (release, benchmark) → (bundle, agent) → metric."""
    index: ScoreIndex = defaultdict(lambda: defaultdict(dict))
    for s in scores:
        index[(s.release, s.benchmark)][(s.bundle, s.agent)][s.metric] = s
    return index


def standing(
    index: ScoreIndex, version: str, benchmark: str, metric: str, direction: str
) -> Standing:
    """Return the ranked entries of ``benchmark`` in ``version`` by ``metric``.

    Ranks come from the store (the scorer's ranking); when the store holds none they are
    recomputed from the values (not for descriptive metrics, direction ``none``, which get
    neither ranks nor groups). Order: rank, then value (best first; NaN last), then bundle and
    agent ids, so the order is deterministic. Entries without ``metric`` (e.g. a suite-level
    row) are kept apart in ``others``.
    """
    rows = index.get((version, benchmark), {})
    keys = sorted(k for k, metrics in rows.items() if metric in metrics)
    others = tuple((k, rows[k]) for k in sorted(rows) if metric not in rows[k])
    prim = [rows[k][metric] for k in keys]
    ranked = direction != "none"
    # Reported never outranks verified: where a verified entry exists, ranks and groups are
    # over the verified entries (even for numbers a store or frozen file ranked otherwise).
    pool = ranked_pool([p.verified for p in prim])
    ranks: list[int | None]
    if not ranked:
        ranks = [None] * len(prim)  # a descriptive measure is listed, not ranked
    elif prim and all(p.rank is None for p in prim):
        ranks = min_ranks([p.value if ok else None for p, ok in zip(prim, pool, strict=True)],
                          direction)
    else:
        ranks = pooled([p.rank for p in prim], pool)
    groups = (
        pooled_groups([(p.value, p.ci_low, p.ci_high) for p in prim], direction, pool)
        if ranked
        else [None] * len(prim)
    )
    entries = [
        Entry(k[0], k[1], p.content_hash, p, rows[k], r, g, not ok)
        for k, p, r, g, ok in zip(keys, prim, ranks, groups, pool, strict=True)
    ]
    sign = -1.0 if direction == "lower" else 1.0

    def order(e: Entry) -> tuple[bool, bool, int, float, str, str]:
        v = e.primary.value
        key = -sign * v if v is not None and usable(v) else math.inf
        return (e.apart, e.rank is None, e.rank or 0, key, e.bundle, e.agent)

    entries.sort(key=order)
    return Standing(version, benchmark, metric, direction, tuple(entries), others)


def history(
    index: ScoreIndex,
    versions: Sequence[Version],
    benchmark: str,
    key: EntryKey,
    metric: str,
) -> list[tuple[Version, ScoreRecord]]:
    """Return an entry's ``metric`` in each of ``versions`` where it has one (in version order)."""
    out = []
    for v in versions:
        rec = index.get((v.name, benchmark), {}).get(key, {}).get(metric)
        if rec is not None:
            out.append((v, rec))
    return out


def sparkline(points: Sequence[tuple[str, float | None]]) -> Sparkline | None:
    """Draw a history as an inline SVG path (60×16 box, whole-pixel points).

    ``None`` below two usable points.

    The y range is the entry's own min–max (a flat history is a centred line); inf values
    are left out of the range and the path.
    """
    usable = [
        (i, lbl, v) for i, (lbl, v) in enumerate(points) if v is not None and math.isfinite(v)
    ]
    if len(usable) < 2:
        return None
    n = len(points) - 1
    lo = min(v for _, _, v in usable)
    hi = max(v for _, _, v in usable)
    coords = []
    for i, _, v in usable:
        x = 60.0 * i / n if n else 0.0
        y = 8.0 if hi == lo else 14.0 - 12.0 * (v - lo) / (hi - lo)
        coords.append((round(x), round(y)))
    path = "M" + "L".join(f"{x:g} {y:g}" for x, y in coords)
    label = "history: " + ", ".join(f"{lbl} {fmt_num(v)}" for lbl, v in points)
    return Sparkline(path, label)


# --------------------------------------------------------------------------- changelog


def _short(h: str) -> str:
    return h[:10]


def diff_standings(
    old: Standing | None,
    new: Standing,
    *,
    old_run: RunRecord | None,
    new_run: RunRecord | None,
    populational: bool,
    labels: Mapping[str, str],
) -> list[Change]:
    """List what changed in a benchmark's standing from ``old`` to ``new``.

    Every changed value says why, from what the store records:

    * the bundle's content hash differs → a new bundle version;
    * the code version differs → the scoring code changed;
    * the benchmark's content hash differs → the benchmark (reference data) changed;
    * otherwise, for populational tracks whose population changed → the population's
      difficulty was recomputed; else ``recomputed``.
    """
    changes: list[Change] = []
    old_by = old.by_key() if old is not None else {}
    new_by = new.by_key()
    population_changed = set(old_by) != set(new_by) or any(
        old_by[k].content_hash != new_by[k].content_hash for k in set(old_by) & set(new_by)
    )
    for key, e in sorted(new_by.items()):
        if key not in old_by:
            changes.append(
                Change(
                    "new",
                    *key,
                    f"{labels.get(new.metric, new.metric)} "
                    f"{fmt_num(e.primary.value)}, rank {e.rank or '—'}",
                )
            )
            continue
        o = old_by[key]
        moved = []
        for metric in sorted(set(e.metrics) | set(o.metrics)):
            a = o.metrics.get(metric)
            b = e.metrics.get(metric)
            va = a.value if a else None
            vb = b.value if b else None
            if not same_value(va, vb):
                moved.append(f"{labels.get(metric, metric)} {fmt_num(va)} → {fmt_num(vb)}")
        if moved:
            why = []
            if o.content_hash != e.content_hash:
                why.append(
                    f"new bundle version ({_short(o.content_hash)} → {_short(e.content_hash)})"
                )
            if o.primary.code_version != e.primary.code_version:
                why.append(f"code version {o.primary.code_version} → {e.primary.code_version}")
            if old_run and new_run and old_run.benchmark_hash != new_run.benchmark_hash:
                why.append("benchmark reference data changed")
            if not why:
                why.append(
                    "recomputed populational difficulty (the population changed)"
                    if populational and population_changed
                    else "recomputed"
                )
            changes.append(Change("changed", *key, "; ".join(moved), "; ".join(why)))
        if o.rank != e.rank:
            changes.append(Change("rank", *key, f"{o.rank or '—'} → {e.rank or '—'}"))
    for key, o in sorted(old_by.items()):
        if key not in new_by:
            changes.append(Change("removed", *key, f"was rank {o.rank or '—'}"))
    return changes
