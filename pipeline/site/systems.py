"""System pages: every benchmark a system entered, its scores over versions, its provenance."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable

from pipeline.metrics.registry import metric_info
from pipeline.site import charts as ch
from pipeline.site.model import Site, VersionData, href, raw_path, safe_segment, safe_url
from pipeline.site.pages import (
    BundleRow,
    Link,
    Nav,
    Page,
    Provenance,
    SpecFile,
    SystemEntry,
    SystemPage,
)
from pipeline.site.standings import Entry, fmt_interval, fmt_num, history
from pipeline.site.widgets import badges, blocks


def _value(rec: object) -> str:
    v = getattr(rec, "value", None)
    text = fmt_num(v)
    iv = fmt_interval(getattr(rec, "ci_low", None), getattr(rec, "ci_high", None))
    return f"{text} {iv}" if iv else text


def system_pages(
    site: Site, vd: VersionData, prefix: str, nav: Callable[[str], Nav], files: list[SpecFile]
) -> list[Page]:
    """One page per system (grouped by system name across benchmarks) in one version."""
    grouped: dict[str, list[tuple[str, Entry, BundleRow | None]]] = defaultdict(list)
    for bm in vd.benchmarks:
        st = vd.standings[bm.id]
        # entries without the primary metric (suite-level rows) are listed too, unranked
        extra = [
            Entry(
                k[0],
                k[1],
                next(iter(ms.values())).content_hash,
                next(iter(ms.values())),
                ms,
                None,
                None,
            )
            for k, ms in st.others
        ]
        for e in [*st.entries, *extra]:
            b = site.bundle(bm.id, e.bundle, e.content_hash)
            name = b.system_name if b else e.bundle
            grouped[name].append((bm.id, e, b))
    bms = {bm.id: bm for bm in vd.benchmarks}
    pages = []
    for name in sorted(grouped):
        slug = vd.slugs[name]
        base = f"{prefix}systems/{slug}/"
        path = base + "index.html"
        items = grouped[name]
        orgs = sorted({b.organisation for _, _, b in items if b and b.organisation})
        entries = []
        provenance: dict[tuple[str, str], Provenance] = {}
        specs = []
        series: dict[str, list[dict[str, object]]] = defaultdict(list)
        for bid, e, b in items:
            bm = bms[bid]
            t = site.tracks[bm.track]
            bm_link = Link(href(path, f"{prefix}benchmarks/{safe_segment(bid)}/"), bm.title)
            metrics = [m for m in (t.primary, *t.secondary) if m in e.metrics]
            metrics += sorted(m for m in e.metrics if m not in metrics)
            heads = tuple(metric_info(m).label for m in metrics)
            rows = []
            for v in vd.history:
                recs = site.index.get((v.name, bid), {}).get((e.bundle, e.agent), {})
                if not recs:
                    continue
                rows.append((v.label, tuple(_value(recs.get(m)) for m in metrics)))
            first = metrics[0] if metrics else t.primary
            entries.append(
                SystemEntry(
                    bm_link,
                    "" if e.agent == name else e.agent,
                    heads,
                    tuple(rows),
                    str(e.rank or "—"),
                    badges(site, vd, bm, e),
                    _value(e.metrics.get(first)),
                    metric_info(first).label,
                )
            )
            for v, rec in history(site.index, vd.history, bid, (e.bundle, e.agent), t.primary):
                if (
                    rec.value is not None
                    and rec.value == rec.value
                    and abs(rec.value) != float("inf")
                ):
                    series[bid].append(
                        {
                            "x": v.date.isoformat(),
                            "y": rec.value,
                            "label": v.name,
                            "series": e.agent or name,
                        }
                    )
            if b is not None and (bid, b.id) not in provenance:
                provenance[(bid, b.id)] = _provenance(path, bm_link, b)
        for bid in sorted(series):
            pts = series[bid]
            if len({p["x"] for p in pts}) < 2:
                continue
            m = metric_info(site.tracks[bms[bid].track].primary)
            specs.append(
                ch.line_chart(
                    f"history-{safe_segment(bid)}",
                    pts,
                    title=f"{m.label} on {bms[bid].title} over releases",
                    x=("release date", ""),
                    y=(m.label, m.unit),
                    temporal=True,
                    what=f"Line chart of {m.label} in each version for this system's entries",
                )
            )
        ctx = SystemPage(
            nav(path),
            name,
            ", ".join(orgs),
            tuple(entries),
            tuple(provenance[k] for k in sorted(provenance)),
            blocks(specs, path, base, files),
        )
        pages.append(Page(path, "system.html", ctx))
    return pages


def _provenance(path: str, bm_link: Link, b: BundleRow) -> Provenance:
    url = safe_url(b.url)
    files = tuple(Link(href(path, raw_path(b.content_hash, f.path)), f.path) for f in b.files)
    return Provenance(
        bm_link,
        b.id,
        b.content_hash,
        b.submitted.isoformat() if b.submitted else "—",
        b.source_path or "—",
        b.git_commit or "—",
        b.licence or "—",
        Link(url, url) if url else None,
        files,
        b.description,
    )
