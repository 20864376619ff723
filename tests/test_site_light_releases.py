"""Light release copies: a release holds what a citation needs, the rest is linked.

A release copy keeps its boards (pages, every row, charts, board CSV, BibTeX), its home and
its changelog; system and agent pages, the comparison view, the phone-sized second drawing
of each chart and its Vega-Lite spec live on the current site only. The published DuckDB
file leaves out the file contents that ``files/`` publishes one by one.
"""

from __future__ import annotations

import re
import shutil
from collections.abc import Iterator
from pathlib import Path

import duckdb
import pytest
from site_fixtures import make_store

from pipeline.site.build import build_site

BOARD_FILE = re.compile(
    r"benchmarks/[^/]+/(index\.html|all/index\.html|changelog/index\.html|cite\.bib|scores\.csv"
    r"|[A-Za-z0-9_.-]+(?<!\.narrow)\.svg|[A-Za-z0-9_.-]+\.data\.csv)"
)
OWN_FILE = re.compile(r"(index\.html|cite\.bib|changelog/index\.html)")


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Path, Path]]:
    root = tmp_path_factory.mktemp("light")
    db = make_store(root / "store.duckdb", bundles=6, releases=3)
    build_site(db, root / "public", search=False)
    yield db, root / "public"
    shutil.rmtree(root, ignore_errors=True)


def _releases(site: Path) -> list[Path]:
    found = sorted(p for p in (site / "releases").iterdir() if p.is_dir())
    assert found, "the fixture has releases"
    return found


def _size(folder: Path) -> int:
    return sum(p.stat().st_size for p in folder.rglob("*") if p.is_file())


def test_a_release_copy_holds_its_boards_and_links_the_rest(built):
    _, site = built
    current = {p.parent.relative_to(site).as_posix()
               for kind in ("systems", "agents")
               for p in (site / kind).glob("*/index.html")}  # fmt: skip
    for rel in _releases(site):
        for f in sorted(p for p in rel.rglob("*") if p.is_file()):
            path = f.relative_to(rel).as_posix()
            if BOARD_FILE.fullmatch(path) or OWN_FILE.fullmatch(path):
                continue
            text = f.read_text(encoding="utf-8")
            if 'http-equiv="refresh"' in text:
                continue  # a former address, sent on
            # only a system or agent the current site no longer shows keeps its page here
            page = re.fullmatch(r"((?:systems|agents)/[^/]+)/(?:all/)?index\.html", path)
            assert page, (rel.name, path)
            assert page.group(1) not in current, (rel.name, path)
        for page in rel.rglob("*.html"):
            text = page.read_text(encoding="utf-8")
            for heavy in (".narrow.svg", ".vl.json", "compare/"):
                assert heavy not in text, (page, heavy)
            for link in re.findall(r'href="([^"#?]*(?:systems|agents)/[^"#?]*)"', text):
                target = (page.parent / link).resolve()
                assert target.is_relative_to(site.resolve()), (page, link)
                assert (target / "index.html").is_file() or target.is_file(), (page, link)


def test_a_release_copy_weighs_no_more_than_its_boards(built):
    _, site = built
    for rel in _releases(site):
        boards = [p.name for p in (rel / "benchmarks").iterdir() if p.is_dir()]
        assert boards
        # the same boards on the current site (with phone charts and the comparison view)
        budget = sum(_size(site / "benchmarks" / b) for b in boards
                     if (site / "benchmarks" / b).is_dir())  # fmt: skip
        budget += _size(rel / "changelog") + (rel / "index.html").stat().st_size + 64_000
        assert _size(rel) <= budget, (rel.name, _size(rel), budget)


def test_every_frozen_row_stays_reachable(built):
    db, site = built
    with duckdb.connect(str(db), read_only=True) as con:
        members = con.execute("select release, benchmark, count(*) from release_bundles "
                              "group by all").fetchall()  # fmt: skip
    assert members
    for release, benchmark, _ in members:
        board = site / "releases" / release / "benchmarks" / benchmark
        if not board.is_dir():
            continue
        rows = (board / "scores.csv").read_text(encoding="utf-8").strip().splitlines()
        assert len(rows) >= 2, (release, benchmark)


def test_the_published_duckdb_file_has_every_row_without_file_contents(built):
    db, site = built
    published = site / "data" / "gmeter.duckdb"
    with duckdb.connect(str(db), read_only=True) as store, \
            duckdb.connect(str(published), read_only=True) as copy:  # fmt: skip
        tables = [r[0] for r in store.execute(
            "select table_name from information_schema.tables where table_schema = 'main' "
            "order by 1").fetchall()]  # fmt: skip
        assert tables == [r[0] for r in copy.execute(
            "select table_name from information_schema.tables where table_schema = 'main' "
            "order by 1").fetchall()]  # fmt: skip
        for t in tables:
            n = store.execute(f'select count(*) from "{t}"').fetchone()
            assert copy.execute(f'select count(*) from "{t}"').fetchone() == n, t
        blobs = copy.execute("select table_name, column_name from information_schema.columns "
                             "where data_type = 'BLOB'").fetchall()  # fmt: skip
        assert blobs == []
        # every file keeps its digest and size (its bytes are under files/)
        nulls = copy.execute("select count(*) from bundle_files where sha256 is null").fetchone()
        assert nulls == (0,)
    assert published.stat().st_size < db.stat().st_size
