"""Assemble every page context (and chart spec file) of the site from a :class:`Site`.

Paths are site-relative POSIX paths; every link in a context is relative to its page.
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import replace
from functools import partial
from typing import Any

from pipeline.ranking import fmt_num
from pipeline.site.board_changelog import board_changelog, change_items, since_text
from pipeline.site.board_charts import entry_label, entry_variants, score_charts
from pipeline.site.chartdata import humanise
from pipeline.site.exports import DATAPACKAGE, VIEWS
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
    Cell,
    ChangeItem,
    ChangelogPage,
    HomeBenchmark,
    HomePage,
    HomeTrack,
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
    RowGroup,
    SearchPage,
    SpecFile,
    SubmitPage,
    VersionLink,
)
from pipeline.site.standings import CURRENT, Standing, history, sparkline
from pipeline.site.systems import system_pages
from pipeline.site.widgets import badges, blocks, score_cell
from pipeline.store.rows import BenchmarkRow, ScoreRecord
from pipeline.tracks import metric_info, track_names
from pipeline.tracks.presentation import find_setting


def column(name: str) -> MetricColumn:
    """Return a metric's column head from the registry."""
    m = metric_info(name)
    return MetricColumn(name, m.label, m.unit, m.direction, m.description)


def nav_for(site: Site, vd: VersionData, prefix: str, base: str = "/") -> Callable[..., Nav]:
    """Return a factory of :class:`Nav` for pages of ``vd`` rendered under ``prefix``.

    ``make(path, latest=None)``: ``latest`` is the same page's path in the latest version
    (a frozen page's banner links there); without it the banner links to the latest home.
    """
    is_release = prefix != ""
    label = vd.version.label
    if not is_release and vd.version.is_release:
        label = f"latest: {label}"
    indexed = not is_release

    def make(path: str, latest: str | None = None) -> Nav:
        return Nav(
            href(path, ""),
            href(path, prefix),
            vd.version.name,
            label,
            is_release,
            href(path, latest if latest is not None else ""),
            base,
            indexed,
        )

    return make


def methodology(t: TrackInfo) -> Methodology:
    """Describe the methodology section of a track (its text is the track's own)."""
    names = [t.primary, *t.secondary]
    cite = t.presentation.citation
    return Methodology(
        t.name,
        t.title,
        t.paper,
        t.presentation.methodology,
        tuple(column(n) for n in names),
        doi=cite.doi if cite is not None else "",
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


PAGE_ROWS = 50
"""A board page shows its first 50 rows; longer boards link a page with every row."""


def interval_note(t: TrackInfo, manifest: Mapping[str, Any]) -> str:
    """State how a board's intervals are computed, and their level (the track's sentence)."""
    level = find_setting(manifest, "confidence")
    pct = f"{float(level) * 100:g} %" if isinstance(level, int | float) else "95 %"
    note = t.presentation.interval_note
    if note is not None:
        return note(pct, manifest)
    return f"Intervals: {pct}, as computed by the {t.name} track."


def tie_text(st: Standing) -> str:
    """``8 tied for first`` when tie group 1 holds several entries (else ``""``)."""
    k = sum(1 for e in st.entries if e.group == 1)
    return f"{k} tied for first" if k > 1 else ""


def direction_text(direction: str) -> str:
    """The board's reading direction in words."""
    return {
        "higher": "higher is better",
        "lower": "lower is better",
    }.get(direction, "descriptive: listed, not ranked")


def agent_link(site: Site, vd: VersionData, bm: BenchmarkRow, agent: str, system: str) -> str:
    """The site path of an agent's own page ('' when the row is not an agent of a collection)."""
    if not agent or agent == system or not site.tracks[bm.track].presentation.agent_rows:
        return ""
    slug = vd.agent_slugs.get(agent)
    return f"agents/{slug}/" if slug else ""


def versions_of(site: Site, bm_id: str, vd: VersionData) -> tuple[tuple[str, str, bool], ...]:
    """(label, site path, is this version) of every version holding the board, newest first."""
    out = []
    latest = site.latest
    # a frozen page lists only the versions up to its own (and the latest, by a fixed link),
    # so cutting a later release never changes it
    known = {x.name for x in vd.history} if vd is not latest else None
    for v in reversed(site.versions):
        if bm_id not in v.standings:
            continue
        if known is not None and v is not latest and v.version.name not in known:
            continue
        prefix = "" if v is latest else v.prefix
        label = "latest" if v is latest else v.version.label
        out.append((label, f"{prefix}benchmarks/{safe_segment(bm_id)}/", v is vd))
    return tuple(out)


def _other_cell(rec: ScoreRecord, t: TrackInfo, metric: str) -> Cell:
    """A cell of "Other results"; some tracks write their other intervals in words.

    When a track asks for it (``worded_intervals``), every ``x [a, b]`` on its board is an
    interval of the primary metric; those of its other metrics, on other scales, read
    "CI a to b" so they are never taken for one.
    """
    c = score_cell(rec)
    if t.presentation.worded_intervals and metric != t.primary and c.interval:
        lo, hi = rec.ci_low, rec.ci_high
        c = Cell(c.text, f"(CI {fmt_num(lo)} to {fmt_num(hi)})", c.title, c.mark)
    return c


def benchmark_page(
    site: Site,
    vd: VersionData,
    bm: BenchmarkRow,
    prefix: str,
    nav: Callable[..., Nav],
    files: list[SpecFile],
    *,
    full: bool = False,
) -> Page:
    """Build the leaderboard page of one benchmark in one version (``full``: every row)."""
    from pipeline.site.markdown import first_sentence, to_html, to_inline_html

    seg = safe_segment(bm.id)
    board = f"{prefix}benchmarks/{seg}/"
    base = board + ("all/" if full else "")
    path = base + "index.html"
    t = site.tracks[bm.track]
    st = vd.standings[bm.id]
    ranked = metric_info(t.primary).direction != "none"
    present = {m for e in st.entries for m in e.metrics}
    secondary = [m for m in t.secondary if m in present]
    constant = constant_columns(st.entries, secondary)
    secondary = [m for m in secondary if m not in dict(constant)]
    variants = entry_variants(site, bm.id, st.entries)
    rows = []
    shown = st.entries if full else st.entries[:PAGE_ROWS]
    for e in shown:
        b = site.bundle(bm.id, e.bundle, e.content_hash)
        name = b.system_name if b else e.bundle
        hist = history(site.index, vd.history, bm.id, (e.bundle, e.agent), t.primary)
        spark = sparkline([(v.name, r.value) for v, r in hist]) if len(hist) >= 2 else None
        sec = []
        for m in secondary:
            sec.append(score_cell(e.metrics.get(m)))
        agent_path = agent_link(site, vd, bm, e.agent, name)
        rows.append(
            LeaderboardRow(
                str(e.rank or "—"),
                str(e.group or "—"),
                Link(
                    href(path, f"{site.system_home(prefix, name)}systems/{vd.slugs[name]}/"), name
                ),
                "" if e.agent == name else e.agent,
                b.organisation if b else "",
                score_cell(e.primary),
                tuple(sec),
                badges(site, vd, bm, e),
                b.submitted.isoformat() if b and b.submitted else "",
                spark,
                e.primary.verified,
                href(path, site.agent_home(prefix, e.agent) + agent_path) if agent_path else "",
                e.apart,
                variants.get((e.bundle, e.agent), ""),
            )
        )
    groups: tuple[RowGroup, ...] = ()
    if not ranked:
        by_system: dict[str, list[LeaderboardRow]] = defaultdict(list)
        links: dict[str, Link] = {}
        for row in rows:
            by_system[row.system.text].append(row)
            links[row.system.text] = row.system
        groups = tuple(RowGroup(links[k], tuple(by_system[k])) for k in sorted(by_system))
    other_metrics = sorted({m for _, ms in st.others for m in ms})
    others = []
    for (bundle, agent), ms in st.others:
        some = next(iter(ms.values()))
        b = site.bundle(bm.id, bundle, some.content_hash)
        name = b.system_name if b else bundle
        cells = tuple(_other_cell(ms[m], t, m) if m in ms else Cell("—") for m in other_metrics)
        link = (
            Link(href(path, f"{site.system_home(prefix, name)}systems/{vd.slugs[name]}/"), name)
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
    origin_html = tuple((k, to_inline_html(v.text) if not v.href else "") for k, v in origin_items)
    run = site.runs.get((vd.version.name, bm.id))
    specs = [] if full else score_charts(site, vd, bm, t)
    downloads = (
        (
            Link(href(path, f"{board}scores.csv"), "this board (CSV)"),
            Link(href(path, f"api/benchmarks/{seg}.json"), "this board (JSON API)"),
            Link(href(path, "data/scores.parquet"), "all scores (Parquet)"),
            Link(href(path, "data/scores.csv"), "all scores (CSV)"),
            Link(href(path, f"data/{VIEWS}"), "DuckDB views of the Parquet files"),
            Link(href(path, "data/gmeter.duckdb"), "DuckDB file of every table"),
            Link(href(path, "about/") + "#data", "every table (About)"),
        )
        if not prefix
        else (  # a frozen copy offers its own files; the site's data is the current one
            Link(href(path, f"{board}scores.csv"), "this board (CSV)"),
            Link(
                href(path, f"api/releases/{safe_segment(vd.version.name)}.json"),
                f"release {vd.version.name} (JSON API)",
            ),
            Link(href(path, "about/") + "#data", "the current data (About)"),
        )
    )
    if not full:
        from pipeline.site.cite import board_csv

        files.append(SpecFile(f"{board}scores.csv", None, board_csv(site, bm, st)))
    latest = site.latest
    in_latest = latest is not None and bm.id in latest.standings
    page_nav = nav(path, f"benchmarks/{seg}/" + ("all/" if full else "") if in_latest else None)
    summary = first_sentence(bm.description) or f"{t.title} board of {len(st.entries)} entries."
    own_changelog = prefix == "" and vd is site.latest and not full
    ctx = BenchmarkPage(
        page_nav,
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
        blocks(specs, path, base, files, light=bool(prefix)),
        methodology(t),
        run.notes if run else (),
        downloads,
        summary=summary,
        direction=direction_text(metric_info(t.primary).direction),
        description_html=to_html(bm.description, shift_headings=2),
        origin_html=origin_html,
        intervals=interval_note(t, bm.manifest),
        ties=tie_text(st) if ranked else "",
        total=len(st.entries),
        all_entries=(
            Link(href(path, board + "all/"), f"Show all {len(st.entries)} entries")
            if not full and len(st.entries) > PAGE_ROWS
            else None
        ),
        board=Link(href(path, board), bm.title) if full else None,
        versions=tuple(
            VersionLink(label, href(path, target), here)
            for label, target, here in versions_of(site, bm.id, vd)
        ),
        cite=(
            *_release_cite(site, vd, bm, path, seg),
            Link(href(path, f"{board}cite.bib"), "BibTeX" if vd.prefix else "BibTeX (current)"),
            Link(href(path, "CITATION.cff"), "CITATION.cff"),
            Link(href(path, "cite/papers.bib"), "papers (BibTeX)"),
        ),
        submit=Link(href(path, "submit/"), "Submit to this board"),
        csv=Link(href(path, f"{board}scores.csv"), "Download this board (CSV)"),
        ranked=ranked,
        groups=groups,
        full=full,
        compare=(
            Link(href(path, f"{board}compare/"), "Compare two entries")
            if ranked and len(st.entries) >= 2 and not full and not prefix
            else None
        ),
        marks=tuple(sorted({c.mark for r in rows for c in (r.score, *r.secondary) if c.mark})),
        constant=tuple((metric_info(m).label, v) for m, v in constant),
        since=since_text(vd, bm.id) if own_changelog else "",
        changelog=Link(href(path, board + "changelog/"), "this board's changelog")
        if own_changelog
        else None,
        rest=() if full else _rest_of(site, vd, bm, st.entries[PAGE_ROWS:], path, prefix),
    )
    return Page(path, "benchmark.html", ctx)


def constant_columns(entries: Sequence[Any], metrics: Sequence[str]) -> list[tuple[str, str]]:
    """The metrics every entry (two or more) shows with the same value: ``(metric, value)``.

    A column that reads the same in every row tells nothing about the entries (maya's mean Ω
    is 0 throughout): the board leaves it out and says its value once.
    """
    if len(entries) < 2:
        return []
    out = []
    for m in metrics:
        shown = {score_cell(e.metrics.get(m)).text for e in entries}
        if len(shown) == 1 and all(m in e.metrics for e in entries):
            out.append((m, shown.pop()))
    return out


def _release_cite(
    site: Site, vd: VersionData, bm: BenchmarkRow, path: str, seg: str
) -> tuple[Link, ...]:
    """The BibTeX of this board in the newest release, when this page is the current one.

    A citation should name pages that never change, so the board's first "Cite" link is its
    newest frozen copy; the current (moving) one follows it.
    """
    from pipeline.site.cite import newest_release

    newest = newest_release(site)
    if vd.prefix or newest is None or bm.id not in newest.standings:
        return ()
    target = f"{newest.prefix}benchmarks/{seg}/cite.bib"
    return (Link(href(path, target), f"BibTeX ({newest.version.name})"),)


def _rest_of(
    site: Site, vd: VersionData, bm: BenchmarkRow, entries: Sequence[Any], path: str, prefix: str
) -> tuple[tuple[str, str, str, str], ...]:
    """``(rank, agent, system, href)`` of the entries a board does not show (for its filter)."""
    out = []
    for e in entries:
        b = site.bundle(bm.id, e.bundle, e.content_hash)
        name = b.system_name if b else e.bundle
        agent_path = agent_link(site, vd, bm, e.agent, name)
        target = (
            site.agent_home(prefix, e.agent) + agent_path
            if agent_path
            else f"{site.system_home(prefix, name)}systems/{vd.slugs[name]}/"
        )
        out.append((str(e.rank or "—"), "" if e.agent == name else e.agent, name,
                    href(path, target)))  # fmt: skip
    return tuple(out)


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


def home_page(site: Site, vd: VersionData, prefix: str, nav: Callable[..., Nav]) -> Page:
    """Build the home page of one version."""
    path = prefix + "index.html"
    lines = []
    for bm in vd.benchmarks:
        st = vd.standings[bm.id]
        t = site.tracks[bm.track]
        ranked = metric_info(t.primary).direction != "none"
        # entries list verified ones first: the leader is verified wherever one exists
        lead = st.entries[0] if st.entries and ranked else None
        tied = sum(1 for e in st.entries if e.group == 1) if ranked else 0
        leader = entry_label(site, bm.id, lead) if lead else "—"
        if tied > 1:
            leader = f"{tied} tied for first"
        lines.append(
            HomeBenchmark(
                Link(href(path, f"{prefix}benchmarks/{safe_segment(bm.id)}/"), bm.title),
                bm.track,
                t.title,
                leader,
                fmt_num(lead.primary.value) if lead else "",
                metric_info(t.primary).label if lead else "",
                len(st.entries),
                vd.last_change.get(bm.id, "—"),
                bool(stale_note(site, vd, bm)),
                tied,
            )
        )
    by_track: dict[str, list[HomeBenchmark]] = defaultdict(list)
    for line in lines:
        by_track[line.track].append(line)
    tracks = []
    for name, boards in by_track.items():
        t = site.tracks[name]
        m = metric_info(t.primary)
        direction = direction_text(m.direction)
        tracks.append(HomeTrack(name, t.title, m.label, direction, m.direction, tuple(boards)))
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
    title = site.config.home_title
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
            vd.version.notes if prefix else "",
            Link(href(path, "systems/"), "all systems and agents"),
            Link(href(path, "submit/"), "submit results"),
            _errata(site, vd.version.name) if prefix else (),
            tuple(tracks),
        ),
    )


def _errata(site: Site, release: str) -> tuple[str, ...]:
    return tuple(e.text() for e in site.snapshot.errata if e.release == release)


CHANGES_PER_BOARD = 20
"""New entries and rank moves a version's changelog names per board (a line counts the rest)."""


def changelog_page(site: Site, vd: VersionData, prefix: str, nav: Callable[..., Nav]) -> Page:
    """Build the page of what changed in this version compared with the previous one."""
    path = prefix + "changelog/index.html"
    groups: dict[str, list[ChangeItem]] = defaultdict(list)
    totals: dict[str, int] = defaultdict(int)
    for bm in vd.benchmarks:
        for kind, items in change_items(site, vd, bm, path, prefix).items():
            totals[kind] += len(items)
            if kind in ("new", "rank") and len(items) > CHANGES_PER_BOARD:
                # a board's new entries are its table; the first ones name it, a line counts
                # the rest (a first release listed 1,513 rows here, a tenth of its copy)
                shown, rest = items[:CHANGES_PER_BOARD], len(items) - CHANGES_PER_BOARD
                more = f"… and {rest} more on {items[0].benchmark.text}"
                items = [*shown, ChangeItem(items[0].benchmark, Link("", ""), "", "more", more, "")]
            groups[kind].extend(items)
    prev_label = vd.previous.label if vd.previous else ""
    title = f"Changes in {vd.version.label}"
    return Page(
        path,
        "changelog.html",
        ChangelogPage(
            nav(path, "changelog/"),
            title,
            prev_label,
            tuple(groups["new"]),
            tuple(groups["removed"]),
            tuple(groups["changed"]),
            tuple(groups["rank"]),
            dict(totals),
        ),
    )


def submit_guide(site: Site) -> str:
    """The Submit page's Markdown, generated for this site (its boards, repository, commands)."""
    from pipeline import __version__
    from pipeline.site.render import render_markdown

    boards = sorted(site.current_benchmarks.values(), key=lambda b: b.id)
    if not boards and site.latest is not None:
        boards = sorted(site.latest.benchmarks, key=lambda b: b.id)
    example = boards[0] if boards else None
    repo = site.config.repository.rstrip("/").removesuffix(".git")
    return render_markdown(
        "submit_guide.md",
        site=site.config,
        boards=boards,
        example={"id": example.id if example else "my-benchmark",
                 "track": example.track if example else "TRACK"},
        repo_dir=repo.rsplit("/", 1)[-1] if repo else "the-repository",
        version=__version__,
    )


def global_pages(site: Site, base: str = "/") -> list[Page]:
    """Releases list, about, submit, search and 404 (site root, version independent)."""
    from pipeline.site.markdown import to_html

    root = site.latest
    assert root is not None
    make = nav_for(site, root, "", base)
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
                _errata(site, vd.version.name),
            )
        )
    missing = tuple((m.name, m.reason) for m in site.snapshot.missing_releases)
    out.append(Page(path, "releases.html",
                    ReleasesPage(make(path), "Releases", tuple(lines), missing)))
    path = "about/index.html"
    tracks = sorted({bm.track for vd in site.versions for bm in vd.benchmarks} | set(track_names()))
    from pipeline.site.model import track_info

    metho = tuple(methodology(site.tracks.get(t) or track_info(t)) for t in tracks)
    downloads = (
        Link(href(path, f"data/{VIEWS}"), f"{VIEWS} (views of the Parquet files)"),
        Link(href(path, "data/gmeter.duckdb"), "gmeter.duckdb (every table, standalone)"),
        Link(href(path, f"data/{DATAPACKAGE}"), f"{DATAPACKAGE} (the CSV files' column types)"),
        Link(href(path, "CITATION.cff"), "CITATION.cff"),
        Link(href(path, "cite/papers.bib"), "papers.bib"),
    )
    # the table list comes with the files' sizes, once they are exported (with_sizes)
    about = AboutPage(make(path), "About the measures", metho, downloads, (),
                      Link(href(path, "data/manifest.json"), "manifest.json"))  # fmt: skip
    out.append(Page(path, "about.html", about))
    path = "submit/index.html"
    guide = submit_guide(site)
    out.append(
        Page(
            path,
            "submit.html",
            SubmitPage(make(path), "Submit results", to_html(guide), "submit_guide.md"),
        )
    )
    path = "search/index.html"
    out.append(
        Page(
            path,
            "search.html",
            SearchPage(
                make(path), "Search", Link(href(path, "systems/"), "all systems and agents")
            ),
        )
    )
    # served at any depth: every link of the page (header and footer too) is absolute
    lost = replace(make("404.html"), top=base, root=base, latest_href=base, indexed=False)
    out.append(Page("404.html", "404.html", NotFoundPage(lost, "Page not found")))
    return out


def build_pages(site: Site, base: str = "/") -> tuple[list[Page], list[SpecFile]]:
    """Every page and extra file (chart specs, SVGs, CSV, BibTeX) of the site, in order.

    The whole site held at once: for tests and small sites. The build streams
    :func:`iter_pages` instead.
    """
    specs: list[SpecFile] = []
    pages = list(iter_pages(site, specs, base))
    return pages, specs


def iter_pages(site: Site, specs: list[SpecFile], base: str = "/") -> Iterator[Page]:
    """Yield every page of the site in order, appending its extra files to ``specs``.

    A page is yielded only after every file it links for download from its own board (chart
    specs and data, the board's CSV and BibTeX) is in ``specs``, so its download sizes can be
    told while the site streams (:func:`with_sizes`): the build holds one page model at a
    time, not the site's (hundreds of thousands of system pages on a large benchmark).
    """
    from pipeline.site.cite import board_bib, release_bib
    from pipeline.site.model import site_url
    from pipeline.site.redirects import redirect_pages
    from pipeline.site.systems import agent_pages, systems_index

    root = site_url(base, site.config.url) or base  # absolute when the address is known
    built: set[str] = set()  # the paths made so far: a redirect never shadows a page

    def made(page: Page) -> Page:
        built.add(page.path)
        return page

    for vd in site.versions:
        prefixes = [vd.prefix]
        if vd is site.latest and vd.prefix:
            prefixes.append("")
        for prefix in prefixes:
            nav = nav_for(site, vd, prefix, base)
            yield made(home_page(site, vd, prefix, nav))
            yield made(changelog_page(site, vd, prefix, nav))
            for bm in vd.benchmarks:
                board_pages = [benchmark_page(site, vd, bm, prefix, nav, specs)]
                if prefix == "" and vd is site.latest:
                    board_pages.append(board_changelog(site, vd, bm, nav))
                if len(vd.standings[bm.id].entries) > PAGE_ROWS:
                    board_pages.append(benchmark_page(site, vd, bm, prefix, nav, specs, full=True))
                board = f"{prefix}benchmarks/{safe_segment(bm.id)}/"
                specs.append(SpecFile(board + "cite.bib", None, board_bib(site, vd, bm, root)))
                # a light release copy leaves the comparison view to the current site
                ranked = metric_info(site.tracks[bm.track].primary).direction != "none"
                if not prefix and ranked and len(vd.standings[bm.id].entries) >= 2:
                    from pipeline.site.compare import compare_page

                    board_pages.append(compare_page(site, vd, bm, prefix, nav))
                for page in board_pages:
                    yield made(page)
            for page in system_pages(site, vd, prefix, nav, specs):
                yield made(page)
            for page in agent_pages(site, vd, prefix, nav):
                yield made(page)
            if not prefix:
                yield made(systems_index(site, vd, prefix, nav))
            if vd.version.is_release:
                specs.append(SpecFile(f"{prefix}cite.bib", None, release_bib(site, vd, root)))
    for vd in site.versions:
        for prefix in [vd.prefix, *([""] if vd is site.latest and vd.prefix else [])]:
            yield from redirect_pages(vd, prefix, built, partial(site.system_home, prefix))
    if site.latest is not None:
        yield from global_pages(site, base)
        specs.extend(site_wide_files(site, base))


def site_wide_files(site: Site, base: str = "/") -> list[SpecFile]:
    """The files :func:`iter_pages` adds last but every board links: their sizes come first."""
    from pipeline.site.cite import citation_cff, papers_bib
    from pipeline.site.model import site_url

    if site.latest is None:
        return []
    root = site_url(base, site.config.url) or base
    return [SpecFile("CITATION.cff", None, citation_cff(site, root)),
            SpecFile("cite/papers.bib", None, papers_bib())]  # fmt: skip


# --------------------------------------------------------------------------- download sizes


def human_size(n: int) -> str:
    """``n`` bytes as a reader counts them: ``812 B``, ``4.2 kB``, ``38 kB``, ``5.6 MB``."""
    if n < 1000:
        return f"{n} B"
    if n < 10_000:
        return f"{n / 1000:.1f} kB"
    if n < 1_000_000:
        return f"{n / 1000:.0f} kB"
    return f"{n / 1_000_000:.1f} MB"


def with_sizes(pages: list[Page], sizes: Mapping[str, int]) -> list[Page]:
    """The pages with the size of every file they offer for download beside its link.

    ``sizes`` maps site paths (``data/scores.csv``) to bytes. Board pages size their
    downloads, citations, board CSV and each chart's spec and data; the About page its
    downloads and every published table (Parquet and CSV, as exported into ``data/``).
    """
    import posixpath

    out = []
    for page in pages:
        ctx = page.context
        if not isinstance(ctx, BenchmarkPage | AboutPage):
            out.append(page)
            continue
        folder = posixpath.dirname(page.path)

        def size(link: str, folder: str = folder) -> str:
            n = sizes.get(posixpath.normpath(posixpath.join(folder, link.split("#")[0])))
            return human_size(n) if link and n is not None else ""

        def sized(link: Link) -> Link:
            return replace(link, size=size(link.href))

        if isinstance(ctx, AboutPage):
            names = sorted(p[5:-8] for p in sizes if re.fullmatch(r"data/[^/]+\.parquet", p))
            tables = tuple(
                (n, sized(Link(href(page.path, f"data/{n}.parquet"), "Parquet")),
                 sized(Link(href(page.path, f"data/{n}.csv"), "CSV")))
                for n in names
            )  # fmt: skip
            ctx = replace(ctx, downloads=tuple(map(sized, ctx.downloads)), tables=tables)
        else:
            charts = tuple(
                replace(c, spec_size=size(c.spec_href) if c.spec_href else "",
                        csv_size=size(c.csv_href) if c.csv_href else "")
                for c in ctx.charts
            )  # fmt: skip
            ctx = replace(ctx, downloads=tuple(map(sized, ctx.downloads)),
                          cite=tuple(map(sized, ctx.cite)),
                          csv=sized(ctx.csv) if ctx.csv else None, charts=charts)  # fmt: skip
        out.append(replace(page, context=ctx))
    return out
