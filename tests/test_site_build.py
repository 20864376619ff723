"""The built site, checked structurally: rows, links, chart mounts, escaping, data, atomicity."""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import os
import shutil
import xml.etree.ElementTree as ET
from collections.abc import Iterator
from html.parser import HTMLParser
from pathlib import Path

import pytest
from site_fixtures import HOSTILE, NOW, make_store
from typer.testing import CliRunner

from pipeline.errors import BuildError, StoreError
from pipeline.site.build import MARKER, build_site
from pipeline.site.linkcheck import check_site
from pipeline.site.model import stable_slug


class Doc(HTMLParser):
    """A small DOM-less reader: table rows (cells split on <td>/<th>), links, ids, mounts."""

    def __init__(self, text: str) -> None:
        super().__init__(convert_charrefs=True)
        self.rows: dict[str, list[list[str]]] = {}
        self.links: list[str] = []
        self.srcs: list[str] = []
        self.ids: set[str] = set()
        self.mounts: list[dict[str, str]] = []
        self.json: dict[str, str] = {}
        self.metas: list[dict[str, str]] = []
        self._table: list[str] = []
        self._tbody = False
        self._row: list[str] | None = None
        self._script: str | None = None
        self.feed(text)

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = {k: v or "" for k, v in attrs}
        if "id" in a:
            self.ids.add(a["id"])
        if tag == "a" and "href" in a:
            self.links.append(a["href"])
        if "src" in a:
            self.srcs.append(a["src"])
        if tag == "meta":
            self.metas.append(a)
        if tag == "table":
            self._table.append(a.get("id", ""))
        if tag == "tbody":
            self._tbody = True
        if tag == "tr" and self._tbody:
            self._row = []
            self.rows.setdefault(self._table[-1], []).append(self._row)
        if tag in ("td", "th") and self._row is not None:
            self._row.append("")
        if "data-spec-href" in a:
            self.mounts.append(a)
        if tag == "script" and a.get("type") == "application/json":
            self._script = a["id"]
            self.json[self._script] = ""

    def handle_endtag(self, tag: str) -> None:
        if tag == "tbody":
            self._tbody = False
            self._row = None
        if tag == "table" and self._table:
            self._table.pop()
        if tag == "script":
            self._script = None

    def handle_data(self, data: str) -> None:
        if self._script is not None:
            self.json[self._script] += data
        elif self._row:
            self._row[-1] += data


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    root = tmp_path_factory.mktemp("site")
    db = make_store(root / "store.duckdb")
    build_site(db, root / "public")
    yield root / "public"
    shutil.rmtree(root, ignore_errors=True)


def doc(site: Path, rel: str) -> Doc:
    return Doc((site / rel).read_text(encoding="utf-8"))


def _verified(rows: list[list[str]]) -> list[list[str]]:
    return [r for r in rows if "reported" not in " ".join(r)]


def test_leaderboard_rows_are_in_rank_order(site: Path) -> None:
    rows = doc(site, "benchmarks/gindex-demo/index.html").rows["lb"]
    assert len(rows) == 5
    ver = _verified(rows)
    ranks = [int(r[0]) for r in ver if r[0].strip().isdigit()]
    assert ranks == sorted(ranks) and ranks[0] == 1
    # the reported bundle (b0003, which ties b0004's 25.0) is listed after every verified
    # entry, unranked: ranks are over the verified entries only
    assert ranks == [1, 2, 3, 4]
    assert rows[: len(ver)] == ver and all(r[0] == "—" for r in rows[len(ver):])
    groups = [r[1] for r in ver]
    assert groups == ["1", "2", "3", "4"]  # no intervals: groups equal ranks
    # every system cell links to its system page
    assert all("Example Lab" in r[2] or r[2] for r in rows)


def test_nan_entry_is_unranked_and_last(site: Path) -> None:
    current = _verified(doc(site, "benchmarks/aiq-demo/index.html").rows["lb"])
    assert current[-1][0] == "—" and current[-1][3].startswith("NaN")
    assert [r[0] for r in current[:-1]] == sorted((r[0] for r in current[:-1]), key=int)


def test_intervals_give_tie_groups(site: Path) -> None:
    rows = doc(site, "benchmarks/aiq-demo/index.html").rows["lb"]
    pairs = [(r[1], r[0]) for r in rows if r[0] != "—"]
    assert pairs and all(int(g) <= int(r) for g, r in pairs)


def test_hostile_system_name_stays_text(site: Path) -> None:
    for rel in (
        "benchmarks/gindex-demo/index.html",
        "index.html",
        "changelog/index.html",
        f"systems/{stable_slug(HOSTILE)}/index.html",
    ):
        text = (site / rel).read_text(encoding="utf-8")
        assert "<script>alert(1)" not in text, rel
    page = (site / "benchmarks/gindex-demo/index.html").read_text(encoding="utf-8")
    assert "&lt;/script&gt;&lt;script&gt;alert(1)&lt;/script&gt;" in page
    compare = (site / "benchmarks/gindex-demo/compare/index.html").read_text(encoding="utf-8")
    assert "\\u003c/script\\u003e\\u003cscript\\u003ealert(1)" in compare  # the JSON island
    d = doc(site, "benchmarks/gindex-demo/index.html")
    assert any(HOSTILE in r[2] for r in d.rows["lb"])
    sysdoc = doc(site, f"systems/{stable_slug(HOSTILE)}/index.html")
    assert not any(link.startswith("javascript:") for link in sysdoc.links)
    assert list(site.glob("files/*/notes.html~*.txt")) and not list(site.glob("files/*/notes.html"))
    feed = (site / "feed.xml").read_text(encoding="utf-8")
    assert "<script>" not in feed


def test_every_chart_mount_has_a_spec_and_drawn_svgs(site: Path) -> None:
    from pipeline.site.svgrender import bad_text

    for rel in (
        "benchmarks/gindex-demo/index.html",
        "benchmarks/generality-demo/index.html",
        "benchmarks/aiq-demo/index.html",
        "benchmarks/similarity-demo/index.html",
        f"systems/{stable_slug('Atlas')}/index.html",
    ):
        d = doc(site, rel)
        assert d.mounts, rel
        base = (site / rel).parent
        for mount in d.mounts:
            href = mount["data-spec-href"]
            spec = json.loads((base / href).read_text())
            assert spec["$schema"].startswith("https://vega.github.io/schema/vega-lite/")
            assert spec["description"] and spec["datasets"]
            assert href in d.links
            key = href.removesuffix(".vl.json")
            for svg in (f"{key}.svg", f"{key}.narrow.svg"):
                text = (base / svg).read_text()
                assert text.startswith("<svg") and not bad_text(text), (rel, svg)
            assert f"{key}.svg" in d.srcs  # drawn at build time: visible without JavaScript
            text = json.dumps(spec)
            assert '"tooltip"' in text and '"title"' in text
        assert "assets/vega.js" not in (site / rel).read_text()  # loaded only on request


def test_track_chart_names_are_drawn(site: Path) -> None:
    gen = doc(site, "benchmarks/generality-demo/index.html")
    keys = {m["data-spec-href"] for m in gen.mounts}
    assert {
        "t-generality-acc.vl.json",
        "t-generality-capability-spread.vl.json",
        "t-generality-aggregated-acc.vl.json",
        "t-generality-evolution.vl.json",
    } <= keys
    assert "t-mystery.vl.json" not in keys  # undrawable data is skipped, not fatal
    sim = doc(site, "benchmarks/similarity-demo/index.html")
    assert {"t-similarity-heatmap.vl.json", "t-similarity-map.vl.json"} <= {
        m["data-spec-href"] for m in sim.mounts
    }


def test_csp_and_no_external_resources(site: Path) -> None:
    for page in site.rglob("*.html"):
        d = Doc(page.read_text(encoding="utf-8"))
        csp = [m for m in d.metas if m.get("http-equiv") == "Content-Security-Policy"]
        assert csp and "script-src 'self'" in csp[0]["content"], page
        assert "default-src 'none'" in csp[0]["content"]
        assert not [s for s in d.srcs if "://" in s or s.startswith("//")], page


def test_links_are_all_internal_and_present(site: Path) -> None:
    assert check_site(site) == []


def test_releases_are_permalinks_and_root_is_latest(site: Path) -> None:
    for name in ("2024.1", "2024.2"):
        assert (site / "releases" / name / "index.html").exists()
        assert (site / "releases" / name / "changelog" / "index.html").exists()
    rel = (site / "releases/2024.1/index.html").read_text(encoding="utf-8")
    assert "frozen permalink" in rel
    home = (site / "index.html").read_text(encoding="utf-8")
    assert "frozen permalink" not in home and "current" in home
    listing = doc(site, "releases/index.html")
    assert "2024.2/" in listing.links and "2024.1/" in listing.links


def test_changelog_says_what_and_why(site: Path) -> None:
    text = (site / "releases/2024.2/changelog/index.html").read_text(encoding="utf-8")
    assert "New entries" in text and "Changed scores" in text and "Rank moves" in text
    assert "new bundle version" in text
    assert "code version 0.1.0 → 0.2.0" in text
    assert "recomputed" in text or "populational" in text


def test_stale_markers(site: Path) -> None:
    aiq = (site / "benchmarks/aiq-demo/index.html").read_text(encoding="utf-8")
    assert "stale until the next" in aiq and aiq.count('class="stale"') >= 3
    gen = doc(site, "benchmarks/generality-demo/index.html")
    stale_rows = [r for r in gen.rows["lb"] if "stale" in r[-3]]
    assert stale_rows and all("Atlas" in r[2] for r in stale_rows)  # bundle b0000 = Atlas
    old = (site / "releases/2024.2/benchmarks/aiq-demo/index.html").read_text(encoding="utf-8")
    assert 'class="stale"' not in old  # releases are frozen: no stale markers


def test_api_feed_and_data(site: Path) -> None:
    index = json.loads((site / "api/index.json").read_text())
    assert index["latest"] == "current" and len(index["versions"]) == 3
    bench = json.loads((site / "api/benchmarks/gindex-demo.json").read_text())
    # b0003 is reported: listed last, unranked; the verified entries are ranked alone
    assert [e["rank"] for e in bench["entries"]] == [1, 2, 3, 4, None]
    assert len(bench["history"]) == 3
    gen = json.loads((site / "api/benchmarks/generality-demo.json").read_text())
    infs = [e["metrics"]["generality"]["value"] for e in gen["entries"]]
    assert "inf" in infs
    rel = json.loads((site / "api/releases/2024.2.json").read_text())
    assert rel["previous"] == "2024.1" and rel["benchmarks"]["aiq-demo"]["changes"]
    feed = ET.parse(site / "feed.xml").getroot()
    ns = {"a": "http://www.w3.org/2005/Atom"}
    entries = feed.findall("a:entry", ns)
    assert entries and all(e.find("a:id", ns) is not None for e in entries)
    for name in (
        "gmeter.duckdb",
        "scores.parquet",
        "scores.csv",
        "bundles.csv",
        "leaderboard.parquet",
        "score_history.csv",
        "manifest.json",
    ):
        assert (site / "data" / name).exists(), name
    manifest = json.loads((site / "data/manifest.json").read_text())
    listed = {f["path"]: f for f in manifest["files"]}
    on_disk = {p.relative_to(site).as_posix() for p in site.rglob("*") if p.is_file()}
    assert set(listed) == on_disk - {"data/manifest.json"}
    for path in ("index.html", "data/scores.parquet", "assets/vega.js"):
        assert hashlib.sha256((site / path).read_bytes()).hexdigest() == listed[path]["sha256"]


def test_offline_assets(site: Path) -> None:
    vega = (site / "assets/vega.js").read_text(encoding="utf-8")
    assert "window.vegaEmbed" in vega and len(vega) > 500_000
    for name in ("site.css", "site.js", "favicon.svg"):
        assert (site / "assets" / name).exists()


def test_build_twice_is_byte_identical(site: Path, tmp_path: Path) -> None:
    db = site.parent / "store.duckdb"
    build_site(db, tmp_path / "again")
    first = {p.relative_to(site): p.read_bytes() for p in site.rglob("*") if p.is_file()}
    second = {
        p.relative_to(tmp_path / "again"): p.read_bytes()
        for p in (tmp_path / "again").rglob("*")
        if p.is_file()
    }
    assert first.keys() == second.keys()
    assert [k for k in first if first[k] != second[k]] == []


def _snapshot(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in root.rglob("*") if p.is_file()}


def test_failed_build_keeps_the_old_site(
    site: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    out = tmp_path / "public"
    shutil.copytree(site, out)
    before = _snapshot(out)
    with pytest.raises(StoreError):
        build_site(tmp_path / "missing.duckdb", out)
    assert _snapshot(out) == before

    import pipeline.site.render

    calls = {"n": 0}
    real = pipeline.site.render.render

    def flaky(template: str, page: object, **extra: object) -> str:
        calls["n"] += 1
        if calls["n"] == 5:
            raise RuntimeError("disk full (simulated)")
        return real(template, page, **extra)

    monkeypatch.setattr(pipeline.site.render, "render", flaky)
    with pytest.raises(RuntimeError, match="simulated"):
        build_site(site.parent / "store.duckdb", out)
    assert _snapshot(out) == before
    assert [p.name for p in tmp_path.iterdir()] == ["public"]  # no half-built folder left


def test_broken_link_fails_the_build(
    site: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import pipeline.site.linkcheck

    out = tmp_path / "public"
    shutil.copytree(site, out)
    before = _snapshot(out)
    monkeypatch.setattr(
        pipeline.site.linkcheck,
        "check_site",
        lambda root, **kw: [pipeline.site.linkcheck.BrokenLink("index.html", "x/", "missing file")],
    )
    with pytest.raises(BuildError, match="broken internal link"):
        build_site(site.parent / "store.duckdb", out)
    assert _snapshot(out) == before


def test_keeps_readme_and_cname(site: Path, tmp_path: Path) -> None:
    out = tmp_path / "public"
    out.mkdir()
    (out / "README.md").write_text("# public/\n")
    build_site(site.parent / "store.duckdb", out)
    assert (out / "README.md").read_text() == "# public/\n"
    assert (out / "index.html").exists()
    (out / "CNAME").write_text("leaderboard.example.org\n")
    build_site(site.parent / "store.duckdb", out)
    assert (out / "CNAME").exists() and (out / "README.md").exists()


def test_refuses_to_replace_a_foreign_folder(site: Path, tmp_path: Path) -> None:
    (tmp_path / "home").mkdir()
    (tmp_path / "home" / "thesis.tex").write_text("precious")
    with pytest.raises(BuildError, match="refusing"):
        build_site(site.parent / "store.duckdb", tmp_path / "home")
    assert (tmp_path / "home" / "thesis.tex").read_text() == "precious"
    assert (site / MARKER).exists()


def test_release_pages_do_not_change_when_a_release_is_added(site: Path, tmp_path: Path) -> None:
    from pipeline.store import open_store

    db = tmp_path / "store.duckdb"
    shutil.copyfile(site.parent / "store.duckdb", db)
    with open_store(db) as store:
        members = store.release_members("2024.2")
        _, rows = store.query(
            "select bundle, content_hash, agent, metric, value, ci_low, ci_high, "
            "rank, verified from scores where release = 'current' "
            "and benchmark = 'gindex-demo'"
        )
        store.replace_scores(
            release="2024.3",
            benchmark="gindex-demo",
            benchmark_hash="x",
            track="gindex",
            rows=[
                dict(
                    zip(
                        (
                            "bundle",
                            "content_hash",
                            "agent",
                            "metric",
                            "value",
                            "ci_low",
                            "ci_high",
                            "rank",
                            "verified",
                        ),
                        r,
                        strict=True,
                    )
                )
                for r in rows
            ],
            charts={},
            code_version="0.3.0",
            seed=1,
            options={},
            notes=[],
            now=NOW,
        )
        store.put_release("2024.3", dt.date(2024, 5, 20), "third", "0.3.0", members, {})
    build_site(db, tmp_path / "public")
    old = _snapshot(site / "releases/2024.1")
    new = _snapshot(tmp_path / "public/releases/2024.1")
    assert old == new
    assert (tmp_path / "public/releases/2024.3/index.html").exists()


def test_cli_build(site: Path, tmp_path: Path) -> None:
    from cli.app import app

    result = CliRunner().invoke(
        app,
        ["--db", str(site.parent / "store.duckdb"), "build", "--out", str(tmp_path / "cli-site")],
    )
    assert result.exit_code == 0, result.output
    assert (tmp_path / "cli-site" / "index.html").exists()


# --------------------------------------------------------------------------- issue 14, second pass


def test_new_chart_kinds_are_drawn(site: Path) -> None:
    gen = doc(site, "benchmarks/generality-demo/index.html")
    keys = {m["data-spec-href"] for m in gen.mounts}
    assert {
        "t-generality-psychometric-loadings.vl.json",
        "t-generality-psychometric-irt.vl.json",
    } <= keys
    assert "t-generality-psychometric.vl.json" not in keys  # a summary: in the run notes
    sim = doc(site, "benchmarks/similarity-demo/index.html")
    keys = {m["data-spec-href"] for m in sim.mounts}
    assert {
        "t-similarity-sweep.vl.json",
        "t-similarity-sweep-2.vl.json",
        "t-similarity-published.vl.json",
    } <= keys
    assert not {"t-similarity-flags.vl.json", "t-similarity-suites.vl.json"} & keys
    assert any("Published similarity" in h for h in sim_titles(site))


def sim_titles(site: Path) -> list[str]:
    import re

    page = (site / "benchmarks/similarity-demo/index.html").read_text(encoding="utf-8")
    return re.findall(r'<h3 class="chart-title">([^<]*)</h3>', page)


def test_capability_chart_tells_bundles_apart(site: Path) -> None:
    spec = json.loads(
        (site / "benchmarks/generality-demo/t-generality-capability-spread.vl.json").read_text()
    )
    points = spec["datasets"]["values"]
    assert {p["series"] for p in points} == {f"b{i:04d}" for i in range(5)}
    text = json.dumps(spec)
    assert '"shape"' in text and '"legend"' in text
    svg = (site / "benchmarks/generality-demo/t-generality-capability-spread.svg").read_text()
    assert "b0000" in svg and "b0004" in svg  # the legend is drawn


def test_step_curve_is_shown_by_its_convention(site: Path) -> None:
    from site_fixtures import STEP_SPREAD

    page = (site / "benchmarks/generality-demo/index.html").read_text(encoding="utf-8")
    d = Doc(page)
    row = next(r for r in d.rows["lb"] if "agent-0" in r[2] and "Cygnus" in r[2])
    heads = ["rank", "group", "who", "capability", "spread", "generality"]
    cells = dict(zip(heads, (c.strip() for c in row), strict=False))
    assert cells["spread"] == "0 step" and cells["generality"] == "∞ step"
    assert repr(STEP_SPREAD) in page  # the computed value, in the tooltip
    assert "shown by the track's documented convention" in page
    csv_text = (site / "benchmarks/generality-demo/scores.csv").read_text()
    assert repr(STEP_SPREAD) in csv_text  # the download keeps the computed value
    assert "2.861e-06" not in page.split('id="lb"')[1].split("</table>")[0].replace(
        repr(STEP_SPREAD), ""
    )


def test_similarity_intervals_lie_in_range_and_contain_their_point(site: Path) -> None:
    import re

    pages = [site / "benchmarks/similarity-demo/index.html"]
    pages += sorted((site / "systems").glob("*/index.html"))
    num = r"-?\d+(?:\.\d+)?(?:e-?\d+)?"
    cell = re.compile(rf"^({num})\s*\[({num}), ({num})\]$")
    seen = 0
    for p in pages:
        d = Doc(p.read_text(encoding="utf-8"))
        for table, rows in d.rows.items():
            if not table.startswith("lb-"):
                continue
            for r in rows:
                assert "[" not in r[2], (p, r)  # secondary columns (1 − S ∈ [0, 2]): no interval
                m = cell.match(" ".join(r[1].split()))
                if m:
                    v, lo, hi = map(float, m.groups())
                    assert -1 <= lo <= v <= hi <= 1, (p, r)
                    seen += 1
    assert seen >= 3


def test_former_system_addresses_redirect(site: Path) -> None:
    from pipeline.site.redirects import former_slugs

    for prefix in ("", "releases/2024.1/"):
        old = site / prefix / "systems/atlas/index.html"
        text = old.read_text(encoding="utf-8")
        # a light release copy sends the former address to the current page
        slug = stable_slug("Atlas")
        target = f"../../../../systems/{slug}/" if prefix else f"../{slug}/"
        assert f'content="0; url={target}"' in text
        assert f'<link rel="canonical" href="{target}">' in text
        assert '<meta name="robots" content="noindex">' in text
        assert f'<a href="{target}">' in text
        assert (old.parent / target / "index.html").resolve().is_file()
        assert "data-pagefind-body" not in text
    # a plain slug is its own page, and an ambiguous former slug gets no redirect
    assert former_slugs(
        {"atlas", "Atlas", "B c"}, {"atlas": "atlas", "Atlas": "atlas-1", "B c": "b-c-2"}
    ) == {"b-c": "B c"}
    assert former_slugs({"A b", "a-B"}, {"A b": "a-b-1", "a-B": "a-b-2"}) == {}


def test_own_priors_are_marked_on_the_board(site: Path) -> None:
    """A bundle that brought its own ρ is ranked with the benchmark's and visibly marked."""
    d = Doc((site / "benchmarks/gindex-demo/index.html").read_text(encoding="utf-8"))
    marked = [r for r in d.rows["lb"] if "own priors" in " ".join(r)]
    assert len(marked) == 1, [" ".join(r) for r in d.rows["lb"]]


def test_every_page_has_a_description_and_open_graph(site: Path) -> None:
    import re

    pages = [p for p in site.rglob("*.html") if "pagefind" not in p.parts]
    assert pages
    for p in pages:
        text = p.read_text(encoding="utf-8")
        if 'http-equiv="refresh"' in text:
            continue  # a redirect stub of a former address
        m = re.search(r'<meta name="description" content="([^"]*)">', text)
        assert m and len(m.group(1).strip()) >= 20, p.relative_to(site)
        if p.name != "404.html":
            assert '<meta property="og:title"' in text, p.relative_to(site)


def test_release_copies_name_their_current_page_canonical(site: Path) -> None:
    import re

    copies = list((site / "releases").glob("*/benchmarks/*/index.html"))
    assert copies
    for p in copies:
        m = re.search(r'<link rel="canonical" href="([^"]+)">', p.read_text(encoding="utf-8"))
        assert m, p.relative_to(site)
        target = (p.parent / m.group(1)).resolve()
        assert "releases" not in target.relative_to(site.resolve()).parts
        assert (target / "index.html").is_file() or target.is_file(), m.group(1)
    # current pages are canonical themselves
    assert 'rel="canonical"' not in (site / "index.html").read_text(encoding="utf-8")


def test_sitemap_lists_every_current_board(site: Path) -> None:
    import xml.etree.ElementTree as ET

    root = ET.parse(site / "sitemap.xml").getroot()
    ns = "{http://www.sitemaps.org/schemas/sitemap/0.9}"
    locs = [u.findtext(f"{ns}loc") or "" for u in root.iter(f"{ns}url")]
    boards = [p.parent.name for p in (site / "benchmarks").glob("*/index.html")]
    assert boards
    for b in boards:
        assert any(loc.endswith(f"benchmarks/{b}/") for loc in locs), b
    assert not any("/releases/" in loc and "benchmarks" in loc for loc in locs)


def test_feed_links_are_absolute(site: Path) -> None:
    import re

    text = (site / "feed.xml").read_text(encoding="utf-8")
    hrefs = re.findall(r'<link [^>]*href="([^"]+)"', text)
    assert hrefs
    assert all(h.startswith(("/", "https://", "http://")) for h in hrefs), hrefs


def test_404_page_has_the_site_header(site: Path) -> None:
    text = (site / "404.html").read_text(encoding="utf-8")
    assert '<header class="site">' in text and 'class="brand"' in text


def test_g_index_paper_is_cited_with_its_published_authors(site: Path) -> None:
    # the board's own reference (the benchmark's `paper` field in the repository) names the
    # authors; every BibTeX entry and CITATION.cff must give the same family names
    import re
    import tomllib

    bm = Path(__file__).resolve().parents[1] / "submissions" / "maya-fbp-16" / "benchmark.toml"
    found = re.search(r'^paper = (".*")$', bm.read_text(encoding="utf-8"), re.M)
    assert found, "the g-index board's benchmark.toml names its paper"
    PAPER = tomllib.loads("p = " + found.group(1))["p"]
    families = [a.split(". ")[-1].strip() for a in PAPER.split('"')[0].rstrip(", ").split(", ")]
    assert len(families) == 6, families
    bib = (site / "cite" / "papers.bib").read_text(encoding="utf-8")
    entry = bib[bib.index("Towards a Measure of General") - 400 :]
    authors = re.search(r"author\s*=\s*\{(.*?)\},\n", entry, re.S)
    assert authors
    got = [a.split(",")[0].strip() for a in " ".join(authors.group(1).split()).split(" and ")]
    assert got == families
    cff = (site / "CITATION.cff").read_text(encoding="utf-8")
    for f in families:
        assert f'family-names: "{f}"' in cff


def test_every_bibtex_entry_of_a_board_has_an_absolute_url(site: Path) -> None:
    import re

    bibs = list(site.rglob("cite.bib"))
    assert bibs
    for bib in bibs:
        text = bib.read_text(encoding="utf-8")
        entries = re.split(r"\n(?=@)", text.strip())
        assert entries
        for e in entries:
            m = re.search(r"^\s*url\s*=\s*\{([^}]*)\}", e, re.M)
            # the board's own entry always; a paper's whenever it has a DOI (the DOI's address)
            if e.startswith("@misc") or re.search(r"^\s*doi\s*=", e, re.M):
                assert m, (bib.relative_to(site), e[:80])
                assert m.group(1).startswith(("/", "https://")), m.group(1)


def test_site_url_comes_from_one_setting(monkeypatch: pytest.MonkeyPatch) -> None:
    from pipeline.errors import BuildError
    from pipeline.site.model import site_url

    monkeypatch.delenv("GITHUB_ACTIONS", raising=False)
    monkeypatch.setenv("GMETER_SITE_URL", "https://example.org/board")
    assert site_url("/board/") == "https://example.org/board/"
    monkeypatch.setenv("GMETER_SITE_URL", "javascript:alert(1)")
    with pytest.raises(BuildError):
        site_url("/")
    monkeypatch.delenv("GMETER_SITE_URL")
    assert site_url("/") == ""


def test_board_cite_link_defaults_to_the_newest_release(site: Path) -> None:
    import re

    text = (site / "benchmarks" / "gindex-demo" / "index.html").read_text(encoding="utf-8")
    cite = re.search(r'<span class="cite">Cite: (.*?)</span>', text, re.S)
    assert cite
    first = re.search(r'href="([^"]+)"', cite.group(1))
    assert first and "releases/" in first.group(1), cite.group(1)
    releases = sorted(p.name for p in (site / "releases").iterdir() if p.is_dir())
    assert f"releases/{releases[-1]}/" in first.group(1)
    cff = (site / "CITATION.cff").read_text(encoding="utf-8")
    assert f'version: "{releases[-1]}"' in cff and "\nurl: " in cff


def test_published_duckdb_is_in_the_oldest_declared_storage_format(site: Path) -> None:
    """data/gmeter.duckdb opens in the oldest DuckDB gmeter declares (``duckdb>=1.1``).

    DuckDB's file header holds the storage version after the ``DUCK`` magic: 64 is the format
    DuckDB 1.1 reads (a newer DuckDB writes a number 1.1 refuses unless told otherwise).
    """
    import struct

    head = (site / "data" / "gmeter.duckdb").read_bytes()[:20]
    assert head[8:12] == b"DUCK"
    assert struct.unpack("<Q", head[12:20])[0] == 64
    pyproject = (Path(__file__).resolve().parents[1] / "pyproject.toml").read_text()
    assert '"duckdb>=1.1"' in pyproject


def test_every_download_says_its_size(site: Path) -> None:
    import re

    from pipeline.site.assemble import human_size

    pages = [
        *site.glob("benchmarks/*/index.html"),
        *site.glob("releases/*/benchmarks/*/index.html"),
        site / "about" / "index.html",
    ]
    checked = 0
    for page in pages:
        text = page.read_text(encoding="utf-8")
        lists = re.findall(r'<ul class="downloads">(.*?)</ul>', text, re.S)
        assert lists, page.relative_to(site)
        tables = re.findall(r'<table class="data-files">(.*?)</table>', text, re.S)
        for item in re.findall(r"<(?:li|td)>(.*?)</(?:li|td)>", "".join(lists + tables), re.S):
            link = re.match(r'<a href="([^"]+)">', item)
            if link is None:
                assert "<code>" in item, item  # a table's name
                continue
            target = (page.parent / link.group(1)).resolve()
            if "#" in link.group(1) or target.is_dir() or target.suffix == ".duckdb":
                continue  # a page, not a download; DuckDB's bytes differ from build to build
            size = re.search(r'<span class="size">([^<]+)</span>', item)
            assert size, (page.relative_to(site), item)
            assert size.group(1) == human_size(target.stat().st_size), (page, item)
            checked += 1
    assert checked >= 10 * len(pages) // 2


def test_the_views_file_reads_every_table_from_its_parquet_file(site: Path) -> None:
    import duckdb

    data = site / "data"
    views = data / "gmeter-views.duckdb"
    parquet = sum(p.stat().st_size for p in data.glob("*.parquet"))
    assert views.stat().st_size <= 3 * parquet  # "a few times the Parquet" at most
    with duckdb.connect(str(data / "gmeter.duckdb"), read_only=True) as full, \
            duckdb.connect(str(views), read_only=True) as con:  # fmt: skip
        con.execute(f"set file_search_path = '{data}'")  # as if run in data/
        names = [r[0] for r in full.execute(
            "select table_name from information_schema.tables where table_schema = 'main' "
            "order by 1").fetchall()]  # fmt: skip
        kinds = dict(con.execute("select table_name, table_type from information_schema.tables "
                                 "where table_schema = 'main'").fetchall())  # fmt: skip
        assert sorted(kinds) == names and set(kinds.values()) == {"VIEW"}
        for name in names:
            n = full.execute(f'select count(*) from "{name}"').fetchone()
            assert con.execute(f'select count(*) from "{name}"').fetchone() == n, name


def _fake_pagefind(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, script: str) -> None:
    """Make the build run ``script`` (POSIX shell) as its Pagefind binary."""
    import pagefind.service

    fake = tmp_path / "bin" / "pagefind"
    fake.parent.mkdir()
    fake.write_text("#!/bin/sh\n" + script)
    fake.chmod(0o755)
    monkeypatch.setattr(pagefind.service, "_must_get_executable", lambda: fake)


def test_a_failed_search_index_fails_the_build_and_keeps_the_site(
    site: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Pagefind runs while the links are checked; its failure still fails the build whole."""
    out = tmp_path / "public"
    shutil.copytree(site, out)
    before = _snapshot(out)
    _fake_pagefind(tmp_path, monkeypatch, "echo 'index: out of cheese' >&2\nexit 3\n")
    with pytest.raises(BuildError, match=r"pagefind exited with 3\): index: out of cheese"):
        build_site(site.parent / "store.duckdb", out, incremental=False)
    assert _snapshot(out) == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["bin", "public"]


def test_an_error_while_pagefind_runs_stops_it(
    site: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import pipeline.site.linkcheck

    out = tmp_path / "public"
    shutil.copytree(site, out)
    before = _snapshot(out)
    pid_file = tmp_path / "pagefind.pid"
    _fake_pagefind(tmp_path, monkeypatch, f"echo $$ > {pid_file}\nexec sleep 60\n")

    def failing(root: Path, **kw: object) -> list[object]:
        import time

        for _ in range(200):  # Pagefind has started (the crash comes while it runs)
            if pid_file.is_file() and pid_file.read_text().strip():
                break
            time.sleep(0.05)
        raise RuntimeError("link checker crashed (simulated)")

    monkeypatch.setattr(pipeline.site.linkcheck, "check_site", failing)
    with pytest.raises(RuntimeError, match="simulated"):
        build_site(site.parent / "store.duckdb", out, incremental=False)
    assert _snapshot(out) == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["bin", "pagefind.pid", "public"]
    pid = int(pid_file.read_text())
    with pytest.raises(ProcessLookupError):  # killed and reaped, not left running
        os.kill(pid, 0)
