"""Assemble every page context (and chart spec file) of the site from a :class:`Site`.

Paths are site-relative POSIX paths; every link in a context is relative to its page.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable

from pipeline.metrics.registry import metric_info
from pipeline.site.board_charts import entry_label, score_charts
from pipeline.site.chartdata import humanise
from pipeline.site.model import (
    Site,
    TrackInfo,
    VersionData,
    href,
    safe_segment,
    safe_url,
)
from pipeline.site.pages import (
    AboutPage,
    BenchmarkPage,
    BenchmarkRow,
    Cell,
    ChangeItem,
    ChangelogPage,
    HomeBenchmark,
    HomePage,
    LeaderboardRow,
    Link,
    Methodology,
    MetricColumn,
    Nav,
    NotFoundPage,
    OtherRow,
    Page,
    ReleaseLine,
    ReleasesPage,
    SpecFile,
)
from pipeline.site.standings import CURRENT, fmt_interval, fmt_num, history, sparkline
from pipeline.site.systems import system_pages
from pipeline.site.widgets import badges, blocks


def column(name: str) -> MetricColumn:
    """Return a metric's column head from the registry."""
    m = metric_info(name)
    return MetricColumn(name, m.label, m.unit, m.direction, m.description)


def nav_for(site: Site, vd: VersionData, prefix: str) -> Callable[[str], Nav]:
    """Return a factory of :class:`Nav` for pages of ``vd`` rendered under ``prefix``."""
    is_release = prefix != ""
    label = vd.version.label
    if not is_release and vd.version.is_release:
        label = f"latest: {label}"

    def make(path: str) -> Nav:
        return Nav(
            href(path, ""), href(path, prefix), vd.version.name, label, is_release, href(path, "")
        )

    return make


def methodology(t: TrackInfo) -> Methodology:
    """Describe the methodology section of a track (template picked by track name)."""
    names = [t.primary, *t.secondary]
    return Methodology(
        t.name, t.title, t.paper, f"methodology/{t.name}.html", tuple(column(n) for n in names)
    )


def stale_note(site: Site, vd: VersionData, bm: BenchmarkRow) -> str:
    """Return a banner text when the benchmark itself changed since it was scored."""
    if vd.version.name != CURRENT:
        return ""
    cur = site.current_benchmarks.get(bm.id)
    if cur is not None and bm.content_hash and cur.content_hash != bm.content_hash:
        return (
            f"These scores were computed on benchmark version {bm.version} "
            f"({bm.content_hash[:10]}); the current version is {cur.version} "
            f"({cur.content_hash[:10]}). They are stale until the next `gmeter score`."
        )
    if bm.id in site.current_benchmarks and not site.runs.get((CURRENT, bm.id)):
        return "This benchmark has not been scored yet."
    return ""


# --------------------------------------------------------------------------- benchmark page


def benchmark_page(
    site: Site,
    vd: VersionData,
    bm: BenchmarkRow,
    prefix: str,
    nav: Callable[[str], Nav],
    files: list[SpecFile],
) -> Page:
    """Build the leaderboard page of one benchmark in one version."""
    base = f"{prefix}benchmarks/{safe_segment(bm.id)}/"
    path = base + "index.html"
    t = site.tracks[bm.track]
    st = vd.standings[bm.id]
    present = {m for e in st.entries for m in e.metrics}
    secondary = [m for m in t.secondary if m in present]
    rows = []
    for e in st.entries:
        b = site.bundle(bm.id, e.bundle, e.content_hash)
        name = b.system_name if b else e.bundle
        hist = history(site.index, vd.history, bm.id, (e.bundle, e.agent), t.primary)
        spark = sparkline([(v.name, r.value) for v, r in hist]) if len(hist) >= 2 else None
        sec = []
        for m in secondary:
            r = e.metrics.get(m)
            sec.append(
                _cell(r.value if r else None, r.ci_low if r else None, r.ci_high if r else None)
            )
        rows.append(
            LeaderboardRow(
                str(e.rank or "—"),
                str(e.group or "—"),
                Link(href(path, f"{prefix}systems/{vd.slugs[name]}/"), name),
                "" if e.agent == name else e.agent,
                b.organisation if b else "",
                _cell(e.primary.value, e.primary.ci_low, e.primary.ci_high),
                tuple(sec),
                badges(site, vd, bm, e),
                b.submitted.isoformat() if b and b.submitted else "",
                spark,
                e.primary.verified,
            )
        )
    other_metrics = sorted({m for _, ms in st.others for m in ms})
    others = []
    for (bundle, agent), ms in st.others:
        some = next(iter(ms.values()))
        b = site.bundle(bm.id, bundle, some.content_hash)
        name = b.system_name if b else bundle
        cells = tuple(
            _cell(ms[m].value, ms[m].ci_low, ms[m].ci_high) if m in ms else Cell("—")
            for m in other_metrics
        )
        link = (
            Link(href(path, f"{prefix}systems/{vd.slugs[name]}/"), name)
            if name in vd.slugs
            else Link("", name)
        )
        others.append(OtherRow(link, "" if agent == name else agent, cells))
    origin = bm.manifest.get("origin", {}) if isinstance(bm.manifest, dict) else {}
    origin_items = tuple(
        (humanise(str(k)), Link(safe_url(str(v)) or "", str(v)))
        for k, v in sorted(origin.items() if isinstance(origin, dict) else ())
        if isinstance(v, str | int | float)
    )
    run = site.runs.get((vd.version.name, bm.id))
    specs = score_charts(site, vd, bm, t)
    downloads = (
        Link(href(path, f"api/benchmarks/{safe_segment(bm.id)}.json"), "JSON (API)"),
        Link(href(path, "data/scores.csv"), "all scores (CSV)"),
        Link(href(path, "data/scores.parquet"), "all scores (Parquet)"),
        Link(href(path, "data/gmeter.duckdb"), "DuckDB file"),
    )
    ctx = BenchmarkPage(
        nav(path),
        bm.title,
        bm.id,
        bm.track,
        t.title,
        bm.version,
        bm.description,
        origin_items,
        column(t.primary),
        tuple(column(m) for m in secondary),
        tuple(rows),
        tuple(column(m) for m in other_metrics),
        tuple(others),
        stale_note(site, vd, bm),
        blocks(specs, path, base, files),
        methodology(t),
        run.notes if run else (),
        downloads,
    )
    return Page(path, "benchmark.html", ctx)


def _cell(v: float | None, lo: float | None, hi: float | None) -> Cell:
    return Cell(fmt_num(v), fmt_interval(lo, hi))


# --------------------------------------------------------------------------- other pages


CHANGE_WORDS = {
    "new": "new entries",
    "changed": "changed scores",
    "rank": "rank moves",
    "removed": "removed entries",
}


def change_summary(vd: VersionData) -> tuple[str, ...]:
    """Count this version's changes by kind (``3 new entries``, ...)."""
    counts: dict[str, int] = defaultdict(int)
    for changes in vd.changes.values():
        for c in changes:
            counts[c.kind] += 1
    return tuple(f"{counts[k]} {w}" for k, w in CHANGE_WORDS.items() if counts[k])


def home_page(site: Site, vd: VersionData, prefix: str, nav: Callable[[str], Nav]) -> Page:
    """Build the home page of one version."""
    path = prefix + "index.html"
    lines = []
    for bm in vd.benchmarks:
        st = vd.standings[bm.id]
        t = site.tracks[bm.track]
        ranked = metric_info(t.primary).direction != "none"
        lead = st.entries[0] if st.entries and ranked else None
        lines.append(
            HomeBenchmark(
                Link(href(path, f"{prefix}benchmarks/{safe_segment(bm.id)}/"), bm.title),
                bm.track,
                t.title,
                entry_label(site, bm.id, lead) if lead else "—",
                fmt_num(lead.primary.value) if lead else "",
                metric_info(t.primary).label if lead else "",
                len(st.entries),
                vd.last_change.get(bm.id, "—"),
                bool(stale_note(site, vd, bm)),
            )
        )
    summary = change_summary(vd)
    if vd.previous is None:
        summary = ()  # the first version: everything is new, nothing to report
    # only releases up to this version: a release's pages must not change when later ones come
    shown = {v.name for v in vd.history}
    rel = tuple(
        Link(href(path, f"{v.prefix}"), v.version.label)
        for v in reversed(site.versions)
        if v.version.is_release and v.version.name in shown
    )
    title = "Leaderboards of general machine intelligence"
    return Page(
        path,
        "home.html",
        HomePage(
            nav(path),
            title,
            tuple(lines),
            summary,
            Link(href(path, prefix + "changelog/"), "changelog"),
            rel,
        ),
    )


def changelog_page(site: Site, vd: VersionData, prefix: str, nav: Callable[[str], Nav]) -> Page:
    """Build the page of what changed in this version compared with the previous one."""
    path = prefix + "changelog/index.html"
    groups: dict[str, list[ChangeItem]] = defaultdict(list)
    for bm in vd.benchmarks:
        st = vd.standings[bm.id]
        keyed = {(e.bundle, e.agent): e for e in st.entries}
        prev = (
            site.versions[[v.version for v in site.versions].index(vd.previous)]
            if vd.previous
            else None
        )
        for c in vd.changes.get(bm.id, []):
            e = keyed.get((c.bundle, c.agent))
            src = e or (
                prev.standings[bm.id].by_key().get((c.bundle, c.agent))
                if prev and bm.id in prev.standings
                else None
            )
            name = site.system_name(bm.id, c.bundle, src.content_hash if src else "")
            slug_map = vd.slugs if e else (prev.slugs if prev else {})
            target = (
                f"{prefix}systems/{slug_map[name]}/"
                if e
                else f"{prev.prefix}systems/{slug_map[name]}/"
                if prev and name in slug_map
                else ""
            )
            sys_link = Link(href(path, target), name) if target else Link("", name)
            groups[c.kind].append(
                ChangeItem(
                    Link(href(path, f"{prefix}benchmarks/{safe_segment(bm.id)}/"), bm.title),
                    sys_link,
                    "" if c.agent == name else c.agent,
                    c.kind,
                    c.detail,
                    c.why,
                )
            )
    prev_label = vd.previous.label if vd.previous else ""
    title = f"Changes in {vd.version.label}"
    return Page(
        path,
        "changelog.html",
        ChangelogPage(
            nav(path),
            title,
            prev_label,
            tuple(groups["new"]),
            tuple(groups["removed"]),
            tuple(groups["changed"]),
            tuple(groups["rank"]),
        ),
    )


def global_pages(site: Site) -> list[Page]:
    """Releases list, about and 404 (site root, version independent)."""
    root = site.latest
    assert root is not None
    make = nav_for(site, root, "")
    out = []
    path = "releases/index.html"
    lines = []
    for vd in reversed(site.versions):
        if not vd.version.is_release:
            continue
        counts = ", ".join(change_summary(vd)) or "no changes"
        lines.append(
            ReleaseLine(
                Link(href(path, vd.prefix), vd.version.name),
                vd.version.date.isoformat(),
                vd.version.notes,
                Link(href(path, vd.prefix + "changelog/"), "changelog"),
                counts,
            )
        )
    out.append(Page(path, "releases.html", ReleasesPage(make(path), "Releases", tuple(lines))))
    path = "about/index.html"
    tracks = sorted(
        {bm.track for vd in site.versions for bm in vd.benchmarks}
        | {"gindex", "generality", "aiq", "similarity"}
    )
    from pipeline.site.model import track_info

    metho = tuple(methodology(site.tracks.get(t) or track_info(t)) for t in tracks)
    downloads = tuple(
        Link(href(path, f"data/{n}"), n)
        for n in ("gmeter.duckdb", "manifest.json", "scores.csv", "scores.parquet")
    )
    out.append(
        Page(path, "about.html", AboutPage(make(path), "About the measures", metho, downloads))
    )
    out.append(Page("404.html", "404.html", NotFoundPage(make("404.html"), "Page not found")))
    return out


def build_pages(site: Site) -> tuple[list[Page], list[SpecFile]]:
    """Every page and chart spec file of the site, in a deterministic order."""
    pages: list[Page] = []
    specs: list[SpecFile] = []
    for vd in site.versions:
        prefixes = [vd.prefix]
        if vd is site.latest and vd.prefix:
            prefixes.append("")
        for prefix in prefixes:
            nav = nav_for(site, vd, prefix)
            pages.append(home_page(site, vd, prefix, nav))
            pages.append(changelog_page(site, vd, prefix, nav))
            for bm in vd.benchmarks:
                pages.append(benchmark_page(site, vd, bm, prefix, nav, specs))
            pages.extend(system_pages(site, vd, prefix, nav, specs))
    if site.latest is not None:
        pages.extend(global_pages(site))
    return pages, specs
