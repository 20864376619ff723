"""System pages: one history line per entry, never per name; collections capped and paged."""

from __future__ import annotations

import json
import shutil
from collections import defaultdict
from collections.abc import Iterator
from pathlib import Path

import pytest
from site_fixtures import TWINS, make_store

from pipeline.site import systems
from pipeline.site.build import build_site
from pipeline.site.model import stable_slug


def _specs(site: Path) -> list[Path]:
    return sorted(site.glob("**/systems/*/history-*.vl.json"))


def _series(spec: Path) -> dict[str, list[str]]:
    """series name → the x of each of its points."""
    out: dict[str, list[str]] = defaultdict(list)
    for p in json.loads(spec.read_text(encoding="utf-8"))["datasets"]["values"]:
        out[str(p.get("series", ""))].append(str(p["x"]))
    return out


@pytest.fixture(scope="module")
def twins_site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    root = tmp_path_factory.mktemp("twins")
    build_site(make_store(root / "store.duckdb", twins=True), root / "public")
    yield root / "public"
    shutil.rmtree(root, ignore_errors=True)


def test_no_history_line_joins_two_entries(twins_site: Path) -> None:
    # an entry has one score per version, so a line with two points on one date joins two
    specs = _specs(twins_site)
    assert specs
    for spec in specs:
        for name, xs in _series(spec).items():
            assert len(xs) == len(set(xs)), (spec, name)


def test_entries_sharing_a_name_are_told_apart_by_their_variant(twins_site: Path) -> None:
    page = twins_site / "systems" / stable_slug("Atlas")
    series = _series(page / "history-gindex-demo.vl.json")
    # both bundles have a line, each named by what the bundle declares it is
    assert len(series) == len(TWINS)
    assert all("training samples" in s for s in series)
    html = (page / "index.html").read_text(encoding="utf-8")
    table = html.split('id="h-entries"')[1].split("</table>")[0]
    for s in series:
        assert table.count(f"<td>{s}</td>") == 1


def test_collections_are_capped_and_paged(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # the generality systems hold two agents each: with caps of one they are "collections"
    monkeypatch.setattr(systems, "HISTORY_SERIES", 1)
    monkeypatch.setattr(systems, "PAGE_ENTRIES", 1)
    monkeypatch.setattr(systems, "DETAIL_ENTRIES", 1)
    site = tmp_path / "public"
    build_site(make_store(tmp_path / "store.duckdb", releases=2), site)
    paged = sorted(site.glob("systems/*/all/index.html"))
    assert paged
    for full in paged:
        page = full.parent.parent / "index.html"
        html = page.read_text(encoding="utf-8")
        assert 'href="all/"' in html
        listed = html.split('id="h-entries"')[1].split("</table>")[0].count("<tr>") - 1
        every = full.read_text(encoding="utf-8")
        total = every.split('id="h-entries"')[1].split("</table>")[0].count("<tr>") - 1
        assert listed < total
        for spec in page.parent.glob("history-*.vl.json"):
            assert len(_series(spec)) <= systems.HISTORY_SERIES


def test_a_board_tells_apart_entries_sharing_a_name(twins_site: Path) -> None:
    html = (twins_site / "benchmarks/gindex-demo/index.html").read_text(encoding="utf-8")
    table = html.split('id="lb"')[1].split("</table>")[0]
    variants = [
        row.split('<small class="variant">')[1].split("<")[0]
        for row in table.split("<tr")
        if ">Atlas</a>" in row
    ]
    assert len(variants) == len(TWINS) and len(set(variants)) == len(TWINS)
    # the score chart names them apart too
    spec = json.loads((twins_site / "benchmarks/gindex-demo/scores.vl.json").read_text())
    atlas = [r["entry"] for r in spec["datasets"]["values"] if r["entry"].startswith("Atlas")]
    assert len(atlas) == len(set(atlas)) == len(TWINS)


def _rows(html: str) -> int:
    return sum(t.split("</tbody>")[0].count("<tr>") for t in html.split("<tbody>")[1:])


def test_every_board_has_its_changelog_and_says_what_changed_since_the_release(
    twins_site: Path,
) -> None:
    boards = sorted(p.parent for p in twins_site.glob("benchmarks/*/index.html"))
    assert boards
    for board in boards:
        html = (board / "index.html").read_text(encoding="utf-8")
        note = html.split('class="meta since"')[1].split("</p>")[0]
        assert 'href="changelog/"' in note
        log = (board / "changelog/index.html").read_text(encoding="utf-8")
        sections = log.split("<section")[1:]
        # one section per version holding the board, newest first, each anchored
        versions = [v for v in ("current", "2024.2", "2024.1") if f'id="v-{v}"' in log]
        assert versions and versions[0] == "current" and len(sections) == len(versions)
        # the board's note counts exactly the changes the changelog lists for "current"
        counted = sum(int(w) for w in note.split(":")[-1].split() if w.isdigit())
        assert counted == _rows(sections[0])
        if counted == 0:
            assert "No change on this board since release" in note
        # the oldest section adds every entry the board had then
        assert "first version" in sections[-1] and _rows(sections[-1]) >= 1


def test_a_trained_agents_page_shows_its_declared_training(twins_site: Path) -> None:
    from site_fixtures import TRAINED_BUNDLE, TRAINING, _system

    shown = set()
    for page in sorted(twins_site.glob("systems/*/index.html")):
        html = page.read_text(encoding="utf-8")
        if "Training, as the bundle declares it" in html:
            shown.add(page.parent.name)
            box = html.split('<dl class="kv training">')[1].split("</dl>")[0]
            for key in ("seed", "steps", "checkpoint_sha256", "libraries"):
                assert str(TRAINING[key]) in box
    # exactly the system whose AIQ bundle declared one (a name may also hold other boards)
    assert shown == {stable_slug(_system("aiq-demo", TRAINED_BUNDLE))}
