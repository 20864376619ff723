"""The site's analysis: versions, standings, changes, system slugs and lookups.

:func:`analyse` turns a :class:`~pipeline.store.rows.Snapshot` into a :class:`Site` — everything the
page builders (:mod:`pipeline.site.assemble`) and the exports (:mod:`pipeline.site.exports`) need,
computed once, in a deterministic order. Pure: no files, no store.
"""

from __future__ import annotations

import hashlib
import os
import re
import unicodedata
from collections import defaultdict
from dataclasses import dataclass, field

from pipeline.errors import BuildError, GmeterError
from pipeline.site.config import DEFAULT, SiteConfig
from pipeline.site.standings import (
    CURRENT,
    Change,
    ScoreIndex,
    Standing,
    Version,
    diff_standings,
    index_scores,
    site_versions,
    standing,
)
from pipeline.store.rows import BenchmarkRow, BundleRow, ChartRecord, RunRecord, Snapshot
from pipeline.tracks import all_metrics, get_track, metric_info
from pipeline.tracks.presentation import Presentation


@dataclass(frozen=True)
class TrackInfo:
    """What the site needs from a track: names, paper, ranking metric, extra columns.

    And how the track is shown: its :class:`~pipeline.tracks.presentation.Presentation`.
    """

    name: str
    title: str
    paper: str
    primary: str
    secondary: tuple[str, ...]
    populational: bool
    presentation: Presentation = field(default_factory=Presentation)


def track_info(name: str, primary_from_store: str | None = None) -> TrackInfo:
    """Describe a track from its TrackSpec.

    A track the store knows but this gmeter does not (a track since removed) is shown by
    name, ranked by the store's primary metric, with the site's generic presentation.
    """
    try:
        spec = get_track(name)
    except GmeterError:
        return TrackInfo(name, name, "", primary_from_store or "score", (), False)
    return TrackInfo(
        name,
        spec.title,
        spec.paper,
        primary_from_store or spec.primary_metric,
        tuple(spec.secondary_metrics),
        bool(spec.populational),
        spec.presentation,
    )


# --------------------------------------------------------------------------- names and links


def slugify(text: str) -> str:
    """ASCII slug: lowercase letters, digits and single hyphens (``item`` if nothing is left)."""
    norm = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode("ascii")
    slug = re.sub(r"[^a-z0-9]+", "-", norm.lower()).strip("-")
    return slug[:60].strip("-") or "item"


def safe_segment(name: str) -> str:
    """Return a path segment for an id: kept when already safe, else slug + short hash."""
    if re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9._-]{0,80}", name) and ".." not in name:
        return name
    return f"{slugify(name)}-{hashlib.sha256(name.encode()).hexdigest()[:8]}"


_PLAIN_SLUG = re.compile(r"[a-z0-9]+(?:-[a-z0-9]+)*")


def stable_slug(name: str) -> str:
    """A page slug that depends on ``name`` alone, so no other bundle can ever move it.

    A name that already is a lowercase slug (``atlas``, ``gpt2-1-5b``) is its own slug; any
    other name gets its slug plus the first 8 hex digits of its SHA-256 (``R2D2`` →
    ``r2d2-…``), so two names that read alike (``A B``, ``a-b``) never share a page.
    """
    if len(name) <= 60 and _PLAIN_SLUG.fullmatch(name):
        return name
    return f"{slugify(name)}-{hashlib.sha256(name.encode()).hexdigest()[:8]}"


def system_slugs(names: set[str]) -> dict[str, str]:
    """Map system (or agent) names to their stable page slugs (:func:`stable_slug`)."""
    return {n: stable_slug(n) for n in sorted(names)}


def safe_url(url: str) -> str | None:
    """Only absolute http(s) URLs are linked (:func:`pipeline.untrusted.safe_url`)."""
    from pipeline.untrusted import safe_url as _safe_url

    return _safe_url(url)


SAFE_EXTENSIONS = frozenset(
    {"json", "csv", "toml", "txt", "md", "tsv", "log", "yaml", "yml", "gz", "parquet", "npz"}
)
"""Raw bundle files keep these extensions; any other gets ``.txt`` appended so that a static
server never serves a bundle's file as HTML, SVG or script from the site's origin. Compressed
and binary data keep theirs (``.gz`` is served as ``application/gzip``, never rendered)."""


def raw_path(content_hash: str, path: str) -> str:
    """Where a bundle file is published: ``files/<hash[:16]>/<sanitised path>``."""
    segs = []
    for seg in path.split("/"):
        if seg in ("", ".", ".."):
            continue
        segs.append(re.sub(r"[^A-Za-z0-9._-]", "_", seg).lstrip(".") or "_")
    name = "/".join(segs) or "file"
    ext = name.rsplit(".", 1)[-1].lower() if "." in name.rsplit("/", 1)[-1] else ""
    safe = ext in SAFE_EXTENSIONS
    if name != path or not safe:
        # The published name is not the file's own: tag it with a digest of the original path,
        # so two files never meet at one address ("a b.csv" and "a_b.csv", "x.foo" and
        # "x.foo.txt"). "~" is outside the sanitised alphabet: a tagged name cannot equal a
        # name published unchanged.
        tag = "~" + hashlib.sha256(path.encode("utf-8", "surrogatepass")).hexdigest()[:8]
        if safe:
            stem, _, suffix = name.rpartition(".")
            name = f"{stem}{tag}.{suffix}"
        else:
            name += tag + ".txt"
    return f"files/{content_hash[:16]}/{name}"


def href(from_path: str, to: str) -> str:
    """Return the link from the page at ``from_path`` to the site path ``to`` (dir/ or file)."""
    src = from_path.split("/")[:-1]
    is_dir = to.endswith("/") or to == ""
    dst = [p for p in to.split("/") if p]
    common = 0
    while common < min(len(src), len(dst)) and src[common] == dst[common]:
        common += 1
    parts = [".."] * (len(src) - common) + dst[common:]
    rel = "/".join(parts)
    if is_dir:
        return (rel + "/") if rel else "./"
    return rel


# --------------------------------------------------------------------------- analysis


@dataclass
class VersionData:
    """One version of the site with its standings and changes.

    ``prefix`` is where its permalink pages live (``releases/<name>/``; ``""`` for
    ``current``). The latest version is also rendered at the site root.
    """

    version: Version
    prefix: str
    previous: Version | None
    history: list[Version]
    benchmarks: list[BenchmarkRow]
    standings: dict[str, Standing] = field(default_factory=dict)
    changes: dict[str, list[Change]] = field(default_factory=dict)
    slugs: dict[str, str] = field(default_factory=dict)
    last_change: dict[str, str] = field(default_factory=dict)
    agent_slugs: dict[str, str] = field(default_factory=dict)


@dataclass
class Site:
    """Everything the builders need, computed once."""

    snapshot: Snapshot
    versions: list[VersionData]
    latest: VersionData | None
    index: ScoreIndex
    tracks: dict[str, TrackInfo]
    bundles: dict[tuple[str, str, str], BundleRow]
    current_bundles: dict[tuple[str, str], BundleRow]
    current_benchmarks: dict[str, BenchmarkRow]
    runs: dict[tuple[str, str], RunRecord]
    charts: dict[tuple[str, str], list[ChartRecord]]
    labels: dict[str, str]
    config: SiteConfig = DEFAULT
    """Whose site this is (``gmeter.toml``): titles, feed id, citation, submit guide."""

    def bundle(self, benchmark: str, bundle: str, content_hash: str) -> BundleRow | None:
        """Return the bundle version a score was computed on (falling back to the current one)."""
        return self.bundles.get((benchmark, bundle, content_hash)) or self.current_bundles.get(
            (benchmark, bundle)
        )

    def system_name(self, benchmark: str, bundle: str, content_hash: str) -> str:
        """Return the display name of the system behind a score."""
        b = self.bundle(benchmark, bundle, content_hash)
        return b.system_name if b is not None else bundle

    def system_home(self, prefix: str, name: str) -> str:
        """The tree (``""`` or a release prefix) holding ``name``'s system page, from ``prefix``.

        Release copies are light: they hold what a citation needs (boards, their data and
        charts, the changelog) and link to the current site's system and agent pages, whose
        addresses depend on the name alone (:func:`stable_slug`). Only a name the current site
        no longer shows keeps its page inside the release copy.
        """
        if not prefix or self.latest is None:
            return prefix
        return "" if name in self.latest.slugs else prefix

    def agent_home(self, prefix: str, agent: str) -> str:
        """As :meth:`system_home`, for the page of an agent inside a collection."""
        if not prefix or self.latest is None:
            return prefix
        return "" if agent in self.latest.agent_slugs else prefix


def _benchmark_for(
    bid: str,
    version: str,
    runs: dict[tuple[str, str], RunRecord],
    by_hash: dict[tuple[str, str], BenchmarkRow],
    current: dict[str, BenchmarkRow],
    any_row: dict[str, BenchmarkRow],
) -> BenchmarkRow:
    run = runs.get((version, bid))
    if run is not None and (bid, run.benchmark_hash) in by_hash:
        return by_hash[(bid, run.benchmark_hash)]
    if bid in current:
        return current[bid]
    if bid in any_row:
        return any_row[bid]
    track = run.track if run is not None else ""
    return BenchmarkRow(bid, "", track, bid, "", "", "", None, {}, "", "", False)


def analyse(snapshot: Snapshot, config: SiteConfig = DEFAULT) -> Site:
    """Compute versions, standings, changes and slugs for the whole site."""
    index = index_scores(snapshot.scores)
    bundles = {(b.benchmark, b.id, b.content_hash): b for b in snapshot.bundles}
    current_bundles = {(b.benchmark, b.id): b for b in snapshot.bundles if b.current}
    by_hash = {(b.id, b.content_hash): b for b in snapshot.benchmarks}
    current_bm = {b.id: b for b in snapshot.benchmarks if b.current}
    any_bm = {b.id: b for b in snapshot.benchmarks}
    runs = {(r.release, r.benchmark): r for r in snapshot.runs}
    charts: dict[tuple[str, str], list[ChartRecord]] = defaultdict(list)
    for c in sorted(snapshot.charts, key=lambda c: (c.release, c.benchmark, c.name)):
        charts[(c.release, c.benchmark)].append(c)
    tracks: dict[str, TrackInfo] = {}
    labels = {name: m.label for name, m in all_metrics().items()}
    for metric in {s.metric for s in snapshot.scores}:
        labels.setdefault(metric, metric_info(metric).label)

    def info(track: str) -> TrackInfo:
        if track not in tracks:
            tracks[track] = track_info(track, snapshot.primary_metrics.get(track))
        return tracks[track]

    site = Site(
        snapshot,
        [],
        None,
        index,
        tracks,
        bundles,
        current_bundles,
        current_bm,
        runs,
        charts,
        labels,
        config,
    )
    versions = site_versions(snapshot)
    previous: VersionData | None = None
    last_change: dict[str, str] = {}
    for i, v in enumerate(versions):
        prefix = "" if v.name == CURRENT else f"releases/{safe_segment(v.name)}/"
        ids = {bid for (rel, bid) in index if rel == v.name} | {
            r.benchmark for r in snapshot.runs if r.release == v.name
        }
        if v.name == CURRENT:
            ids |= set(current_bm)
        rows = [_benchmark_for(b, v.name, runs, by_hash, current_bm, any_bm) for b in sorted(ids)]
        vd = VersionData(v, prefix, previous.version if previous else None, versions[: i + 1], rows)
        names: set[str] = set()
        agents: set[str] = set()
        for bm in rows:
            t = info(bm.track)
            metric = t.primary
            st = standing(index, v.name, bm.id, metric, metric_info(metric).direction)
            vd.standings[bm.id] = st
            old = previous.standings.get(bm.id) if previous else None
            ch = diff_standings(
                old,
                st,
                old_run=runs.get((previous.version.name, bm.id)) if previous else None,
                new_run=runs.get((v.name, bm.id)),
                populational=t.populational,
                labels=labels,
            )
            vd.changes[bm.id] = ch
            if ch:
                last_change[bm.id] = v.date.isoformat()
            names |= {site.system_name(bm.id, e.bundle, e.content_hash) for e in st.entries}
            if t.presentation.agent_rows:  # not when a row is e.g. a pair of tests
                agents |= {
                    e.agent
                    for e in st.entries
                    if e.agent and e.agent != site.system_name(bm.id, e.bundle, e.content_hash)
                }
            names |= {
                site.system_name(bm.id, k[0], next(iter(ms.values())).content_hash)
                for k, ms in st.others
            }
        vd.slugs = system_slugs(names)
        vd.agent_slugs = system_slugs(agents)
        vd.last_change = dict(last_change)
        site.versions.append(vd)
        previous = vd
    site.latest = site.versions[-1] if site.versions else None
    return site


def site_url(base_path: str = "/", configured: str = "") -> str:
    """The site's absolute address (``https://host/base/``), or ``""`` when unknown.

    In order: ``$GMETER_SITE_URL`` when set (a preview or a fork can point its links
    elsewhere without editing the repository); ``configured``, the ``url`` of the
    repository's ``gmeter.toml``; on GitHub Actions the GitHub Pages address of the
    repository. Absolute links (sitemap, feed, BibTeX, CITATION.cff) need it; without one
    they fall back to the base path.
    """
    raw = os.environ.get("GMETER_SITE_URL", "").strip() or configured.strip()
    if not raw and os.environ.get("GITHUB_ACTIONS") == "true":
        owner = (
            os.environ.get("GITHUB_REPOSITORY_OWNER", "")
            or os.environ.get("GITHUB_REPOSITORY", "").partition("/")[0]
        )
        if owner:
            raw = f"https://{owner.lower()}.github.io{base_path}"
    if not raw:
        return ""
    if not raw.startswith(("https://", "http://")) or any(c in raw for c in "\"'<> \n\t"):
        raise BuildError(
            f"site URL {raw!r} is not an http(s) address", hint="e.g. https://example.org/board/"
        )
    return raw.rstrip("/") + "/"
