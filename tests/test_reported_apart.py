"""Reported never outranks verified: ranks, tie groups, board order and the home leader."""

from __future__ import annotations

import math

from hypothesis import given
from hypothesis import strategies as st

from pipeline.ranking import min_ranks, pooled, pooled_groups, ranked_pool
from pipeline.score import rank_rows
from pipeline.site.standings import index_scores, standing
from pipeline.store.rows import ScoreRecord
from pipeline.tracks.base import ScoreRow

VALUES = st.one_of(st.floats(allow_nan=True, allow_infinity=True, width=32), st.none())
ENTRIES = st.lists(st.tuples(VALUES, st.booleans()), min_size=1, max_size=12)


@given(ENTRIES, st.sampled_from(["higher", "lower"]))
def test_reported_never_gets_a_rank_or_group_beside_a_verified_entry(entries, direction):
    values = [v for v, _ in entries]
    verified = [ok for _, ok in entries]
    pool = ranked_pool(verified)
    ranks = min_ranks([v if p else None for v, p in zip(values, pool, strict=True)], direction)
    groups = pooled_groups([(v, None, None) for v in values], direction, pool)
    if any(verified):
        assert all(r is None and g is None for r, g, ok in zip(ranks, groups, verified,
                                                               strict=True) if not ok)
        # the verified entries are ranked as if the reported ones did not exist
        alone = min_ranks([v for v, ok in entries if ok], direction)
        assert [r for r, ok in zip(ranks, verified, strict=True) if ok] == alone
    else:
        assert ranks == min_ranks(values, direction)


@given(st.lists(st.one_of(st.integers(1, 20), st.none()), min_size=1, max_size=12),
       st.lists(st.booleans(), min_size=12, max_size=12))
def test_pooled_ranks_keep_order_and_ties_inside_the_pool(ranks, flags):
    pool = flags[: len(ranks)]
    out = pooled(ranks, pool)
    for (a, pa, oa) in zip(ranks, pool, out, strict=True):
        if not pa or a is None:
            assert oa is None
            continue
        for (b, pb, ob) in zip(ranks, pool, out, strict=True):
            if pb and b is not None:
                assert (a < b) == (oa < ob) and (a == b) == (oa == ob)
    inside = [o for o in out if o is not None]
    assert not inside or min(inside) == 1


def test_scorer_ranks_verified_only_whatever_the_reported_value():
    for forged in (1e308, math.inf, 0.5, -math.inf):
        rows = [ScoreRow("honest", "a", "aiq", 0.3, verified=True),
                ScoreRow("other", "b", "aiq", 0.2, verified=True),
                ScoreRow("forged", "c", "aiq", forged, verified=False)]
        assert rank_rows(rows) == [1, 2, None]
    only_reported = [ScoreRow("x", "a", "aiq", 0.1), ScoreRow("y", "b", "aiq", 0.2)]
    assert rank_rows(only_reported) == [2, 1]


def _rec(bundle, value, verified, rank, lo=None, hi=None):
    return ScoreRecord("current", "b", bundle, "h" + bundle, bundle, "aiq", value, lo, hi, rank,
                       verified, "gmeter test")


def test_board_lists_reported_apart_even_when_stored_ranks_put_it_first():
    # ranks as an older store or frozen file may hold them: the forged entry ranked 1
    scores = [_rec("forged", 99.0, False, 1, 98.0, 100.0), _rec("honest", 0.4, True, 2, 0.3, 0.5),
              _rec("second", 0.35, True, 3, 0.2, 0.45), _rec("weak", 0.1, False, 4)]
    st_ = standing(index_scores(scores), "current", "b", "aiq", "higher")
    order = [(e.bundle, e.rank, e.group, e.apart) for e in st_.entries]
    assert order == [("honest", 1, 1, False), ("second", 2, 1, False),
                     ("forged", None, None, True), ("weak", None, None, True)]
