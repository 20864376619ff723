"""The compare view of a board: two entries side by side, metric by metric.

``benchmarks/<id>/compare/`` shows the first two entries of the board without JavaScript;
two selectors (site.js) pick any pair from a JSON island of the board's entries. For every
metric the page gives both values with their intervals and the difference a − b; whether the
two intervals overlap says if the board can tell them apart (the tie groups' rule). The store
holds no per-item results, so the difference is of the published values, not a paired test.
"""

from __future__ import annotations

import math
from collections.abc import Callable

from pipeline.ranking import fmt_interval, fmt_num
from pipeline.site.model import Site, VersionData, href, safe_segment
from pipeline.site.pages import ComparePage, Link, Nav, Page
from pipeline.site.standings import Entry
from pipeline.store.rows import BenchmarkRow
from pipeline.tracks import metric_info

LIMIT = 500
"""Entries offered in the selectors (a board's first 500)."""


def _finite(v: float | None) -> float | None:
    return v if v is not None and math.isfinite(v) else None


def _name(site: Site, bm_id: str, e: Entry) -> str:
    system = site.system_name(bm_id, e.bundle, e.content_hash)
    return system if e.agent in ("", system) else f"{e.agent} ({system})"


def compare_page(
    site: Site, vd: VersionData, bm: BenchmarkRow, prefix: str, nav: Callable[..., Nav]
) -> Page:
    """Build ``benchmarks/<id>/compare/index.html`` for one board in one version."""
    seg = safe_segment(bm.id)
    path = f"{prefix}benchmarks/{seg}/compare/index.html"
    t = site.tracks[bm.track]
    st = vd.standings[bm.id]
    metrics = [m for m in (t.primary, *t.secondary) if any(m in e.metrics for e in st.entries)]
    entries = []
    for e in st.entries[:LIMIT]:
        vals = {}
        for m in metrics:
            r = e.metrics.get(m)
            if r is None:
                continue
            vals[m] = [
                _finite(r.value),
                _finite(r.ci_low),
                _finite(r.ci_high),
                fmt_num(r.value),
                fmt_interval(r.ci_low, r.ci_high),
            ]
        entries.append({"name": _name(site, bm.id, e), "rank": e.rank, "v": vals})
    heads = [
        {"m": m, "label": metric_info(m).label, "dir": metric_info(m).direction} for m in metrics
    ]
    data = {"entries": entries, "metrics": heads}
    latest = site.latest
    in_latest = latest is not None and bm.id in latest.standings
    ctx = ComparePage(
        nav(path, f"benchmarks/{seg}/compare/" if in_latest else None),
        f"Compare entries: {bm.title}",
        Link(href(path, f"{prefix}benchmarks/{seg}/"), bm.title),
        tuple((str(i), str(x["name"])) for i, x in enumerate(entries)),
        data,
    )
    return Page(path, "compare.html", ctx)
