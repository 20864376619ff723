"""End-to-end: the built site in a real headless Chromium (Debian's ``chromium``).

Serves a site built from the synthetic store (``site_fixtures``) over HTTP and checks what
only a browser shows: every chart is visible at first paint as a build-time SVG with no
"undefined"/"NaN" text, the interactive version loads on request, no page is wider than a
390 px phone, a board transfers at most 400 KB before interaction, axe-core finds no serious
or critical violation, the search box finds an agent, the dark theme is dark, the 404 page
links to pages that exist, nothing is requested from outside the site, and sorting/filtering
work. Screenshots at 1440×900 and 390×844 go to ``tests/_artifacts/``.

axe-core is vendored by ``make browser`` (npm) into ``tests/_vendor/``; the accessibility
test is skipped without it (never fetched at run time).
"""

from __future__ import annotations

import functools
import http.server
import shutil
import threading
import urllib.parse
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from pipeline.site.model import stable_slug

CHROMIUM = Path("/usr/bin/chromium")
ARTIFACTS = Path(__file__).parent / "_artifacts"
AXE = Path(__file__).parent / "_vendor" / "node_modules" / "axe-core" / "axe.min.js"
FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--no-first-run",
]
BUDGET = 400_000
"""Bytes a board page may transfer before any interaction (charts visible)."""

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(
        not CHROMIUM.exists(),
        reason="needs Debian's chromium at /usr/bin/chromium (apt-get install chromium)",
    ),
]


class _Handler(http.server.SimpleHTTPRequestHandler):
    """Static files, with the site's 404.html for a missing address (as GitHub Pages does)."""

    def log_message(self, format: str, *args: object) -> None:
        pass

    def send_error(self, code: int, message: str | None = None, explain: str | None = None) -> None:
        page = Path(self.directory) / "404.html"
        if code == 404 and page.is_file():
            body = page.read_bytes()
            self.send_response(404)
            self.send_header("Content-Type", "text/html; charset=utf-8")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)
            return
        super().send_error(code, message, explain)


@pytest.fixture(scope="module")
def built_site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    from site_fixtures import make_store

    from pipeline.site.build import build_site

    root = tmp_path_factory.mktemp("browser")
    # big: one board longer than a page, so the filter must reach entries it does not show
    db = make_store(root / "store.duckdb", big=60)
    out = root / "public"
    build_site(db, out)
    yield out
    shutil.rmtree(root, ignore_errors=True)


@pytest.fixture(scope="module")
def server(built_site: Path) -> Iterator[str]:
    handler = functools.partial(_Handler, directory=str(built_site))
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
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
def browser(chromium: Any) -> Iterator[Any]:
    # one context for the desktop pages: its HTTP cache serves the shared assets once
    ctx = chromium.new_context(viewport={"width": 1440, "height": 900})
    try:
        yield ctx
    finally:
        ctx.close()


BOARDS = [
    ("gindex", "benchmarks/gindex-demo/index.html"),
    ("generality", "benchmarks/generality-demo/index.html"),
    ("aiq", "benchmarks/aiq-demo/index.html"),
    ("similarity", "benchmarks/similarity-demo/index.html"),
]
PAGES = [
    ("home", "index.html"),
    *BOARDS,
    ("system", f"systems/{stable_slug('Atlas')}/index.html"),
    ("agent", f"agents/{stable_slug('agent-1')}/index.html"),
    ("systems", "systems/index.html"),
    ("release", "releases/2024.1/benchmarks/gindex-demo/index.html"),
    ("about", "about/index.html"),
    ("submit", "submit/index.html"),
]


def _scroll_through(page: Any) -> None:
    """Scroll to the bottom and back so that lazily loaded chart images load."""
    page.evaluate(
        "async () => { for (let y = 0; y < document.body.scrollHeight; y += 600) {"
        " window.scrollTo(0, y); await new Promise(r => setTimeout(r, 20)); }"
        " window.scrollTo(0, 0); }"
    )
    page.wait_for_function(
        "() => [...document.querySelectorAll('.vl img')].every(i => i.complete)", timeout=20_000
    )


@pytest.mark.parametrize(("name", "path"), PAGES, ids=[n for n, _ in PAGES])
def test_page_shows_every_chart_without_errors(browser, server: str, name: str, path: str) -> None:
    page = browser.new_page()
    errors: list[str] = []
    outside: list[str] = []
    dialogs: list[str] = []

    def on_dialog(d: Any) -> None:  # an executed alert(1) would open one
        dialogs.append(d.message)
        d.dismiss()

    page.on("dialog", on_dialog)
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.on("request", lambda r: outside.append(r.url) if not r.url.startswith(server) else None)
    page.goto(server + path, wait_until="load")
    _scroll_through(page)
    images = page.locator(".vl img")
    n_images = images.count()
    for i in range(n_images):
        width = images.nth(i).evaluate("i => i.naturalWidth")
        assert width > 100, f"chart {i} on {path} has no drawn SVG"
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / f"{name}-1440.png"), full_page=True)
    page.close()
    assert not errors, errors
    assert not outside, outside
    assert not dialogs, dialogs
    if name in dict(BOARDS):
        assert n_images >= 1


@pytest.mark.parametrize(("name", "path"), PAGES, ids=[n for n, _ in PAGES])
def test_no_page_is_wider_than_a_phone(chromium, server: str, name: str, path: str) -> None:
    ctx = chromium.new_context(viewport={"width": 390, "height": 844})
    page = ctx.new_page()
    page.goto(server + path, wait_until="load")
    _scroll_through(page)
    width = page.evaluate("document.documentElement.scrollWidth")
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / f"{name}-390.png"), full_page=True)
    wide = page.evaluate(
        "() => [...document.querySelectorAll('body *')].filter(e => {"
        " const r = e.getBoundingClientRect(); return r.right > innerWidth + 1 &&"
        " !e.closest('.table-wrap') && getComputedStyle(e).position !== 'fixed'; })"
        ".slice(0, 5).map(e => e.tagName + '.' + e.className)"
    )
    ctx.close()
    assert width <= 390, (path, width, wide)


@pytest.mark.parametrize(("name", "path"), BOARDS, ids=[n for n, _ in BOARDS])
def test_charts_never_print_undefined_or_nan(browser, server: str, name: str, path: str) -> None:
    from pipeline.site.svgrender import bad_text

    page = browser.new_page()
    page.goto(server + path, wait_until="load")
    srcs = page.eval_on_selector_all(".vl img", "imgs => imgs.map(i => i.src)")
    srcs += page.eval_on_selector_all(
        ".vl source", "ss => ss.map(s => new URL(s.srcset, location.href).href)"
    )
    assert srcs
    for src in srcs:
        with urllib.request.urlopen(src) as r:  # the local test server
            svg = r.read().decode("utf-8")
        assert not bad_text(svg), (src, bad_text(svg))
    # the interactive version of every chart, drawn by vega in the page, reads the same
    buttons = page.locator("button.interact")
    n = buttons.count()
    assert n >= 1
    for i in range(n):
        buttons.nth(i).click()
    page.wait_for_function(
        f"() => document.querySelectorAll('.vl.live svg').length >= {n}", timeout=60_000
    )
    for svg in page.eval_on_selector_all(".vl.live svg", "ss => ss.map(s => s.outerHTML)"):
        assert "undefined" not in svg and "NaN" not in svg, svg[:300]
    page.close()


@pytest.mark.parametrize(("name", "path"), BOARDS, ids=[n for n, _ in BOARDS])
def test_board_weight_before_interaction(chromium, server: str, name: str, path: str) -> None:
    ctx = chromium.new_context(viewport={"width": 390, "height": 844})
    page = ctx.new_page()
    sizes: dict[str, int] = {}

    def on_response(resp: Any) -> None:
        try:
            sizes[resp.url] = len(resp.body())
        except Exception:  # redirects and aborted requests carry no body
            sizes.setdefault(resp.url, 0)

    page.on("response", on_response)
    page.goto(server + path, wait_until="networkidle")
    assert page.locator(".vl img").first.evaluate("i => i.complete && i.naturalWidth > 0")
    total = sum(sizes.values())
    ctx.close()
    assert not any(u.endswith("vega.js") for u in sizes), "vega.js must load only on request"
    assert total <= BUDGET, (total, sorted(sizes.items(), key=lambda kv: -kv[1])[:5])


@pytest.mark.skipif(not AXE.is_file(), reason="axe-core not vendored (run `make browser`)")
@pytest.mark.parametrize(
    ("name", "path"),
    [("home", "index.html"), *BOARDS, PAGES[5], PAGES[6]],
    ids=["home", *(n for n, _ in BOARDS), "system", "agent"],
)
@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_axe_finds_no_serious_violation(
    chromium, server: str, name: str, path: str, scheme: str
) -> None:
    # bypass_csp: the page's CSP (rightly) refuses the injected axe script
    ctx = chromium.new_context(
        viewport={"width": 1440, "height": 900}, bypass_csp=True, color_scheme=scheme
    )
    page = ctx.new_page()
    page.goto(server + path, wait_until="load")
    page.add_script_tag(path=str(AXE))
    result = page.evaluate("async () => await axe.run(document, {resultTypes: ['violations']})")
    ctx.close()
    bad = [
        (v["id"], v["impact"], [n["target"] for n in v["nodes"][:3]])
        for v in result["violations"]
        if v["impact"] in ("serious", "critical")
    ]
    assert not bad, bad


def test_search_finds_an_agent(browser, server: str) -> None:
    page = browser.new_page()
    page.goto(server + "index.html", wait_until="load")
    page.fill("#site-search", "agent-1")
    first = page.locator("#search-results a").first
    first.wait_for(timeout=20_000)
    first.click()
    page.wait_for_load_state("load")
    assert page.locator("h1").first.inner_text().strip() == "agent-1"
    # Enter goes to the first result too
    page.goto(server + "index.html", wait_until="load")
    page.fill("#site-search", "Atlas")
    page.locator("#search-results a").first.wait_for(timeout=20_000)
    page.press("#site-search", "Enter")
    page.wait_for_load_state("load")
    assert "Atlas" in page.locator("h1").first.inner_text()
    page.close()


def test_dark_mode_is_dark(chromium, server: str) -> None:
    ctx = chromium.new_context(viewport={"width": 1440, "height": 900}, color_scheme="dark")
    page = ctx.new_page()
    page.goto(server + "benchmarks/gindex-demo/index.html", wait_until="load")
    rgb = page.evaluate("getComputedStyle(document.body).backgroundColor")
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / "gindex-dark-1440.png"))
    ctx.close()
    r, g, b = (int(x) for x in rgb[rgb.index("(") + 1 : rgb.index(")")].split(",")[:3])
    assert 0.2126 * r + 0.7152 * g + 0.0722 * b < 60, rgb


def test_404_for_a_nested_address_links_to_pages_that_exist(browser, server: str) -> None:
    page = browser.new_page()
    resp = page.goto(server + "benchmarks/no/such/page/", wait_until="load")
    assert resp is not None and resp.status == 404
    links = page.eval_on_selector_all("a[href]", "as => as.map(a => a.href)")
    # the skip link ("#main") stays on this page; every other link leaves it
    links = [u for u in links if urllib.parse.urldefrag(u)[0] != page.url.split("#")[0]]
    page.close()
    assert len(links) >= 3
    for link in links:
        with urllib.request.urlopen(link) as r:
            assert r.status == 200, link


def test_frozen_page_links_to_the_same_board(browser, server: str) -> None:
    page = browser.new_page()
    page.goto(server + "releases/2024.1/benchmarks/gindex-demo/index.html", wait_until="load")
    page.locator(".banner a").click()
    page.wait_for_load_state("load")
    assert page.url.rstrip("/").endswith("benchmarks/gindex-demo")
    page.close()


def test_sorting_and_filtering(browser, server: str) -> None:
    page = browser.new_page()
    page.goto(server + "benchmarks/gindex-demo/index.html", wait_until="load")
    tools = page.locator(".tools")
    assert tools.is_visible()
    rows = page.locator("#lb tbody tr")
    total = rows.count()
    page.fill(".tools input[type=search]", "atlas")
    visible = [r for r in range(total) if rows.nth(r).is_visible()]
    assert len(visible) == 1
    page.fill(".tools input[type=search]", "")
    # sort by the score column twice: best first, then the other way round
    head = page.locator("#lb thead th").nth(3)
    higher = head.get_attribute("data-better") == "higher"
    head.locator("button").click()
    first = page.locator("#lb tbody tr").first.locator("td").nth(3).inner_text()
    head.locator("button").click()
    top = page.locator("#lb tbody tr").first.locator("td").nth(3).inner_text()
    a, b = float(first.split()[0]), float(top.split()[0])
    assert (a >= b) if higher else (a <= b), (first, top)
    page.close()


def test_hostile_name_stays_text(browser, server: str) -> None:
    page = browser.new_page()
    page.goto(server + "benchmarks/gindex-demo/index.html", wait_until="load")
    assert page.get_by_text("</script><script>alert(1)</script>").first.is_visible()
    page.close()


def test_pages_work_without_javascript(chromium, server: str) -> None:
    ctx = chromium.new_context(java_script_enabled=False)
    page = ctx.new_page()
    page.goto(server + "benchmarks/gindex-demo/index.html", wait_until="load")
    assert page.locator("#lb tbody tr").count() >= 3
    assert not page.locator(".tools").is_visible()
    assert page.locator(".vl img").first.evaluate("i => i.complete && i.naturalWidth > 0")
    ctx.close()


def test_home_says_how_many_are_tied_for_first(browser, server: str) -> None:
    page = browser.new_page()
    page.goto(server + "index.html", wait_until="load")
    text = page.locator("main").inner_text()
    page.close()
    import re

    tied = re.findall(r"(\d+) tied for first", text)
    assert tied and all(int(k) >= 2 for k in tied), text[:500]


@pytest.mark.parametrize(("name", "path"), BOARDS, ids=[n for n, _ in BOARDS])
def test_board_links_citation_and_submit(browser, server: str, name: str, path: str) -> None:
    page = browser.new_page()
    page.goto(server + path, wait_until="load")
    links = page.eval_on_selector_all("a[href]", "as => as.map(a => a.href)")
    page.close()
    cite = [u for u in links if u.endswith(".bib") or u.endswith("CITATION.cff")]
    submit = [u for u in links if u.rstrip("/").endswith("/submit")]
    assert cite and submit, (cite, submit)
    for u in cite[:3] + submit[:1]:
        with urllib.request.urlopen(u) as r:
            assert r.status == 200, u


def test_similarity_intervals_lie_in_range_and_contain_their_point(browser, server: str) -> None:
    import re

    page = browser.new_page()
    page.goto(server + "benchmarks/similarity-demo/index.html", wait_until="load")
    # the similarity column of every pairs table, as a visitor reads it
    cells = page.eval_on_selector_all(
        "table.lb",
        "ts => ts.flatMap(t => { const h = [...t.tHead.rows[0].cells]"
        ".findIndex(c => /^similarity/.test(c.innerText.trim()));"
        " return [...t.tBodies[0].rows].map(r => r.cells[h].innerText); })",
    )
    text = page.inner_text("main")
    page.close()
    num = r"-?\d+(?:\.\d+)?(?:e-?\d+)?"
    # anywhere on a similarity board, "x [a, b]" is a similarity: other intervals (the suite's
    # diversity, in [0, 2]) are written "(CI a to b)" so no reader takes them for one
    for m in re.finditer(rf"({num})\s*\[({num}), ({num})\]", text):
        v, lo, hi = map(float, m.groups())
        assert -1 <= lo <= v <= hi <= 1, m.group(0)
    seen = 0
    for c in cells:
        m = re.fullmatch(rf"({num})\s*\[({num}), ({num})\]", " ".join(c.split()))
        if m:
            v, lo, hi = map(float, m.groups())
            assert -1 <= lo <= v <= hi <= 1, c
            seen += 1
    assert seen >= 3, cells


def test_former_system_address_redirects(browser, server: str) -> None:
    page = browser.new_page()
    for prefix in ("", "releases/2024.1/"):
        page.goto(server + prefix + "systems/atlas/", wait_until="load")
        # a light release copy sends its former address to the current page
        page.wait_for_url(f"**/systems/{stable_slug('Atlas')}/", timeout=10_000)
        assert "/releases/" not in page.url
        page.wait_for_load_state("load")
        assert "Atlas" in page.locator("h1").first.inner_text()
    page.close()


def test_an_old_release_address_of_a_system_or_agent_reaches_the_current_page(
    browser, server: str
) -> None:
    page = browser.new_page()
    for kind, name in (("systems", "Atlas"), ("agents", "agent-1")):
        slug = stable_slug(name)
        page.goto(f"{server}releases/2024.1/{kind}/{slug}/", wait_until="load")
        page.wait_for_url(f"**/{kind}/{slug}/", timeout=10_000)
        assert "/releases/" not in page.url
        page.wait_for_load_state("load")
        assert name in page.locator("h1").first.inner_text()
    page.close()


ALL_BOARDS = [*BOARDS, ("large", "benchmarks/gindex-large/index.html")]


@pytest.mark.parametrize(("name", "path"), ALL_BOARDS, ids=[n for n, _ in ALL_BOARDS])
def test_board_table_comes_first_and_fits_a_desktop(
    browser, server: str, name: str, path: str
) -> None:
    page = browser.new_page()
    page.goto(server + path, wait_until="load")
    for wrap in page.locator(".board-wrap").all()[:1]:
        inner, outer = wrap.evaluate("w => [w.scrollWidth, w.clientWidth]")
        assert inner <= outer + 1, (path, inner, outer)
    table = page.locator("table.lb").first.bounding_box()
    charts = [c.bounding_box() for c in page.locator("figure.chart").all()]
    page.close()
    assert table is not None
    # nothing drawn beside the table: every chart starts below its top
    assert all(c is None or c["y"] > table["y"] for c in charts), (table, charts[:2])


@pytest.mark.parametrize("scheme", ["light", "dark"])
@pytest.mark.parametrize(("name", "path"), ALL_BOARDS, ids=[n for n, _ in ALL_BOARDS])
def test_a_table_row_is_above_the_fold_on_a_phone(
    chromium, server: str, name: str, path: str, scheme: str
) -> None:
    ctx = chromium.new_context(viewport={"width": 390, "height": 844}, color_scheme=scheme)
    page = ctx.new_page()
    page.goto(server + path, wait_until="load")
    row = page.locator("table.lb tbody tr").first.bounding_box()
    tied = page.locator(".board-head .lead-meta").bounding_box()
    header = page.locator("header.site").bounding_box()
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / f"{name}-fold-390-{scheme}.png"))
    ctx.close()
    assert row is not None and row["y"] + row["height"] <= 844, (path, row)
    assert tied is not None and tied["y"] < 844
    assert header is not None and header["height"] <= 60, header


def _column(page: Any, table: str, key: str) -> tuple[int, Any]:
    heads = page.locator(f"{table} thead th")
    for i in range(heads.count()):
        if heads.nth(i).get_attribute("data-key") == key:
            return i, heads.nth(i)
    raise AssertionError(key)


def _numbers(page: Any, table: str, index: int) -> list[str]:
    return page.eval_on_selector_all(
        f"{table} tbody tr", f"rs => rs.map(r => r.cells[{index}].innerText.trim())"
    )


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


@pytest.mark.parametrize(("name", "path"), BOARDS[:3], ids=[n for n, _ in BOARDS[:3]])
def test_first_click_puts_the_best_first_and_the_url_keeps_the_sort(
    browser, server: str, name: str, path: str
) -> None:
    page = browser.new_page()
    page.goto(server + path, wait_until="load")
    heads = page.locator("#lb thead th")
    primary = heads.nth(3)
    key = primary.get_attribute("data-key")
    better = primary.get_attribute("data-better")
    primary.locator("button").click()
    values = _finite(_numbers(page, "#lb", 3))
    assert len(values) >= 2
    assert values == sorted(values, reverse=better == "higher"), (better, values)
    assert f"sort={key}" in page.url
    url = page.url
    page.goto(url, wait_until="load")
    assert page.locator("#lb thead th").nth(3).get_attribute("aria-sort") == (
        "descending" if better == "higher" else "ascending"
    )
    assert _finite(_numbers(page, "#lb", 3)) == values
    page.close()


def test_infinite_and_step_values_sort_last_both_ways_with_a_note(browser, server: str) -> None:
    page = browser.new_page()
    page.goto(server + "benchmarks/generality-demo/index.html", wait_until="load")
    texts = " ".join(_numbers(page, "#lb", 3) + _numbers(page, "#lb", 4))
    assert "∞" in texts or "step" in texts, "the synthetic store should hold an ∞/step value"
    heads = page.locator("#lb thead th")
    checked = 0
    for i in range(3, heads.count()):
        if heads.nth(i).get_attribute("data-type") != "num":
            continue
        col = _numbers(page, "#lb", i)
        if not any("∞" in t or "step" in t for t in col):
            continue
        for _ in range(2):  # both directions
            heads.nth(i).locator("button").click()
            col = _numbers(page, "#lb", i)
            bad = [k for k, t in enumerate(col) if "∞" in t or "step" in t]
            finite = [k for k, t in enumerate(col) if _finite([t])]
            assert bad and finite and min(bad) > max(finite), col
            assert page.locator(".sort-note").first.is_visible()
            checked += 1
    page.close()
    assert checked >= 2


def test_filter_finds_an_entry_beyond_the_rows_shown(browser, server: str) -> None:
    import json

    page = browser.new_page()
    page.goto(server + "benchmarks/gindex-large/index.html", wait_until="load")
    rest = json.loads(page.locator("#lb-rest").text_content() or "[]")
    assert rest, "the large board shows only its first rows"
    shown = " ".join(_numbers(page, "#lb", 2))
    target = next(e for e in rest if (e[1] or e[2]) not in shown)
    page.fill(".tools input[type=search]", target[1] or target[2])
    matches = page.locator(".rest-matches")
    assert matches.is_visible()
    assert (target[1] or target[2]) in matches.inner_text()
    assert "0 of" not in page.locator(".tools .count").inner_text()
    assert "q=" in page.url
    link = matches.locator("a").first.get_attribute("href")
    page.goto(page.url, wait_until="load")  # the filter comes back from the URL
    assert page.locator(".tools input[type=search]").input_value() == (target[1] or target[2])
    page.close()
    with urllib.request.urlopen(
        urllib.parse.urljoin(server + "benchmarks/gindex-large/", link)
    ) as r:
        assert r.status == 200


@pytest.mark.parametrize("width", [1440, 390])
def test_compare_state_is_in_the_url_and_fits_a_phone(chromium, server: str, width: int) -> None:
    ctx = chromium.new_context(viewport={"width": width, "height": 844})
    page = ctx.new_page()
    page.goto(server + "benchmarks/gindex-demo/compare/index.html", wait_until="load")
    options = page.eval_on_selector_all("select[name=b] option", "os => os.map(o => o.value)")
    page.select_option("select[name=b]", options[-1])
    assert f"b={options[-1]}" in page.url
    page.goto(page.url, wait_until="load")
    assert page.locator("select[name=b]").input_value() == options[-1]
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / f"compare-{width}.png"), full_page=True)
    width_now = page.evaluate("document.documentElement.scrollWidth")
    ctx.close()
    assert width_now <= width
