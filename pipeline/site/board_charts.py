"""Charts of a leaderboard page drawn from the scores, plus the track's own chart data.

From the scores, for every benchmark: the primary score of the top entries with intervals and
tie groups, the best score in each version (state of the art over time) and the bubble chart
of three metrics a track may ask for (:class:`~pipeline.tracks.presentation.MetricScatter`).
Then every ``charts`` row of the version, through
:func:`pipeline.site.track_charts.track_charts` with the track's presentation.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Sequence

from pipeline.ranking import fmt_interval, fmt_num
from pipeline.site import charts as ch
from pipeline.site.model import Site, TrackInfo, VersionData, slugify
from pipeline.site.standings import Entry
from pipeline.site.track_charts import track_charts
from pipeline.store.rows import BenchmarkRow
from pipeline.tracks import metric_info

SCORE_CHART_LIMIT = 40
SCATTER_LIMIT = 100


def entry_label(site: Site, bm_id: str, e: Entry) -> str:
    """Name an entry: the system, with the agent when the bundle holds several."""
    name = site.system_name(bm_id, e.bundle, e.content_hash)
    return name if e.agent in (name, "") else f"{name} · {e.agent}"


def entry_variants(
    site: Site, bm_id: str, entries: Sequence[Entry]
) -> dict[tuple[str, str], str]:
    """Tell apart the entries that would read the same on a board.

    ``(bundle, agent)`` → the bundle's declared system version (e.g. "1280 training
    samples"), or its bundle id. Only entries sharing a system name and agent get one.
    """
    seen: dict[tuple[str, str], list[Entry]] = defaultdict(list)
    for e in entries:
        seen[(site.system_name(bm_id, e.bundle, e.content_hash), e.agent)].append(e)
    out = {}
    for same in seen.values():
        if len(same) < 2:
            continue
        for e in same:
            b = site.bundle(bm_id, e.bundle, e.content_hash)
            out[(e.bundle, e.agent)] = (b.system_version if b else "") or f"bundle {e.bundle}"
    return out


def score_charts(site: Site, vd: VersionData, bm: BenchmarkRow, t: TrackInfo) -> list[ch.ChartSpec]:
    """Charts from the scores (interval, state of the art, the track's bubbles) + the track's."""
    st = vd.standings[bm.id]
    m = metric_info(t.primary)
    out: list[ch.ChartSpec] = []
    recs = []
    variants = entry_variants(site, bm.id, st.entries)
    for e in st.entries[:SCORE_CHART_LIMIT]:
        system = site.system_name(bm.id, e.bundle, e.content_hash)
        agent = e.agent if e.agent not in ("", system) else system
        if (e.bundle, e.agent) in variants:
            agent = f"{agent} ({variants[(e.bundle, e.agent)]})"
        v, lo, hi = e.primary.value, e.primary.ci_low, e.primary.ci_high
        if v is None or not math.isfinite(v):
            continue
        recs.append(
            {
                # the agent names the row; the collection it came in is in the tooltip
                "label": f"{e.rank or '—'}. {agent}",
                "entry": agent,
                "collection": system if system != agent else "",
                "value": v,
                "low": lo if lo is not None else v,
                "high": hi if hi is not None else v,
                "value_text": fmt_num(v),
                "interval": fmt_interval(lo, hi) or "none",
                "group": str(e.group or "—"),
                "tied": "tied with the leader" if e.group == 1 else "below the leader",
            }
        )
    if recs and m.direction != "none":
        top = f"top {len(recs)} " if len(st.entries) > len(recs) else ""
        out.append(
            ch.interval_chart(
                "scores",
                recs,
                title=f"{m.label} of the {top}entries",
                x=(m.label, m.unit),
                what=bm.title,
            )
        )
    sota = _sota(site, vd, bm, t) if m.direction != "none" else []
    if len({p["x"] for p in sota}) >= 2:  # one date is a dot, not a time series
        out.append(
            ch.line_chart(
                "sota",
                sota,
                title=f"Best {m.label} over time",
                x=("release date", ""),
                y=(f"best {m.label}", m.unit),
                temporal=True,
                step=True,
                draw_labels=True,
                what=f"Step line of the best {m.label} in each version, labelled with the leader",
            )
        )
    track_names = {c.name for c in site.charts.get((vd.version.name, bm.id), [])}
    bubbles = t.presentation.metric_scatter
    if bubbles is not None and bubbles.unless not in track_names:
        entries = st.entries[:SCATTER_LIMIT]
        p = _pairs(site, bm.id, entries, bubbles.x, bubbles.y, bubbles.size)
        if len(p) >= 2:
            out.append(
                ch.scatter_chart(
                    bubbles.key,
                    p,
                    title=bubbles.title,
                    x=_axis(bubbles.x),
                    y=_axis(bubbles.y),
                    size=_axis(bubbles.size),
                    what=bubbles.what,
                    labels=len(p) <= 30,
                )
            )
    used = {c.key for c in out}
    for rec in site.charts.get((vd.version.name, bm.id), []):
        for made in track_charts("t-" + slugify(rec.name), rec.name, rec.data, t.presentation):
            if made.key not in used:
                used.add(made.key)
                out.append(made)
    return out


def _axis(name: str) -> tuple[str, str]:
    mi = metric_info(name)
    return mi.label, mi.unit


def _sota(site: Site, vd: VersionData, bm: BenchmarkRow, t: TrackInfo) -> list[dict[str, object]]:
    """Return the best primary score in each version up to ``vd`` (Papers-with-Code style)."""
    sign = -1.0 if metric_info(t.primary).direction == "lower" else 1.0
    out: list[dict[str, object]] = []
    by_date: dict[str, dict[str, object]] = {}
    for v in vd.history:
        best = None
        for key, recs in sorted(site.index.get((v.name, bm.id), {}).items()):
            r = recs.get(t.primary)
            if r is None or r.value is None or not math.isfinite(r.value):
                continue
            if best is None or sign * r.value > sign * best[0]:
                best = (r.value, key, r.content_hash)
        if best is not None:
            who = site.system_name(bm.id, best[1][0], best[2])
            agent = best[1][1] if best[1][1] not in ("", who) else who
            # versions of one date: the latest of them stands for the date
            by_date[v.date.isoformat()] = {
                "x": v.date.isoformat(),
                "y": best[0],
                "label": f"{v.name}: {agent}",
            }
    out.extend(by_date[d] for d in sorted(by_date))
    return out


def _pairs(
    site: Site, bm_id: str, entries: Sequence[Entry], xm: str, ym: str, sm: str
) -> list[dict[str, object]]:
    res: list[dict[str, object]] = []
    for e in entries:
        x, y, s = e.metrics.get(xm), e.metrics.get(ym), e.metrics.get(sm)
        if x is None or y is None or x.value is None or y.value is None:
            continue
        if not (math.isfinite(x.value) and math.isfinite(y.value)):
            continue
        p: dict[str, object] = {
            "label": entry_label(site, bm_id, e),
            "x": x.value,
            "y": y.value,
        }
        if s is not None and s.value is not None and math.isfinite(s.value):
            p["size"] = s.value
        res.append(p)
    return res
