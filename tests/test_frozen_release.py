"""Frozen releases: numbers written once, read back exactly, never recomputed, tamper refused."""

from __future__ import annotations

import datetime as dt
import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pipeline import score as score_mod
from pipeline.errors import ReleaseError
from pipeline.ingest import ingest
from pipeline.release import freeze_release, read_releases, record_release, sync_releases
from pipeline.score import score_all
from pipeline.store import CURRENT, open_store
from pipeline.store.frozen import parse, render, sha256_of
from pipeline.untrusted import FORMULA_START, csv_cell, csv_uncell


def _release(subs, db, name="r1"):
    rel_file = subs / "releases.toml"
    with open_store(db) as s:
        ingest(s, [subs])
        rel = record_release(s, rel_file, name, date=dt.date(2024, 3, 1))
    return rel_file, rel


def _numbers(db, release):
    with open_store(db, read_only=True) as s:
        return s.release_rows(release)


def test_release_writes_every_published_number_and_reads_it_back_exactly(subs, db):
    rel_file, rel = _release(subs, db)
    assert rel.frozen is not None and "r1" in rel.frozen.path
    frozen = subs / rel.frozen.path
    data = frozen.read_bytes()
    assert sha256_of(data) == rel.frozen.sha256 == read_releases(rel_file)[0].frozen.sha256
    rows = _numbers(db, "r1")
    current = _numbers(db, CURRENT)
    # every score, chart and run of the state released is in the file
    assert len(rows["scores"]) == len(current["scores"]) > 0
    assert {c["name"] for c in rows["charts"]} == {c["name"] for c in current["charts"]}
    assert render(rows) == data
    # a fresh store reads exactly those bytes back
    fresh = db.parent / "fresh.duckdb"
    with open_store(fresh) as s:
        ingest(s, [subs])
        assert sync_releases(s, rel_file) == []
        assert render(s.release_rows("r1")) == data


def test_new_code_never_changes_a_frozen_release_only_errata(subs, db, monkeypatch):
    _release(subs, db)
    before = _numbers(db, "r1")
    real = score_mod.score_benchmark

    def drifted(bench, bundles, ctx):  # "new code": every value moves a little
        out = real(bench, bundles, ctx)
        for r in out.rows:
            if r["value"] is not None and math.isfinite(r["value"]):
                r["value"] = r["value"] * 1.5 + 1.0
        return out

    monkeypatch.setattr(score_mod, "score_benchmark", drifted)
    with open_store(db) as s:
        report = score_all(s, force=True)
        (frozen,) = [r for r in report.results if r.release == "r1"]
        assert frozen.status == "frozen" and "values differ" in frozen.notes[0]
        _, errata = s.query("select differ, compared from release_errata where release = 'r1'")
    (differ, compared), = errata
    assert 0 < differ <= compared
    assert _numbers(db, "r1") == before
    from pipeline.site.build import read_snapshot

    with open_store(db, read_only=True) as s:
        snap = read_snapshot(s)
    (e,) = snap.errata
    assert f"{differ} values differ" in e.text() and "recomputed with gmeter" in e.text()


TAMPERS = {
    "value": lambda b: b.replace(b",score,", b",score,", 1)[:-30] + b"9" + b[-29:],
    "row-deleted": lambda b: b"\n".join(b.split(b"\n")[:-2]) + b"\n",
    "appended": lambda b: b + b"score,gen-mini,x,,y,capability,99.0,,,1,true,g,,\n",
    "empty": lambda b: b"",
    "bom": lambda b: b"\xef\xbb\xbf" + b,
}


@pytest.mark.parametrize("how", sorted(TAMPERS))
def test_a_tampered_frozen_file_is_refused_naming_it_and_others_publish(subs, db, how):
    rel_file, rel = _release(subs, db, "r1")
    with open_store(db) as s:
        ingest(s, [subs])
        record_release(s, rel_file, "r2", date=dt.date(2024, 4, 1))
    target = subs / rel.frozen.path
    target.write_bytes(TAMPERS[how](target.read_bytes()))
    for store in (db, db.parent / f"fresh-{how}.duckdb"):  # the store that had it, and a new one
        with open_store(store) as s:
            ingest(s, [subs])
            problems = sync_releases(s, rel_file)
            assert [r[0] for r in s.releases()] == ["r2"]
            _, missing = s.query("select name, reason from missing_releases")
            assert [m[0] for m in missing] == ["r1"]
            assert s.release_rows("r1")["scores"] == []
            assert not score_all(s).failed
        (p,) = problems
        assert str(target) in p.file and "tampered" in p.message


def test_missing_or_linked_frozen_file_is_refused(subs, db, tmp_path):
    rel_file, rel = _release(subs, db)
    target = subs / rel.frozen.path
    copy = tmp_path / "elsewhere.csv"
    copy.write_bytes(target.read_bytes())
    target.unlink()
    target.symlink_to(copy)
    with open_store(db) as s:
        (p,) = sync_releases(s, rel_file)
        assert "regular file" in p.message and str(target) in p.file
    target.unlink()
    with open_store(db) as s:
        (p,) = sync_releases(s, rel_file)
        assert "missing" in p.message


def test_freeze_of_an_older_release_adds_its_file_once(subs, db):
    import re

    rel_file, rel = _release(subs, db)
    (subs / rel.frozen.path).unlink()
    rel_file.write_text(re.sub(r"\[release\.frozen\]\n.*\n.*\n", "", rel_file.read_text()))
    with open_store(db) as s:
        s.drop_release("r1")
        assert sync_releases(s, rel_file) == []
        frozen = freeze_release(s, rel_file, "r1")
        assert frozen.frozen is not None and (subs / frozen.frozen.path).is_file()
        with pytest.raises(ReleaseError, match="already frozen"):
            freeze_release(s, rel_file, "r1")
    assert read_releases(rel_file)[0].frozen == frozen.frozen


def test_frozen_path_outside_releases_folder_is_refused(subs, db):
    from pipeline.errors import ValidationFailed

    rel_file, rel = _release(subs, db)
    text = rel_file.read_text()
    for bad in ("../../etc/passwd", "releases/r2.csv", "/tmp/x.csv", "releases/../r1.csv"):
        rel_file.write_text(text.replace(f'path = "{rel.frozen.path}"', f'path = "{bad}"'))
        with pytest.raises(ValidationFailed):
            read_releases(rel_file)


@given(st.text(max_size=30))
def test_csv_cells_never_start_a_formula_and_round_trip(text):
    cell = csv_cell(text)
    assert csv_uncell(cell) == text
    assert not cell or cell[0] not in FORMULA_START - {"'"}


def test_parse_refuses_garbage_without_traceback():
    from pipeline.store.frozen import FrozenError

    for data in (b"", b"\xff\xfe", b"kind\n", b"a,b\n" * 3, render({"runs": [], "charts": [],
                                                                      "scores": []}) + b"x,y\n"):
        with pytest.raises(FrozenError):
            parse(data, "f.csv")


def _git(repo, *args):
    import subprocess

    return subprocess.run(["git", "-c", "user.name=m", "-c", "user.email=m@example.org", *args],
                          cwd=repo, check=True, capture_output=True, text=True).stdout


def _make_committed(tmp_path):
    """A repository on main with releases r1 and r2 recorded, frozen and committed."""
    import shutil

    from tests.conftest import GOOD

    repo = tmp_path / "repo"
    subs = repo / "submissions"
    shutil.copytree(GOOD, subs)
    _git(repo, "init", "-q", "-b", "main")
    _git(repo, "add", "-A")
    _git(repo, "commit", "-q", "-m", "benchmarks")
    db = tmp_path / "store.duckdb"
    rel_file = subs / "releases.toml"
    with open_store(db) as s:
        ingest(s, [subs])
        r1 = record_release(s, rel_file, "r1", date=dt.date(2024, 3, 1))
        record_release(s, rel_file, "r2", date=dt.date(2024, 4, 1))
    _git(repo, "add", "-A")
    _git(repo, "commit", "-q", "-m", "releases")
    return repo, subs, rel_file, r1


@pytest.fixture(scope="module")
def committed_template(tmp_path_factory):
    return _make_committed(tmp_path_factory.mktemp("committed"))


@pytest.fixture
def committed(committed_template, tmp_path):
    """A copy of the committed repository (with its .git) for one test to change.

    Made once per module and copied: every test gets the same commits, files and frozen
    release as if it had ingested, released and committed them itself (half of its time).
    """
    import shutil

    template, _, _, r1 = committed_template
    repo = tmp_path / "repo"
    shutil.copytree(template, repo, symlinks=True)
    subs = repo / "submissions"
    return repo, subs, subs / "releases.toml", r1


def _publishes(subs, rel_file, store):
    with open_store(store) as s:
        ingest(s, [subs])
        problems = sync_releases(s, rel_file)
        published = [r[0] for r in s.releases()]
        _, missing = s.query("select name, reason from missing_releases")
        assert not score_all(s).failed
    return problems, published, dict(missing)


# What history catches that the file's own SHA-256 cannot: releases.toml rewritten with it.
REWRITES = {
    "file-and-sha": None,  # the frozen file changed and its SHA-256 in releases.toml with it
    "date": ("date = 2024-03-01", "date = 2024-02-01"),
    "notes": ('notes = ""', 'notes = "recomputed"'),
    "frozen-dropped": None,
}


@pytest.mark.parametrize("commit", [False, True], ids=["uncommitted", "committed"])
@pytest.mark.parametrize("how", sorted(REWRITES))
def test_a_release_rewritten_in_releases_toml_is_refused_by_history(
    committed, tmp_path, how, commit
):
    import re

    repo, subs, rel_file, r1 = committed
    text = rel_file.read_text()
    head, tail = text.split('name = "r2"')
    if how == "file-and-sha":
        target = subs / r1.frozen.path
        data = target.read_bytes().replace(b",score,", b",score,", 1)
        data = data[:-30] + (b"8" if data[-30:-29] == b"9" else b"9") + data[-29:]
        target.write_bytes(data)
        head = head.replace(r1.frozen.sha256, sha256_of(data))
    elif how == "frozen-dropped":
        head = re.sub(r"\[release\.frozen\]\npath = .*\nsha256 = .*\n", "", head)
    else:
        old, new = REWRITES[how]
        assert old in head
        head = head.replace(old, new)
    rel_file.write_text(head + 'name = "r2"' + tail)
    if commit:
        _git(repo, "commit", "-q", "-am", "rewrite r1")
    problems, published, missing = _publishes(subs, rel_file, tmp_path / f"fresh-{how}.duckdb")
    assert published == ["r2"] and list(missing) == ["r1"], (published, missing)
    (p,) = problems
    assert p.field == "release r1" and str(rel_file) == p.file
    assert "first committed" in p.message and "git show" in p.fix


def test_a_removed_release_is_listed_missing(committed, tmp_path):
    _, subs, rel_file, _ = committed
    text = rel_file.read_text()
    start = text.index("[[release]]", text.index('name = "r1"'))  # r2's entry
    rel_file.write_text(text[:start])
    problems, published, missing = _publishes(subs, rel_file, tmp_path / "fresh.duckdb")
    assert published == ["r1"] and "removed" in missing["r2"]
    assert [p.field for p in problems] == ["release r2"]


MALFORMED = {
    "date": ('date = 2024-05-01', 'date = "soon"'),
    "hash": ('date = 2024-05-01', 'date = 2024-05-01\n[release.benchmarks]\n"x" = "!"'),
    "frozen-path": ('date = 2024-05-01', 'date = 2024-05-01\n[release.frozen]\n'
                    'path = "../../etc/passwd"\nsha256 = "' + "0" * 64 + '"'),
    "duplicate": ('name = "r3"', 'name = "r1"'),
    "no-name": ('name = "r3"', 'name = 3'),
}


@pytest.mark.parametrize("how", sorted(MALFORMED))
def test_a_malformed_release_added_later_never_stops_the_others(committed, tmp_path, how):
    """A hand-written [[release]] (a pull request's) is left out, named; every other publishes."""
    _, subs, rel_file, _ = committed
    old, new = MALFORMED[how]
    entry = '\n[[release]]\nname = "r3"\ndate = 2024-05-01\n'.replace(old, new)
    rel_file.write_text(rel_file.read_text() + entry)
    problems, published, missing = _publishes(subs, rel_file, tmp_path / "fresh.duckdb")
    assert published == ["r1", "r2"], problems
    assert len(missing) == 1 and "malformed" in next(iter(missing.values()))
    (p,) = problems
    assert p.severity == "warning" and str(rel_file) == p.file and "not published" in p.message


def test_an_unfrozen_release_after_a_frozen_one_is_not_published(committed, tmp_path):
    """A well-formed [[release]] written by hand (gmeter release always freezes) is refused."""
    _, subs, rel_file, _ = committed
    text = rel_file.read_text()
    r2 = text[text.index("[[release]]", text.index('name = "r1"')):]
    hand = r2.replace('name = "r2"', 'name = "r3"').replace("2024-04-01", "2024-05-01")
    hand = hand[:hand.index("[release.frozen]")]
    rel_file.write_text(text + "\n" + hand)
    problems, published, missing = _publishes(subs, rel_file, tmp_path / "fresh.duckdb")
    assert published == ["r1", "r2"] and "gmeter release" in missing["r3"]
    (p,) = problems
    assert p.field == "release r3" and "not published" in p.message
