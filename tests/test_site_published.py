"""The published site as a visitor meets it: every board of a site built by ``make site``.

The other site tests build small synthetic stores; these read the real thing, every board
and every release copy of it, so a board added to ``submissions/`` is checked the day it
appears. They run when ``$GMETER_PUBLIC`` names a built site (CI sets it to ``public`` after
``make site``), and are skipped otherwise: a stale ``public/`` of a working copy must not
fail someone else's change. The browser half needs Debian's ``chromium`` (as
``test_site_browser.py``); its screenshots go to ``tests/_artifacts/published/``.

Checked: each release copy weighs at most :data:`RELEASE_BUDGET` (with a margin below the
5 MB the issue allows); ``sitemap.xml`` lists every board; every board page (current and
frozen) has a meta description and no test fixture; every board's BibTeX entry has a url
and the g-index paper is cited with its published authors; no system page draws two entries
as one history line; and in Chromium: a generality board's table fits 1440 px without a
sideways scroll, a table row is above the fold at 390 × 844 on every board, the first click
on the primary column puts the best first and the URL keeps it over a reload, sorting by
generality never puts "∞" first, the filter finds an entry beyond the rows shown, and the
header's links all fit a phone.
"""

from __future__ import annotations

import functools
import html
import http.server
import json
import os
import re
import threading
from collections import defaultdict
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[1]
_ENV = os.environ.get("GMETER_PUBLIC", "").strip()
SITE = (Path(_ENV) if Path(_ENV).is_absolute() else ROOT / _ENV) if _ENV else None
RELEASE_BUDGET = 4_500_000
"""Bytes a release copy may hold (the sum of its files): 5 MB (decimal) less a 10% margin."""
ARTIFACTS = Path(__file__).parent / "_artifacts" / "published"

pytestmark = pytest.mark.skipif(
    SITE is None or not (SITE / ".gmeter-site").is_file(),
    reason="set GMETER_PUBLIC to a site built by `make site` (e.g. GMETER_PUBLIC=public)",
)


def _site() -> Path:
    assert SITE is not None
    return SITE


def _boards() -> list[tuple[str, str]]:
    """(board id, track) of every current board, from the site's own API index."""
    if SITE is None or not (SITE / "api" / "index.json").is_file():
        return []
    index = json.loads((SITE / "api" / "index.json").read_text(encoding="utf-8"))
    return [(b["id"], b["track"]) for b in index["benchmarks"]]


BOARDS = _boards()
IDS = [b for b, _ in BOARDS]
GENERALITY = [b for b, t in BOARDS if t == "generality"]


def _board_pages() -> list[Path]:
    """Every board page of the site: current ones and those of each release copy."""
    site = _site()
    return sorted(site.glob("benchmarks/*/index.html")) + sorted(
        site.glob("releases/*/benchmarks/*/index.html")
    )


def _size(folder: Path) -> int:
    return sum(p.stat().st_size for p in folder.rglob("*") if p.is_file())


# --------------------------------------------------------------------------- files


def test_every_release_copy_weighs_at_most_its_budget() -> None:
    releases = sorted(p for p in (_site() / "releases").iterdir() if p.is_dir())
    assert releases, "the site has releases"
    heavy = {r.name: _size(r) for r in releases if _size(r) > RELEASE_BUDGET}
    assert not heavy, heavy


def test_the_sitemap_lists_every_board() -> None:
    text = (_site() / "sitemap.xml").read_text(encoding="utf-8")
    locs = re.findall(r"<loc>([^<]+)</loc>", text)
    assert locs
    for board in IDS:
        assert any(loc.endswith(f"benchmarks/{board}/") for loc in locs), board


def test_every_board_page_has_a_meta_description_and_no_fixture() -> None:
    pages = _board_pages()
    assert len(pages) >= len(IDS) > 0
    # a module of the test suite as an agent (``tests.aiq_fixtures.q:make_agent``), a fixture
    # folder, or the example agents the tests use; a note may still name a test file
    fixture = re.compile(r"\btests\.\w+[.:]|\w+_fixtures\b|gmeter example agents", re.I)
    for page in pages:
        text = page.read_text(encoding="utf-8")
        m = re.search(r'<meta name="description" content="([^"]*)"', text)
        assert m and len(html.unescape(m.group(1)).strip()) >= 20, page
        found = fixture.search(re.sub(r"<script.*?</script>", "", text, flags=re.S))
        assert not found, (page, found.group(0) if found else "")


def test_every_board_bibtex_entry_has_a_url_and_the_g_index_authors_are_the_papers() -> None:
    site = _site()
    bibs = sorted(site.glob("benchmarks/*/cite.bib")) + sorted(
        site.glob("releases/*/benchmarks/*/cite.bib")
    )
    assert len(bibs) >= len(IDS)
    for bib in bibs:
        entries = re.split(r"\n(?=@)", bib.read_text(encoding="utf-8").strip())
        own = [e for e in entries if e.startswith("@misc")]
        assert own, bib
        for e in entries:
            if e.startswith("@misc") or re.search(r"^\s*doi\s*=", e, re.M):
                url = re.search(r"^\s*url\s*=\s*\{([^}]*)\}", e, re.M)
                assert url and url.group(1).startswith(("/", "https://")), (bib, e[:80])
    # the g-index paper, as every board of the g-index track names it in its own reference
    boards = [b for b, t in BOARDS if t == "gindex"]
    assert boards
    papers = (site / "cite" / "papers.bib").read_text(encoding="utf-8")
    start = papers.index("Towards a Measure of General")
    entry = papers[papers.rindex("@", 0, start) : papers.index("\n}", start)]
    authors = re.search(r"author\s*=\s*\{(.*?)\},\n", entry, re.S)
    assert authors
    got = [a.split(",")[0].strip() for a in " ".join(authors.group(1).split()).split(" and ")]
    for board in boards:
        page = (site / "benchmarks" / board / "index.html").read_text(encoding="utf-8")
        ref = re.search(r"([A-Z]\. [A-Z][a-z]+(?:, [A-Z]\. [A-Z][a-z]+)+)", html.unescape(page))
        assert ref, board
        families = [a.split(". ")[-1] for a in ref.group(1).split(", ")]
        assert got == families, (board, got, families)


def test_the_duckdb_file_of_views_is_a_few_times_the_parquet_at_most() -> None:
    data = _site() / "data"
    parquet = sum(p.stat().st_size for p in data.glob("*.parquet"))
    assert 0 < (data / "gmeter-views.duckdb").stat().st_size <= 3 * parquet


def test_no_system_page_draws_two_entries_as_one_line() -> None:
    specs = sorted(_site().glob("systems/*/history-*.vl.json"))
    for spec in specs:
        xs: dict[str, list[str]] = defaultdict(list)
        for p in json.loads(spec.read_text(encoding="utf-8"))["datasets"]["values"]:
            xs[str(p.get("series", ""))].append(str(p["x"]))
        for name, points in xs.items():
            # an entry has one score per version: two points on one date join two entries
            assert len(points) == len(set(points)), (spec, name)


# --------------------------------------------------------------------------- browser

CHROMIUM = Path("/usr/bin/chromium")
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking"]
browser = pytest.mark.skipif(not CHROMIUM.exists(), reason="needs Debian's chromium")


class _Handler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: object) -> None:
        pass


@pytest.fixture(scope="module")
def server() -> Iterator[str]:
    handler = functools.partial(_Handler, directory=str(_site()))
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}/"
    finally:
        httpd.shutdown()
        httpd.server_close()


@pytest.fixture(scope="module")
def chromium() -> Iterator[Any]:
    sync_api = pytest.importorskip("playwright.sync_api")
    with sync_api.sync_playwright() as p:
        b = p.chromium.launch(executable_path=str(CHROMIUM), args=FLAGS)
        try:
            yield b
        finally:
            b.close()


@pytest.fixture(scope="module")
def desktop(chromium: Any) -> Iterator[Any]:
    ctx = chromium.new_context(viewport={"width": 1440, "height": 900})
    yield ctx
    ctx.close()


@pytest.fixture(scope="module", params=["light", "dark"])
def phone(chromium: Any, request: pytest.FixtureRequest) -> Iterator[Any]:
    ctx = chromium.new_context(viewport={"width": 390, "height": 844}, color_scheme=request.param)
    ctx.scheme = request.param
    yield ctx
    ctx.close()


def _url(server: str, board: str) -> str:
    return f"{server}benchmarks/{board}/index.html"


@browser
@pytest.mark.parametrize("board", GENERALITY)
def test_a_generality_table_fits_a_desktop(desktop: Any, server: str, board: str) -> None:
    page = desktop.new_page()
    page.goto(_url(server, board), wait_until="load")
    inner, outer = page.locator(".board-wrap").first.evaluate("w => [w.scrollWidth, w.clientWidth]")
    width = page.evaluate("document.documentElement.scrollWidth")
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / f"{board}-1440.png"))
    page.close()
    assert inner <= outer + 1 and width <= 1440, (board, inner, outer, width)


@browser
@pytest.mark.parametrize("board", IDS)
def test_a_table_row_is_above_the_fold_on_a_phone(phone: Any, server: str, board: str) -> None:
    page = phone.new_page()
    page.goto(_url(server, board), wait_until="load")
    row = page.locator("table.lb tbody tr").first.bounding_box()
    header = page.locator("header.site").bounding_box()
    # every link of the header is on screen: none cut off or scrolled out of sight
    cut = page.eval_on_selector_all(
        "header.site nav a",
        "as => as.filter(a => { const r = a.getBoundingClientRect(), n = a.parentElement"
        ".getBoundingClientRect(); return getComputedStyle(a).display !== 'none' &&"
        " (r.right > Math.min(innerWidth, n.right) + 1 || r.left < n.left - 1 ||"
        " r.bottom > n.bottom + 1); }).map(a => a.textContent)",
    )
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / f"{board}-390-{phone.scheme}.png"))
    page.close()
    assert row is not None and row["y"] + row["height"] <= 844, (board, row)
    assert header is not None and header["height"] <= 72, header
    assert not cut, cut


def _finite(texts: list[str]) -> list[float]:
    out = []
    for t in texts:
        head = t.split()[0] if t.split() else ""
        try:
            v = float(head.replace("−", "-"))
        except ValueError:
            continue
        if v == v and abs(v) != float("inf") and "step" not in t:
            out.append(v)
    return out


def _column(page: Any, index: int) -> list[str]:
    return page.eval_on_selector_all(
        "#lb tbody tr", f"rs => rs.map(r => (r.cells[{index}] || {{}}).innerText || '')"
    )


@browser
@pytest.mark.parametrize("board", IDS)
def test_the_first_click_puts_the_best_first_and_a_reload_keeps_it(
    desktop: Any, server: str, board: str
) -> None:
    page = desktop.new_page()
    page.goto(_url(server, board), wait_until="load")
    heads = page.locator("#lb thead th")
    index = next(
        (i for i in range(heads.count())
         if heads.nth(i).get_attribute("data-better") in ("higher", "lower")
         and heads.nth(i).get_attribute("data-key") not in ("rank", "group")),
        None,
    )  # fmt: skip
    if index is None or page.locator("#lb tbody tr").count() < 2:
        page.close()
        pytest.skip(f"{board}: no ranked column or a single row")
    head = heads.nth(index)
    key, better = head.get_attribute("data-key"), head.get_attribute("data-better")
    before = page.url
    head.locator("button").click()
    values = _finite(_column(page, index))
    assert values == sorted(values, reverse=better == "higher"), (board, key, values[:8])
    assert page.url != before and f"sort={key}" in page.url, page.url
    page.goto(page.url, wait_until="load")
    want = "descending" if better == "higher" else "ascending"
    assert page.locator("#lb thead th").nth(index).get_attribute("aria-sort") == want
    assert _finite(_column(page, index)) == values
    page.close()


@browser
@pytest.mark.parametrize("board", GENERALITY)
def test_sorting_by_generality_puts_no_infinity_first(
    desktop: Any, server: str, board: str
) -> None:
    page = desktop.new_page()
    page.goto(_url(server, board), wait_until="load")
    heads = page.locator("#lb thead th")
    keys = [heads.nth(i).get_attribute("data-key") for i in range(heads.count())]
    if "generality" not in keys:
        page.close()
        pytest.skip(f"{board} shows no generality column")
    index = keys.index("generality")
    for _ in range(2):  # both directions
        heads.nth(index).locator("button").click()
        first = _column(page, index)[0]
        assert "∞" not in first and "step" not in first, (board, first)
    page.close()


@browser
@pytest.mark.parametrize("board", IDS)
def test_the_filter_finds_an_entry_beyond_the_rows_shown(
    desktop: Any, server: str, board: str
) -> None:
    page = desktop.new_page()
    page.goto(_url(server, board), wait_until="load")
    if page.locator("#lb-rest").count() == 0:
        page.close()
        pytest.skip(f"{board} shows every entry")
    rest = json.loads(page.locator("#lb-rest").text_content() or "[]")
    shown = " ".join(_column(page, 2))
    target = next((e for e in reversed(rest) if (e[1] or e[2]) not in shown), None)
    assert target, board
    name = target[1] or target[2]
    page.fill(".tools input[type=search]", name)
    matches = page.locator(".rest-matches")
    assert matches.is_visible() and name in matches.inner_text(), (board, name)
    assert "0 of" not in page.locator(".tools .count").inner_text()
    assert "q=" in page.url
    page.close()


def _labelled_charts() -> list[str]:
    """Site paths of every chart drawing (wide and phone) whose points carry labels."""
    if SITE is None:
        return []
    out = []
    for spec in sorted(SITE.glob("benchmarks/*/*.vl.json")):
        meta = json.loads(spec.read_text(encoding="utf-8")).get("usermeta") or {}
        if meta.get("narrow_labels"):
            stem = spec.name[: -len(".vl.json")]
            for svg in (f"{stem}.svg", f"{stem}.narrow.svg"):
                out.append((spec.parent / svg).relative_to(SITE).as_posix())
    return out


TEXT_BOXES = """() => [...document.querySelectorAll('text')]
  .filter(t => t.textContent.trim() && t.closest('[opacity="0"]') === null)
  .map(t => { const r = t.getBoundingClientRect();
              return [t.textContent, r.left, r.top, r.right, r.bottom]; })"""


def overlapping_texts(boxes: list[list[Any]]) -> list[tuple[str, str]]:
    """Pairs of drawn texts whose boxes overlap (a pixel's slack for antialiasing)."""
    bad = []
    for i, a in enumerate(boxes):
        for b in boxes[i + 1 :]:
            if (a[1] < b[3] - 1 and b[1] < a[3] - 1 and a[2] < b[4] - 1 and b[2] < a[4] - 1):
                bad.append((a[0], b[0]))
    return bad


@browser
@pytest.mark.parametrize("chart", _labelled_charts())
def test_no_two_texts_of_a_labelled_chart_touch(desktop: Any, server: str, chart: str) -> None:
    page = desktop.new_page()
    page.goto(server + chart, wait_until="load")
    bad = overlapping_texts(page.evaluate(TEXT_BOXES))
    page.close()
    assert not bad, (chart, bad[:5])
