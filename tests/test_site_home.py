"""The home page grouped by track, and DOIs linked wherever the site prints one."""

from __future__ import annotations

import re
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st
from site_fixtures import make_store

from pipeline.site.build import build_site
from pipeline.site.markdown import to_html, to_inline_html
from pipeline.tracks import get_track, metric_info


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    root = tmp_path_factory.mktemp("home")
    build_site(make_store(root / "store.duckdb"), root / "public")
    yield root / "public"
    shutil.rmtree(root, ignore_errors=True)


def test_home_groups_every_board_under_its_track(site: Path) -> None:
    home = (site / "index.html").read_text(encoding="utf-8")
    boards = {p.parent.name for p in site.glob("benchmarks/*/index.html")}
    found: dict[str, str] = {}
    for part in home.split('<section class="home-track"')[1:]:
        track = part.split('id="h-track-')[1].split('"')[0]
        primary = get_track(track).primary_metric
        # the score column sorts best first in the track's own direction
        assert f'data-better="{metric_info(primary).direction}"' in part
        assert 'class="home sortable"' in part
        for board in re.findall(r'href="benchmarks/([^/"]+)/"', part.split("</section>")[0]):
            assert board not in found
            found[board] = track
    assert set(found) == boards
    for board, track in found.items():
        page = (site / "benchmarks" / board / "index.html").read_text(encoding="utf-8")
        assert f"t-{track}" in page  # the board is of the track it is listed under


DOI = st.from_regex(r"10\.[0-9]{4,6}/[A-Za-z0-9]([A-Za-z0-9._:-]*[A-Za-z0-9])?", fullmatch=True)


@given(DOI, st.sampled_from(["", ".", ",", ";", ")"]))
def test_a_cited_doi_links_to_the_resolver(doi: str, after: str) -> None:
    html = to_inline_html(f"As published (2021), doi:{doi}{after} more text")
    assert f'href="https://doi.org/{doi}"' in html
    assert f">doi:{doi}</a>{after}" in html  # the sentence's punctuation stays outside


def test_a_doi_in_code_stays_code() -> None:
    html = to_html("Write `doi:10.1038/x` in the manifest.")
    assert "doi.org" not in html and "<code>doi:10.1038/x</code>" in html


def test_every_board_links_its_papers_doi(site: Path) -> None:
    for page in sorted(site.glob("benchmarks/*/index.html")):
        html = page.read_text(encoding="utf-8")
        track = html.split('class="track t-')[1].split('"')[0]
        cite = get_track(track).presentation.citation
        if cite is not None and cite.doi:
            assert f'href="https://doi.org/{cite.doi}"' in html, page
