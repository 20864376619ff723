"""Chart slips: equal-scale maps, date ticks, labels that never overlap, readable legends,
the most capable curves, and a data table for every chart; constant columns and variants."""

from __future__ import annotations

import csv
import io
import itertools
import math
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from site_fixtures import make_store

from pipeline.site import charts as ch
from pipeline.site import svgrender
from pipeline.site.assemble import constant_columns
from pipeline.site.build import build_site
from pipeline.site.standings import Entry
from pipeline.store.rows import ScoreRecord
from pipeline.tracks.aiq.charts import draw_episode_lengths
from pipeline.tracks.generality.charts import CURVE_LIMIT, draw_acc


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    root = tmp_path_factory.mktemp("charts")
    build_site(make_store(root / "store.duckdb", big=40), root / "public")
    yield root / "public"
    shutil.rmtree(root, ignore_errors=True)


def _figures(html: str) -> list[str]:
    return html.split('<figure class="chart')[1:]


def test_every_chart_has_a_data_table_and_its_csv(site: Path) -> None:
    seen = 0
    for page in sorted(site.glob("**/index.html")):
        for fig in _figures(page.read_text(encoding="utf-8")):
            seen += 1
            assert '<table class="data">' in fig, page
            link = fig.split('type="text/csv"')[0].rsplit('href="', 1)[1].split('"')[0]
            rows = list(csv.reader(io.StringIO((page.parent / link).read_text(encoding="utf-8"))))
            shown = fig.split("<tbody>")[1].split("</tbody>")[0].count("<tr>")
            assert 1 <= shown <= len(rows) - 1, (page, link)
            if shown < len(rows) - 1:  # a long table says where the rest is
                assert f"of {len(rows) - 1} rows" in fig
    assert seen > 20


def _recs(*pairs: tuple[float, float]) -> list[dict[str, object]]:
    return [{"label": f"p{i}", "x": x, "y": y} for i, (x, y) in enumerate(pairs)]


@settings(max_examples=25, deadline=None)
@given(st.lists(st.tuples(st.floats(-5, 5), st.floats(-5, 5)), min_size=2, max_size=30))
def test_equal_maps_give_both_axes_one_scale(points: list[tuple[float, float]]) -> None:
    spec = ch.scatter_chart(
        "m", _recs(*points), title="t", x=("a", ""), y=("b", ""), equal=True
    ).spec
    layer = spec["layer"][-1]["encoding"]
    (x0, x1), (y0, y1) = layer["x"]["scale"]["domain"], layer["y"]["scale"]["domain"]
    assert math.isclose(x1 - x0, y1 - y0, rel_tol=1e-4)
    for x, y in points:
        assert x0 <= x <= x1 and y0 <= y <= y1
    for width in (svgrender.WIDE, svgrender.NARROW):
        drawn = svgrender.sized(spec, width)
        assert drawn["width"] == drawn["height"] and drawn["autosize"] == {"type": "pad"}


def test_date_axes_tick_in_days_never_hours() -> None:
    near = [{"x": "2026-11-22", "y": 1.0}, {"x": "2026-11-23", "y": 2.0}]
    far = [{"x": "2024-01-01", "y": 1.0}, {"x": "2026-11-23", "y": 2.0}]
    for recs in (near, far):
        made = ch.line_chart(
            "t", recs, title="t", x=("d", ""), y=("v", ""), what="w", temporal=True
        )
        axis = made.spec["layer"][0]["encoding"]["x"]["axis"]
        assert axis["format"] == ch.DATE_FORMAT
        ticks = axis.get("tickCount")
        if recs is near:
            assert ticks == {"interval": "day", "step": 1}
        else:
            assert ticks is None  # Vega's calendar ticks (months, years), printed as dates


def test_a_flat_line_gets_a_scale_around_its_value() -> None:
    recs = [{"x": 1, "y": 7955.37}, {"x": 2, "y": 7955.37}]
    spec = ch.line_chart("t", recs, title="t", x=("a", ""), y=("v", ""), what="w").spec
    lo, hi = spec["layer"][0]["encoding"]["y"]["scale"]["domain"]
    assert lo < 7955.37 < hi


def _box(r: dict[str, object], spec_recs: list[dict[str, object]]) -> tuple[float, ...]:
    w, h, cw, lh = ch.LABEL_PX
    xs = [float(p["x"]) for p in spec_recs]  # type: ignore[arg-type]
    ys = [float(p["y"]) for p in spec_recs]  # type: ignore[arg-type]
    sx = w / (max(xs) - min(xs)) if ch._span(min(xs), max(xs)) else 0.0
    sy = h / (max(ys) - min(ys)) if ch._span(min(ys), max(ys)) else 0.0
    px, py = (float(r["x"]) - min(xs)) * sx, (max(ys) - float(r["y"])) * sy  # type: ignore[arg-type]
    width = cw * len(str(r["label"]))
    dx = float(r["dx"])  # type: ignore[arg-type]
    left = px + dx if r["side"] == "r" else px + dx - width
    return (left, py - lh / 2, left + width, py + lh / 2)


@settings(max_examples=50, deadline=None)
@given(st.lists(st.tuples(st.floats(0, 1), st.floats(0, 1)), min_size=2, max_size=40))
def test_drawn_labels_never_overlap(points: list[tuple[float, float]]) -> None:
    placed, dropped = ch.place_labels(_recs(*points))
    drawn = [r for r in placed if r["side"]]
    assert len(drawn) + dropped == len(points)
    assert drawn  # the first label always has room
    for a, b in itertools.combinations([_box(r, placed) for r in drawn], 2):
        assert a[2] <= b[0] or b[2] <= a[0] or a[3] <= b[1] or b[3] <= a[1]


def test_characteristic_curves_are_the_most_capable() -> None:
    n = CURVE_LIMIT + 7
    # agent k's curve is flat at k / n: capability grows with the id, so "first by id" fails
    curves = [
        {"agent": f"a{k:02d}", "x": [0.0, 1.0, 2.0], "psi": [k / n] * 3} for k in range(n)
    ]
    (req,) = draw_acc({"curves": curves})
    shown = {r["series"] for r in req.records}  # type: ignore[attr-defined]
    assert shown == {f"a{k:02d}" for k in range(n - CURVE_LIMIT, n)}
    assert f"{CURVE_LIMIT} most capable of {n}" in req.title  # type: ignore[attr-defined]


def test_aiq_legends_name_agents_not_module_paths() -> None:
    rows = [
        {"agent": "Random, EL 1000", "series": "random", "episode_length": 1000, "aiq": 0.1},
        {
            "agent": "Tabular Q-learning (Gymnasium), EL 1000",
            "series": "gym:tests.aiq_fixtures.cleanrl_qlearning:make_agent",
            "episode_length": 1000,
            "aiq": 41.4,
        },
    ]
    (req,) = draw_episode_lengths(rows)
    names = {r["series"] for r in req.records}  # type: ignore[attr-defined]
    assert names == {"random", "Tabular Q-learning (Gymnasium)"}


def _entry(bundle: str, **values: float) -> Entry:
    recs = {
        m: ScoreRecord(
            release="current",
            benchmark="b",
            bundle=bundle,
            content_hash="h",
            agent=bundle,
            metric=m,
            value=v,
            ci_low=None,
            ci_high=None,
            rank=None,
            verified=True,
            code_version="1",
        )
        for m, v in values.items()
    }
    return Entry(bundle, bundle, "h", next(iter(recs.values())), recs, 1, 1)


def test_constant_columns_are_found_and_varying_ones_kept() -> None:
    entries = [_entry(b, g_index=i, omega_mean=0.0, theta_mean=i / 10) for i, b in enumerate("abc")]
    assert [m for m, _ in constant_columns(entries, ["omega_mean", "theta_mean"])] == [
        "omega_mean"
    ]
    assert constant_columns(entries[:1], ["omega_mean"]) == []  # one row: nothing to compare


def test_a_compact_chart_keeps_its_texts_and_rounds_only_its_shapes() -> None:
    import re

    from pipeline.site.svgrender import NARROW, WIDE, compact, render

    recs = [{"label": f"p{k}.123456", "x": k / 7, "y": (k * k) / 13} for k in range(12)]
    spec = ch.scatter_chart("t", recs, title="t", x=("a", ""), y=("b", ""), labels=True).spec
    for width in (WIDE, NARROW):
        svg = render(spec, width).text
        raw = svg  # render() already compacts: compacting again changes nothing
        assert compact(raw) == raw
        texts = re.findall(r">([^<>]+)</text>", raw)
        assert any(re.fullmatch(r"p\d+\.123456", t) for t in texts), texts  # never rounded
        for value in re.findall(r'\s(?:d|transform)="([^"]*)"', raw):
            assert not re.search(r"\.\d{3}", value), value
        assert raw.count("font-family=") == 1


def test_a_pages_new_charts_drawn_side_by_side_equal_those_drawn_one_by_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """draw_page (threads) stores the drawings render() would make; deferral is respected."""
    from pipeline.site import svgrender
    from pipeline.site.svgrender import NARROW, WIDE, batched, draw_page, render

    specs = [ch.scatter_chart(f"c{k}", [{"label": f"p{i}", "x": i * k, "y": i / (k + 1)}
                                        for i in range(6)], title="t", x=("a", ""),
                              y=("b", ""), labels=True).spec for k in range(1, 4)]  # fmt: skip
    monkeypatch.setenv("GMETER_CACHE_DIR", str(tmp_path / "serial"))
    serial = [render(s, w) for s in specs for w in (WIDE, NARROW)]
    monkeypatch.setenv("GMETER_CACHE_DIR", str(tmp_path / "threads"))
    assert draw_page(specs, (WIDE, NARROW)) == 6
    assert len(list((tmp_path / "threads" / "svg").glob("*.svg"))) == 6
    assert draw_page(specs, (WIDE, NARROW)) == 0  # all drawn: nothing to do
    assert [render(s, w) for s in specs for w in (WIDE, NARROW)] == serial
    # a batch that would defer these keeps them for the pool (nothing drawn here)
    monkeypatch.setenv("GMETER_CACHE_DIR", str(tmp_path / "deferred"))
    monkeypatch.setattr(svgrender, "DEFER_AFTER", 4)
    with batched() as batch:
        assert draw_page(specs, (WIDE, NARROW)) == 0
        assert batch.misses == 0
    with batched() as batch:
        assert draw_page(specs[:2], (WIDE,)) == 2
        assert batch.misses == 2  # counted as render() counts a chart it draws
