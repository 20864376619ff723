"""A board's own changelog: what changed on it in each version, newest first.

The site's changelog lists every board's changes of one version; a visitor of one board wants
that board's story across versions: entries added and removed, scores that moved and why, a
new version of the benchmark's rules, a new gmeter scoring it, and the errata of a release.
Each version is a section with an anchor (``#v-<version>``), so a release note can link it.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable

from pipeline.site.board_charts import entry_variants
from pipeline.site.model import Site, VersionData, href, safe_segment
from pipeline.site.pages import BoardChangelogPage, BoardChanges, ChangeItem, Link, Nav, Page
from pipeline.store.rows import BenchmarkRow

HEADINGS = {
    "new": "New entries",
    "changed": "Changed scores",
    "rank": "Rank moves",
    "removed": "Removed entries",
}


def change_items(
    site: Site, vd: VersionData, bm: BenchmarkRow, path: str, prefix: str
) -> dict[str, list[ChangeItem]]:
    """One board's changes in ``vd`` against the previous version, by kind.

    Linked from the page at ``path``: systems link to this version's pages, removed ones to
    the previous version's.
    """
    groups: dict[str, list[ChangeItem]] = defaultdict(list)
    st = vd.standings[bm.id]
    keyed = {(e.bundle, e.agent): e for e in st.entries}
    prev = (
        site.versions[[v.version for v in site.versions].index(vd.previous)]
        if vd.previous
        else None
    )
    variants = entry_variants(site, bm.id, st.entries)
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
            f"{site.system_home(prefix, name)}systems/{slug_map[name]}/"
            if e
            else f"{site.system_home(prev.prefix, name)}systems/{slug_map[name]}/"
            if prev and name in slug_map
            else ""
        )
        sys_link = Link(href(path, target), name) if target else Link("", name)
        groups[c.kind].append(
            ChangeItem(
                Link(href(path, f"{prefix}benchmarks/{safe_segment(bm.id)}/"), bm.title),
                sys_link,
                ("" if c.agent == name else c.agent) or variants.get((c.bundle, c.agent), ""),
                c.kind,
                c.detail,
                c.why,
            )
        )
    return groups


def _versions_with(site: Site, vd: VersionData, bm_id: str) -> list[VersionData]:
    """The versions up to ``vd`` that hold the board, oldest first."""
    known = {v.name for v in vd.history}
    return [v for v in site.versions if v.version.name in known and bm_id in v.standings]


def _row(v: VersionData, bm_id: str) -> BenchmarkRow | None:
    return next((b for b in v.benchmarks if b.id == bm_id), None)


def _notes(site: Site, v: VersionData, prev: VersionData | None, bm: BenchmarkRow) -> list[str]:
    notes = []
    old = _row(prev, bm.id) if prev else None
    if prev is None or old is None:
        n = len(v.standings[bm.id].entries)
        notes.append(f"The board's first version here: {n} entr{'y' if n == 1 else 'ies'}.")
    elif old.content_hash != bm.content_hash:
        notes.append(
            f"The benchmark's rules changed: version {old.version or '—'} → {bm.version or '—'} "
            f"({old.content_hash[:10]} → {bm.content_hash[:10]}); its scores were recomputed."
        )
    run = site.runs.get((v.version.name, bm.id))
    old_run = site.runs.get((prev.version.name, bm.id)) if prev else None
    if run and old_run and run.code_version != old_run.code_version:
        notes.append(f"Scored by gmeter {run.code_version} (was {old_run.code_version}).")
    notes.extend(
        f"Erratum of this release: {e.text()}."
        for e in site.snapshot.errata
        if e.release == v.version.name
    )
    return notes


def board_changelog(
    site: Site, vd: VersionData, bm: BenchmarkRow, nav: Callable[..., Nav]
) -> Page:
    """The changelog page of one board (the latest version's pages, at the site root)."""
    seg = safe_segment(bm.id)
    path = f"benchmarks/{seg}/changelog/index.html"
    held = _versions_with(site, vd, bm.id)
    sections = []
    for i in range(len(held) - 1, -1, -1):
        v = held[i]
        prev = held[i - 1] if i else None
        row = _row(v, bm.id) or bm
        items = change_items(site, v, row, path, v.prefix)
        groups = tuple((HEADINGS[k], tuple(items[k])) for k in HEADINGS if items.get(k))
        sections.append(
            BoardChanges(
                f"v-{safe_segment(v.version.name)}",
                v.version.label,
                prev.version.label if prev else "",
                tuple(_notes(site, v, prev, row)),
                groups,
            )
        )
    ctx = BoardChangelogPage(
        nav(path, f"benchmarks/{seg}/changelog/"),
        f"Changelog of {bm.title}",
        Link(href(path, f"benchmarks/{seg}/"), bm.title),
        tuple(sections),
    )
    return Page(path, "board_changelog.html", ctx)


def since_text(vd: VersionData, bm_id: str) -> str:
    """``Since release 2026.11 (…): 3 new entries, 1 changed score.`` for a current board."""
    if vd.previous is None or not vd.previous.is_release:
        return ""
    counts: dict[str, int] = {}
    for c in vd.changes.get(bm_id, []):
        counts[c.kind] = counts.get(c.kind, 0) + 1
    words = {
        "new": ("new entry", "new entries"),
        "changed": ("changed score", "changed scores"),
        "rank": ("rank move", "rank moves"),
        "removed": ("removed entry", "removed entries"),
    }
    parts = [f"{counts[k]} {w[counts[k] != 1]}" for k, w in words.items() if counts.get(k)]
    if not parts:
        return f"No change on this board since {vd.previous.label}."
    return f"Since {vd.previous.label}: " + ", ".join(parts) + "."
