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
