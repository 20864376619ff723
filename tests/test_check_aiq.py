"""``gmeter check`` on an AIQ benchmark: traced runs replay; a forged reward is caught.

The fixture ``tests/data/check/toy-aiq`` was made with the AIQ engine::

    gmeter aiq sample --count 40 --seed 3 --out submissions/toy-aiq/reference
    gmeter aiq run random --episode-length 30 --samples 20 --seed 11 \\
        --method mc-antithetic --traces --out submissions/toy-aiq/random-agent
    gmeter aiq run freq ... --seed 12 ... --out submissions/toy-aiq/freq-agent

(and hand-written submission.toml files). Regenerate it if the AIQ bundle format changes.
"""

from __future__ import annotations

import csv
import datetime as dt
import shutil
from pathlib import Path

import pytest
from check_fixtures import commit, git

from pipeline.check.run import CheckReport, check
from pipeline.executor import InProcessExecutor

DATA = Path(__file__).parent / "data" / "check" / "toy-aiq"
BENCH = Path("submissions/toy-aiq")


@pytest.fixture
def repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    root = tmp_path / "repo"
    (root / "submissions").mkdir(parents=True)
    shutil.copytree(DATA, root / BENCH, ignore=shutil.ignore_patterns("freq-agent"))
    git(root, "init", "-q", "-b", "main")
    commit(root, "aiq benchmark with one run", email="maintainer@example.org")
    git(root, "checkout", "-q", "-b", "pr")
    monkeypatch.chdir(root)
    return root


def run() -> CheckReport:
    return check(base="main", executor=InProcessExecutor(), today=dt.date(2024, 6, 1))


def test_traced_run_replays_and_is_verified(repo: Path) -> None:
    shutil.copytree(DATA / "freq-agent", repo / BENCH / "freq-agent")
    commit(repo, "freq")
    r = run()
    (b,) = r.benchmarks
    assert r.exit_code == 0, [str(f) for f in b.findings] + [str(p) for p in b.problems]
    (ne,) = b.new_entries
    assert ne.entry.bundle == "freq-agent" and ne.entry.verified and ne.of == 2
    assert ne.entry.ci_low is not None and ne.entry.ci_low <= ne.entry.value


def test_forged_reward_is_caught(repo: Path) -> None:
    shutil.copytree(DATA / "freq-agent", repo / BENCH / "freq-agent")
    samples = repo / BENCH / "freq-agent" / "samples.csv"
    with samples.open(encoding="utf-8", newline="") as fh:
        rows = list(csv.DictReader(fh))
    rows[2]["reward"] = repr(float(rows[2]["reward"]) + 50.0)  # better than the machine gave
    with samples.open("w", encoding="utf-8", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=list(rows[0]), lineterminator="\n")
        w.writeheader()
        w.writerows(rows)
    commit(repo, "freq, improved")
    r = run()
    b = r.benchmarks[0]
    replay = [f for f in b.findings if f.check == "aiq-replay" and f.severity == "error"]
    assert r.exit_code == 1 and replay, [str(f) for f in b.findings]
    assert "samples.csv" in replay[0].file and replay[0].resolution


def test_edited_summary_score_is_caught(repo: Path) -> None:
    shutil.copytree(DATA / "freq-agent", repo / BENCH / "freq-agent")
    log = repo / BENCH / "freq-agent" / "aiq.toml"
    text = log.read_text(encoding="utf-8")
    start = text.index("\naiq = ") + 1
    end = text.index("\n", start)
    log.write_text(text[:start] + "aiq = 99.5" + text[end:], encoding="utf-8")
    commit(repo, "freq, with a better summary")
    r = run()
    (f,) = [f for f in r.benchmarks[0].findings if f.check == "aiq-claimed"]
    assert r.exit_code == 1 and f.severity == "error" and "99.5" in f.message
    assert f.field == "result.aiq" and "aiq.toml" in f.file


def test_derived_base_state_equals_a_full_rescoring(repo: Path,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    """Non-populational: the base state is derived from the new one (unchanged bundles keep
    their rows) instead of scored again; it must equal scoring the base state in full."""
    from pipeline.tracks.base import TrackSpec

    shutil.copytree(DATA / "freq-agent", repo / BENCH / "freq-agent")
    manifest = repo / BENCH / "random-agent" / "submission.toml"
    manifest.write_text(manifest.read_text(encoding="utf-8").replace(
        "AIQ of random", "The AIQ of random"), encoding="utf-8")  # a changed base bundle too
    commit(repo, "freq, and a better description", email="random@example.org")
    derived = run().benchmarks[0]
    monkeypatch.setattr(TrackSpec, "populational_for", lambda self, settings: True)
    full = run().benchmarks[0]
    assert not derived.populational and full.populational
    assert derived.new_entries == full.new_entries and derived.others == full.others
    assert [n.before for n in derived.new_entries if n.before] != []
    assert derived.entries_before == full.entries_before == 1
