"""Ranks, tie groups and number formats shared by the site, ``check`` and the scorer."""

from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pipeline.ranking import fmt_interval, fmt_num, min_ranks, rank_groups
from pipeline.score import rank_rows
from pipeline.tracks import all_metrics
from pipeline.tracks.base import ScoreRow

# --------------------------------------------------------------------------- ranks and groups


def test_min_ranks_share_ties_and_skip_nan() -> None:
    # values 3, 5, 5, 1, NaN (higher better): 5s share rank 1, then 3 is 3rd, 1 is 4th
    assert min_ranks([3.0, 5.0, 5.0, 1.0, math.nan], "higher") == [3, 1, 1, 4, None]
    # lower is better: 1 first, 3 second, the 5s share 3rd
    assert min_ranks([3.0, 5.0, 5.0, 1.0, None], "lower") == [2, 3, 3, 1, None]


def test_rank_groups_hand_derived() -> None:
    # A: 10 [8, 12], B: 9 [8.5, 9.5], C: 7 [6.5, 7.4], D: 5 [4, 6.6]
    # g_A = 1 + #{l_j > 12} = 1; g_B = 1 + #{l_j > 9.5} = 1 (no lower bound above 9.5)
    # g_C = 1 + #{l_j > 7.4} = 1 + |{A (8), B (8.5)}| = 3; g_D = 1 + #{l_j > 6.6} = 3 (A, B)
    rows = [(10.0, 8.0, 12.0), (9.0, 8.5, 9.5), (7.0, 6.5, 7.4), (5.0, 4.0, 6.6)]
    assert rank_groups(rows, "higher") == [1, 1, 3, 3]


def test_rank_groups_lower_is_better_and_missing() -> None:
    # errors: A 1 [0.5, 1.5], B 2 [1.8, 2.2], C NaN; B is surely worse than A (h_A < l_B)
    rows = [(1.0, 0.5, 1.5), (2.0, 1.8, 2.2), (math.nan, None, None)]
    assert rank_groups(rows, "lower") == [1, 2, None]


@given(
    st.lists(
        st.tuples(st.floats(-1e6, 1e6), st.floats(0, 100), st.floats(0, 100)),
        min_size=1,
        max_size=30,
    )
)
def test_groups_never_exceed_ranks(items: list[tuple[float, float, float]]) -> None:
    rows = [(v, v - a, v + b) for v, a, b in items]
    groups = rank_groups(rows, "higher")
    ranks = min_ranks([v for v, _, _ in rows], "higher")
    assert all(
        g is not None and r is not None and g <= r for g, r in zip(groups, ranks, strict=True)
    )
    assert min(g for g in groups if g is not None) == 1
    # without intervals the groups are the competition ranks
    assert rank_groups([(v, None, None) for v, _, _ in rows], "higher") == ranks


def test_rank_groups_overlapping_intervals_and_point_values() -> None:
    # A [0.8, 0.9], B [0.75, 0.85] overlaps A -> group 1; C [0.5, 0.7] lies below A's and B's
    # lower bounds (0.8 and 0.75 > 0.7) -> 1 + 2 = 3; D without interval 0.6: below A, B -> 3.
    groups = rank_groups([(0.85, 0.8, 0.9), (0.8, 0.75, 0.85), (0.6, 0.5, 0.7), (0.6, None, None)],
                         "higher")
    assert groups == [1, 1, 3, 3]
    # Lower is better mirrors it: A [1, 2] is best; B [3, 4] is surely worse than A only.
    assert rank_groups([(1.5, 1.0, 2.0), (3.5, 3.0, 4.0), (math.nan, None, None)],
                       "lower") == [1, 2, None]


# --------------------------------------------------------------------------- formatting


@pytest.mark.parametrize(
    ("value", "text"),
    [
        (None, "—"),
        (math.nan, "NaN"),
        (math.inf, "∞"),
        (-math.inf, "-∞"),
        (0.0, "0"),
        (61.873, "61.87"),
        (0.51234, "0.5123"),
        (12345.6, "12346"),
        (1.5e-5, "1.500e-05"),
        (-2.5, "-2.500"),
    ],
)
def test_fmt_num(value: float | None, text: str) -> None:
    assert fmt_num(value) == text


def test_fmt_interval() -> None:
    assert fmt_interval(1.0, 2.0) == "[1.000, 2.000]"
    assert fmt_interval(None, 2.0) == ""


@given(
    st.lists(
        st.tuples(
            st.sampled_from(sorted(all_metrics())),
            st.one_of(st.floats(allow_nan=True, allow_infinity=True), st.sampled_from([0.0, 1.0])),
        ),
        max_size=25,
    )
)
def test_scorer_ranks_each_metric_by_its_direction(items: list[tuple[str, float]]) -> None:
    """``rank_rows`` = 1 + the rows of the same metric strictly better; NaN unranked."""
    rows = [ScoreRow(f"b{i}", "a", metric, value) for i, (metric, value) in enumerate(items)]
    ranks = rank_rows(rows)
    for row, rank in zip(rows, ranks, strict=True):
        if math.isnan(row.value):
            assert rank is None
            continue
        sign = -1 if all_metrics()[row.metric].direction == "lower" else 1
        better = [o for o in rows if o.metric == row.metric and not math.isnan(o.value)
                  and sign * o.value > sign * row.value]
        assert rank == 1 + len(better)
