"""Releases: recorded from the store, immutable, re-read by ingest, scored separately."""

from __future__ import annotations

import datetime as dt

import pytest

from pipeline.errors import ReleaseError
from pipeline.ingest import ingest
from pipeline.release import read_releases, record_release, sync_releases
from pipeline.score import score_all
from pipeline.store import open_store


def test_release_records_hashes_and_is_immutable(subs, db):
    rel_file = subs / "releases.toml"
    with open_store(db) as s:
        ingest(s, [subs])
        rel = record_release(s, rel_file, "2024.1", date=dt.date(2024, 3, 1), notes="first")
        assert rel.bundles["gen-mini/alpha"] == s.current_bundle_hash("gen-mini", "alpha")
        with pytest.raises(ReleaseError, match="already exists"):
            record_release(s, rel_file, "2024.1", date=dt.date(2024, 3, 2))
        with pytest.raises(ReleaseError, match="not a valid"):
            record_release(s, rel_file, "current")
    [parsed] = read_releases(rel_file)
    assert parsed.name == "2024.1" and parsed.notes == "first"


def test_edited_release_is_refused(subs, db):
    rel_file = subs / "releases.toml"
    with open_store(db) as s:
        ingest(s, [subs])
        record_release(s, rel_file, "r1", date=dt.date(2024, 3, 1))
    text = rel_file.read_text()
    rel_file.write_text(text.replace('"gen-mini/alpha" = "', '"gen-mini/alpha" = "0'))
    with open_store(db) as s, pytest.raises(ReleaseError, match="immutable"):
        sync_releases(s, rel_file)


def test_release_scores_survive_later_changes(subs, db):
    rel_file = subs / "releases.toml"
    with open_store(db) as s:
        ingest(s, [subs])
        record_release(s, rel_file, "r1", date=dt.date(2024, 3, 1))
    resp = subs / "gen-mini" / "alpha" / "responses.csv"
    resp.write_text(resp.read_text().replace("A1,i3,1", "A1,i3,0"))
    with open_store(db) as s:
        ingest(s, [subs])
        report = score_all(s)
        assert {(r.release, r.benchmark) for r in report.results} == {
            ("current", "gen-mini"), ("current", "sim-mini"),
            ("r1", "gen-mini"), ("r1", "sim-mini")}
        _, rows = s.query("select release, value from score_history where agent = 'A1' "
                          "and metric = 'capability' order by release")
    (cur, v_now), (r1, v_then) = rows
    assert (cur, r1) == ("current", "r1")
    assert v_now < v_then  # A1 lost item i3 after the release


def test_fresh_store_rebuilds_release_from_file(subs, db, tmp_path):
    rel_file = subs / "releases.toml"
    with open_store(db) as s:
        ingest(s, [subs])
        record_release(s, rel_file, "r1", date=dt.date(2024, 3, 1))
    with open_store(tmp_path / "fresh.duckdb") as s:
        ingest(s, [subs])
        assert sync_releases(s, rel_file) == []
        assert [r[0] for r in s.releases()] == ["r1"]


def test_benchmark_ids_that_prefix_each_other_keep_the_release_stable(subs, db):
    import shutil

    # "gen-mini" is a prefix of "gen-mini-two": as strings "gen-mini-two/..." sorts before
    # "gen-mini/...", as (benchmark, bundle) tuples after; the check must not care.
    shutil.copytree(subs / "gen-mini", subs / "gen-mini-two")
    bench = subs / "gen-mini-two" / "benchmark.toml"
    bench.write_text(bench.read_text().replace('id = "gen-mini"', 'id = "gen-mini-two"'))
    rel_file = subs / "releases.toml"
    with open_store(db) as s:
        ingest(s, [subs])
        record_release(s, rel_file, "r1", date=dt.date(2024, 3, 1))
        assert sync_releases(s, rel_file) == []
