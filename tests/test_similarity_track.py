"""The similarity track: settings, runs.csv validation, scoring rows and chart data."""

from __future__ import annotations

import csv
import io
import json
import math
from pathlib import Path
from typing import Any

import pytest
from pydantic import ValidationError

from pipeline.inputs import BenchmarkInput, BundleInput, FileSet
from pipeline.tracks import get_track
from pipeline.tracks.base import ScoreContext
from pipeline.tracks.similarity.settings import BenchmarkSettings, SubmissionSettings

TESTS = ["mnist", "fmnist", "c10", "c100"]
HEADER = "test_a,test_b,p,merge,agent,v_a,v_b,v_ab,seed\n"


def bench(settings: dict[str, Any] | None = None, files: dict[str, bytes] | None = None):
    raw = settings or {"tests": [{"id": t} for t in TESTS]}
    model = BenchmarkSettings.model_validate(raw).model_dump(mode="json")
    return BenchmarkInput(
        "sim", "similarity", "1.0.0", {}, model, FileSet("submissions/sim", files or {})
    )


def bundle(runs: str, bid: str = "b1") -> BundleInput:
    return BundleInput(
        bid,
        "sim",
        {"system": {"name": "cnn"}},
        {},
        FileSet(f"submissions/sim/{bid}", {"runs.csv": runs.encode()}),
    )


GOOD = HEADER + (
    # c10 (0.8) easier than c100 (0.5): S = (0.8 + 0.5 - 2*0.6)/0.3 = 1/3
    # (seeds vary around the means: identical seeds would be a design-forced point)
    "c10,c100,0.5,sampling,cnn,0.8,0.5,0.59,1\n"
    "c10,c100,0.5,sampling,cnn,0.8,0.5,0.61,2\n"
    # written with the harder test first: mnist (0.99) is A; S = (0.99+0.8-2*0.895)/0.19 = 0
    "c10,mnist,0.5,sampling,cnn,0.8,0.99,0.885,1\n"
    "c10,mnist,0.5,sampling,cnn,0.8,0.99,0.905,2\n"
    # mnist vs c100: S = (0.99 + 0.5 - 2*0.6)/0.49 = 0.29/0.49
    "mnist,c100,0.5,sampling,cnn,0.99,0.5,0.59,1\n"
    "mnist,c100,0.5,sampling,cnn,0.99,0.5,0.61,2\n"
)


def validate(runs: str, settings: dict[str, Any] | None = None) -> list[str]:
    t = get_track("similarity")
    return [str(p) for p in t.validate_bundle(bundle(runs), bench(settings))]


# ----------------------------------------------------------------------------- settings
def test_settings_models() -> None:
    s = BenchmarkSettings.model_validate({"tests": [{"id": "a"}, {"id": "b"}]})
    assert s.convention == "paper" and s.merges == ["sampling", "stitching"]
    with pytest.raises(ValidationError, match="unique"):
        BenchmarkSettings.model_validate({"tests": [{"id": "a"}, {"id": "a"}]})
    with pytest.raises(ValidationError):
        BenchmarkSettings.model_validate({"tests": [{"id": "a"}]})  # a suite needs two
    with pytest.raises(ValidationError):
        BenchmarkSettings.model_validate({"tests": [{"id": "a"}, {"id": "b"}], "extra": 1})
    with pytest.raises(ValidationError):
        BenchmarkSettings.model_validate({"tests": [{"id": "a b"}, {"id": "b"}]})
    SubmissionSettings.model_validate({"baseline": "a CNN"})
    for model in (BenchmarkSettings, SubmissionSettings):
        schema = model.model_json_schema()
        assert all("description" in f for f in schema["properties"].values())


def test_track_spec() -> None:
    t = get_track("similarity")
    assert t.primary_metric == "similarity"
    assert set(t.secondary_metrics) == {"dissimilarity", "diversity"}
    from pipeline.tracks import all_metrics

    for m in (t.primary_metric, *t.secondary_metrics):
        assert all_metrics()[m].track == "similarity"


# ----------------------------------------------------------------------------- validation
def test_good_runs_validate() -> None:
    assert validate(GOOD) == []


def test_runs_without_seed_column_validate() -> None:
    runs = "test_a,test_b,p,merge,agent,v_a,v_b,v_ab\nc10,c100,0.5,stitching,cnn,0.8,0.5,0.6\n"
    assert validate(runs) == []


@pytest.mark.parametrize(
    ("row", "expected"),
    [
        ("c10,c100,0.5,sampling,cnn,nan,0.5,0.6,1", "v_a: is NaN"),
        ("c10,c100,0.5,sampling,cnn,0.8,inf,0.6,1", "v_b: is infinite"),
        ("c10,c100,0,sampling,cnn,0.8,0.5,0.6,1", "0 < p < 1"),
        ("c10,c100,1,sampling,cnn,0.8,0.5,0.6,1", "0 < p < 1"),
        ("c10,c100,1.5,sampling,cnn,0.8,0.5,0.6,1", "above the maximum"),
        ("c10,svhn,0.5,sampling,cnn,0.8,0.5,0.6,1", "unknown test 'svhn'"),
        ("c10,c100,0.5,blending,cnn,0.8,0.5,0.6,1", "not one of sampling, stitching"),
        ("c10,c100,0.5,sampling,cnn,0.8,0.5,,1", "v_ab: is empty"),
    ],
)
def test_bad_cells_are_problems(row: str, expected: str) -> None:
    problems = validate(HEADER + row + "\n")
    assert any(expected in p for p in problems), problems


def test_duplicates_after_canonicalisation() -> None:
    runs = (
        HEADER
        + "c10,c100,0.3,sampling,cnn,0.8,0.5,0.6,1\nc100,c10,0.7,sampling,cnn,0.5,0.8,0.6,1\n"
    )
    problems = validate(runs)
    assert len(problems) == 1 and "repeats row 1" in problems[0]
    no_seed = "test_a,test_b,p,merge,agent,v_a,v_b,v_ab\n" + (
        "c10,c100,0.5,sampling,cnn,0.8,0.5,0.6\nc10,c100,0.5,sampling,cnn,0.8,0.5,0.6\n"
    )
    assert any("own seed label" in p for p in validate(no_seed))


def test_columns_and_missing_file() -> None:
    assert any(
        "required column is missing" in p for p in validate("test_a,test_b,p,merge,agent,v_a,v_b\n")
    )
    assert any("unknown column" in p for p in validate(HEADER.strip() + ",x\n"))
    t = get_track("similarity")
    empty = BundleInput("b", "sim", {}, {}, FileSet("x", {}))
    assert any("missing" in str(p) for p in t.validate_bundle(empty, bench()))


def test_merge_restricted_by_benchmark() -> None:
    settings = {"tests": [{"id": t} for t in TESTS], "merges": ["sampling"]}
    row = "c10,c100,0.5,stitching,cnn,0.8,0.5,0.6,1\n"
    assert any("not one of sampling" in p for p in validate(HEADER + row, settings))


def test_published_reference_file() -> None:
    t = get_track("similarity")
    settings = {"tests": [{"id": t} for t in TESTS], "published": "reference/published.csv"}
    good = b"test_a,test_b,similarity,note\nc10,c100,0.651,Table 2\n"
    assert t.validate_benchmark(bench(settings, {"reference/published.csv": good})) == []
    bad = b"test_a,test_b,similarity\nc10,svhn,1.5\n"
    problems = [
        str(p) for p in t.validate_benchmark(bench(settings, {"reference/published.csv": bad}))
    ]
    assert any("above the maximum" in p for p in problems)
    outside = {**settings, "published": "published.csv"}
    assert t.validate_benchmark(bench(outside)) != []


# ----------------------------------------------------------------------------- scoring
def score(runs: str, **options: Any):
    t = get_track("similarity")
    return t.score(bench(), [bundle(runs)], ScoreContext(seed=5, options=options))


def test_score_rows_values_and_keys() -> None:
    res = score(GOOD)
    sim = {r.agent: r for r in res.rows if r.metric == "similarity"}
    assert set(sim) == {"c10|c100", "c10|mnist", "c100|mnist"}  # name order, stable
    assert sim["c10|c100"].value == pytest.approx(1 / 3)
    assert sim["c10|mnist"].value == pytest.approx(0.0, abs=1e-12)
    assert sim["c100|mnist"].value == pytest.approx(0.29 / 0.49)
    d = sim["c10|mnist"].details
    assert d is not None and d["test_a"] == "mnist" and d["test_b"] == "c10"  # A = easier
    r = sim["c10|c100"]
    assert r.ci_low is not None and r.ci_high is not None
    assert r.ci_low < 1 / 3 < r.ci_high and r.details["measurement"] == "sufficient"
    assert all(not r.verified for r in res.rows)
    dis = {r.agent: r for r in res.rows if r.metric == "dissimilarity"}
    assert dis["c10|c100"].value == pytest.approx(2 / 3)
    div = [r for r in res.rows if r.metric == "diversity"]
    assert len(div) == 1 and div[0].agent == "suite"
    expect = ((1 - 1 / 3) + 1 + (1 - 0.29 / 0.49)) / 3
    assert div[0].value == pytest.approx(expect)
    assert div[0].ci_low <= expect <= div[0].ci_high
    assert div[0].details["n_sufficient"] == 3
    json.dumps([r.details for r in res.rows], allow_nan=False)  # JSON-ready


def test_charts_heatmap_and_map() -> None:
    res = score(GOOD)
    heat = res.charts["similarity_heatmap"]
    assert len(heat) == 9  # 3 tests present (declared order) -> 3 x 3 cells
    assert [h["row"] for h in heat[::3]] == ["mnist", "c10", "c100"]
    cell = {(h["row"], h["col"]): h["similarity"] for h in heat}
    assert cell[("c10", "c100")] == cell[("c100", "c10")]
    assert cell[("mnist", "mnist")] == 1.0
    status = {(h["row"], h["col"]): h["status"] for h in heat}
    assert status[("mnist", "mnist")] == "identity" and status[("c10", "c100")] == "ok"
    pts = res.charts["similarity_map"]
    assert [p["test"] for p in pts] == ["mnist", "c10", "c100"]
    json.dumps(res.charts, allow_nan=False)


def test_undefined_and_insufficient_pairs() -> None:
    runs = HEADER + (
        "c10,c100,0.5,sampling,cnn,0.7,0.7,0.6,1\n"  # equally hard: undefined
        "c10,mnist,0.5,sampling,cnn,0.8,0.99,0.7,1\n"  # merge below the harder test
    )
    res = score(runs)
    sim = {r.agent: r for r in res.rows if r.metric == "similarity"}
    assert math.isnan(sim["c10|c100"].value) and "0/0" in sim["c10|c100"].details["why"]
    ins = sim["c10|mnist"]
    # not a measurement: no value, no interval; eq. 3's saturated number kept in the details
    assert math.isnan(ins.value) and ins.ci_low is None and ins.ci_high is None
    assert ins.details["status"] == "insufficient" and ins.details["eq3_value"] == 1.0
    assert ins.details["measurement"] == "insufficient"
    assert ins.details["linear"] > 1.0
    assert any("insufficient on 1 pair" in n for n in res.notes)
    assert any("no 2-D map" in n for n in res.notes)
    status = {(h["row"], h["col"]): h["status"] for h in res.charts["similarity_heatmap"]}
    assert status[("c10", "mnist")] == "insufficient" and status[("c100", "c10")] == "undefined"
    assert status[("mnist", "c100")] == "missing"
    assert res.charts["similarity_map"] == []
    json.dumps(res.charts, allow_nan=False)


def test_several_configurations_get_suffixed_keys() -> None:
    runs = HEADER + (
        "c10,c100,0.5,sampling,cnn,0.8,0.5,0.6,1\n"
        "c10,c100,0.5,stitching,cnn,0.8,0.5,0.7,1\n"
        "c10,c100,0.25,sampling,cnn,0.8,0.5,0.6,1\n"
    )
    res = score(runs)
    keys = sorted(r.agent for r in res.rows if r.metric == "similarity")
    assert keys == [
        "c10|c100 [cnn, sampling, p=0.25]",
        "c10|c100 [cnn, sampling, p=0.5]",
        "c10|c100 [cnn, stitching, p=0.5]",
    ]


def test_convention_option() -> None:
    runs = HEADER + "c10,c100,0.25,sampling,cnn,1.0,0.0,0.25,1\n"
    # p(c10 = A) = 0.25, V_AB at the mixture point: paper S = 1 - 2p = 0.5, mixture S = 0
    assert score(runs).rows[0].value == pytest.approx(0.5)
    assert score(runs, convention="mixture").rows[0].value == pytest.approx(0.0)
    from pipeline.errors import ScoringError

    with pytest.raises(ScoringError):
        score(runs, convention="other")


def test_self_merge_rows() -> None:
    runs = (
        HEADER + "c10,c10,0.5,sampling,cnn,0.8,0.8,0.8,1\nc10,c100,0.5,sampling,cnn,0.8,0.5,0.6,1\n"
    )
    res = score(runs)
    sim = {r.agent: r for r in res.rows if r.metric == "similarity"}
    assert sim["c10|c10"].value == 1.0 and sim["c10|c10"].details["status"] == "identity"


def test_templates_fail_validation_until_filled() -> None:
    t = get_track("similarity")
    assert t.bundle_template is not None and t.benchmark_template is not None
    files = t.bundle_template()
    assert "runs.csv" in files
    assert validate(files["runs.csv"]) != []


def test_validate_and_score_through_the_pipeline(tmp_path: Path) -> None:
    from pipeline.validate import collect

    root = tmp_path / "submissions" / "sim"
    (root / "b1").mkdir(parents=True)
    (root / "benchmark.toml").write_text(
        'id = "sim"\ntitle = "t"\ntrack = "similarity"\nversion = "1.0.0"\n'
        'description = "d"\nlicence = "CC0-1.0"\ncreated = 2020-01-01\n'
        "[similarity]\ntests = [" + ", ".join(f'{{ id = "{t}" }}' for t in TESTS) + "]\n",
        encoding="utf-8",
    )
    (root / "b1" / "submission.toml").write_text(
        'submitted = 2020-01-01\ncontact = "x <x@example.org>"\nlicence = "CC0-1.0"\n'
        '[system]\nname = "cnn"\n[similarity]\nbaseline = "a CNN"\n',
        encoding="utf-8",
    )
    (root / "b1" / "runs.csv").write_text(GOOD, encoding="utf-8")
    report = collect([tmp_path / "submissions"])
    assert report.errors == [], report.errors


def test_published_reference_benchmark_validates() -> None:
    from pipeline.validate import collect

    root = Path(__file__).resolve().parents[1] / "submissions" / "pereyda-holder-2020"
    report = collect([root])
    assert report.errors == []
    text = (root / "reference" / "published.csv").read_text(encoding="utf-8")
    rows = list(csv.DictReader(io.StringIO(text)))
    # every off-diagonal value of Table 3 (which holds Table 2), transcribed from the paper
    assert len(rows) == 10
    assert ("cifar-10", "cifar-100", 0.651) in [
        (r["test_a"], r["test_b"], float(r["similarity"])) for r in rows
    ]
