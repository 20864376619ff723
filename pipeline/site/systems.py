"""System pages: every benchmark a system entered, its scores over versions, its provenance."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable

from pipeline.site import charts as ch
from pipeline.site.model import Site, VersionData, href, raw_path, safe_segment, safe_url
from pipeline.site.pages import Link, Nav, Page, Provenance, SpecFile, SystemEntry, SystemPage
from pipeline.site.standings import Entry, history
from pipeline.site.widgets import badges, blocks, score_cell
from pipeline.store.rows import BundleRow, ScoreRecord
from pipeline.tracks import metric_info


def _value(rec: ScoreRecord | None) -> str:
    c = score_cell(rec)
    text = f"{c.text} ({c.mark})" if c.mark else c.text
    return f"{text} {c.interval}" if c.interval else text


def system_pages(
    site: Site, vd: VersionData, prefix: str, nav: Callable[..., Nav], files: list[SpecFile]
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
        latest = site.latest
        in_latest = latest is not None and name in latest.slugs
        ctx = SystemPage(
            nav(path, f"systems/{slug}/" if in_latest else None),
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


def agent_pages(
    site: Site, vd: VersionData, prefix: str, nav: Callable[..., Nav]
) -> list[Page]:
    """One page per agent that came inside a collection bundle (e.g. R2D2 in the ALE systems).

    The URL is ``agents/<stable slug>/``: a function of the agent's name alone. The page lists
    every board of this version the agent appears on, with its score, interval, rank and tie
    group there, and every other metric.
    """
    from pipeline.site.pages import AgentEntry, AgentPage

    found: dict[str, list[tuple[str, Entry, str]]] = defaultdict(list)
    for bm in vd.benchmarks:
        for e in vd.standings[bm.id].entries:
            if e.agent in vd.agent_slugs:
                system = site.system_name(bm.id, e.bundle, e.content_hash)
                if e.agent != system:
                    found[e.agent].append((bm.id, e, system))
    bms = {bm.id: bm for bm in vd.benchmarks}
    latest = site.latest
    pages = []
    for agent in sorted(found):
        slug = vd.agent_slugs[agent]
        path = f"{prefix}agents/{slug}/index.html"
        entries = []
        systems: dict[str, Link] = {}
        for bid, e, system in found[agent]:
            bm = bms[bid]
            t = site.tracks[bm.track]
            sys_link = Link(href(path, f"{prefix}systems/{vd.slugs[system]}/"), system)
            systems[system] = sys_link
            p = e.primary
            others = tuple(
                (metric_info(m).label, _value(r))
                for m, r in sorted(e.metrics.items())
                if m != t.primary
            )
            entries.append(
                AgentEntry(
                    Link(href(path, f"{prefix}benchmarks/{safe_segment(bid)}/"), bm.title),
                    sys_link,
                    metric_info(t.primary).label,
                    score_cell(p),
                    str(e.rank or "—"),
                    str(e.group or "—"),
                    others,
                )
            )
        in_latest = latest is not None and agent in latest.agent_slugs
        ctx = AgentPage(
            nav(path, f"agents/{slug}/" if in_latest else None),
            agent,
            tuple(entries),
            tuple(systems[k] for k in sorted(systems)),
        )
        pages.append(Page(path, "agent.html", ctx))
    return pages


def systems_index(site: Site, vd: VersionData, prefix: str, nav: Callable[..., Nav]) -> Page:
    """``systems/index.html``: every system and every agent page of this version."""
    from pipeline.site.pages import IndexLine, SystemsIndexPage

    path = f"{prefix}systems/index.html"
    boards: dict[str, set[str]] = defaultdict(set)
    agent_boards: dict[str, set[str]] = defaultdict(set)
    for bm in vd.benchmarks:
        st = vd.standings[bm.id]
        for e in st.entries:
            system = site.system_name(bm.id, e.bundle, e.content_hash)
            boards[system].add(bm.title)
            if e.agent in vd.agent_slugs and e.agent != system:
                agent_boards[e.agent].add(bm.title)
        for (bundle, _agent), ms in st.others:
            system = site.system_name(bm.id, bundle, next(iter(ms.values())).content_hash)
            boards[system].add(bm.title)

    def detail(titles: set[str]) -> str:
        names = sorted(titles)
        more = f" and {len(names) - 3} more" if len(names) > 3 else ""
        return f"{len(names)} board{'s' * (len(names) != 1)}: " + ", ".join(names[:3]) + more

    systems = tuple(
        IndexLine(Link(href(path, f"{prefix}systems/{vd.slugs[n]}/"), n), detail(boards[n]))
        for n in sorted(boards, key=str.casefold)
        if n in vd.slugs
    )
    agents = tuple(
        IndexLine(
            Link(href(path, f"{prefix}agents/{vd.agent_slugs[a]}/"), a),
            detail(agent_boards[a]),
            "agent",
        )
        for a in sorted(agent_boards, key=str.casefold)
    )
    ctx = SystemsIndexPage(nav(path, "systems/"), "Systems and agents", systems, agents)
    return Page(path, "systems.html", ctx)
