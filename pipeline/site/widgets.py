"""Small pieces shared by board pages and system pages: badges, stale reasons, chart blocks.

Kept apart from :mod:`pipeline.site.assemble` and :mod:`pipeline.site.systems` so that both
import it and neither imports the other.
"""

from __future__ import annotations

from pipeline.ranking import fmt_interval
from pipeline.site import charts as ch
from pipeline.site.model import Site, VersionData, href
from pipeline.site.pages import Badge, Cell, ChartBlock, SpecFile
from pipeline.site.standings import CURRENT, Entry, shown_value
from pipeline.store.rows import BenchmarkRow, ScoreRecord


def score_cell(rec: ScoreRecord | None) -> Cell:
    """A score as a table cell: the shown value, its interval and any convention's mark."""
    if rec is None:
        return Cell("—")
    text, mark, tip = shown_value(rec)
    return Cell(text, fmt_interval(rec.ci_low, rec.ci_high), tip, mark)


def badges(site: Site, vd: VersionData, bm: BenchmarkRow, e: Entry) -> tuple[Badge, ...]:
    """Verified/reported, and stale markers for the working state."""
    out = [
        Badge("ok", "verified", "computed by gmeter from the raw artefacts")
        if e.primary.verified
        else Badge("rep", "reported", "taken from numbers the submitter supplied")
    ]
    if "own-priors" in e.primary.marks:
        out.append(Badge("flag", "own priors",
                         "the bundle declared its own priors ρ; the benchmark owns ρ, so it is "
                         "ranked with the benchmark's value (see the notes below)"))
    if vd.version.name == CURRENT:
        why = stale_reason(site, bm, e)
        if why:
            out.append(Badge("stale", "stale", why))
    return tuple(out)


def stale_reason(site: Site, bm: BenchmarkRow, e: Entry) -> str:
    """Why a current score is out of date ('' when it is not)."""
    cur_bm = site.current_benchmarks.get(bm.id)
    if cur_bm is not None and bm.content_hash and cur_bm.content_hash != bm.content_hash:
        return (
            f"scored on benchmark version {bm.version or bm.content_hash[:10]}; "
            f"the current version is {cur_bm.version or cur_bm.content_hash[:10]}"
        )
    cur = site.current_bundles.get((bm.id, e.bundle))
    if cur is None:
        return "this bundle is no longer in submissions/"
    if cur.content_hash != e.content_hash:
        return "scored on an older version of this bundle; run gmeter score"
    if cur_bm is not None and cur.benchmark_version and cur_bm.version and \
            cur.benchmark_version != cur_bm.version:
        return (
            f"submitted under benchmark version {cur.benchmark_version}; "
            f"the current version is {cur_bm.version}"
        )
    return ""


EAGER_CHARTS = 2
"""The first charts of a page load with it; the others when they scroll into view."""


def blocks(
    specs: list[ch.ChartSpec],
    page_path: str,
    base: str,
    files: list[SpecFile],
    *,
    light: bool = False,
) -> tuple[ChartBlock, ...]:
    """Chart blocks for a page, recording each spec and its drawn SVGs next to the page.

    ``light`` (release copies) keeps the wide SVG and the chart's data table only: a phone
    scales the drawing down instead of fetching a second one, and the Vega-Lite spec (for the
    interactive view) stays on the current site; together they would double a copy's weight.
    """
    from pipeline.errors import BuildError
    from pipeline.site import svgrender

    res: list[ChartBlock] = []
    widths = (svgrender.WIDE,) if light else (svgrender.WIDE, svgrender.NARROW)
    svgrender.draw_page([c.spec for c in specs], widths)  # the new ones side by side
    for c in specs:
        try:
            wide = svgrender.render(c.spec, svgrender.WIDE)
            small = None if light else svgrender.render(c.spec, svgrender.NARROW)
        except BuildError:
            continue  # a chart Vega cannot draw (odd new chart data) is left out, never fatal
        i = len(res)
        spath = f"{base}{c.key}.vl.json"
        if not light:
            files.append(SpecFile(spath, c.spec))
        files.append(SpecFile(f"{base}{c.key}.svg", None, wide.text))
        if small is not None:
            files.append(SpecFile(f"{base}{c.key}.narrow.svg", None, small.text))
        if c.csv:
            files.append(SpecFile(f"{base}{c.key}.data.csv", None, c.csv))
        res.append(
            ChartBlock(
                c.key,
                c.title,
                c.alt,
                c.spec,
                "" if light else href(page_path, spath),
                c.table_head,
                c.table_rows,
                c.wide,
                href(page_path, f"{base}{c.key}.svg"),
                href(page_path, f"{base}{c.key}.narrow.svg") if small is not None else "",
                (wide.width, wide.height),
                (small.width, small.height) if small is not None else (0, 0),
                i < EAGER_CHARTS,
                c.table_total,
                href(page_path, f"{base}{c.key}.data.csv") if c.csv else "",
            )
        )
    return tuple(res)
