"""The generality track: settings, validation, scoring rows, charts, populational rescoring."""

from __future__ import annotations

import json
import math
import os

import pytest

from pipeline.errors import ScoringError
from pipeline.inputs import BenchmarkInput, BundleInput, FileSet
from pipeline.tracks.base import ScoreContext
from pipeline.tracks.generality.settings import METRICS, BenchmarkSettings, is_populational
from pipeline.tracks.generality.track import TRACK
from pipeline.validate import load_folder


def bench(settings: dict, files: dict[str, str] | None = None) -> BenchmarkInput:
    s = BenchmarkSettings.model_validate(settings).model_dump(mode="json")
    fs = FileSet("b", {k: v.encode() for k, v in (files or {}).items()})
    return BenchmarkInput("b", "generality", "1.0.0", {}, s, fs)


def bundle(bid: str, responses: str, **extra: str) -> BundleInput:
    files = {"responses.csv": responses.encode(), "submission.toml": b""}
    files.update({k.replace("_", ".", 1): v.encode() for k, v in extra.items()})
    return BundleInput(bid, "b", {"system": {"name": bid}}, {}, FileSet(f"b/{bid}", files))


def long(rows: dict[str, list[float]], items: list[str]) -> str:
    lines = ["agent,item,value"]
    for a, vals in rows.items():
        lines += [f"{a},{i},{v}" for i, v in zip(items, vals, strict=True)]
    return "\n".join(lines) + "\n"


ITEMS = "item,difficulty\nq1,1\nq2,2\nq3,3\nq4,4\n"
INTRINSIC = bench(
    {"transform": "intrinsic", "kmin": 0.0, "bootstrap": 0}, {"reference/items.csv": ITEMS}
)
E1 = long({"a": [1, 1, 0.5, 0], "b": [1, 1, 1, 1]}, ["q1", "q2", "q3", "q4"])


def messages(problems) -> str:
    return " | ".join(f"{p.field}: {p.message}" for p in problems)


# ------------------------------------------------------------------ settings
def test_settings_defaults_and_schema():
    s = BenchmarkSettings()
    assert (s.transform, s.normalisation, s.columns, s.bootstrap) == (
        "intrinsic",
        "paper",
        100,
        200,
    )
    schema = BenchmarkSettings.model_json_schema()
    assert all("description" in f for f in schema["properties"].values())
    with pytest.raises(ValueError):
        BenchmarkSettings.model_validate({"transform": "aref"})  # needs reference_agent
    with pytest.raises(ValueError):
        BenchmarkSettings.model_validate({"capability_range": [1, 0]})
    with pytest.raises(ValueError):
        BenchmarkSettings.model_validate({"unknown": 1})


def test_populational():
    assert is_populational({"transform": "rnk"}) and is_populational({"transform": "opp"})
    assert not is_populational({"transform": "intrinsic"})
    assert TRACK.populational and TRACK.primary_metric == "capability"


# ------------------------------------------------------------------ validation
def test_valid_bundle_has_no_problem():
    assert TRACK.validate_benchmark(INTRINSIC) == []
    assert TRACK.validate_bundle(bundle("x", E1), INTRINSIC) == []


@pytest.mark.parametrize(
    ("text", "expect"),
    [
        ("agent,item\nx,q1\n", "required column is missing"),
        ("agent,item,value,extra\nx,q1,1,2\n", "unknown column"),
        ("agent,item,value\nx,q1,nan\n", "NaN"),
        ("agent,item,value\nx,q1,inf\n", "infinite"),
        ("agent,item,value\nx,q1,1.5\n", "above the maximum"),
        ("agent,item,value\nx,q1,-0.5\n", "below the minimum"),
        ("agent,item,value\nx,q1,abc\n", "not a number"),
        ("agent,item,value\nx,q1,1\nx,q1,0\n", "duplicate"),
        ("agent,item,value\nx,q9,1\n", "not an item of this benchmark"),
        ("agent,item,value\nx,q1\n", "cells"),
        ("agent,item,value\n,q1,1\n", "empty"),
    ],
)
def test_bundle_problems(text, expect):
    problems = TRACK.validate_bundle(bundle("x", text), INTRINSIC)
    assert expect in messages(problems)
    assert all(p.file.startswith("b/x/") for p in problems)


def test_missing_responses_file():
    b = BundleInput("x", "b", {}, {}, FileSet("b/x", {"submission.toml": b""}))
    assert "file is missing" in messages(TRACK.validate_bundle(b, INTRINSIC))


def test_agents_file_checks():
    b = bundle("x", E1, agents_csv="agent,date\na,2020-01-01\nzz,2020-01-02\nb,01/02/2020\n")
    text = messages(TRACK.validate_bundle(b, INTRINSIC))
    assert "has no responses" in text and "not a date" in text


def test_raw_scores_may_be_any_finite_number_for_rnk_and_aref():
    b = bench({"transform": "rnk", "bootstrap": 0})
    assert TRACK.validate_bundle(bundle("x", "agent,item,value\nx,g,12345.5\n"), b) == []
    assert TRACK.validate_bundle(bundle("x", "agent,item,value\nx,g,inf\n"), b) != []


def test_clip_negative_allows_negative_rewards():
    b = bench({"transform": "intrinsic", "clip_negative": True}, {"reference/items.csv": ITEMS})
    text = long({"x": [-0.4, 1, 0, 0]}, ["q1", "q2", "q3", "q4"])
    assert TRACK.validate_bundle(bundle("x", text), b) == []


def test_opp_self_game_must_be_a_draw():
    b = bench({"transform": "opp"})
    text = "agent,item,value\nA,B,1\nB,A,0\nA,A,1\n"
    assert "against itself" in messages(TRACK.validate_bundle(bundle("x", text), b))


def test_benchmark_problems():
    assert "needs the items file" in messages(TRACK.validate_benchmark(bench({})))
    bad = bench({}, {"reference/items.csv": "item,difficulty\nq1,nan\nq1,2\n"})
    assert "NaN" in messages(TRACK.validate_benchmark(bad))
    dup = bench({}, {"reference/items.csv": "item,difficulty\nq1,1\nq1,2\n"})
    assert "duplicate" in messages(TRACK.validate_benchmark(dup))
    beta = bench(
        {"transform": "dref"}, {"reference/items.csv": "item,ref_mean,ref_variance\nc1,0.5,0.3\n"}
    )
    assert "Beta reference" in messages(TRACK.validate_benchmark(beta))
    padded = bench({"pipeline": "padded", "kmin": 0.0}, {"reference/items.csv": ITEMS})
    (warning,) = TRACK.validate_benchmark(padded)
    assert warning.severity == "warning"
    wrong = bench({"transform": "rnk", "epsilon": 0.1})
    assert "intrinsic difficulty only" in messages(TRACK.validate_benchmark(wrong))


# ------------------------------------------------------------------ scoring
def test_score_rows_one_per_agent_and_metric():
    res = TRACK.score(INTRINSIC, [bundle("x", E1)], ScoreContext())
    assert len(res.rows) == 2 * len(METRICS)
    assert {r.metric for r in res.rows} == set(METRICS)
    got = {(r.agent, r.metric): r for r in res.rows}
    assert got[("a", "capability")].value == 3.0  # spec E1
    assert got[("a", "spread")].value == 0.57735026918962473
    assert got[("b", "generality")].value == math.inf
    assert got[("a", "expected_difficulty")].value == 1.5555555555555554
    assert all(r.verified and r.bundle == "x" for r in res.rows)
    assert got[("a", "normalised_generality")].details["normalisation"] == "paper"


def test_every_board_names_the_supplement_case_studies_without_a_board():
    res = TRACK.score(INTRINSIC, [bundle("x", E1)], ScoreContext())
    note = next(n for n in res.notes if "without a board" in n)
    for part in ("object recognition (A.3", "odour span task (A.4", "orangutans (A.9",
                 "not public"):
        assert part in note


def test_score_with_bootstrap_is_seeded():
    b = bench({"transform": "intrinsic", "bootstrap": 50}, {"reference/items.csv": ITEMS})
    bs = [bundle("x", E1)]
    r1 = TRACK.score(b, bs, ScoreContext(seed=1))
    r2 = TRACK.score(b, bs, ScoreContext(seed=1))
    r3 = TRACK.score(b, bs, ScoreContext(seed=2))
    ci = [(r.ci_low, r.ci_high) for r in r1.rows if r.metric in ("capability", "spread")]
    assert ci == [(r.ci_low, r.ci_high) for r in r2.rows if r.metric in ("capability", "spread")]
    assert all(lo is not None and lo <= hi for lo, hi in ci)
    assert ci != [(r.ci_low, r.ci_high) for r in r3.rows if r.metric in ("capability", "spread")]
    cap = next(r for r in r1.rows if r.metric == "capability" and r.agent == "a")
    assert cap.ci_low <= cap.value <= cap.ci_high
    assert cap.details["bootstrap"]["replicates"] == 50


def test_charts_are_json_ready():
    b = bench(
        {"transform": "intrinsic", "kmin": 0.0, "bootstrap": 0}, {"reference/items.csv": ITEMS}
    )
    res = TRACK.score(b, [bundle("x", E1, agents_csv="agent,date\na,2020-01-01\n")], ScoreContext())
    json.dumps(res.charts, allow_nan=False)
    curve = res.charts["generality_acc"]["curves"][0]
    assert curve["x"] == [0.0, 1.0, 1.0, 2.0, 3.0, 4.0]
    assert curve["psi"] == [1.0, 1.0, 1.0, 1.0, 0.5, 0.0]
    cs = res.charts["generality_capability_spread"]
    assert len(cs["isometrics"]["constant"]) == 100 and cs["range"] == [1.0, 4.0]
    assert [p["agent"] for p in res.charts["generality_evolution"]] == ["a"]
    assert res.charts["generality_aggregated_acc"]["capability"] == pytest.approx(3.5)


RNK = bench({"transform": "rnk", "columns": 100, "kmin": 0.0, "kmax": 1.0, "bootstrap": 0})
SCORES = long({"p": [1, 5], "q": [2, 4], "r": [3, 3]}, ["g1", "g2"])


def test_populational_rescoring_changes_everyone():
    before = TRACK.score(RNK, [bundle("one", SCORES)], ScoreContext())
    after = TRACK.score(
        RNK,
        [bundle("one", SCORES), bundle("two", long({"s": [9, 9]}, ["g1", "g2"]))],
        ScoreContext(),
    )
    cap = lambda res: {r.agent: r.value for r in res.rows if r.metric == "capability"}  # noqa: E731
    assert cap(before)["p"] != cap(after)["p"]
    assert set(cap(after)) == {"p", "q", "r", "s"}


def test_same_agent_in_two_bundles_is_refused():
    with pytest.raises(ScoringError, match="appears in bundles"):
        TRACK.score(RNK, [bundle("one", SCORES), bundle("two", SCORES)], ScoreContext())


def test_aref_needs_its_reference_agent():
    b = bench({"transform": "aref", "reference_agent": "human", "bootstrap": 0})
    with pytest.raises(ScoringError, match="reference agent"):
        TRACK.score(b, [bundle("one", SCORES)], ScoreContext())
    ok = TRACK.score(
        b,
        [bundle("one", SCORES), bundle("h", long({"human": [2, 4]}, ["g1", "g2"]))],
        ScoreContext(),
    )
    human = [r for r in ok.rows if r.agent == "human" and r.metric == "capability"]
    assert len(human) == 1


def test_opp_from_long_results():
    b = bench({"transform": "opp", "kmin": 0.0, "bootstrap": 0})
    text = "agent,item,value\nP1,P2,1\nP1,P3,0.5\nP2,P1,0\nP2,P3,1\nP3,P1,0.5\nP3,P2,0\n"
    res = TRACK.score(b, [bundle("t", text)], ScoreContext())
    cap = {r.agent: r.value for r in res.rows if r.metric == "capability"}
    assert cap == {"P1": 1.75, "P2": 1.5, "P3": 1.25}  # spec E13


def test_min_mean_response_leaves_agents_out():
    b = bench(
        {"transform": "intrinsic", "min_mean_response": 0.9, "bootstrap": 0},
        {"reference/items.csv": ITEMS},
    )
    res = TRACK.score(b, [bundle("x", E1)], ScoreContext())
    assert {r.agent for r in res.rows} == {"b"}
    assert any("left out" in n for n in res.notes)


def test_broken_bundle_is_skipped_with_a_note():
    res = TRACK.score(
        INTRINSIC, [bundle("x", E1), bundle("y", "agent,item,value\nz,q1,7\n")], ScoreContext()
    )
    assert {r.bundle for r in res.rows} == {"x"}
    assert any("bundle y skipped" in n for n in res.notes)


def test_grouped_rnk():
    b = bench(
        {"transform": "rnk", "group_items": True, "bootstrap": 0},
        {"reference/items.csv": "item,group\nl1,g\nl2,g\nm1,h\n"},
    )
    text = long({"p": [1, 3, 0], "q": [2, 2, 1]}, ["l1", "l2", "m1"])
    res = TRACK.score(b, [bundle("x", text)], ScoreContext())
    assert any("2 item groups" in n for n in res.notes)


# ------------------------------------------------------------------ folder loader
def test_load_folder_refuses_symlinks(tmp_path):
    (tmp_path / "benchmark.toml").write_text('track = "generality"\n')
    sub = tmp_path / "x"
    sub.mkdir()
    (sub / "submission.toml").write_text("")
    (sub / "responses.csv").write_text(E1)
    bench_fs, bundles = load_folder(tmp_path)
    assert [b.label.rsplit("/", 1)[-1] for b in bundles] == ["x"]
    assert "x/responses.csv" not in bench_fs.files
    os.symlink("/etc/hostname", sub / "link.csv")
    from pipeline.errors import GmeterError

    with pytest.raises(GmeterError, match="symbolic link"):
        load_folder(tmp_path)


# ------------------------------------------------------------------ coverage and missing marks
def test_a_bundle_must_answer_every_item():
    # answering only the item it solved must not rank as if it had answered everything
    only = "agent,item,value\ncheat,q4,1\n"
    text = messages(TRACK.validate_bundle(bundle("x", only), INTRINSIC))
    problems = TRACK.validate_bundle(bundle("x", only), INTRINSIC)
    assert "has no row for 3 of the 4 items" in text and "NA" in problems[0].fix
    res = TRACK.score(INTRINSIC, [bundle("x", E1), bundle("y", only)], ScoreContext())
    assert {r.agent for r in res.rows} == {"a", "b"}
    assert any("bundle y skipped" in n for n in res.notes)


def test_explicit_na_counts_as_the_worst_value_by_default():
    text = "agent,item,value\nc,q1,1\nc,q2,NA\nc,q3,NA\nc,q4,0\n"
    assert TRACK.validate_bundle(bundle("x", text), INTRINSIC) == []
    res = TRACK.score(INTRINSIC, [bundle("x", E1), bundle("y", text)], ScoreContext())
    cap = {r.agent: r for r in res.rows if r.metric == "capability"}
    assert cap["c"].details["missing_items"] == 2 and "missing_items" not in cap["a"].details
    assert any("c (2 of 4)" in n and "worst value" in n for n in res.notes)
    wrong = TRACK.score(
        INTRINSIC, [bundle("y", text.replace("NA", "0"))], ScoreContext()
    )
    same = {r.metric: r.value for r in wrong.rows}
    assert {r.metric: r.value for r in res.rows if r.agent == "c"} == same
    zero = bench(
        {"transform": "intrinsic", "kmin": 0.0, "bootstrap": 0, "missing": "zero"},
        {"reference/items.csv": ITEMS},
    )
    res0 = TRACK.score(zero, [bundle("y", text)], ScoreContext())
    assert {r.metric: r.value for r in res0.rows} == same


def test_excluded_missing_shows_coverage_and_is_unranked_below_the_minimum():
    text = "agent,item,value\nc,q1,1\nc,q2,NA\nc,q3,NA\nc,q4,1\n"
    exclude = {"transform": "intrinsic", "kmin": 0.0, "bootstrap": 0, "missing": "exclude"}
    files = {"reference/items.csv": ITEMS}
    strict = TRACK.score(bench(exclude, files), [bundle("x", E1), bundle("y", text)],
                         ScoreContext())  # fmt: skip
    rows = {(r.agent, r.metric): r for r in strict.rows}
    c = rows[("c", "capability")]
    assert c.details["coverage"] == 0.5 and math.isnan(c.value)
    assert "not ranked" in c.details["why"] and c.details["unranked_value"] is not None
    assert rows[("a", "capability")].details["coverage"] == 1.0
    lenient = TRACK.score(bench({**exclude, "min_coverage": 0.5}, files),
                          [bundle("x", E1), bundle("y", text)], ScoreContext())  # fmt: skip
    shown = {(r.agent, r.metric): r for r in lenient.rows}[("c", "capability")]
    assert shown.value == c.details["unranked_value"] and shown.details["coverage"] == 0.5
    assert shown.details["display"]["label"] == "coverage 50%"
    assert c.details["display"] == {"value": shown.value, "label": "not ranked",
                                    "note": c.details["why"]}  # fmt: skip
    with pytest.raises(ValueError):
        BenchmarkSettings.model_validate({"min_coverage": 0.5})  # needs missing = exclude


def test_opp_refuses_na_in_validate_and_score_never_fails():
    b = bench({"transform": "opp", "bootstrap": 0})
    text = "agent,item,value\nA,B,1\nA,C,NA\nB,A,0\nB,C,1\nC,A,1\nC,B,0\n"
    text_ok = text.replace("NA", "0")
    refused = messages(TRACK.validate_bundle(bundle("x", text), b))
    assert "Opp needs a score for every game" in refused
    assert TRACK.validate_bundle(bundle("x", text_ok), b) == []
    res = TRACK.score(b, [bundle("x", text)], ScoreContext())
    assert res.rows == [] and any("skipped" in n for n in res.notes)


def test_opp_self_game_is_optional_for_coverage():
    b = bench({"transform": "opp"})
    text = "agent,item,value\nA,B,1\nB,A,0\n"
    assert TRACK.validate_bundle(bundle("x", text), b) == []


@pytest.mark.parametrize(
    "bad",
    [
        {"kmin": float("inf")},
        {"kmax": float("nan")},
        {"kmin": 1e12},
        {"kmin": 2.0, "kmax": 1.0},
        {"min_mean_response": float("-inf")},
        {"capability_range": [0.0, 1e300]},
        {"irt_range": [1.0, 1.0]},
        {"difficulty_bins": 10**6},
        {"transform": "rnk", "missing": "zero"},
    ],
)
def test_numeric_settings_have_domains(bad):
    with pytest.raises(ValueError):
        BenchmarkSettings.model_validate(bad)


def test_benchmark_raw_scale_maps_onto_unit_interval():
    raw = long({"h": [1, 0, -0.25, 1]}, ["q1", "q2", "q3", "q4"])
    scaled = bench(
        {"transform": "intrinsic", "kmin": 0.0, "bootstrap": 0, "raw_scale": [-0.25, 1.0]},
        {"reference/items.csv": ITEMS},
    )
    assert TRACK.validate_bundle(bundle("h", raw), scaled) == []
    res = TRACK.score(scaled, [bundle("h", raw)], ScoreContext())
    direct = TRACK.score(
        INTRINSIC,
        [bundle("h", long({"h": [1, 0.2, 0, 1]}, ["q1", "q2", "q3", "q4"]))],
        ScoreContext(),
    )
    assert [r.value for r in res.rows] == [r.value for r in direct.rows]
    below = bundle("h", raw.replace("-0.25", "-0.5"))
    assert "below the minimum -0.25" in messages(TRACK.validate_bundle(below, scaled))


def test_a_bundle_cannot_set_a_rule():
    """Every field of the benchmark's section given in submission.toml is refused by name."""
    from pydantic import ValidationError

    from pipeline.tracks.generality.settings import BENCHMARK_RULES, SubmissionSettings

    assert {"raw_scale", "missing", "transform", "min_coverage"} <= BENCHMARK_RULES
    for field in sorted(BENCHMARK_RULES):
        with pytest.raises(ValidationError, match=f"{field}: the benchmark owns"):
            SubmissionSettings.model_validate({field: None})
    assert SubmissionSettings.model_validate({"notes": "x"}).notes == "x"
