"""Page contexts of the static site: what each template receives as ``page``.

The site's input, the snapshot (:class:`~pipeline.store.rows.Snapshot` and its rows), is read
once from the store by :mod:`pipeline.site.build`; the page contexts here (:class:`HomePage`,
:class:`BenchmarkPage`, ...) are built from it. Every string a template prints is already
formatted here; every link is already relative to the page (the site works under any URL
prefix, e.g. GitHub Pages).

Templates only print these fields (Jinja autoescapes them) and pass chart specs through
``tojson``; they compute nothing.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

# --------------------------------------------------------------------------- page parts


@dataclass(frozen=True)
class Link:
    """A link: ``href`` is relative to the page that shows it.

    ``size`` is a download's size (``"1.2 MB"``), shown beside it.
    """

    href: str
    text: str
    size: str = ""


@dataclass(frozen=True)
class Nav:
    """Where a page sits: its relative paths to the site and version roots, and its version.

    Attributes
    ----------
    top : str
        Relative path from the page to the site root (``""``, ``"../"``...): assets, about,
        data downloads and the releases list live there.
    root : str
        Relative path from the page to the root of the version it belongs to (the same as
        ``top`` for the latest version, ``top + "releases/<name>/"`` for a release).
    version : str
        ``current`` or a release name.
    version_label : str
        What the banner shows (``release 2024.1 (2024-03-01)``).
    is_release : bool
        Whether this page is a frozen release permalink.
    latest_href : str
        The same page in the latest version (for the banner of release pages), else the
        latest home page.
    base : str
        The site's configured absolute base path (``/`` or ``/<repo>/``): only the 404 page,
        which is served at any depth, links with it.
    indexed : bool
        Whether the search index covers this page (``data-pagefind-body``).
    """

    top: str
    root: str
    version: str
    version_label: str
    is_release: bool
    latest_href: str
    base: str = "/"
    indexed: bool = False

    @property
    def search(self) -> str:
        """The search page, relative to this page (the header's search form posts there)."""
        return f"{self.top}search/"


@dataclass(frozen=True)
class Cell:
    """A formatted number: ``text`` for display, ``interval`` as ``[low, high]``, a tooltip."""

    text: str
    interval: str = ""
    title: str = ""
    mark: str = ""
    """A short word after the number when it follows a documented convention (``step``)."""


@dataclass(frozen=True)
class Sparkline:
    """An inline SVG polyline of an entry's history (``path`` in a 60×16 view box)."""

    path: str
    label: str


@dataclass(frozen=True)
class Badge:
    """A small label: ``kind`` picks the CSS class (``ok``, ``rep``, ``stale``)."""

    kind: str
    text: str
    title: str


@dataclass(frozen=True)
class ChartBlock:
    """A chart mount: the template embeds ``spec`` with ``tojson`` and links ``spec_href``.

    Attributes
    ----------
    key : str
        Unique within the page; used for the element ids.
    title : str
        Shown above the chart (also inside the spec).
    alt : str
        A text alternative: what the chart shows, in words.
    spec : Mapping[str, Any]
        The Vega-Lite spec, data inline (``datasets``).
    spec_href : str
        The same spec as a file, relative to the page.
    table_head : tuple[str, ...]
        Column heads of the data table shown under the chart (every chart has one).
    table_rows : tuple[tuple[str, ...], ...]
        Its rows, formatted.
    """

    key: str
    title: str
    alt: str
    spec: Mapping[str, Any]
    spec_href: str
    table_head: tuple[str, ...] = ()
    table_rows: tuple[tuple[str, ...], ...] = ()
    wide: bool = False
    svg_href: str = ""
    narrow_href: str = ""
    size: tuple[int, int] = (0, 0)
    narrow_size: tuple[int, int] = (0, 0)
    eager: bool = False
    table_total: int = 0
    """Rows of the whole data table (more than ``table_rows`` when it is long)."""
    csv_href: str = ""
    """The whole data table as CSV, relative to the page."""
    spec_size: str = ""
    csv_size: str = ""
    """Sizes of the spec and of the CSV, shown beside their links."""


@dataclass(frozen=True)
class MetricColumn:
    """A column head of the leaderboard, with the metric's reading."""

    name: str
    label: str
    unit: str
    direction: str
    description: str


@dataclass(frozen=True)
class Methodology:
    """The methodology section of a track.

    ``html`` is the track's own text (its presentation's ``methodology``, an HTML fragment
    written by gmeter's authors); empty, the site prints ``methodology/generic.html``.
    """

    track: str
    track_title: str
    paper: str
    html: str
    metrics: tuple[MetricColumn, ...]
    notes: tuple[str, ...] = ()
    doi: str = ""
    """The paper's DOI (linked to https://doi.org/ beside the paper)."""


@dataclass(frozen=True)
class LeaderboardRow:
    """One entry (an agent of a bundle) of a leaderboard."""

    rank: str
    group: str
    system: Link
    agent: str
    organisation: str
    score: Cell
    secondary: tuple[Cell, ...]
    badges: tuple[Badge, ...]
    date: str
    sparkline: Sparkline | None
    verified: bool
    agent_href: str = ""
    apart: bool = False
    """A reported entry on a board with verified ones (its own section, never ranked)."""
    variant: str = ""
    """What tells this entry from another of the same name on the board (the bundle's
    declared system version, e.g. its training-set size, or its bundle id)."""


@dataclass(frozen=True)
class RowGroup:
    """Rows of an unranked board that came in one run (a run of a descriptive measure)."""

    system: Link
    rows: tuple[LeaderboardRow, ...]


@dataclass(frozen=True)
class VersionLink:
    """An entry of a board's version switcher."""

    text: str
    href: str
    current: bool


@dataclass(frozen=True)
class OtherRow:
    """An entry without the primary metric (e.g. a suite-level result), with its metrics."""

    system: Link
    agent: str
    cells: tuple[Cell, ...]


# --------------------------------------------------------------------------- pages


@dataclass(frozen=True)
class HomeBenchmark:
    """A benchmark's line on the home page."""

    link: Link
    track: str
    track_title: str
    leader: str
    leader_score: str
    metric_label: str
    entries: int
    last_change: str
    stale: bool
    tied: int = 0


@dataclass(frozen=True)
class HomeTrack:
    """The home page's boards of one track, under its measure and reading direction."""

    track: str
    title: str
    metric: str
    direction: str
    better: str
    """``higher``, ``lower`` or ``none``: the score column's first sort (best first)."""
    benchmarks: tuple[HomeBenchmark, ...]


@dataclass(frozen=True)
class HomePage:
    """``index.html`` of a version."""

    nav: Nav
    title: str
    benchmarks: tuple[HomeBenchmark, ...]
    changes: tuple[str, ...]
    changelog: Link
    releases: tuple[Link, ...]
    notes: str = ""
    systems: Link | None = None
    submit: Link | None = None
    errata: tuple[str, ...] = ()
    """A frozen release's errata: what later gmeter versions compute differently."""
    tracks: tuple[HomeTrack, ...] = ()
    """The boards grouped by track, in the order of the first board of each."""


@dataclass(frozen=True)
class BenchmarkPage:
    """``benchmarks/<id>/index.html``: the leaderboard, charts and methodology."""

    nav: Nav
    title: str
    benchmark_id: str
    track: str
    track_title: str
    version: str
    description: str
    origin: tuple[tuple[str, Link], ...]
    primary: MetricColumn
    secondary: tuple[MetricColumn, ...]
    rows: tuple[LeaderboardRow, ...]
    other_heads: tuple[MetricColumn, ...]
    others: tuple[OtherRow, ...]
    stale_note: str
    charts: tuple[ChartBlock, ...]
    methodology: Methodology
    run_notes: tuple[str, ...]
    downloads: tuple[Link, ...]
    summary: str = ""
    direction: str = ""
    description_html: str = ""
    origin_html: tuple[tuple[str, str], ...] = ()
    intervals: str = ""
    ties: str = ""
    total: int = 0
    all_entries: Link | None = None
    board: Link | None = None
    versions: tuple[VersionLink, ...] = ()
    cite: tuple[Link, ...] = ()
    submit: Link | None = None
    csv: Link | None = None
    ranked: bool = True
    groups: tuple[RowGroup, ...] = ()
    full: bool = False
    compare: Link | None = None
    marks: tuple[str, ...] = ()
    """The convention marks shown in the table (e.g. ``step``), explained under it."""
    since: str = ""
    """What changed on this board since the newest release (current pages only)."""
    changelog: Link | None = None
    """The board's own changelog."""
    constant: tuple[tuple[str, str], ...] = ()
    """Columns left out of the table because every entry has the same value there, as
    (metric label, the value): one line under the table says so."""
    rest: tuple[tuple[str, str, str, str], ...] = ()
    """The entries beyond the rows shown, as ``(rank, name, system, href)``: the filter
    searches them too and links to each (a board shows its first rows only)."""


@dataclass(frozen=True)
class SystemEntry:
    """One agent of a system on one benchmark, with its scores over versions."""

    benchmark: Link
    agent: str
    metric_heads: tuple[str, ...]
    history: tuple[tuple[str, tuple[str, ...]], ...]
    rank: str
    badges: tuple[Badge, ...]
    score: str = ""
    metric: str = ""
    training: tuple[tuple[str, str], ...] = ()
    """How the agent was trained, as its bundle declares it (label, value): the track's
    ``details.training`` (seed, steps, checkpoint SHA-256, library versions)."""


@dataclass(frozen=True)
class Provenance:
    """Where a bundle came from."""

    benchmark: Link
    bundle: str
    content_hash: str
    submitted: str
    source_path: str
    git_commit: str
    licence: str
    url: Link | None
    files: tuple[Link, ...]
    description: str


@dataclass(frozen=True)
class SystemPage:
    """``systems/<slug>/index.html``: every benchmark a system entered."""

    nav: Nav
    title: str
    organisation: str
    entries: tuple[SystemEntry, ...]
    provenance: tuple[Provenance, ...]
    charts: tuple[ChartBlock, ...]
    more: Link | None = None
    """A collection's page of every entry (this page lists the best-ranked per board)."""
    hidden: int = 0
    """Entries listed only on the ``more`` page."""
    detail_limit: int = 0
    detail_hidden: int = 0
    """Entries whose scores in every version are not tabled here (beyond ``detail_limit``
    per board): the board's release copies and downloads hold them."""
    full: bool = False
    """The page of every entry (no charts, no per-version tables)."""
    system: Link | None = None
    """From the page of every entry back to the system page."""


@dataclass(frozen=True)
class ChangeItem:
    """One line of a changelog."""

    benchmark: Link
    system: Link
    agent: str
    kind: str
    detail: str
    why: str


@dataclass(frozen=True)
class ChangelogPage:
    """``changelog/index.html`` of a version: what differs from the previous one."""

    nav: Nav
    title: str
    previous: str
    new_entries: tuple[ChangeItem, ...]
    removed: tuple[ChangeItem, ...]
    changed: tuple[ChangeItem, ...]
    rank_moves: tuple[ChangeItem, ...]
    totals: Mapping[str, int] | None = None
    """Changes of each kind (``new``, ``changed``, ``rank``, ``removed``); long lists of new
    entries and rank moves name the first per board and end in a ``more`` item."""


@dataclass(frozen=True)
class BoardChanges:
    """What changed on one board in one version (a section of the board's changelog)."""

    anchor: str
    label: str
    previous: str
    notes: tuple[str, ...]
    """Rule changes (a new benchmark version), a new gmeter scoring it, the release's errata."""
    groups: tuple[tuple[str, tuple[ChangeItem, ...]], ...]
    """(heading, items) of new entries, changed scores, rank moves and removed entries."""


@dataclass(frozen=True)
class BoardChangelogPage:
    """``benchmarks/<id>/changelog/``: a board's changes in every version, newest first."""

    nav: Nav
    title: str
    board: Link
    versions: tuple[BoardChanges, ...]


@dataclass(frozen=True)
class ReleaseLine:
    """A release on the releases page."""

    link: Link
    date: str
    notes: str
    changelog: Link
    counts: str
    errata: tuple[str, ...] = ()


@dataclass(frozen=True)
class ReleasesPage:
    """``releases/index.html``."""

    nav: Nav
    title: str
    releases: tuple[ReleaseLine, ...]
    missing: tuple[tuple[str, str], ...] = ()
    """Releases of releases.toml that could not be published: (name, why)."""


@dataclass(frozen=True)
class AboutPage:
    """``about/index.html``: what each measure means, with formulas; downloads."""

    nav: Nav
    title: str
    methodologies: tuple[Methodology, ...]
    downloads: tuple[Link, ...]
    tables: tuple[tuple[str, Link, Link], ...] = ()
    """Each published table or view: its name, its Parquet file and its CSV file."""
    manifest: Link | None = None
    """The SHA-256 of every file of the site (its size is known only once it is written)."""


@dataclass(frozen=True)
class NotFoundPage:
    """``404.html``: served from any depth, so it links with the configured absolute base."""

    nav: Nav
    title: str
    summary: str = "There is no page at this address: the leaderboards, systems and releases."


@dataclass(frozen=True)
class RedirectPage:
    """A former address of a page: a meta refresh, a canonical and a plain link, noindex."""

    title: str
    name: str
    target: str


@dataclass(frozen=True)
class IndexLine:
    """A line of the systems index: a page and what it holds."""

    link: Link
    detail: str
    kind: str = "system"


@dataclass(frozen=True)
class SystemsIndexPage:
    """``systems/index.html``: every system and every agent with its own page."""

    nav: Nav
    title: str
    systems: tuple[IndexLine, ...]
    agents: tuple[IndexLine, ...]


@dataclass(frozen=True)
class AgentEntry:
    """One board an agent appears on, with its score, interval, rank and tie group."""

    benchmark: Link
    system: Link
    metric: str
    score: Cell
    rank: str
    group: str
    others: tuple[tuple[str, str], ...] = ()


@dataclass(frozen=True)
class AgentPage:
    """``agents/<slug>/index.html``: an agent (possibly inside a collection) on every board."""

    nav: Nav
    title: str
    entries: tuple[AgentEntry, ...]
    systems: tuple[Link, ...]


@dataclass(frozen=True)
class SubmitPage:
    """``submit/index.html``: the submitting guide (``docs/submitting.md``), rendered."""

    nav: Nav
    title: str
    body_html: str
    source: str


@dataclass(frozen=True)
class SearchPage:
    """``search/index.html``: results for ``?q=`` (the search form's target)."""

    nav: Nav
    title: str
    systems: Link


@dataclass(frozen=True)
class CompareRow:
    """One metric of two entries side by side, with their difference."""

    metric: str
    a: Cell
    b: Cell
    diff: str


@dataclass(frozen=True)
class ComparePage:
    """``benchmarks/<id>/compare/index.html``: two entries of one board side by side."""

    nav: Nav
    title: str
    board: Link
    entries: tuple[tuple[str, str], ...]
    data: Mapping[str, Any]


PageContext = (
    HomePage
    | BenchmarkPage
    | SystemPage
    | ChangelogPage
    | BoardChangelogPage
    | ReleasesPage
    | AboutPage
    | NotFoundPage
    | RedirectPage
    | SystemsIndexPage
    | AgentPage
    | SubmitPage
    | SearchPage
    | ComparePage
)


@dataclass(frozen=True)
class Page:
    """One file to render: its path under the site root, template and context."""

    path: str
    template: str
    context: PageContext


@dataclass(frozen=True)
class SpecFile:
    """A file written next to a page (``path`` under the site root).

    A chart's Vega-Lite ``spec`` (written as JSON), or ``text`` written as it is (its drawn
    SVG, a per-board CSV, a BibTeX entry).
    """

    path: str
    spec: Mapping[str, Any] | None
    text: str = ""


@dataclass(frozen=True)
class FeedEntry:
    """One Atom entry: new entries and corrections of a benchmark in a version."""

    id: str
    title: str
    updated: str
    href: str
    summary: str


@dataclass(frozen=True)
class FeedPage:
    """``feed.xml``."""

    title: str
    id: str
    updated: str
    entries: tuple[FeedEntry, ...]
