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
        # r1 is frozen: its numbers are read, never recomputed (only errata are)
        assert {(r.release, r.benchmark) for r in report.results} == {
            ("current", "gen-mini"), ("current", "sim-mini"), ("r1", "(frozen)")}
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


# --------------------------------------------------------------------------- history from git


def _git(root, *args):
    from tests.check_fixtures import git

    return git(root, *args)


def _history(tmp_path, subs_src):
    """A git repository: ingest + release r1, correct, release r2, correct again (committed)."""
    import shutil

    repo = tmp_path / "repo"
    subs = repo / "submissions"
    shutil.copytree(subs_src, subs)
    _git(repo, "init", "-q", "-b", "main")
    _git(repo, "add", "-A")
    _git(repo, "commit", "-q", "-m", "benchmarks")
    db = tmp_path / "orig.duckdb"
    resp = subs / "gen-mini" / "alpha" / "responses.csv"
    rel_file = subs / "releases.toml"
    with open_store(db) as s:
        ingest(s, [subs])
        r1 = record_release(s, rel_file, "r1", date=dt.date(2024, 3, 1), notes="first\r\nline")
    assert not r1.uncommitted and r1.sources["gen-mini/alpha"].commit
    _git(repo, "add", "-A")
    _git(repo, "commit", "-q", "-m", "release r1")
    resp.write_text(resp.read_text().replace("A1,i3,1", "A1,i3,0"))
    _git(repo, "commit", "-q", "-am", "correct one response")
    with open_store(db) as s:
        ingest(s, [subs])
        record_release(s, rel_file, "r2", date=dt.date(2024, 4, 1))
    _git(repo, "add", "-A")
    _git(repo, "commit", "-q", "-m", "release r2")
    resp.write_text(resp.read_text().replace("A1,i2,1", "A1,i2,0"))
    _git(repo, "commit", "-q", "-am", "correct again")
    with open_store(db) as s:
        ingest(s, [subs])
        score_all(s)
    return repo, db


def _release_scores(db):
    with open_store(db, read_only=True) as s:
        return s.query("select release, benchmark, bundle, agent, metric, value, rank "
                       "from score_history where release <> 'current' "
                       "order by all")[1]


def test_fresh_clone_rebuilds_every_release_from_git(tmp_path):
    from tests.conftest import GOOD

    repo, db = _history(tmp_path, GOOD)
    clone = tmp_path / "clone"
    _git(tmp_path, "clone", "-q", str(repo), str(clone))
    fresh = tmp_path / "fresh.duckdb"
    subs = clone / "submissions"
    with open_store(fresh) as s:
        ingest(s, [subs])
        assert sync_releases(s, subs / "releases.toml") == []
        assert [r[0] for r in s.releases()] == ["r1", "r2"]
        report = score_all(s)
        assert not report.failed
    before, after = _release_scores(db), _release_scores(fresh)
    assert {r[0] for r in after} == {"r1", "r2"}
    assert after == before
    # r1, r2 and current differ for A1's capability: three distinct versions came back
    caps = {r[0]: r[5] for r in after if r[3] == "A1" and r[4] == "capability"}
    assert caps["r1"] > caps["r2"]


def test_release_entry_without_sources_is_found_in_history(tmp_path):
    """Entries written before gmeter recorded commits are recovered from git log."""
    import re

    from tests.conftest import GOOD

    repo, _ = _history(tmp_path, GOOD)
    rel_file = repo / "submissions" / "releases.toml"
    text = re.sub(r"\[release\.sources\]\n(\".+\n)+", "", rel_file.read_text())
    assert "sources" not in text
    rel_file.write_text(text)
    with open_store(tmp_path / "f.duckdb") as s:
        ingest(s, [repo / "submissions"])
        assert sync_releases(s, rel_file) == []
        assert [r[0] for r in s.releases()] == ["r1", "r2"]


def test_unrecoverable_version_is_named_and_never_stops_the_others(tmp_path):
    """Releases cut from files never committed: r3 (unfrozen) is missing, r4 (frozen) publishes."""
    import re
    import shutil

    from tests.conftest import GOOD

    repo = tmp_path / "repo"
    subs = repo / "submissions"
    shutil.copytree(GOOD, subs)
    _git(repo, "init", "-q", "-b", "main")
    _git(repo, "add", "-A")
    _git(repo, "commit", "-q", "-m", "benchmarks")
    db = tmp_path / "orig.duckdb"
    rel_file = subs / "releases.toml"
    resp = subs / "gen-mini" / "alpha" / "responses.csv"
    resp.write_text(resp.read_text().replace("A1,i1,1", "A1,i1,0"))  # never committed
    with open_store(db) as s:
        ingest(s, [subs])
        lost = s.bundles()
        record_release(s, rel_file, "r3", date=dt.date(2024, 5, 1))
        record_release(s, rel_file, "r4", date=dt.date(2024, 6, 1))
    lost_hash = next(b.content_hash for b in lost if b.id == "alpha")
    _git(repo, "checkout", "--", str(resp))
    # r3 as a release without frozen numbers (cut by an older gmeter, before any frozen one):
    # it needs every version it names
    text = rel_file.read_text()
    r3 = text.index('name = "r3"')
    r4 = text.index("[[release]]", r3)
    text = text[:r3] + re.sub(r"\[release\.frozen\]\npath = .*\nsha256 = .*\n", "",
                              text[r3:r4]) + text[r4:]
    rel_file.write_text(text)
    (subs / "releases" / "r3.csv").unlink()
    _git(repo, "add", "-A")
    _git(repo, "commit", "-q", "-m", "releases r3 and r4")
    with open_store(tmp_path / "f.duckdb") as s:
        ingest(s, [subs])
        problems = sync_releases(s, rel_file)
        assert [r[0] for r in s.releases()] == ["r4"]
        _, missing = s.query("select name from missing_releases")
        assert missing == [("r3",)]
        assert not score_all(s).failed
    assert [(p.severity, p.field) for p in problems] == [("warning", "release r3"),
                                                         ("warning", "release r4")]
    assert f"gen-mini/alpha@{lost_hash[:12]}" in problems[0].message
    assert "cannot be recovered" in problems[0].message and "not published" in problems[0].message
    assert "frozen numbers are published" in problems[1].message


def test_release_notes_with_control_characters_round_trip(subs, db):
    rel_file = subs / "releases.toml"
    notes = 'a\rb\\c"""\n[release.x]\t\'\'\'\r\n'
    with open_store(db) as s:
        ingest(s, [subs])
        record_release(s, rel_file, "r1", date=dt.date(2024, 3, 1), notes=notes)
        with pytest.raises(ReleaseError, match="U\\+001B"):
            record_release(s, rel_file, "r2", date=dt.date(2024, 3, 1), notes="x\x1b[2J")
    [parsed] = read_releases(rel_file)
    assert parsed.notes == notes


def test_score_of_unknown_benchmark_or_release_is_a_usage_error(subs, db):
    from pipeline.errors import UsageError

    with open_store(db) as s:
        ingest(s, [subs])
        with pytest.raises(UsageError, match="nosuch"):
            score_all(s, benchmarks=["nosuch"])
        with pytest.raises(UsageError, match="r9"):
            score_all(s, releases=["r9"])


def test_identical_bundles_in_two_benchmarks_are_recovered_separately(tmp_path):
    """The ALE case: one bundle's files in two benchmarks share a content hash."""
    import shutil

    from tests.conftest import GOOD

    repo = tmp_path / "repo"
    subs = repo / "submissions"
    shutil.copytree(GOOD, subs)
    shutil.copytree(subs / "gen-mini", subs / "gen-two")
    bench = subs / "gen-two" / "benchmark.toml"
    bench.write_text(bench.read_text().replace('id = "gen-mini"', 'id = "gen-two"'))
    _git(repo, "init", "-q", "-b", "main")
    _git(repo, "add", "-A")
    _git(repo, "commit", "-q", "-m", "two benchmarks")
    rel_file = subs / "releases.toml"
    db = tmp_path / "orig.duckdb"
    with open_store(db) as s:
        ingest(s, [subs])
        r1 = record_release(s, rel_file, "r1", date=dt.date(2024, 3, 1))
    assert r1.bundles["gen-mini/alpha"] == r1.bundles["gen-two/alpha"]
    resp = subs / "gen-two" / "alpha" / "responses.csv"
    resp.write_text(resp.read_text().replace("A1,i3,1", "A1,i3,0"))
    _git(repo, "add", "-A")
    _git(repo, "commit", "-q", "-m", "release r1, correct gen-two")
    with open_store(db) as s:
        ingest(s, [subs])
        record_release(s, rel_file, "r2", date=dt.date(2024, 4, 1))
        score_all(s)
    _git(repo, "add", "-A")
    _git(repo, "commit", "-q", "-m", "release r2")
    clone = tmp_path / "clone"
    _git(tmp_path, "clone", "-q", str(repo), str(clone))
    fresh = tmp_path / "fresh.duckdb"
    with open_store(fresh) as s:
        ingest(s, [clone / "submissions"])
        assert sync_releases(s, clone / "submissions" / "releases.toml") == []
        assert s.has_bundle_version("gen-two", "alpha", r1.bundles["gen-two/alpha"])
        assert not score_all(s).failed
    assert _release_scores(fresh) == _release_scores(db)


def test_releases_are_cut_on_main_only(tmp_path):
    import shutil
    import subprocess

    from tests.conftest import GOOD

    repo = tmp_path / "repo"
    shutil.copytree(GOOD, repo / "submissions")
    _git(repo, "init", "-q", "-b", "feature")
    _git(repo, "add", "-A")
    _git(repo, "commit", "-q", "-m", "x")
    rel_file = repo / "submissions" / "releases.toml"
    with open_store(tmp_path / "s.duckdb") as s:
        ingest(s, [repo / "submissions"])
        with pytest.raises(ReleaseError, match="cut on 'main' only"):
            record_release(s, rel_file, "r1", date=dt.date(2024, 3, 1))
        subprocess.run(["git", "-C", str(repo), "checkout", "-q", "--detach"], check=True)
        with pytest.raises(ReleaseError, match="detached"):
            record_release(s, rel_file, "r1", date=dt.date(2024, 3, 1))
        assert not rel_file.exists()
        subprocess.run(["git", "-C", str(repo), "checkout", "-q", "-b", "main"], check=True)
        assert record_release(s, rel_file, "r1", date=dt.date(2024, 3, 1)).frozen is not None
