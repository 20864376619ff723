"""A new paper is a folder under tracks/ (and metrics/) and nothing else.

A tiny track, written by the test into a temporary folder that is put on
``pipeline.tracks.__path__``, is discovered by the registry, looked up by metric, scored through
its ``TrackSpec`` and gets a board — its chart, interval note, methodology and citation
included — from the site as it is: not a line of ``pipeline/site/`` knows it.
"""

from __future__ import annotations

import datetime as dt
import re
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path

import pytest

import pipeline.tracks
from pipeline.inputs import BenchmarkInput, BundleInput, FileSet
from pipeline.score import score_benchmark
from pipeline.site.build import build_site
from pipeline.store import open_store
from pipeline.tracks import all_metrics, get_track, metric_info, track_names
from pipeline.tracks.base import ScoreContext

NAME = "tinytrack"

TRACK_SOURCE = textwrap.dedent(
    '''
    """A tiny track for tests: a bundle's score.txt is its score."""

    from pipeline.errors import Problem
    from pipeline.metrics.info import MetricInfo
    from pipeline.tracks.base import ScoreRow, TrackResult, TrackSpec
    from pipeline.tracks.presentation import Citation, LineChart, Presentation, as_records
    from pipeline.tracks.settings import StrictSettings


    class Settings(StrictSettings):
        """No settings."""


    def validate_benchmark(bench):
        return []


    def validate_bundle(bundle, bench):
        if not bundle.files.has("score.txt"):
            return [Problem(bundle.files.where("score.txt"), "-", "is missing", "add it")]
        return []


    def score(bench, bundles, ctx):
        result = TrackResult(notes=["tiny scores are read, not computed"])
        points = []
        for b in sorted(bundles, key=lambda b: b.id):
            v = float(b.files.text("score.txt"))
            result.rows.append(ScoreRow(b.id, b.system, "tiny_score", v, v - 1, v + 1, True))
            points.append({"agent": b.system, "step": len(points) + 1, "score": v})
        result.charts["tinytrack_curve"] = {"records": points}
        result.charts["tinytrack_hidden"] = {"records": points}
        return result


    def draw_curve(data):
        recs = [{"x": r["step"], "y": r["score"], "label": str(r["agent"])}
                for r in as_records(data) or [] if isinstance(r.get("step"), int)]
        if not recs:
            return []
        return [LineChart("Tiny scores in order", recs, x=("step", ""), y=("tiny score", "pt"),
                          what="Each bundle's tiny score")]


    TRACK = TrackSpec(
        name="tinytrack",
        title="Tiny track",
        paper="A. Tiny, A Measure Too Small To Fail, Journal of Tests 1 (2024)",
        primary_metric="tiny_score",
        secondary_metrics=(),
        benchmark_settings=Settings,
        submission_settings=Settings,
        validate_benchmark=validate_benchmark,
        validate_bundle=validate_bundle,
        score=score,
        metrics=(MetricInfo("tiny_score", "tinytrack", "higher", "tiny score", "pt",
                            "The number in score.txt."),),
        presentation=Presentation(
            charts={"tinytrack_curve": draw_curve},
            hidden=frozenset({"tinytrack_hidden"}),
            interval_note=lambda level, manifest: f"Intervals: {level}, plus or minus one.",
            methodology="<p>The tiny measure reads <em>score.txt</em>.</p>",
            citation=Citation(
                bibtex="@article{tiny2024, title = {A Measure Too Small To Fail}, year = {2024}}",
                title="A Measure Too Small To Fail",
                kind="article",
                year=2024,
                authors=("Tiny",),
            ),
        ),
    )
    '''
)


@pytest.fixture
def tiny_track(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    """Put the tiny track's package on ``pipeline.tracks.__path__`` for one test."""
    root = tmp_path / "extra_tracks"
    (root / NAME).mkdir(parents=True)
    (root / NAME / "__init__.py").write_text(TRACK_SOURCE, encoding="utf-8")
    monkeypatch.setattr(pipeline.tracks, "__path__", [*pipeline.tracks.__path__, str(root)])
    yield NAME
    sys.modules.pop(f"pipeline.tracks.{NAME}", None)


def test_the_registry_discovers_a_new_track(tiny_track: str) -> None:
    assert tiny_track in track_names()
    assert track_names()[-1] == tiny_track  # listed after the papers (default order)
    assert get_track(tiny_track).title == "Tiny track"
    assert metric_info("tiny_score").label == "tiny score"
    assert all_metrics()["tiny_score"].track == tiny_track
    # gmeter check looks for each track's integrity module; a track without one has no checks
    from pipeline.check.registry import all_checks, modules

    assert not [m for m in modules() if tiny_track in m]
    assert all(c.track != tiny_track for c in all_checks())


def test_without_the_folder_the_track_is_unknown() -> None:
    assert NAME not in track_names()
    assert metric_info("tiny_score").unit == ""  # the neutral entry of an unlisted metric


def _inputs() -> tuple[BenchmarkInput, list[BundleInput]]:
    manifest = {"id": "tiny-demo", "title": "Tiny demo", "track": NAME, "version": "1.0.0",
                "description": "A benchmark of the tiny track.", "confidence": 0.9}
    bench = BenchmarkInput("tiny-demo", NAME, "1.0.0", manifest, {},
                           FileSet("submissions/tiny-demo", {}), "b" * 64)
    bundles = [
        BundleInput(f"b{i}", "tiny-demo", {"system": {"name": name}}, {},
                    FileSet(f"submissions/tiny-demo/b{i}", {"score.txt": value.encode()}),
                    f"{i}" * 64)
        for i, (name, value) in enumerate((("Alpha", "3"), ("Beta", "7"), ("Gamma", "5")))
    ]
    return bench, bundles


def _store(path: Path) -> Path:
    bench, bundles = _inputs()
    scored = score_benchmark(bench, bundles, ScoreContext())
    now = dt.datetime(2024, 6, 1, 12, 0, 0)
    with open_store(path) as store:
        store.set_primary_metrics({NAME: get_track(NAME).primary_metric})
        with store.transaction():
            store.put_benchmark(
                benchmark_id=bench.id, content_hash=bench.content_hash, track=NAME,
                title="Tiny demo", version="1.0.0", description=bench.manifest["description"],
                licence="MIT", created=dt.date(2024, 1, 1), manifest=dict(bench.manifest),
                source_path=bench.files.label, git_commit="0" * 40,
                files={"benchmark.toml": b"id = 'tiny-demo'\n"}, now=now,
            )
            for b in bundles:
                store.put_bundle(
                    benchmark=bench.id, bundle_id=b.id, content_hash=b.content_hash,
                    manifest={**b.manifest, "submitted": dt.date(2024, 2, 1), "licence": "MIT",
                              "description": "", "contact": "x@example.org"},
                    source_path=b.files.label, git_commit="1" * 40, files=dict(b.files.files),
                    now=now,
                )
        store.replace_scores(
            release="current", benchmark=bench.id, benchmark_hash=bench.content_hash,
            track=NAME, rows=scored.rows, charts=scored.charts, code_version="test", seed=1,
            options={}, notes=scored.notes, now=now,
        )
    return path


def test_a_new_track_gets_a_board_without_a_site_change(tiny_track: str, tmp_path: Path) -> None:
    out = tmp_path / "public"
    build_site(_store(tmp_path / "store.duckdb"), out, search=False)
    page = (out / "benchmarks/tiny-demo/index.html").read_text(encoding="utf-8")
    # the board, in rank order by the track's primary metric (higher is better)
    order = [page.index(name) for name in ("Beta", "Gamma", "Alpha")]
    assert order == sorted(order)
    assert "tiny score" in page
    # the track's chart request is drawn, its hidden chart data is not
    mounts = set(re.findall(r'data-spec-href="([^"]+)"', page))
    assert "t-tinytrack-curve.vl.json" in mounts
    assert not any("hidden" in m for m in mounts)
    spec = (out / "benchmarks/tiny-demo/t-tinytrack-curve.vl.json").read_text(encoding="utf-8")
    assert "Each bundle" in spec and "tiny score (pt)" in spec
    # its interval note (at the benchmark's level), methodology and paper
    assert "Intervals: 90 %, plus or minus one." in page
    assert "<p>The tiny measure reads <em>score.txt</em>.</p>" in page
    assert "A Measure Too Small To Fail, Journal of Tests" in page
    assert "@article{tiny2024" in (out / "benchmarks/tiny-demo/cite.bib").read_text()
    assert "@article{tiny2024" in (out / "cite/papers.bib").read_text()
    assert 'title: "A Measure Too Small To Fail"' in (out / "CITATION.cff").read_text()
    about = (out / "about/index.html").read_text(encoding="utf-8")
    assert 'id="track-tinytrack"' in about and "reads <em>score.txt</em>" in about
