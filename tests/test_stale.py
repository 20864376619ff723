"""Entries submitted under an older benchmark version are marked stale on the site."""

from __future__ import annotations

from typer.testing import CliRunner

from cli.app import app

runner = CliRunner()


def test_version_bump_marks_old_entries_stale_after_rescoring(subs, db, tmp_path):
    def gm(*args):
        out = runner.invoke(app, ["--db", str(db), *args])
        assert out.exit_code == 0, out.output
        return out

    gm("ingest", str(subs))
    gm("score", "--executor", "inprocess")
    gm("build", "--out", str(tmp_path / "site1"))
    page = (tmp_path / "site1" / "benchmarks" / "gen-mini" / "index.html").read_text()
    assert "submitted under benchmark version" not in page
    bench = subs / "gen-mini" / "benchmark.toml"
    bench.write_text(bench.read_text().replace('version = "1.0.0"', 'version = "2.0.0"'))
    gm("ingest", str(subs))
    gm("score", "--executor", "inprocess")
    gm("build", "--out", str(tmp_path / "site2"))
    page = (tmp_path / "site2" / "benchmarks" / "gen-mini" / "index.html").read_text()
    assert "submitted under benchmark version 1.0.0; the current version is 2.0.0" in page
