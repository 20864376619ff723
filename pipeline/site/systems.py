"""System pages: every benchmark a system entered, its scores over versions, its provenance."""

from __future__ import annotations

import json
import math
from collections import defaultdict
from collections.abc import Callable, Iterator
from dataclasses import replace

from pipeline.site import charts as ch
from pipeline.site.model import Site, VersionData, href, raw_path, safe_segment, safe_url
from pipeline.site.pages import Link, Nav, Page, Provenance, SpecFile, SystemEntry, SystemPage
from pipeline.site.standings import Entry, history
from pipeline.site.widgets import badges, blocks, score_cell
from pipeline.store.rows import BundleRow, ScoreRecord
from pipeline.tracks import metric_info

TRAINING_LABELS = {
    "seed": "declared training seed",
    "steps": "training steps",
    "checkpoint_setting": "checkpoint setting",
    "checkpoint": "checkpoint file",
    "checkpoint_sha256": "checkpoint SHA-256",
    "libraries": "library versions",
}
TRAINING_CHARS = 300
"""Longest value shown from a bundle's training table (bundle text is untrusted)."""


def training_items(data: object) -> tuple[tuple[str, str], ...]:
    """The ``[training]`` table a bundle declared, as (label, value) lines for its page.

    Known keys first, in the order a reader checks a run (seed, steps, checkpoint, its
    SHA-256, libraries), then any other key; values are text, cut to
    :data:`TRAINING_CHARS` (the page escapes them).
    """
    if not isinstance(data, dict):
        return ()
    keys = [k for k in TRAINING_LABELS if k in data]
    keys += sorted(str(k) for k in data if k not in TRAINING_LABELS)
    out = []
    for k in keys:
        v = data[k]
        text = v if isinstance(v, str) else json.dumps(v, ensure_ascii=False, sort_keys=True)
        if len(text) > TRAINING_CHARS:
            text = text[: TRAINING_CHARS - 1] + "…"
        out.append((TRAINING_LABELS.get(k, k.replace("_", " ")), text))
    return tuple(out)


def _value(rec: ScoreRecord | None) -> str:
    c = score_cell(rec)
    text = f"{c.text} ({c.mark})" if c.mark else c.text
    return f"{text} {c.interval}" if c.interval else text


HISTORY_SERIES = 8
"""Lines in a system page's history chart per board: its best-ranked entries there (a
collection of hundreds drew one unreadable chart taller than the page)."""
PAGE_ENTRIES = 25
"""Entries per board a system page lists; a collection's page links a page listing all."""
DETAIL_ENTRIES = 10
"""Entries per board whose scores in every version are tabled on the system page."""


def entry_names(
    items: list[tuple[str, Entry, BundleRow | None]], name: str
) -> dict[tuple[str, str, str], str]:
    """Tell apart the entries of one system: ``(board, bundle, agent)`` → a short name.

    An entry is named by its agent when that differs from the system; entries that would
    still share a name on one board (the same model trained on more data, say) add the
    bundle's declared variant (its system version), or the bundle id when it has none.
    """
    base = {
        (bid, e.bundle, e.agent): (e.agent if e.agent and e.agent != name else "")
        for bid, e, _ in items
    }
    clash: dict[tuple[str, str], int] = defaultdict(int)
    for (bid, _, _), text in base.items():
        clash[(bid, text)] += 1
    out = {}
    for bid, e, b in items:
        key = (bid, e.bundle, e.agent)
        text = base[key]
        if clash[(bid, text)] > 1:
            variant = b.system_version if b is not None and b.system_version else ""
            extra = variant or f"bundle {e.bundle}"
            text = f"{text} ({extra})" if text else extra
        out[key] = text
    twice: dict[tuple[str, str], int] = defaultdict(int)
    for (bid, _, _), text in out.items():
        twice[(bid, text)] += 1
    for (bid, bundle, agent), text in out.items():
        if twice[(bid, text)] > 1:  # the same declared variant twice: the bundle id decides
            out[(bid, bundle, agent)] = f"{text}, bundle {bundle}" if text else f"bundle {bundle}"
    return out


def system_pages(
    site: Site, vd: VersionData, prefix: str, nav: Callable[..., Nav], files: list[SpecFile]
) -> Iterator[Page]:
    """The pages of every system (grouped by system name across benchmarks) in one version.

    Yielded one system at a time (a large board has thousands): the build holds one page.

    One history line per *entry* (bundle and agent), never per name: two bundles of one
    system on one board are two lines. A collection (a bundle of many agents) shows its
    best-ranked entries per board, with a second page (``all/``) listing every entry.
    """
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
    for name in sorted(grouped):
        if site.system_home(prefix, name) != prefix:
            continue  # a light release copy links to the current page
        yield from _system_pages(site, vd, prefix, nav, files, name, grouped[name])


def _system_pages(
    site: Site,
    vd: VersionData,
    prefix: str,
    nav: Callable[..., Nav],
    files: list[SpecFile],
    name: str,
    items: list[tuple[str, Entry, BundleRow | None]],
) -> list[Page]:
    bms = {bm.id: bm for bm in vd.benchmarks}
    slug = vd.slugs[name]
    base = f"{prefix}systems/{slug}/"
    path = base + "index.html"
    all_path = base + "all/index.html"
    names = entry_names(items, name)
    per_board: dict[str, int] = defaultdict(int)
    for bid, _, _ in items:
        per_board[bid] += 1
    paged = any(n > PAGE_ENTRIES for n in per_board.values())
    orgs = sorted({b.organisation for _, _, b in items if b and b.organisation})
    entries, every = [], []
    provenance: dict[tuple[str, str], Provenance] = {}
    specs = []
    series: dict[str, list[dict[str, object]]] = defaultdict(list)
    seen: dict[str, int] = defaultdict(int)
    for bid, e, b in items:
        bm = bms[bid]
        t = site.tracks[bm.track]
        k = seen[bid]
        seen[bid] += 1
        label = names[(bid, e.bundle, e.agent)]
        metrics = [m for m in (t.primary, *t.secondary) if m in e.metrics]
        metrics += sorted(m for m in e.metrics if m not in metrics)
        first = metrics[0] if metrics else t.primary
        detailed = k < DETAIL_ENTRIES
        rows = []
        if detailed:
            for v in vd.history:
                recs = site.index.get((v.name, bid), {}).get((e.bundle, e.agent), {})
                if recs:
                    rows.append((v.label, tuple(_value(recs.get(m)) for m in metrics)))

        here = SystemEntry(
            Link(href(path, f"{prefix}benchmarks/{safe_segment(bid)}/"), bm.title),
            label,
            tuple(metric_info(m).label for m in metrics),
            tuple(rows),
            str(e.rank or "—"),
            badges(site, vd, bm, e),
            _value(e.metrics.get(first)),
            metric_info(first).label,
            training_items(e.primary.training) if detailed else (),
        )
        if k < PAGE_ENTRIES:
            entries.append(here)
        if paged:
            board = Link(href(all_path, f"{prefix}benchmarks/{safe_segment(bid)}/"), bm.title)
            every.append(replace(here, benchmark=board, history=()))
        if k < HISTORY_SERIES:
            # versions of one date (a release and the working state): the latest stands for it
            by_date: dict[str, dict[str, object]] = {}
            for v, rec in history(site.index, vd.history, bid, (e.bundle, e.agent), t.primary):
                if rec.value is not None and math.isfinite(rec.value):
                    by_date[v.date.isoformat()] = {
                        "x": v.date.isoformat(),
                        "y": rec.value,
                        "label": v.name,
                        "series": label or name,
                    }
            series[bid].extend(by_date[d] for d in sorted(by_date))
        if b is not None and (bid, b.id) not in provenance:
            bm_link = Link(href(path, f"{prefix}benchmarks/{safe_segment(bid)}/"), bm.title)
            provenance[(bid, b.id)] = _provenance(path, bm_link, b)
    for bid in sorted(series):
        pts = series[bid]
        if len({p["x"] for p in pts}) < 2:
            continue
        m = metric_info(site.tracks[bms[bid].track].primary)
        n = per_board[bid]
        top = f"the {HISTORY_SERIES} best-ranked of its {n} entries" if n > HISTORY_SERIES else ""
        specs.append(
            ch.line_chart(
                f"history-{safe_segment(bid)}",
                pts,
                title=f"{m.label} on {bms[bid].title} over releases",
                x=("release date", ""),
                y=(m.label, m.unit),
                temporal=True,
                what=f"Line chart of {m.label} in each version, one line per entry of this "
                f"system{' (' + top + ')' if top else ''}",
            )
        )
    latest = site.latest
    in_latest = latest is not None and name in latest.slugs
    hidden = sum(max(0, n - PAGE_ENTRIES) for n in per_board.values())
    more = Link(href(path, base + "all/"), f"Show all {len(items)} entries") if paged else None
    ctx = SystemPage(
        nav(path, f"systems/{slug}/" if in_latest else None),
        name,
        ", ".join(orgs),
        tuple(entries),
        tuple(provenance[k] for k in sorted(provenance)),
        blocks(specs, path, base, files, light=bool(prefix)),
        more=more,
        hidden=hidden,
        detail_limit=DETAIL_ENTRIES,
        detail_hidden=sum(max(0, n - DETAIL_ENTRIES) for n in per_board.values()),
    )
    out = [Page(path, "system.html", ctx)]
    if paged:
        full = SystemPage(
            nav(all_path, f"systems/{slug}/" if in_latest else None),
            name,
            ", ".join(orgs),
            tuple(every),
            (),
            (),
            full=True,
            system=Link(href(all_path, base), name),
        )
        out.append(Page(all_path, "system.html", full))
    return out


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
) -> Iterator[Page]:
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
    for agent in sorted(found):
        if site.agent_home(prefix, agent) != prefix:
            continue  # a light release copy links to the current page
        slug = vd.agent_slugs[agent]
        path = f"{prefix}agents/{slug}/index.html"
        entries = []
        systems: dict[str, Link] = {}
        for bid, e, system in found[agent]:
            bm = bms[bid]
            t = site.tracks[bm.track]
            sys_link = Link(
                href(path, f"{site.system_home(prefix, system)}systems/{vd.slugs[system]}/"), system
            )
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
        yield Page(path, "agent.html", ctx)


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
