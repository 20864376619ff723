"""Reported never outranks verified: ranks, tie groups, board order and the home leader."""

from __future__ import annotations

import math

import pytest
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


# ----------------------------------------------------------------- every board, real numbers
def _board_records(release: str, rows: list[dict]) -> list[ScoreRecord]:  # type: ignore[type-arg]
    return [ScoreRecord(release, r["benchmark"], r["bundle"], r.get("content_hash") or "h",
                        r["agent"], r["metric"], r.get("value"), r.get("ci_low"),
                        r.get("ci_high"), r.get("rank"), bool(r.get("verified")), "gmeter")
            for r in rows]  # fmt: skip


def assert_reported_apart_on_every_board(boards: dict[str, tuple[str, list[ScoreRecord]]]) -> int:
    """Add a forged reported claim, far better than the leader, to every board; check that
    ranks and tie groups stay over the verified entries, the claim is listed apart and the
    first entry (the home page's leader) is verified wherever one exists. Returns how many
    boards had a verified entry."""
    from pipeline.ranking import min_ranks
    from pipeline.tracks import get_track, metric_info

    checked = 0
    for benchmark, (track, records) in sorted(boards.items()):
        metric = get_track(track).primary_metric
        direction = metric_info(metric, track).direction
        prim = [r for r in records if r.metric == metric]
        if direction == "none" or not prim:
            continue
        honest = standing(index_scores(records), "current", benchmark, metric, direction)
        verified = [e for e in honest.entries if e.primary.verified]
        finite = [r.value for r in prim if r.value is not None and math.isfinite(r.value)]
        best = (max if direction == "higher" else min)(finite, default=0.0)
        for forged_value in (best * 10 + (1 if direction == "higher" else -1),
                             math.inf if direction == "higher" else -math.inf):
            forged = ScoreRecord("current", benchmark, "zz-forged", "hf", "forged", metric,
                                 forged_value, forged_value, forged_value, 1, False, "gmeter")
            st_ = standing(index_scores([*records, forged]), "current", benchmark, metric,
                           direction)
            if not verified:
                continue  # reported among reported: ranked in their own order
            lead = st_.entries[0]
            assert lead.primary.verified, (benchmark, lead)
            mine = [e for e in st_.entries if e.bundle == "zz-forged"]
            assert [(e.rank, e.group, e.apart) for e in mine] == [(None, None, True)], benchmark
            for e in st_.entries:
                assert (e.rank is None and e.group is None) or e.primary.verified, (benchmark, e)
            before = {(e.bundle, e.agent): (e.rank, e.group) for e in honest.entries}
            after = {(e.bundle, e.agent): (e.rank, e.group) for e in st_.entries
                     if e.bundle != "zz-forged"}
            assert before == after, benchmark  # the claim moved nobody
            values = [e.primary.value if e.primary.verified else None for e in st_.entries]
            want = min_ranks(values, direction)
            got = [e.rank for e in st_.entries]
            assert all(g is None or g == w for g, w in zip(got, want, strict=True)) or \
                any(e.primary.rank is not None for e in st_.entries), benchmark
        checked += bool(verified)
    return checked


def test_every_board_of_the_frozen_release_keeps_a_forged_claim_apart():
    from pathlib import Path

    from pipeline.release import read_releases
    from pipeline.store.frozen import read

    root = Path(__file__).resolve().parents[1] / "submissions"
    boards: dict[str, tuple[str, list[ScoreRecord]]] = {}
    for rel in read_releases(root / "releases.toml"):
        if rel.frozen is None:
            continue
        for bench, fb in read(root / rel.frozen.path, rel.frozen.sha256).items():
            key = f"{rel.name}/{bench}"
            boards[key] = (fb.track, _board_records("current", [
                {**r, "benchmark": key} for r in fb.rows]))
    assert boards, "no frozen release to check"
    assert assert_reported_apart_on_every_board(boards) >= 5


# ----------------------------------------------------------------- the built site, every board
def _published_site():  # type: ignore[no-untyped-def]
    import os
    from pathlib import Path

    env = os.environ.get("GMETER_PUBLIC", "").strip()
    if not env:
        return None
    root = Path(__file__).resolve().parents[1]
    site = Path(env) if Path(env).is_absolute() else root / env
    return site if (site / ".gmeter-site").is_file() else None


@pytest.mark.skipif(_published_site() is None,
                    reason="set GMETER_PUBLIC to a site built by `make site` (CI does)")
def test_every_published_board_lists_reported_entries_apart():
    """On the built site (CI: after `make site`), every board with a verified entry leads
    with one — the home page's leader — ranks and groups only verified entries and lists the
    reported ones after them; the same for every frozen release's copy of the board."""
    import json

    site = _published_site()
    assert site is not None
    index = json.loads((site / "api" / "index.json").read_text(encoding="utf-8"))
    boards = [site / b["api"] for b in index["benchmarks"]]
    boards += sorted((site / "api" / "releases").rglob("*.json")) \
        if (site / "api" / "releases").is_dir() else []  # fmt: skip
    checked = 0
    for path in boards:
        data = json.loads(path.read_text(encoding="utf-8"))
        entries = data.get("entries") if isinstance(data, dict) else None
        if not isinstance(entries, list) or not entries:
            continue
        flags = [bool(e.get("verified")) for e in entries]
        if not any(flags):
            continue
        checked += 1
        assert flags[0], (path, entries[0])  # the leader is verified
        assert flags == sorted(flags, reverse=True), path  # reported ones after every verified
        for e in entries:
            if not e.get("verified"):
                assert e.get("rank") is None and e.get("group") is None, (path, e)
    assert checked >= 5
