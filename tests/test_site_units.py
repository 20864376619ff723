"""Unit tests of the site's pure parts: standings, links, charts."""

from __future__ import annotations

import json
import math
import re
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pipeline.site.chartdata import as_matrix, clean
from pipeline.site.linkcheck import check_site, parse_links
from pipeline.site.model import href, raw_path, safe_segment, safe_url, slugify, system_slugs
from pipeline.site.render import dumps, render
from pipeline.site.standings import diff_standings, index_scores, sparkline, standing
from pipeline.site.track_charts import generic_chart, track_charts
from pipeline.store.rows import RunRecord, ScoreRecord
from pipeline.tracks import get_track, track_names
from pipeline.tracks.presentation import Presentation, as_records


def _shown(track: str) -> Presentation:
    return get_track(track).presentation


def _score(
    bundle: str, metric: str, value: float, rank: int | None = None, **kw: object
) -> ScoreRecord:
    base: dict[str, object] = {
        "release": "current",
        "benchmark": "b",
        "content_hash": "h" + bundle,
        "agent": bundle,
        "ci_low": None,
        "ci_high": None,
        "verified": True,
        "code_version": "1",
    }
    base.update(kw)
    return ScoreRecord(bundle=bundle, metric=metric, value=value, rank=rank, **base)  # type: ignore[arg-type]


def test_standing_orders_by_rank_and_keeps_suite_rows_apart() -> None:
    scores = [
        _score("x", "aiq", 5.0, 2),
        _score("y", "aiq", 9.0, 1),
        _score("z", "aiq", math.nan),
        _score("s", "diversity", 0.3),
    ]
    st_ = standing(index_scores(scores), "current", "b", "aiq", "higher")
    assert [e.bundle for e in st_.entries] == ["y", "x", "z"]
    assert [k for k, _ in st_.others] == [("s", "s")]


def test_standing_without_stored_ranks_recomputes_them() -> None:
    scores = [_score("a", "spread", 0.3), _score("b", "spread", 0.1)]  # lower is better
    st_ = standing(index_scores(scores), "current", "b", "spread", "lower")
    assert [(e.bundle, e.rank) for e in st_.entries] == [("b", 1), ("a", 2)]


def test_diff_standings_says_why() -> None:
    old = standing(
        index_scores([_score("a", "aiq", 5.0, 1), _score("b", "aiq", 4.0, 2)]),
        "current",
        "b",
        "aiq",
        "higher",
    )
    new_scores = [
        _score("a", "aiq", 5.5, 2, content_hash="h2"),
        _score("b", "aiq", 6.0, 1, code_version="2"),
        _score("c", "aiq", 1.0, 3),
    ]
    new = standing(index_scores(new_scores), "current", "b", "aiq", "higher")
    run = RunRecord("current", "b", "bh", "aiq", "1", ())
    changes = diff_standings(
        old, new, old_run=run, new_run=run, populational=False, labels={"aiq": "AIQ"}
    )
    kinds = {(c.kind, c.bundle): c for c in changes}
    assert "new bundle version" in kinds[("changed", "a")].why
    assert "code version 1 → 2" in kinds[("changed", "b")].why
    assert kinds[("rank", "a")].detail == "1 → 2"
    assert ("new", "c") in kinds
    assert kinds[("changed", "a")].detail == "AIQ 5.000 → 5.500"


def test_populational_recomputation_is_named() -> None:
    old = standing(
        index_scores([_score("a", "capability", 1.0, 1)]), "current", "b", "capability", "higher"
    )
    new = standing(
        index_scores([_score("a", "capability", 0.9, 1), _score("n", "capability", 2.0, 1)]),
        "current",
        "b",
        "capability",
        "higher",
    )
    changes = diff_standings(old, new, old_run=None, new_run=None, populational=True, labels={})
    changed = [c for c in changes if c.kind == "changed"]
    assert changed and "populational" in changed[0].why


def test_sparkline() -> None:
    assert sparkline([("a", 1.0)]) is None
    assert sparkline([("a", 1.0), ("b", math.nan)]) is None
    s = sparkline([("r1", 1.0), ("r2", 2.0), ("current", 3.0)])
    assert s is not None and s.path == "M0 14L30 8L60 2"
    flat = sparkline([("r1", 1.0), ("r2", 1.0)])
    assert flat is not None and flat.path == "M0 8L60 8"


# --------------------------------------------------------------------------- names and links


def test_href_is_relative() -> None:
    assert href("benchmarks/x/index.html", "systems/y/") == "../../systems/y/"
    assert href("index.html", "") == "./"
    assert href("releases/r1/index.html", "releases/r1/changelog/") == "changelog/"
    assert (
        href("releases/r1/benchmarks/b/index.html", "assets/site.css")
        == "../../../../assets/site.css"
    )


def test_raw_paths_cannot_escape_or_be_served_as_html() -> None:
    h = "ab" * 10
    assert re.fullmatch(r"files/abababababababab/etc/passwd~[0-9a-f]{8}\.txt",
                        raw_path(h, "../../etc/passwd"))
    assert re.fullmatch(r"files/\w+/notes\.html~[0-9a-f]{8}\.txt", raw_path(h, "notes.html"))
    assert re.fullmatch(r"files/\w+/programs/t_1~[0-9a-f]{8}\.json",
                        raw_path(h, "programs/t 1.json"))
    assert re.fullmatch(r"files/\w+/hidden/x~[0-9a-f]{8}\.csv", raw_path(h, ".hidden/x.csv"))
    # a file's own name is kept when it is safe as it is
    assert raw_path(h, "programs/t1.json") == "files/abababababababab/programs/t1.json"
    assert raw_path(h, "trace.csv.gz") == "files/abababababababab/trace.csv.gz"
    # names that sanitise or suffix alike never meet at one address
    for a, b in [("a b.csv", "a_b.csv"), ("x.foo", "x.foo.txt"), ("a%b.csv", "a&b.csv"),
                 ("notes.html", "notes.html.txt")]:
        assert raw_path(h, a) != raw_path(h, b), (a, b)
    assert raw_path("ab" * 10, "traces/run.csv.gz").endswith("traces/run.csv.gz")  # gzip stays .gz


def test_safe_url() -> None:
    assert safe_url("javascript:alert(1)") is None
    assert safe_url("data:text/html,x") is None
    assert safe_url("https://example.org/a?b=1") == "https://example.org/a?b=1"
    assert safe_url("http:///nohost") is None


def test_slugs() -> None:
    assert slugify("</script><script>alert(1)</script>") == "script-script-alert-1-script"
    assert slugify("Ünïcode Name") == "unicode-name"
    assert slugify("!!!") == "item"
    slugs = system_slugs({"A B", "a-b", "C"})
    assert slugs["a-b"] == "a-b"  # already a slug: its own
    assert slugs["C"].startswith("c-") and len(slugs["C"]) == 10
    assert slugs["A B"] != slugs["a-b"] and slugs["A B"].startswith("a-b-")
    # stable: a name's slug never depends on the other names
    assert system_slugs({"A B"})["A B"] == slugs["A B"]
    assert system_slugs({"C", "c"})["C"] == slugs["C"]
    assert safe_segment("2024.1") == "2024.1"
    assert safe_segment("../x").startswith("x-")


# --------------------------------------------------------------------------- charts


def test_chart_data_shapes() -> None:
    assert as_records({"a": 1, "b": 2}) == [{"name": "a", "value": 1}, {"name": "b", "value": 2}]
    assert as_records({"s": [1, 2]}) == [
        {"series": "s", "index": 0, "value": 1},
        {"series": "s", "index": 1, "value": 2},
    ]
    labels, m = as_matrix({"labels": ["x", "y"], "matrix": [[1, 0.5], [0.5, 1]]}) or ((), [])
    assert labels == (["x", "y"], ["x", "y"]) and m[0][1] == 0.5
    assert as_matrix({"x": {"a": 1}, "y": {"b": 2}}) == (
        (["x", "y"], ["a", "b"]),
        [[1.0, None], [None, 2.0]],
    )
    assert clean([{"v": math.inf, "w": 1.23456789}]) == [{"v": None, "w": 1.23457}]


@pytest.mark.parametrize(
    "data",
    [
        {"not": "drawable"},
        "text",
        42,
        None,
        [],
        [1, "a"],
        {"curves": "oops"},
        [{"x": [1, 2]}],
    ],
)
def test_unknown_chart_data_never_breaks(data: object) -> None:
    """Every track's drawers and the generic chart read odd data without raising."""
    for track in track_names():
        shown = _shown(track)
        for name in [*shown.charts, *shown.hidden, "brand_new_chart"]:
            assert isinstance(track_charts("k", name, data, shown), list), (track, name)
    assert isinstance(track_charts("k", "brand_new_chart", data), list)


FIELDS = ["curves", "agent", "bundle", "x", "y", "psi", "points", "isometrics", "capability",
          "constant", "maximum", "spread", "normalised_generality", "date", "records", "row",
          "col", "similarity", "value", "test", "config", "p", "pair", "sweep", "series",
          "episode_length", "aiq", "ci_low", "ci_high", "length", "fraction", "drawn", "labels",
          "matrix", "rows", "cols", "title", "size", "field", "label", "unit"]
"""Keys the drawers read: near-miss data reaches their deep paths."""

JSON = st.recursive(
    st.none() | st.booleans() | st.integers(-5, 5) | st.floats() | st.text(max_size=4),
    lambda inner: st.lists(inner, max_size=4)
    | st.dictionaries(st.sampled_from(FIELDS) | st.text(max_size=3), inner, max_size=5),
    max_leaves=25,
)


@settings(deadline=None)  # a shared machine: Altair's first template build can take 300 ms
@given(JSON)
def test_hostile_chart_data_never_raises(data: object) -> None:
    """No drawer of any track, nor the generic chart, raises on data it cannot read."""
    for track in track_names():
        shown = _shown(track)
        for name in shown.charts:
            assert isinstance(track_charts("k", name, data, shown), list)
    assert isinstance(track_charts("k", "brand_new_chart", data), list)


def test_generic_charts_have_titles_axes_tooltips_and_alt() -> None:
    scatter = generic_chart(
        "k",
        "theta_vs_samples",
        [{"system": "a", "samples": 1, "theta": 0.5}, {"system": "b", "samples": 2, "theta": 0.7}],
    )
    assert scatter is not None
    text = json.dumps(scatter.spec)
    assert scatter.title == "Theta vs samples"
    assert scatter.spec["description"] == scatter.alt
    assert '"tooltip"' in text and '"title": "Samples"' in text
    heat = generic_chart("h", "m", {"labels": ["a", "b"], "matrix": [[1, 0], [0, 1]]})
    assert heat is not None and heat.spec["datasets"]["values"][1]["value"] == 0
    bars = generic_chart("b", "per_test", {"x": 1.0, "y": 2.0})
    assert bars is not None and bars.table_rows == (("x", "1"), ("y", "2"))


def test_known_track_charts() -> None:
    acc = track_charts(
        "acc",
        "generality_acc",
        {
            "curves": [
                {"agent": "a", "x": [0, 1], "psi": [1, 0]},
                {"agent": "b", "x": [0, 2], "psi": [1, 0]},
            ]
        },
        _shown("generality"),
    )
    assert len(acc) == 1 and len(acc[0].spec["datasets"]["values"]) == 4
    heat = track_charts(
        "s",
        "similarity_heatmap",
        [
            {"bundle": "b1", "row": "A", "col": "B", "similarity": 0.4},
            {"bundle": "b2", "row": "A", "col": "B", "similarity": 0.6},
        ],
        _shown("similarity"),
    )
    assert [c.key for c in heat] == ["s", "s-2"]


# --------------------------------------------------------------------------- rendering


def test_tojson_escapes_script_breakers() -> None:
    out = render("_macros.html", None)  # macros only: renders to whitespace
    assert out.strip() == ""
    from pipeline.site.render import _tojson

    assert (
        str(_tojson({"a": "</script><b>&'"}))
        == '{"a":"\\u003c/script\\u003e\\u003cb\\u003e\\u0026\\u0027"}'
    )
    assert dumps({"b": math.nan, "a": [math.inf]}) == '{"a":[null],"b":null}'


# --------------------------------------------------------------------------- link checker


def test_parse_links_skips_json_islands() -> None:
    text = (
        '<a href="x/">x</a><script type="application/json" id="s">{"href":"nope"}</script>'
        '<link rel="stylesheet" href="a.css"><img src="https://cdn.example/x.png">'
    )
    links, ids = parse_links(text)
    assert links == [("x/", False), ("a.css", True), ("https://cdn.example/x.png", True)]
    assert ids == set()  # the JSON island (and its id) is not part of the link graph


def test_check_site_finds_every_kind_of_broken_link(tmp_path: Path) -> None:
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "index.html").write_text('<h1 id="top">t</h1>')
    (tmp_path / "index.html").write_text(
        '<a href="sub/">ok</a><a href="sub/#top">ok</a><a href="sub">ok</a>'
        '<a href="https://example.org/">ok</a><a href="mailto:x@y.z">ok</a>'
        '<a href="gone/">bad</a><a href="sub/#nope">bad</a><a href="/abs">bad</a>'
        '<a href="../out.html">bad</a><script src="https://cdn.example/v.js"></script>'
        '<a href="javascript:alert(1)">bad</a>'
    )
    broken = check_site(tmp_path)
    assert sorted(b.link for b in broken) == sorted(
        [
            "gone/",
            "sub/#nope",
            "/abs",
            "../out.html",
            "https://cdn.example/v.js",
            "javascript:alert(1)",
        ]
    )
    assert {b.reason for b in broken} >= {"missing file", "missing #fragment"}


# --------------------------------------------------------------------------- spec fields


def _encoded_fields(node: object, data: str | None, out: dict[str, set[str]]) -> None:
    """Collect, per named data set, every field a (layered) spec's encodings read."""
    if isinstance(node, list):
        for v in node:
            _encoded_fields(v, data, out)
        return
    if not isinstance(node, dict):
        return
    if isinstance(node.get("data"), dict) and "name" in node["data"]:
        data = node["data"]["name"]
    if "transform" in node:
        return  # derived fields (filters only here) are not read from the records
    enc = node.get("encoding")
    if isinstance(enc, dict) and data:
        for channel in enc.values():
            for c in channel if isinstance(channel, list) else [channel]:
                if isinstance(c, dict) and isinstance(c.get("field"), str):
                    out.setdefault(data, set()).add(c["field"])
    for k, v in node.items():
        if k in ("layer", "hconcat", "vconcat", "concat", "spec"):
            _encoded_fields(v, data, out)


def _assert_fields_present(spec: dict) -> None:
    fields: dict[str, set[str]] = {}
    _encoded_fields(spec, None, fields)
    assert fields, "no encodings found"
    for name, wanted in fields.items():
        for rec in spec["datasets"][name]:
            missing = wanted - set(rec)
            assert not missing, (name, missing, rec)


def test_every_chart_kind_has_every_field_it_encodes() -> None:
    from pipeline.site import charts as ch

    made = [
        ch.interval_chart(
            "i",
            [
                {"entry": "R2D2", "collection": "ALE", "value": 1.0, "low": 0.5, "high": 1.0,
                 "value_text": "1", "interval": "[0.5, 1]", "group": "1",
                 "tied": "tied with the leader"},
                {"entry": "APE-X", "value": 0.9, "low": 0.8, "high": 0.95, "value_text": "0.9",
                 "interval": "", "group": "1", "tied": "tied with the leader"},
            ],
            title="t", x=("capability", ""), what="w",
        ),
        ch.line_chart("l", [{"x": "2024-01-01", "y": 1.0, "label": "a"},
                            {"x": "2024-02-01", "y": 2.0}],
                      title="t", x=("date", ""), y=("y", ""), what="w", temporal=True,
                      draw_labels=True),
        ch.line_chart("b", [{"x": 1, "y": 1.0, "low": 0.5, "high": 1.5, "series": "s"},
                            {"x": 10, "y": 2.0, "series": "s"}],
                      title="t", x=("x", ""), y=("y", ""), what="w", log_x=True),
        ch.scatter_chart("s", [{"x": 1, "y": 2, "series": "gpt2", "size": 3},
                               {"x": 2, "y": 1, "label": "b", "size": 1}],
                         title="t", x=("x", ""), y=("y", ""), size=("g", ""), labels=True,
                         curves=[{"curve": "c", "x": 0, "y": 0, "end": True}]),
        ch.heatmap_chart("h", (["a", "b"], ["a", "b"]), [[1, 0.5], [0.5, 1]],
                         title="t", value=("S", "")),
        ch.bar_chart("r", [{"label": "a", "value": 1, "value_text": "1"}], title="t",
                     category="c", value=("v", "")),
    ]
    made += track_charts("a", "generality_acc",
                         {"curves": [{"agent": "a", "x": [0, 1], "psi": [1, 0]}]},
                         _shown("generality"))
    made += track_charts("c", "generality_capability_spread", {
        "points": [{"agent": "a", "capability": 1, "spread": 0.5, "normalised_generality": 0.2}],
        "isometrics": {"capability": [0, 1, 2], "constant": [0, 0.5, 0], "maximum": [0, 1, 0]}},
        _shown("generality"))
    made += track_charts("m", "similarity_map", [{"test": "A", "x": 0.1, "y": 0.2},
                                                 {"test": "B", "x": -0.1, "y": 0.0}],
                         _shown("similarity"))
    made += track_charts("e", "aiq_vs_episode_length", [
        {"agent": "q", "episode_length": 100, "aiq": 10, "ci_low": 9, "ci_high": 11},
        {"agent": "q", "episode_length": 1000, "aiq": 12}], _shown("aiq"))
    made += track_charts("g", "gindex_published", [
        {"system": "gpt2-345m-2", "companion": 7955, "paper": 7900},
        {"system": "gpt2-1-5b-1", "companion": 6464, "paper": 6400}], _shown("gindex"))
    made += track_charts("z", "brand_new_bubbles", {
        "records": [
            {"system": "a", "x": 1, "y": 2, "g": 3},
            {"system": "b", "x": 2, "y": 1, "g": 4},
        ],
        "size": {"field": "g", "label": "g-index"}})
    assert len(made) >= 12
    for c in made:
        _assert_fields_present(c.spec)


def test_step_marks_of_the_generality_track() -> None:
    """A spread in (0, 1e-5) is a step (the padded pipeline's ramps); the values stay raw."""
    import numpy as np

    from pipeline.tracks.generality.score import _display, step_marks

    ones, zeros = np.ones(5), np.zeros(5)
    mixed = np.array([1.0, 1.0, np.nan, 0.0])
    assert step_marks(2.86102294921875e-06, ones)["where"] == "all_solved"
    assert step_marks(2.885751351573516e-06, zeros)["where"] == "none_solved"
    assert step_marks(1e-6, mixed)["where"] == "step"
    for s in (0.0, 1e-5, 0.3, float("nan"), float("inf")):
        assert step_marks(s, ones) is None
    step = step_marks(2.86e-06, ones)
    assert step is not None
    assert _display("spread", step)["value"] == 0.0
    assert _display("generality", step)["value"] == "inf"
    assert _display("capability", step) is None


def test_shown_value_follows_a_display_convention() -> None:
    from pipeline.site.standings import shown_value
    from pipeline.store.rows import ScoreRecord

    def rec(value: float, display: object = None) -> ScoreRecord:
        return ScoreRecord("current", "b", "x", "h", "a", "spread", value, None, None, None,
                           True, "0", display)

    assert shown_value(rec(0.25)) == ("0.2500", "", "")
    text, mark, tip = shown_value(rec(2.861e-06, {"value": 0.0, "label": "step", "note": "n"}))
    assert (text, mark) == ("0", "step") and "2.861e-06" in tip
    assert shown_value(rec(3.5e5, {"value": "inf", "label": "step"}))[0] == "∞"
    # anything else is ignored: the computed value is shown
    for bad in ({"value": "nope"}, {"value": float("nan")}, ["inf"], {"value": True}):
        assert shown_value(rec(0.5, bad)) == ("0.5000", "", "")


# --------------------------------------------------------------------------- published store


def test_concurrent_builds_publish_one_compacted_store(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """DuckDB never writes the same bytes twice: the first compacted copy of a store is kept.

    Two stores built in turn keep each their copy (no build deletes another's fresh one), and
    a build that finishes compacting after another build of the same store publishes the
    other's bytes, so building twice from one store gives one file whatever runs beside it.
    """
    import itertools

    import pipeline.store
    from pipeline.site import exports

    monkeypatch.setenv("GMETER_CACHE_DIR", str(tmp_path / "cache"))
    copies = itertools.count()
    race: list[Path] = []

    def compact(src: Path, dest: Path) -> None:  # a new byte string on every call, as DuckDB
        dest.write_bytes(src.read_bytes() + f"#{next(copies)}".encode())
        for winner in race:  # another build of this store finished first
            winner.write_bytes(b"theirs")

    monkeypatch.setattr(pipeline.store, "compact_copy", compact)
    a, b = tmp_path / "a.duckdb", tmp_path / "b.duckdb"
    a.write_bytes(b"store a")
    b.write_bytes(b"store b")
    out = tmp_path / "out"
    out.mkdir()
    exports._publish_duckdb(a, out / "a1")
    exports._publish_duckdb(b, out / "b1")
    exports._publish_duckdb(a, out / "a2")
    assert (out / "a1").read_bytes() == (out / "a2").read_bytes() == b"store a#0"
    c = tmp_path / "c.duckdb"
    c.write_bytes(b"store c")
    race.append(tmp_path / "cache" / "duckdb" / f"{exports.copy_key(c)}.duckdb")
    exports._publish_duckdb(c, out / "c1")
    assert (out / "c1").read_bytes() == b"theirs"
    assert not list((tmp_path / "cache" / "duckdb").glob("*.tmp"))


def test_files_written_after_the_link_check_count_only_when_named(tmp_path: Path) -> None:
    """The build checks links while Pagefind runs, before the manifest is written: the
    manifest is named as a later file; any other missing file is still broken."""
    (tmp_path / "a").mkdir()
    (tmp_path / "a" / "index.html").write_text(
        '<a href="../data/manifest.json">m</a> <a href="../data/other.json">o</a>'
    )
    before = {(b.page, b.link) for b in check_site(tmp_path)}
    assert before == {("a/index.html", "../data/manifest.json"),
                      ("a/index.html", "../data/other.json")}  # fmt: skip
    after = check_site(tmp_path, later=("data/manifest.json",))
    assert [(b.page, b.link) for b in after] == [("a/index.html", "../data/other.json")]


def test_compiled_templates_are_kept_and_a_damaged_one_is_compiled_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from pipeline.site import render

    monkeypatch.setenv("GMETER_CACHE_DIR", str(tmp_path))
    sample = "_macros.html"
    try:
        render.environment.cache_clear()
        made = render.environment().get_template(sample)
        kept = sorted((tmp_path / "jinja").glob("*.cache"))
        assert kept  # compiled once, kept
        render.environment.cache_clear()
        again = render.environment().get_template(sample)  # from the kept code
        assert again.module.__dict__.keys() == made.module.__dict__.keys()
        for f in kept:
            f.write_bytes(b"damaged")
        render.environment.cache_clear()
        assert render.environment().get_template(sample) is not None  # compiled again
    finally:
        render.environment.cache_clear()
