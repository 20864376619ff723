"""Bundle versions that passed every check are not checked again, with the same report."""

from __future__ import annotations

import shutil
from typing import Any

import pytest

import pipeline.validate as validate
from pipeline.ingest import ingest
from pipeline.store import open_store
from pipeline.validate import VALIDATOR, clean_versions, collect


def _summary(report: validate.ValidationReport) -> list[Any]:
    return [(b.id, [(x.id, x.input.content_hash if x.input else None, x.input.manifest
                     if x.input else None, sorted(x.problems)) for x in b.bundles])
            for b in report.benchmarks] + [sorted(report.problems)]  # fmt: skip


def _checks_must_not_run(monkeypatch: Any) -> None:
    def boom(*args: Any) -> Any:
        raise AssertionError("a known-clean version was checked again")

    for name in ("json_problems", "gzip_problems", "csv_problems", "toml_problems"):
        monkeypatch.setattr(validate, name, boom)
    import pipeline.tracks.review as review

    monkeypatch.setattr(review, "agent_names", boom)


def test_known_versions_skip_their_checks_and_report_the_same(subs, db, monkeypatch):
    full = collect([subs])
    with open_store(db) as s:
        ingest(s, [subs])
        kept = s.verified_results(VALIDATOR)
    assert len(kept) == full.bundle_count + len(full.benchmarks) == 4
    assert clean_versions(db) == kept
    with monkeypatch.context() as m:
        _checks_must_not_run(m)
        again = collect([subs], clean=kept)
    assert _summary(again) == _summary(full)
    assert again.agents == full.agents and any(full.agents.values())
    for (chash, _context), kept_result in kept.items():
        if chash in full.agents:  # bundles keep their agent names (not parsed again)
            assert kept_result == {"agents": full.agents[chash]}


def test_what_is_not_content_is_still_checked(subs, db, monkeypatch):
    with open_store(db) as s:
        ingest(s, [subs])
    kept = clean_versions(db)
    # the folder name is not part of the content hash
    shutil.move(subs / "gen-mini" / "alpha", subs / "gen-mini" / "Alpha!")
    # a new bundle whose system name looks like a known one: both are flagged
    shutil.copytree(subs / "sim-mini" / "beta", subs / "sim-mini" / "gamma")
    toml = subs / "sim-mini" / "gamma" / "submission.toml"
    name = next(line for line in toml.read_text().splitlines() if line.startswith("name"))
    spelled = name.split('"')[1].replace("a", "\u0430", 1)  # a Cyrillic a: looks the same
    assert spelled != name.split('"')[1]
    toml.write_text(toml.read_text().replace(name, f'name = "{spelled}"'))
    report = collect([subs], clean=kept)
    assert report.problems == collect([subs]).problems
    assert any(p.field == "bundle id" and "Alpha!" in p.file for p in report.problems)
    fields = {(p.file.split("/")[-2], p.field) for p in report.problems}
    assert ("beta", "system.name") in fields and ("gamma", "system.name") in fields


@pytest.mark.parametrize("change", ["bundle", "benchmark"])
def test_a_changed_version_is_checked_again(subs, db, change):
    with open_store(db) as s:
        ingest(s, [subs])
    kept = clean_versions(db)
    if change == "bundle":
        (subs / "gen-mini" / "alpha" / "notes.json").write_text("{not json")
    else:
        toml = subs / "gen-mini" / "benchmark.toml"
        toml.write_text(toml.read_text() + "\n# a new version\n")
        (subs / "gen-mini" / "alpha" / "notes.json").write_text("{not json")
    report = collect([subs], clean=kept)
    assert report.problems == collect([subs]).problems
    assert any(p.file.endswith("notes.json") for p in report.problems)


def test_no_store_or_an_unusable_one_means_checking_everything(tmp_path):
    assert clean_versions(tmp_path / "missing.duckdb") == {}
    (tmp_path / "junk.duckdb").write_bytes(b"not a database")
    assert clean_versions(tmp_path / "junk.duckdb") == {}


def test_ingest_records_only_versions_without_problems(subs, db):
    (subs / "gen-mini" / "alpha" / "notes.json").write_text("{not json")
    with open_store(db) as s:
        out = ingest(s, [subs])
        assert out.rejected == 1
        kept = s.verified_results(VALIDATOR)
    [bundle] = [b for bench in collect([subs]).benchmarks for b in bench.bundles
                if b.id == "beta"]  # fmt: skip
    benchmarks = {b.id: b.input.content_hash for b in collect([subs]).benchmarks}
    assert set(kept) == {(bundle.input.content_hash, benchmarks["sim-mini"]),
                         (benchmarks["sim-mini"], "benchmark"),
                         (benchmarks["gen-mini"], "benchmark")}
