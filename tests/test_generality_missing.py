"""Missing responses never pay (issue 20, item 2), property-tested on every transformation.

For any population and any given response, writing ``NA`` instead must not raise the agent's
ranked score (capability) under the benchmark's default policy (the worst value of the
scale); under ``missing = "exclude"`` the agent is shown with its coverage and, below the
benchmark's minimum coverage, not ranked. Opp cannot take ``NA``: validation refuses it and
scoring never fails on it.
"""

from __future__ import annotations

import math

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from pipeline.errors import ScoringError
from pipeline.inputs import BenchmarkInput, BundleInput, FileSet
from pipeline.tracks.base import ScoreContext, ScoreRow
from pipeline.tracks.generality.data import RAW_BOUND
from pipeline.tracks.generality.settings import BenchmarkSettings
from pipeline.tracks.generality.track import TRACK

ITEMS = ("q1", "q2", "q3", "q4")
AGENTS = ("a", "b", "c", "d")
ITEM_FILE = (
    "item,difficulty,ref_mean,ref_variance\n"
    "q1,1,0.3,0.05\nq2,2,0.4,0.05\nq3,3,0.5,0.05\nq4,4,0.6,0.05\n"
)

#: One benchmark per transformation (and both DRef distributions); bootstrap off for speed.
TRANSFORMS: dict[str, dict[str, object]] = {
    "intrinsic": {"transform": "intrinsic"},
    "intrinsic-eps": {"transform": "intrinsic", "epsilon": 0.2},
    "aref": {"transform": "aref", "reference_agent": "a"},
    "rnk": {"transform": "rnk", "columns": 10},
    "dref-beta": {"transform": "dref", "columns": 10},
    "dref-normal": {"transform": "dref", "columns": 10, "distribution": "normal"},
    "irt": {"transform": "irt", "irt_model": "1pl"},
}
UNIT = {"intrinsic", "intrinsic-eps", "dref-beta", "irt"}


def bench(settings_: dict[str, object], items: bool = True) -> BenchmarkInput:
    s = BenchmarkSettings.model_validate({"bootstrap": 0, **settings_}).model_dump(mode="json")
    fs = FileSet("b", {"reference/items.csv": ITEM_FILE.encode()} if items else {})
    return BenchmarkInput("b", "generality", "1.0.0", {}, s, fs)


def cell(v: float | None) -> str:
    return "NA" if v is None else repr(v)


def bundles(matrix: list[list[float | None]]) -> list[BundleInput]:
    """One bundle per agent (``None`` written as NA)."""
    out = []
    for a, row in zip(AGENTS, matrix, strict=True):
        lines = ["agent,item,value"]
        lines += [f"{a},{i},{cell(v)}" for i, v in zip(ITEMS, row, strict=True)]
        files = {"responses.csv": ("\n".join(lines) + "\n").encode(), "submission.toml": b""}
        out.append(BundleInput(a, "b", {"system": {"name": a}}, {}, FileSet(f"b/{a}", files)))
    return out


def scored(b: BenchmarkInput, matrix: list[list[float | None]]) -> list[ScoreRow]:
    """Validate and score; a population the transform cannot use (IRT with no item that
    separates agents) is not an example."""
    for bd in bundles(matrix):
        assert TRACK.validate_bundle(bd, b) == []
    try:
        return TRACK.score(b, bundles(matrix), ScoreContext()).rows
    except ScoringError:
        assume(False)
        raise


def capability(b: BenchmarkInput, matrix: list[list[float | None]]) -> dict[str, float]:
    return {r.agent: r.value for r in scored(b, matrix) if r.metric == "capability"}


def matrices(unit: bool) -> st.SearchStrategy[list[list[float | None]]]:
    value = (
        st.sampled_from([0.0, 0.25, 0.5, 1.0])
        if unit
        else st.integers(-3, 3).map(float)
    )
    return st.lists(st.lists(value, min_size=4, max_size=4), min_size=4, max_size=4)


SLOW = settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def worst_answer(b: BenchmarkInput, matrix: list[list[float | None]], i: int) -> float:
    """The worst answer an agent could give on item ``i`` (the policy's fill, as a number)."""
    s = BenchmarkSettings.model_validate(dict(b.settings))
    if s.transform in ("intrinsic", "irt") or (s.transform == "dref" and s.distribution == "beta"):
        return 0.0
    return -RAW_BOUND  # the lowest raw score the benchmark accepts


@pytest.mark.parametrize("name", sorted(TRANSFORMS))
@pytest.mark.filterwarnings("ignore::RuntimeWarning")  # IRT on degenerate random populations
@SLOW
@given(data=st.data())
def test_na_scores_exactly_as_the_worst_answer(name: str, data: st.DataObject) -> None:
    """Writing NA is never a strategy: it gives what the worst answer gives, to every agent."""
    b = bench(TRANSFORMS[name])
    matrix = data.draw(matrices(name in UNIT), label="responses")
    j = data.draw(st.integers(1, len(AGENTS) - 1), label="agent")
    i = data.draw(st.integers(0, len(ITEMS) - 1), label="item")
    gap = [row[:] for row in matrix]
    gap[j][i] = None
    worst = [row[:] for row in matrix]
    worst[j][i] = worst_answer(b, gap, i)
    answered = scored(b, worst)
    na = scored(b, gap)
    assert [(r.agent, r.metric) for r in na] == [(r.agent, r.metric) for r in answered]
    for x, y in zip(na, answered, strict=True):
        assert x.value == y.value or (math.isnan(x.value) and math.isnan(y.value)), (x, y)


#: Transforms in which an agent's own answers do not move the difficulties of its items. ARef
#: (the agent is one of the "others" that set an item's difficulty) and IRT (difficulties are
#: fitted to every response) are not monotone in an agent's own answers: a worse answer,
#: given or missing alike, can move an item and change the area either way (docs/security.md).
#: For them the equivalence above is the guarantee: NA gives exactly the worst answer.
MONOTONE = sorted(set(TRANSFORMS) - {"aref", "irt"})


@pytest.mark.parametrize("name", MONOTONE)
@pytest.mark.filterwarnings("ignore::RuntimeWarning")  # IRT on degenerate random populations
@SLOW
@given(data=st.data())
def test_na_never_raises_the_score(name: str, data: st.DataObject) -> None:
    b = bench(TRANSFORMS[name])
    matrix = data.draw(matrices(name in UNIT), label="responses")
    j = data.draw(st.integers(0, len(AGENTS) - 1), label="agent")
    i = data.draw(st.integers(0, len(ITEMS) - 1), label="item")
    before = capability(b, matrix)
    gap = [row[:] for row in matrix]
    gap[j][i] = None
    after = capability(b, gap)
    agent = AGENTS[j]
    if math.isnan(before[agent]):
        return  # nothing ranked to raise
    assert not after[agent] > before[agent] + 1e-12, (name, matrix, agent, ITEMS[i])


@pytest.mark.parametrize("name", ["intrinsic", "rnk"])
@settings(max_examples=10, deadline=None)
@given(data=st.data())
def test_excluded_na_is_not_ranked_below_the_minimum(name: str, data: st.DataObject) -> None:
    b = bench({**TRANSFORMS[name], "missing": "exclude"})  # minimum coverage: every item
    matrix = data.draw(matrices(name in UNIT), label="responses")
    j = data.draw(st.integers(0, len(AGENTS) - 1), label="agent")
    matrix[j][data.draw(st.integers(0, len(ITEMS) - 1), label="item")] = None
    res = TRACK.score(b, bundles(matrix), ScoreContext())
    rows = [r for r in res.rows if r.agent == AGENTS[j]]
    assert rows and all(math.isnan(r.value) for r in rows)
    assert all(r.details and r.details["coverage"] == 0.75 for r in rows)


@settings(max_examples=15, deadline=None)
@given(cells=st.lists(st.sampled_from(["0", "0.5", "1", "NA"]), min_size=6, max_size=6))
def test_opp_na_is_refused_in_validate_and_never_breaks_score(cells: list[str]) -> None:
    b = bench({"transform": "opp"}, items=False)
    games = [("A", "B"), ("A", "C"), ("B", "A"), ("B", "C"), ("C", "A"), ("C", "B")]
    text = "agent,item,value\n" + "".join(
        f"{x},{y},{v}\n" for (x, y), v in zip(games, cells, strict=True)
    )
    files = {"responses.csv": text.encode(), "submission.toml": b""}
    bd = BundleInput("x", "b", {"system": {"name": "x"}}, {}, FileSet("b/x", files))
    refused = [p for p in TRACK.validate_bundle(bd, b) if p.severity == "error"]
    assert bool(refused) == ("NA" in cells)
    res = TRACK.score(b, [bd], ScoreContext())  # never raises
    assert bool(res.rows) == ("NA" not in cells)
