"""Incremental builds: the same bytes as a full build, with only what changed made again."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest
from site_fixtures import NOW, make_store

import pipeline.site.incremental as incremental
from pipeline.site import render
from pipeline.site.build import build_site
from pipeline.store import open_store


def tree(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes()
            for p in sorted(root.rglob("*")) if p.is_file()}  # fmt: skip


def inodes(root: Path) -> dict[str, int]:
    return {p.relative_to(root).as_posix(): p.stat().st_ino
            for p in sorted(root.rglob("*")) if p.is_file()}  # fmt: skip


def add_bundle(db: Path, benchmark: str = "gindex-demo") -> None:
    """A new bundle and its score in the current state of one benchmark (as score writes)."""
    from site_fixtures import _put_bundle

    with open_store(db) as s:
        with s.transaction():
            _put_bundle(s, benchmark, 77, "f" * 64)
        rows = s.current_scores(benchmark)
        top = next(r for r in rows if r["metric"] == "g_index")
        new = dict(top, bundle="b0077", content_hash="f" * 64, agent="Newcomer 77",
                   value=top["value"] + 1.0, rank=1)  # fmt: skip
        _, charts = s.query("select name, data from charts where release = 'current' "
                            f"and benchmark = '{benchmark}'")  # fmt: skip
        s.replace_scores(release="current", benchmark=benchmark, benchmark_hash="h",
                         track="gindex", rows=[*rows, new],
                         charts={n: json.loads(d) for n, d in charts}, code_version="t",
                         seed=1, options={}, notes=["one more"], now=NOW)  # fmt: skip


@pytest.fixture(scope="module")
def cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    # Its own chart cache: the compact DuckDB copy is cached by the store's digest, one at a
    # time, and a shared cache may be swept by another build between two of these builds.
    # Drawn charts and checked specs are kept by their content and never swept: those come
    # from the shared cache (conftest's), so the first build does not draw every chart cold.
    root = tmp_path_factory.mktemp("cache")
    shared = Path(os.environ["GMETER_CACHE_DIR"])
    for name in ("svg", "svg-final", "checked-specs", "chart-templates"):
        (shared / name).mkdir(parents=True, exist_ok=True)
        (root / name).symlink_to(shared / name, target_is_directory=True)
    return root


@pytest.fixture(scope="module")
def pristine(tmp_path_factory: pytest.TempPathFactory, cache: Path) -> Path:
    """A store and its site as the first build left them, under ``pristine/``, never changed."""
    root = tmp_path_factory.mktemp("built")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("GMETER_CACHE_DIR", str(cache))
        db = make_store(root / "work" / "store" / "s.duckdb", bundles=4, releases=2)
        build_site(db, root / "work" / "site", search=False)
    shutil.copytree(root / "work", root / "pristine", symlinks=True)
    return root


@pytest.fixture
def built(pristine: Path, cache: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, Path]:
    """The store and site of a first build, at the paths that build used.

    Made once per module and put back for each test: the copy keeps every byte and
    modification time, and the store and site keep their paths, so the build state left next
    to the store describes them exactly as after a build of their own (a store and a full
    build per test took most of this file's time).
    """
    monkeypatch.setenv("GMETER_CACHE_DIR", str(cache))
    work = pristine / "work"
    shutil.rmtree(work)
    shutil.copytree(pristine / "pristine", work, symlinks=True)
    return work / "store" / "s.duckdb", work / "site"


def test_an_unchanged_store_rewrites_nothing(built, monkeypatch):
    db, out = built
    before = inodes(out)
    monkeypatch.setattr(incremental.Ledger, "write", None)  # any write would fail
    report = build_site(db, out, search=False)
    assert inodes(out) == before and report.pages > 0


def test_a_new_bundle_remakes_what_it_touches_and_equals_a_full_build(built, tmp_path):
    db, out = built
    before = inodes(out)
    add_bundle(db)
    build_site(db, out, search=False)
    full = tmp_path / "full"
    build_site(db, full, search=False, incremental=False)
    assert tree(out) == tree(full)
    after = inodes(out)
    kept = {rel for rel, ino in after.items() if before.get(rel) == ino}
    assert any(rel.startswith("releases/") and rel.endswith("index.html") for rel in kept)
    assert "benchmarks/gindex-demo/index.html" not in kept  # the board changed
    assert "data/scores.parquet" not in kept and "data/releases.parquet" in kept
    assert len(kept) > len(after) / 2


def test_a_file_edited_by_hand_or_new_code_means_making_it_again(built, tmp_path, monkeypatch):
    db, out = built
    page = out / "index.html"
    page.write_bytes(page.read_bytes() + b"<!-- edited -->")
    build_site(db, out, search=False)
    full = tmp_path / "full"
    build_site(db, full, search=False, incremental=False)
    assert tree(out) == tree(full)
    rendered: list[str] = []
    real = render.render

    def counting(template: str, *args: object, **kwargs: object) -> str:
        rendered.append(template)
        return real(template, *args, **kwargs)

    monkeypatch.setattr(render, "render", counting)
    assert build_site(db, out, search=False).pages and not rendered  # unchanged: none
    monkeypatch.setattr(incremental, "code_digest", lambda: "other code")
    report = build_site(db, out, search=False)
    assert len(rendered) == report.pages + 1  # every page (and the feed) made again
    assert tree(out) == tree(full)


def test_the_search_index_follows_the_pages(built, tmp_path):
    db, out = built
    build_site(db, out)  # the index is made (it was not)
    index = out / "pagefind" / "pagefind.js"
    first = index.stat().st_ino
    build_site(db, out)
    assert index.stat().st_ino == first  # nothing changed: not even checked again
    add_bundle(db)
    build_site(db, out)
    full = tmp_path / "full"
    build_site(db, full, incremental=False)
    assert tree(out) == tree(full)


def test_a_lost_or_broken_state_means_a_full_build(built, tmp_path):
    db, out = built
    for state in (db.parent / "builds").glob("*.json"):
        state.write_text("{not json")
    add_bundle(db)
    build_site(db, out, search=False)
    full = tmp_path / "full"
    build_site(db, full, search=False, incremental=False)
    assert tree(out) == tree(full)
    assert os.listdir(db.parent / "builds")


def test_a_cold_cache_is_drawn_in_parallel_with_the_same_bytes(tmp_path, monkeypatch):
    from pipeline.site import svgrender

    db = make_store(tmp_path / "store" / "s.duckdb", bundles=3, releases=1)
    drawn: list[int] = []
    real = svgrender.draw_all

    def counting(batch: svgrender.Batch, workers: int | None = None) -> int:
        drawn.append(real(batch, 2))
        return drawn[-1]

    monkeypatch.setattr(svgrender, "draw_all", counting)
    monkeypatch.setattr(svgrender, "DRAW_SLICE", 3)  # several slices, each stored as it comes
    sites = []
    # all in place; all deferred (every page waits); a few in place, then deferred (the
    # pages before the first deferred chart are written at once, the rest after the drawing)
    for name, defer in (("serial", 10**6), ("parallel", 0), ("partly", 4)):
        monkeypatch.setenv("GMETER_CACHE_DIR", str(tmp_path / f"cache-{name}"))
        monkeypatch.setattr(svgrender, "DEFER_AFTER", defer)
        svgrender._render_cached.cache_clear()  # a cold process too
        build_site(db, tmp_path / name, search=False, incremental=False)
        sites.append({k: v for k, v in tree(tmp_path / name).items()
                      if k not in ("data/gmeter.duckdb", "data/manifest.json")})  # fmt: skip
    assert len(drawn) == 2 and all(drawn)
    assert sites[0] == sites[1] == sites[2]


def test_gradient_ids_depend_on_the_chart_alone():
    from pipeline.site.svgrender import canonical_ids

    a = '<defs><linearGradient id="gradient_8"/><linearGradient id="gradient_12"/></defs>' \
        '<path fill="url(#gradient_12)"/><path fill="url(#gradient_8)"/>'
    b = a.replace("gradient_8", "gradient_3").replace("gradient_12", "gradient_1")
    assert canonical_ids(a) == canonical_ids(b)
    assert 'id="gradient_1"' in canonical_ids(a) and "url(#gradient_2)" in canonical_ids(a)
    assert canonical_ids("<svg/>") == "<svg/>"


def test_the_publish_workflow_keeps_the_chart_cache_of_the_default_store(monkeypatch):
    import yaml

    from pipeline.site.assets import store_cache_dir

    root = Path(__file__).resolve().parents[1]
    monkeypatch.delenv("GMETER_CACHE_DIR", raising=False)
    want = store_cache_dir(root / ".gmeter" / "gmeter.duckdb").relative_to(root).as_posix()
    data = yaml.safe_load((root / ".github" / "workflows" / "publish.yml").read_text())
    steps = [s for job in data["jobs"].values() for s in job.get("steps", [])]
    cache = next(s for s in steps if str(s.get("uses", "")).startswith("actions/cache"))
    assert cache["with"]["path"] == want == ".gmeter/cache"
    build = next(i for i, s in enumerate(steps) if s.get("run") == "make publish")
    assert steps.index(cache) < build


def test_a_new_repositorys_publish_workflow_keeps_the_chart_cache(tmp_path, monkeypatch):
    """`gmeter init`'s publish job restores and saves the chart cache of its store (and only
    that job: the pull-request workflow keeps no cache, the cache being trusted like code)."""
    import yaml

    from pipeline import __version__
    from pipeline.repository.init import init_repository
    from pipeline.site.assets import store_cache_dir

    monkeypatch.delenv("GMETER_CACHE_DIR", raising=False)
    root = tmp_path / "bench"
    init_repository(root, title="A board", licence="CC-BY-4.0", url="https://example.org/b/")
    want = store_cache_dir(root / ".gmeter" / "gmeter.duckdb").relative_to(root).as_posix()
    workflows = root / ".github" / "workflows"
    data = yaml.safe_load((workflows / "publish.yml").read_text())
    steps = [s for job in data["jobs"].values() for s in job.get("steps", [])]
    cache = next(s for s in steps if str(s.get("uses", "")).startswith("actions/cache"))
    assert cache["with"]["path"] == want
    assert cache["with"]["key"] == f"gmeter-cache-{__version__}-${{{{ github.run_id }}}}"
    build = next(i for i, s in enumerate(steps) if "gmeter site" in str(s.get("run", "")))
    assert steps.index(cache) < build
    for other in workflows.glob("*.yml"):
        if other.name != "publish.yml":
            assert "actions/cache" not in other.read_text(), other.name


def test_a_streamed_page_links_only_files_made_before_it(tmp_path):
    """Pages stream (one model at a time): each is sized when it comes, not at the end.

    Its download sizes must then equal those told with every file of the site known: a page
    never links an extra file (chart spec or data, board CSV or BibTeX) made after it.
    """
    from pipeline.site import assemble, svgrender
    from pipeline.site.build import _spec_text, read_snapshot
    from pipeline.site.model import analyse
    from pipeline.site.pages import AboutPage, BenchmarkPage

    db = make_store(tmp_path / "s.duckdb", bundles=8, releases=3)
    with open_store(db, read_only=True) as store:
        site = analyse(read_snapshot(store))
    specs: list = []
    early = {s.path: len(_spec_text(render, s)) for s in assemble.site_wide_files(site)}
    seen = []
    with svgrender.batched():  # charts not in the cache are drawn blank: sizes are the point
        for page in assemble.iter_pages(site, specs):
            if isinstance(page.context, BenchmarkPage | AboutPage):
                known = {**early, **{s.path: len(_spec_text(render, s)) for s in specs}}
                seen.append((page, known))
    everything = {**early, **{s.path: len(_spec_text(render, s)) for s in specs}}
    assert sum(isinstance(p.context, BenchmarkPage) for p, _ in seen) > 10
    for page, known in seen:
        assert assemble.with_sizes([page], known) == assemble.with_sizes([page], everything), \
            page.path
