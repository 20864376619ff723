"""End-to-end: the built site in a real headless Chromium (Debian's ``chromium``).

Opens the home page, one leaderboard per track and one system page from a local HTTP server,
asserts that every chart mount holds an ``svg``/``canvas``, that the console shows no error,
that no request leaves the site, and that sorting/filtering work. Screenshots go to
``tests/_artifacts/``.
"""

from __future__ import annotations

import functools
import http.server
import shutil
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from pipeline.site.model import stable_slug

CHROMIUM = Path("/usr/bin/chromium")
ARTIFACTS = Path(__file__).parent / "_artifacts"

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(
        not CHROMIUM.exists(),
        reason="needs Debian's chromium at /usr/bin/chromium (apt-get install chromium)",
    ),
]


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: object) -> None:
        pass


@pytest.fixture(scope="module")
def server(built_site: Path) -> Iterator[str]:
    handler = functools.partial(_QuietHandler, directory=str(built_site))
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}/"
    finally:
        httpd.shutdown()
        httpd.server_close()


@pytest.fixture(scope="module")
def browser() -> Iterator[object]:
    sync_api = pytest.importorskip("playwright.sync_api")
    with sync_api.sync_playwright() as p:
        b = p.chromium.launch(
            executable_path=str(CHROMIUM),
            args=["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking"],
        )
        # one context for all pages: its HTTP and code caches parse the Vega bundle once
        ctx = b.new_context(viewport={"width": 1280, "height": 900})
        try:
            yield ctx
        finally:
            ctx.close()
            b.close()


PAGES = [
    ("home", "index.html"),
    ("gindex", "benchmarks/gindex-demo/index.html"),
    ("generality", "benchmarks/generality-demo/index.html"),
    ("aiq", "benchmarks/aiq-demo/index.html"),
    ("similarity", "benchmarks/similarity-demo/index.html"),
    ("system", f"systems/{stable_slug('Atlas')}/index.html"),
]


@pytest.mark.parametrize(("name", "path"), PAGES, ids=[n for n, _ in PAGES])
def test_page_renders_every_chart_without_errors(
    browser, server: str, name: str, path: str
) -> None:
    page = browser.new_page()
    errors: list[str] = []
    outside: list[str] = []
    dialogs: list[str] = []

    def on_dialog(d: object) -> None:  # an executed alert(1) would open one
        dialogs.append(d.message)  # type: ignore[attr-defined]
        d.dismiss()  # type: ignore[attr-defined]

    page.on("dialog", on_dialog)
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.on("request", lambda r: outside.append(r.url) if not r.url.startswith(server) else None)
    page.goto(server + path, wait_until="load")
    mounts = page.locator(".vl[data-spec]")
    count = mounts.count()
    if count:
        page.wait_for_function(
            "() => [...document.querySelectorAll('.vl[data-spec]')]"
            ".every(el => el.querySelector('svg, canvas') || el.classList.contains('failed'))",
            timeout=20_000,
        )
    for i in range(count):
        mount = mounts.nth(i)
        assert mount.locator("svg, canvas").count() >= 1, f"chart {i} on {path} did not render"
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / f"{name}.png"), full_page=True)
    page.close()
    assert not errors, errors
    assert not outside, outside
    assert not dialogs, dialogs
    if name != "home":
        assert count >= 1


def test_sorting_and_filtering(browser, server: str) -> None:
    page = browser.new_page()
    page.route("**/assets/vega.js", lambda route: route.abort())  # charts are not needed here
    page.goto(server + "benchmarks/gindex-demo/index.html", wait_until="load")
    tools = page.locator(".tools")
    assert tools.is_visible()
    rows = page.locator("#lb tbody tr")
    total = rows.count()
    page.fill(".tools input[type=search]", "atlas")
    visible = [r for r in range(total) if rows.nth(r).is_visible()]
    assert len(visible) == 1
    page.fill(".tools input[type=search]", "")
    # sort by the score column twice: ascending, then descending
    page.locator("#lb thead th").nth(3).locator("button").click()
    first = page.locator("#lb tbody tr").first.locator("td").nth(3).inner_text()
    page.locator("#lb thead th").nth(3).locator("button").click()
    top = page.locator("#lb tbody tr").first.locator("td").nth(3).inner_text()
    assert float(first.split()[0]) <= float(top.split()[0])
    page.close()


def test_hostile_name_stays_text(browser, server: str) -> None:
    page = browser.new_page()
    page.route("**/assets/vega.js", lambda route: route.abort())
    page.goto(server + "benchmarks/gindex-demo/index.html", wait_until="load")
    assert page.get_by_text("</script><script>alert(1)</script>").first.is_visible()
    page.close()


def test_pages_work_without_javascript(browser, server: str) -> None:
    ctx = browser.browser.new_context(java_script_enabled=False)
    page = ctx.new_page()
    page.goto(server + "benchmarks/gindex-demo/index.html", wait_until="load")
    assert page.locator("#lb tbody tr").count() >= 3
    assert not page.locator(".tools").is_visible()
    ctx.close()


@pytest.fixture(scope="module")
def built_site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    from site_fixtures import make_store

    from pipeline.site.build import build_site

    root = tmp_path_factory.mktemp("browser")
    db = make_store(root / "store.duckdb")
    out = root / "public"
    build_site(db, out)
    yield out
    shutil.rmtree(root, ignore_errors=True)
