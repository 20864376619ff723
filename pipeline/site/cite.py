"""Citations and per-board downloads: BibTeX and ``CITATION.cff``, one CSV per board.

BibTeX per board, per release and for the papers of every track (each track's
:class:`~pipeline.tracks.presentation.Citation`); the site's ``CITATION.cff``.

Plain text builders (pure functions of the :class:`~pipeline.site.model.Site`); the build
writes what they return.
"""

from __future__ import annotations

import csv
import io
import json
import re

from pipeline.site.model import Site, VersionData, safe_segment, track_info
from pipeline.site.standings import Standing
from pipeline.store.rows import BenchmarkRow
from pipeline.tracks import get_track, track_names
from pipeline.tracks.presentation import Citation
from pipeline.untrusted import bibtex, csv_cell


def _citations() -> dict[str, Citation]:
    """The paper of every track that cites one, by track name."""
    out: dict[str, Citation] = {}
    for name in track_names():
        cited = get_track(name).presentation.citation
        if cited is not None:
            out[name] = cited
    return out


def _paper_of(site: Site, track: str) -> Citation | None:
    """The paper of a board's track (``None`` for a track without one or unknown here)."""
    info = site.tracks.get(track) or track_info(track)
    return info.presentation.citation


def _bib_text(text: str) -> str:
    """Escape a value for a BibTeX field (:func:`pipeline.untrusted.bibtex`)."""
    return bibtex(text)


def _bib_authors(site: Site) -> str:
    """The site's authors (``gmeter.toml`` maintainers) as one braced BibTeX author list."""
    return " and ".join("{" + _bib_text(a) + "}" for a in site.config.authors)


def _key(*parts: str) -> str:
    return "gmeter-" + "-".join(re.sub(r"[^A-Za-z0-9]+", "-", p).strip("-") for p in parts if p)


def board_bib(site: Site, vd: VersionData, bm: BenchmarkRow, root: str = "/") -> str:
    """BibTeX for one board in one version (``@misc``), followed by its paper's entry.

    ``root`` is the site's address (absolute when configured): the entry's ``url`` is the
    board's page in this version under it.
    """
    version = vd.version
    year = version.date.year
    name = site.config.long_title.removesuffix(" leaderboards")
    note = (
        f"{name} leaderboard, {version.label}; benchmark version {bm.version or '—'}"
        f" ({bm.content_hash[:12]})"
        if bm.content_hash
        else f"{name} leaderboard, {version.label}"
    )
    path = f"{vd.prefix}benchmarks/{safe_segment(bm.id)}/"
    entry = (
        f"@misc{{{_key(bm.id, version.name)},\n"
        f"  title        = {{{{{_bib_text(bm.title)}}}}},\n"
        f"  author       = {{{_bib_authors(site)}}},\n"
        f"  year         = {{{year}}},\n"
        f"  howpublished = {{{_bib_text(name)} leaderboard, page {_bib_text(path)}}},\n"
        f"  url          = {{{_bib_url(root + path)}}},\n"
        f"  note         = {{{_bib_text(note)}}}\n"
        "}\n"
    )
    paper = _paper_of(site, bm.track)
    return entry + ("\n" + paper.bibtex + "\n" if paper else "")


def newest_release(site: Site) -> VersionData | None:
    """The newest frozen release (``None`` before the first)."""
    releases = [vd for vd in site.versions if vd.prefix]
    return releases[-1] if releases else None


def _bib_url(url: str) -> str:
    """A URL for a BibTeX ``url`` field (no braces, no spaces; ``%`` and ``#`` escaped)."""
    return re.sub(r"([%#])", r"\\\1", "".join(c for c in url if c not in "{} \n\t\\"))


def release_bib(site: Site, vd: VersionData, root: str = "/") -> str:
    """BibTeX for a release of the whole site, then every paper its boards use."""
    v = vd.version
    ids = ", ".join(bm.id for bm in vd.benchmarks)
    entry = (
        f"@misc{{{_key('release', v.name)},\n"
        f"  title        = {{{{{_bib_text(site.config.long_title)}, {_bib_text(v.label)}}}}},\n"
        f"  author       = {{{_bib_authors(site)}}},\n"
        f"  year         = {{{v.date.year}}},\n"
        f"  howpublished = {{{_bib_text(site.config.long_title.removesuffix(' leaderboards'))} "
        f"release {_bib_text(v.name)}, page {_bib_text(vd.prefix)}}},\n"
        f"  url          = {{{_bib_url(root + vd.prefix)}}},\n"
        f"  note         = {{boards: {_bib_text(ids)}}}\n"
        "}\n"
    )
    papers = [_paper_of(site, t) for t in sorted({bm.track for bm in vd.benchmarks})]
    return entry + "".join("\n" + p.bibtex + "\n" for p in papers if p is not None)


def papers_bib() -> str:
    """The papers of every track as one BibTeX file (by track name)."""
    papers = _citations()
    return "\n\n".join(papers[t].bibtex for t in sorted(papers)) + "\n"


def _yaml(text: str) -> str:
    """A YAML double-quoted scalar (JSON's string syntax is valid YAML)."""
    return json.dumps(text, ensure_ascii=False)


def citation_cff(site: Site, root: str = "/") -> str:
    """``CITATION.cff`` (Citation File Format 1.2.0) for the site, with the papers it uses."""
    latest = site.latest
    date = site.snapshot.site_date.isoformat()
    newest = newest_release(site)
    # a citation names something fixed: the newest release (its pages never change)
    cited = newest or latest
    version = cited.version.name if cited else "current"
    cfg = site.config
    title = ("gmeter leaderboards of general machine intelligence" if cfg.title == "gmeter"
             else cfg.title)
    lines = [
        "cff-version: 1.2.0",
        'message: "If you use these leaderboards, please cite them as below, and the paper of '
        'each measure you use."',
        f"title: {_yaml(title)}",
        "type: dataset",
        "authors:",
        *(f"  - name: {_yaml(a)}" for a in cfg.authors),
        f'version: "{version}"',
        f'url: "{_bib_url(root + (cited.prefix if cited else ""))}"',
        f"date-released: {date}",
    ]
    if cfg.licence:
        lines.append(f"license: {_yaml(cfg.licence) if ' ' in cfg.licence else cfg.licence}")
    if cfg.repository:
        lines.append(f"repository-code: {_yaml(cfg.repository)}")
    if cfg.description:
        lines.append(f"abstract: {_yaml(cfg.description)}")
    lines.append("references:")
    papers = _citations()
    for t in sorted(papers):
        p = papers[t]
        lines += [f"  - type: {p.kind}", f'    title: "{p.title}"', f"    year: {p.year}",
                  "    authors:"]  # fmt: skip
        lines += [f'      - family-names: "{a}"' for a in p.authors]
        if p.doi:
            lines.append(f'    doi: "{p.doi}"')
    return "\n".join(lines) + "\n"


def board_csv(site: Site, bm: BenchmarkRow, st: Standing) -> str:
    """One board as CSV: a row per entry, a value/low/high column triple per metric."""
    metrics = sorted({m for e in st.entries for m in e.metrics})
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    head = ["rank", "group", "system", "agent", "bundle", "verified", "content_hash"]
    for m in metrics:
        head += [m, f"{m}_low", f"{m}_high"]
    w.writerow([csv_cell(h) for h in head])

    def num(v: float | None) -> str:
        return "" if v is None else repr(float(v))

    for e in st.entries:
        row = [
            "" if e.rank is None else str(e.rank),
            "" if e.group is None else str(e.group),
            _csv_text(site.system_name(bm.id, e.bundle, e.content_hash)),
            _csv_text(e.agent),
            _csv_text(e.bundle),
            "true" if e.primary.verified else "false",
            e.content_hash,
        ]
        for m in metrics:
            r = e.metrics.get(m)
            row += [num(r.value), num(r.ci_low), num(r.ci_high)] if r else ["", "", ""]
        w.writerow(row)
    for (bundle, agent), ms in st.others:
        some = next(iter(ms.values()))
        row = [
            "",
            "",
            _csv_text(site.system_name(bm.id, bundle, some.content_hash)),
            _csv_text(agent),
            _csv_text(bundle),
            "true" if some.verified else "false",
            some.content_hash,
        ]
        for m in metrics:
            r = ms.get(m)
            row += [num(r.value), num(r.ci_low), num(r.ci_high)] if r else ["", "", ""]
        w.writerow(row)
    return buf.getvalue()


def _csv_text(text: str) -> str:
    """Neutralise spreadsheet formulas (:func:`pipeline.untrusted.csv_cell`)."""
    return csv_cell(text)
