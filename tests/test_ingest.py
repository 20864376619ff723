"""End-to-end ingest: idempotence, changes keep history, rejection, --strict, atomicity."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from cli.app import app
from pipeline.ingest import ingest
from pipeline.store import Store, open_store

runner = CliRunner()


def counts(db: Path) -> dict[str, int]:
    with open_store(db, read_only=True) as s:
        out = {}
        for t in ("benchmarks", "bundles", "bundle_files", "benchmark_files"):
            out[t] = s.query(f"select count(*) from {t}")[1][0][0]
        out["hashes"] = s.query("select string_agg(content_hash, ',' order by content_hash) "
                                "from bundles")[1][0][0]
        return out


def test_ingest_every_track_fixture_then_again_is_a_no_op(subs, db):
    with open_store(db) as s:
        first = ingest(s, [subs])
    assert sorted(o.status for o in first.outcomes) == ["new", "new"]
    before = counts(db)
    with open_store(db) as s:
        second = ingest(s, [subs])
    assert [o.status for o in second.outcomes] == ["unchanged", "unchanged"]
    assert counts(db) == before


def test_changed_bundle_replaces_current_and_keeps_history(subs, db):
    with open_store(db) as s:
        ingest(s, [subs])
        old = s.current_bundle_hash("gen-mini", "alpha")
    resp = subs / "gen-mini" / "alpha" / "responses.csv"
    resp.write_text(resp.read_text().replace("A2,i5,1", "A2,i5,0"))
    with open_store(db) as s:
        out = ingest(s, [subs])
        assert {o.bundle: o.status for o in out.outcomes}["alpha"] == "changed"
        new = s.current_bundle_hash("gen-mini", "alpha")
        versions = [b.content_hash for b in s.bundles("gen-mini", current_only=False)]
    assert new != old
    assert versions == [old, new]


def test_bad_bundle_rejected_good_ones_ingested(subs, db):
    (subs / "sim-mini" / "beta" / "runs.csv").write_text("nonsense\n")
    with open_store(db) as s:
        out = ingest(s, [subs])
    status = {o.bundle: o.status for o in out.outcomes}
    assert status == {"alpha": "new", "beta": "rejected"}
    assert out.rejected == 1


def test_strict_ingests_nothing_when_anything_is_bad(subs, db):
    (subs / "sim-mini" / "beta" / "runs.csv").write_text("nonsense\n")
    with open_store(db) as s:
        out = ingest(s, [subs], strict=True)
        assert out.strict_aborted
        assert s.bundles(current_only=False) == []


def test_failure_in_the_middle_of_a_bundle_leaves_the_store_as_before(subs, db, monkeypatch):
    with open_store(db) as s:
        ingest(s, [subs])
    before = counts(db)
    resp = subs / "gen-mini" / "alpha" / "responses.csv"
    resp.write_text(resp.read_text().replace("A2,i5,1", "A2,i5,0"))
    real = Store._put_files

    def exploding(self, table, content_hash, files):
        real(self, table, content_hash, dict(list(files.items())[:1]))  # half the files...
        raise OSError("disk full")  # ...then the failure

    monkeypatch.setattr(Store, "_put_files", exploding)
    with open_store(db) as s, pytest.raises(OSError, match="disk full"):
        ingest(s, [subs])
    monkeypatch.undo()
    assert counts(db) == before
    with open_store(db, read_only=True) as s:
        assert len(s.bundles("gen-mini", current_only=False)) == 1


def test_deleted_bundle_is_retired_not_forgotten(subs, db):
    with open_store(db) as s:
        ingest(s, [subs])
    import shutil

    shutil.rmtree(subs / "sim-mini" / "beta")
    with open_store(db) as s:
        out = ingest(s, [subs])
        assert ("beta", "retired") in {(o.bundle, o.status) for o in out.outcomes}
        assert [b.id for b in s.bundles("sim-mini")] == []
        assert [b.id for b in s.bundles("sim-mini", current_only=False)] == ["beta"]


def test_cli_exit_codes(subs, db):
    ok = runner.invoke(app, ["--db", str(db), "ingest", str(subs)])
    assert ok.exit_code == 0, ok.output
    (subs / "sim-mini" / "beta" / "runs.csv").write_text("nonsense\n")
    bad = runner.invoke(app, ["--db", str(db), "ingest", str(subs)])
    assert bad.exit_code == 1
    assert "runs.csv" in bad.output
    invalid = runner.invoke(app, ["validate", str(subs), "--format", "json"])
    assert invalid.exit_code == 1
    usage = runner.invoke(app, ["query"])
    assert usage.exit_code == 2
    missing = runner.invoke(app, ["--db", str(db.parent / "x.duckdb"), "score"])
    assert missing.exit_code == 1
    assert "Traceback" not in missing.output


def test_query_formats(subs, db):
    assert runner.invoke(app, ["--db", str(db), "ingest", str(subs)]).exit_code == 0
    out = runner.invoke(app, ["--db", str(db), "query", "select id from bundles order by id",
                              "--format", "csv"])
    assert out.exit_code == 0
    assert out.output.splitlines() == ["id", "alpha", "beta"]
    out = runner.invoke(app, ["--db", str(db), "query", "select 1 as x", "--format", "json"])
    assert '"x": 1' in out.output
    out = runner.invoke(app, ["--db", str(db), "query", "delete from bundles"])
    assert out.exit_code == 1  # read-only connection
    with open_store(db, read_only=True) as s:
        assert len(s.bundles()) == 2


def test_score_then_leaderboard_answers(subs, db):
    assert runner.invoke(app, ["--db", str(db), "ingest", str(subs)]).exit_code == 0
    out = runner.invoke(app, ["--db", str(db), "score", "--executor", "inprocess"])
    assert out.exit_code == 0, out.output
    with open_store(db, read_only=True) as s:
        _, rows = s.query("select benchmark, agent, rank from leaderboard order by 1, 3, 2")
    assert {r[0] for r in rows} == {"gen-mini", "sim-mini"}
    again = runner.invoke(app, ["--db", str(db), "score", "--executor", "inprocess"])
    assert "unchanged" in again.output


def test_bundles_remember_the_benchmark_version_they_were_submitted_under(subs, db):
    with open_store(db) as s:
        ingest(s, [subs])
    bench = subs / "gen-mini" / "benchmark.toml"
    bench.write_text(bench.read_text().replace('version = "1.0.0"', 'version = "2.0.0"'))
    with open_store(db) as s:
        ingest(s, [subs])
        _, rows = s.query("select id, benchmark_version from bundles where benchmark='gen-mini'")
    assert rows == [("alpha", "1.0.0")]  # unchanged bundle: still from version 1.0.0


def test_ingesting_one_bundle_retires_none_of_the_others(subs, db):
    import shutil

    shutil.copytree(subs / "gen-mini" / "alpha", subs / "gen-mini" / "beta")
    with open_store(db) as s:
        ingest(s, [subs])
        out = ingest(s, [subs / "gen-mini" / "alpha"])
        assert [o.status for o in out.outcomes] == ["unchanged"]
        assert [b.id for b in s.bundles("gen-mini")] == ["alpha", "beta"]
