"""Identical inputs are scored once, whatever release they belong to."""

from __future__ import annotations

import datetime as dt
from typing import Any

import pipeline.score as score_module
from pipeline.ingest import ingest
from pipeline.release import record_release, sync_releases
from pipeline.score import score_all
from pipeline.store import open_store

NOW = dt.datetime(2026, 2, 3, 4, 5, 6)
COLUMNS = ("benchmark, bundle, content_hash, agent, metric, value, ci_low, ci_high, rank, "
           "verified, code_version, computed_at, details")  # fmt: skip


def _count_scoring(monkeypatch: Any) -> list[tuple[str, tuple[str, ...]]]:
    calls: list[tuple[str, tuple[str, ...]]] = []
    real = score_module.score_benchmark

    def counting(bench: Any, bundles: Any, ctx: Any) -> Any:
        calls.append((bench.id, tuple(sorted(b.content_hash for b in bundles))))
        return real(bench, bundles, ctx)

    monkeypatch.setattr(score_module, "score_benchmark", counting)
    return calls


def _release_rows(s: Any, release: str) -> list[tuple[Any, ...]]:
    _, rows = s.query(f"select {COLUMNS} from scores where release = '{release}' "
                      "order by benchmark, metric, bundle, agent")  # fmt: skip
    return rows


def _unfrozen_release(s: Any, subs: Any, name: str, date: dt.date) -> None:
    """A release as recorded before releases were frozen: no frozen file, so it is scored."""
    import re

    rel_file = subs / "releases.toml"
    rel = record_release(s, rel_file, name, date=date)
    assert rel.frozen is not None
    (subs / rel.frozen.path).unlink()
    rel_file.write_text(re.sub(r"\[release\.frozen\]\npath = .*\nsha256 = .*\n", "",
                               rel_file.read_text()))
    s.drop_release(name)
    assert sync_releases(s, rel_file) == []


def test_releases_with_the_current_inputs_are_copied_not_scored(subs, db, monkeypatch):
    calls = _count_scoring(monkeypatch)
    with open_store(db) as s:
        ingest(s, [subs])
        for name in ("r1", "r2"):
            _unfrozen_release(s, subs, name, dt.date(2026, 1, 1))
        assert len(calls) == 2  # recording scored the current state once
        report = score_all(s, now=NOW)
        status = {(r.release, r.benchmark): r.status for r in report.results}
        assert status == {("current", "gen-mini"): "unchanged",
                          ("current", "sim-mini"): "unchanged",
                          ("r1", "gen-mini"): "reused", ("r1", "sim-mini"): "reused",
                          ("r2", "gen-mini"): "reused", ("r2", "sim-mini"): "reused"}
        assert len(calls) == len(set(calls)) == 2
        current = _release_rows(s, "current")
        assert current and _release_rows(s, "r1") == current == _release_rows(s, "r2")
        _, charts = s.query("select count(distinct data), count(*) from charts")
        assert charts[0][1] == 3 * charts[0][0]
        _, runs = s.query("select count(distinct options->>'input_key') from score_runs")
        assert runs == [(2,)]
        # --force computes each distinct input once per run, not once per release
        calls.clear()
        again = score_all(s, now=NOW, force=True)
        assert len(calls) == 2
        assert sorted(r.status for r in again.results).count("reused") == 4
        assert _release_rows(s, "r2") == _release_rows(s, "current")


def test_a_release_with_other_inputs_is_scored_on_its_own(subs, db, monkeypatch):
    calls = _count_scoring(monkeypatch)
    with open_store(db) as s:
        ingest(s, [subs])
        _unfrozen_release(s, subs, "r1", dt.date(2026, 1, 1))
    resp = subs / "gen-mini" / "alpha" / "responses.csv"
    resp.write_text(resp.read_text().replace("A1,i3,1", "A1,i3,0"))
    with open_store(db) as s:
        ingest(s, [subs])
        _unfrozen_release(s, subs, "r2", dt.date(2026, 2, 1))
        report = score_all(s, now=NOW)
        status = {(r.release, r.benchmark): r.status for r in report.results}
        assert status[("r1", "gen-mini")] == "scored"  # the old alpha: other inputs
        assert status[("r2", "gen-mini")] == "reused"  # = current
        assert status[("r1", "sim-mini")] == status[("r2", "sim-mini")] == "reused"
        assert len(set(calls)) == 3  # old alpha, sim, new alpha
        assert _release_rows(s, "r1") != _release_rows(s, "current")
        # nothing changed: every (release, benchmark) is unchanged, nothing read or copied
        calls.clear()
        assert {r.status for r in score_all(s, now=NOW).results} == {"unchanged"}
        assert calls == []
