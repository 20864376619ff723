"""Each AIQ bundle version is replayed once: kept verifications give the same scores."""

from __future__ import annotations

import csv
import datetime as dt
import io
import shutil
import tomllib
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import pytest
from aiq_fixtures import small_benchmark
from typer.testing import CliRunner

import pipeline.tracks.aiq.verify as verify
from cli.app import app
from pipeline.ingest import ingest
from pipeline.inputs import BenchmarkInput, BundleInput, FileSet
from pipeline.release import record_release
from pipeline.score import score_all
from pipeline.store import open_store
from pipeline.tracks.aiq.settings import AIQBenchmarkSettings
from pipeline.tracks.aiq.track import TRACK
from pipeline.tracks.base import ScoreContext

NOW = dt.datetime(2026, 3, 4, 5, 6, 7)


class DictMemo:
    """A VerificationMemo in a dict (what the store does, without DuckDB)."""

    def __init__(self) -> None:
        self.kept: dict[tuple[str, str, str], tuple[bool, Mapping[str, Any]]] = {}

    def recall(self, verifier: str, keys: Sequence[tuple[str, str]]) -> dict[Any, Any]:
        return {k: self.kept[(verifier, *k)][1] for k in keys if (verifier, *k) in self.kept}

    def keep(self, verifier: str, results: Mapping[Any, Any]) -> None:
        self.kept.update({(verifier, *k): v for k, v in results.items()})


def _files(folder: Path) -> dict[str, bytes]:
    return {p.relative_to(folder).as_posix(): p.read_bytes()
            for p in sorted(folder.rglob("*")) if p.is_file()}  # fmt: skip


def bench_input(folder: Path, label: str | None = None) -> BenchmarkInput:
    manifest = tomllib.loads((folder / "benchmark.toml").read_text())
    settings = AIQBenchmarkSettings.model_validate(manifest["aiq"]).model_dump()
    files = {k: v for k, v in _files(folder).items()
             if "/" not in k or k.startswith("reference/")}  # fmt: skip
    return BenchmarkInput(folder.name, "aiq", "1.0.0", manifest, settings,
                          FileSet(label or folder.name, files), "bh")  # fmt: skip


def bundle_input(folder: Path, label: str) -> BundleInput:
    from pipeline.bundles import content_hash

    files = _files(folder)
    manifest = tomllib.loads(files["submission.toml"].decode())
    return BundleInput(folder.name, "aiq-small", manifest, {}, FileSet(label, files),
                       content_hash(files))  # fmt: skip


@pytest.fixture(scope="module")
def subs(tmp_path_factory) -> Path:
    """submissions/aiq-small with two traced bundles and one whose reward is forged."""
    root = tmp_path_factory.mktemp("memo") / "submissions"
    folder = small_benchmark(root / "aiq-small", count=2000)
    for agent in ("freq", "random"):
        res = CliRunner().invoke(app, [
            "aiq", "run", "--agent", agent, "--episode-length", "100", "--samples", "40",
            "--seed", "3", "--out", str(folder / agent), "--executor", "inprocess", "--traces",
        ])  # fmt: skip
        assert res.exit_code == 0, res.output
        toml = folder / agent / "submission.toml"
        toml.write_text(toml.read_text().replace("TODO: your name <you@example.org>", "tests"))
    forged = folder / "forged"
    shutil.copytree(folder / "freq", forged)
    rows = list(csv.reader(io.StringIO((forged / "samples.csv").read_text(), newline="")))
    col = rows[0].index("reward")
    rows[3][col] = repr(float(rows[3][col]) + 0.5)  # programs hold commas: csv quotes them
    out = io.StringIO()
    csv.writer(out, lineterminator="\n").writerows(rows)
    (forged / "samples.csv").write_text(out.getvalue())
    return root


def _bundles(subs: Path, prefix: str = "submissions/aiq-small") -> list[BundleInput]:
    return [bundle_input(subs / "aiq-small" / n, f"{prefix}/{n}")
            for n in ("forged", "freq", "random")]  # fmt: skip


def _no_replay(*args: Any, **kwargs: Any) -> Any:
    raise AssertionError("replayed although the verification was kept")


def test_kept_verifications_give_the_same_scores_without_replaying(subs, monkeypatch):
    bench = bench_input(subs / "aiq-small")
    fresh = TRACK.score(bench, _bundles(subs), ScoreContext())
    memo = DictMemo()
    first = TRACK.score(bench, _bundles(subs), ScoreContext(verifications=memo))
    assert len(memo.kept) == 3
    assert {v[0] for v in memo.kept.values()} == {True, False}  # the forged one fails
    monkeypatch.setattr(verify, "replay_rows", _no_replay)
    again = TRACK.score(bench, _bundles(subs), ScoreContext(verifications=memo))
    for result in (first, again):
        assert result.rows == fresh.rows
        assert result.charts == fresh.charts and result.notes == fresh.notes
    forged = next(r for r in again.rows if r.bundle == "forged")
    assert forged.details["status"] == "replay failed" and not forged.verified


def test_a_moved_bundle_names_its_new_folder(subs, monkeypatch):
    bench = bench_input(subs / "aiq-small")
    memo = DictMemo()
    TRACK.score(bench, _bundles(subs, "old/place"), ScoreContext(verifications=memo))
    want = TRACK.score(bench, _bundles(subs, "new/place"), ScoreContext())
    monkeypatch.setattr(verify, "replay_rows", _no_replay)
    got = TRACK.score(bench, _bundles(subs, "new/place"), ScoreContext(verifications=memo))
    assert got.rows == want.rows and got.notes == want.notes
    errors = next(r for r in got.rows if r.bundle == "forged").details["replay_errors"]
    assert errors and all(e.startswith("new/place/forged/") for e in errors)


def test_what_a_verification_depends_on(subs, tmp_path):
    folder = subs / "aiq-small"
    base = verify.verification_context(bench_input(folder))
    copy = tmp_path / "aiq-small"
    shutil.copytree(folder, copy, ignore=shutil.ignore_patterns("freq", "random", "forged"))
    toml = copy / "benchmark.toml"
    toml.write_text(toml.read_text().replace('description = "test"', 'description = "new"'))
    assert verify.verification_context(bench_input(copy, "elsewhere")) == base
    small_benchmark(copy, count=1999)  # another program sample
    assert verify.verification_context(bench_input(copy)) != base
    assert f"bf-{verify.MACHINE_VERSION}" in verify.VERIFIER  # a new machine: a new verifier


@pytest.mark.parametrize("record", [{}, {"problems": 5, "has_traces": True, "replayed": 1},
                                    {"problems": [{"root": "nowhere"}], "has_traces": True,
                                     "replayed": 1},
                                    {"problems": [], "has_traces": "yes", "replayed": 1}])
def test_an_unreadable_kept_record_is_verified_again(subs, record):
    bench = bench_input(subs / "aiq-small")
    [bundle] = [b for b in _bundles(subs) if b.id == "freq"]
    result, fresh = verify.verify_reusing(bundle.files, bench, record)
    assert fresh is not None and result.verified and result.replayed == 40
    assert verify.result_from_record(fresh, bundle.files.label, "x") == result


def test_the_store_keeps_verifications_by_content_context_and_verifier(tmp_path):
    with open_store(tmp_path / "s.duckdb") as s:
        assert s.verifications("v1", []) == {}
        s.put_verifications("v1", {("h1", "c"): (True, {"n": 1}), ("h2", "c"): (False, {})}, NOW)
        s.put_verifications("v2", {("h1", "c"): (False, {"n": 2})}, NOW)
        s.put_verifications("v1", {("h1", "c"): (True, {"n": 3})}, NOW)  # replaces
        assert s.verifications("v1", [("h1", "c"), ("h2", "c"), ("h1", "d"), ("h3", "c")]) == {
            ("h1", "c"): {"n": 3}, ("h2", "c"): {}}
        assert s.verifications("v2", [("h1", "c")]) == {("h1", "c"): {"n": 2}}
        _, rows = s.query("select count(*), count(distinct verifier) from verifications")
        assert rows == [(3, 2)]


def test_every_release_reuses_one_verification_per_bundle_version(subs, tmp_path, monkeypatch):
    repo = tmp_path / "submissions"
    shutil.copytree(subs, repo, ignore=shutil.ignore_patterns("forged"))
    calls: list[int] = []
    real = verify.replay_rows

    def counting(parsed: Any, *args: Any) -> Any:
        calls.append(len(parsed.rows))
        return real(parsed, *args)

    monkeypatch.setattr(verify, "replay_rows", counting)
    db = tmp_path / "s.duckdb"
    with open_store(db) as s:
        ingest(s, [repo])
        record_release(s, repo / "releases.toml", "r1", date=dt.date(2026, 3, 1))
        assert len(calls) == 2  # freezing r1 scored the current state: two bundles
    shutil.rmtree(repo / "aiq-small" / "random")  # current: freq; r1: freq and random
    with open_store(db) as s:
        ingest(s, [repo])
        report = score_all(s, now=NOW)
        # r1 is frozen: only its errata are recomputed, with the kept verifications
        assert [r.status for r in report.results] == ["scored", "frozen"]
        assert len(calls) == 2
        score_all(s, force=True, now=NOW)
        assert len(calls) == 2
        _, rows = s.query("select release, bundle, verified, details->>'replayed_runs' "
                          "from scores order by release, bundle")
    assert rows == [("current", "freq", True, "40"), ("r1", "freq", True, "40"),
                    ("r1", "random", True, "40")]
