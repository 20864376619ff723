"""``gmeter check --base main`` end to end on scratch git repositories (generality track).

Each test builds ``toy-aref`` (ARef: populational) with three bundles on ``main``, branches
to ``pr``, adds or tampers with bundles, commits as a submitter and runs the check.
"""

from __future__ import annotations

import datetime as dt
import json
import shutil
from pathlib import Path

import pytest
from check_fixtures import (
    GENERALITY_BENCH,
    ITEMS,
    NEW,
    REF,
    SYS_A,
    SYS_B,
    bundle,
    commit,
    generality_repo,
    git,
    write,
)

from pipeline.check.report import MARKER, to_markdown, to_text
from pipeline.check.run import CheckReport, check, read_scores
from pipeline.errors import GmeterError, UsageError
from pipeline.executor import InProcessExecutor

TODAY = dt.date(2024, 6, 1)
BENCH = "submissions/toy-aref"


@pytest.fixture
def repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    root = generality_repo(tmp_path / "repo")
    monkeypatch.chdir(root)
    return root


def run(**kw: object) -> CheckReport:
    kw.setdefault("base", "main")
    return check(executor=InProcessExecutor(), today=TODAY, **kw)  # type: ignore[arg-type]


def checks(report: CheckReport) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for f in [*report.findings, *(f for b in report.benchmarks for f in b.findings)]:
        out.setdefault(f.check, []).append(f.severity)
    return out


def test_new_bundle_is_found_recomputed_and_placed(repo: Path) -> None:
    write(repo, bundle("toy-aref", "new-sys", NEW, system="New", contact="n <n@example.org>"))
    commit(repo, "add new-sys")
    r = run()
    assert r.mode == "git" and r.exit_code == 0 and r.errors == 0
    (b,) = r.benchmarks
    assert b.id == "toy-aref" and b.targets == ["new-sys"] and b.populational
    assert (b.entries_before, b.entries_after) == (4, 5)
    (ne,) = b.new_entries
    e = ne.entry
    # ARef, 6 items: delta beats ref on i1-i4 and loses on i5, i6 -> 4 of 6 items above the
    # reference; with five agents the difficulties shift, and delta leads (checked by hand
    # against the before/after tables printed by to_text).
    assert e.agent == "delta" and e.rank == 1 and ne.of == 5 and e.group == 1
    assert e.verified and e.ci_low is not None and e.ci_low <= e.value <= e.ci_high
    assert {o.agent for o in ne.overtakes} == {"ref", "alpha", "beta", "gamma"}
    # Populational: every existing entry's capability moves.
    assert {c.agent for c in b.others} == {"ref", "alpha", "beta", "gamma"}
    assert all(any(m == "capability" for m, _, _ in c.metric_changes) for c in b.others)
    md = to_markdown(r)
    assert md.startswith(MARKER) and "✅ passed" in md and "delta (new-sys)" in md
    assert "What it changes for others" in md and e.content_hash[:12] in md
    assert "delta (new-sys): capability" in to_text(r)


def test_check_and_score_agree_byte_for_byte(repo: Path, tmp_path: Path) -> None:
    write(repo, bundle("toy-aref", "new-sys", NEW))
    commit(repo, "add new-sys")
    r = run()
    from pipeline.ingest import ingest
    from pipeline.score import score_all
    from pipeline.store import open_store

    with open_store(tmp_path / "real.duckdb") as store:
        ingest(store, [Path("submissions")])
        res = score_all(store, executor=InProcessExecutor())
        assert not res.failed
        rows = read_scores(store, "toy-aref")
    assert json.dumps(rows, sort_keys=True) == json.dumps(r.benchmarks[0].rows, sort_keys=True)


def test_reused_hash_is_a_resubmission(repo: Path) -> None:
    shutil.copytree(repo / BENCH / "sys-a", repo / BENCH / "sys-a-again")
    commit(repo, "resubmit")
    r = run()
    assert r.exit_code == 1
    (f,) = [f for f in r.benchmarks[0].findings if f.check == "resubmission"]
    assert f.severity == "error" and "toy-aref/sys-a" in f.message and f.resolution
    assert "resubmission" in to_markdown(r) and "❌ failed" in to_markdown(r)


def test_renamed_copy_of_results_is_caught(repo: Path) -> None:
    # Same responses, new agent name and new manifest: not the same hash, still a copy.
    rows = {"zeta": SYS_B["gamma"]}
    write(repo, bundle("toy-aref", "zeta", rows, system="Zeta"))
    commit(repo, "add zeta")
    r = run()
    found = checks(r)
    assert r.exit_code == 1
    assert found["duplicate-agent"] == ["error"] and found["copied-column"] == ["error"]


def test_copied_agent_inside_a_larger_file(repo: Path) -> None:
    # sys-a's file holds two agents, so no whole column matches; the agent check still does.
    write(repo, bundle("toy-aref", "zeta", {"zeta": SYS_A["alpha"], **NEW}, system="Zeta"))
    commit(repo, "add zeta")
    found = checks(run())
    assert found["duplicate-agent"] == ["error"] and "copied-column" not in found


def test_edited_scores_of_another_submitter(repo: Path) -> None:
    path = repo / BENCH / "sys-b" / "responses.csv"
    path.write_text(path.read_text().replace(",i2,2.5", ",i2,25.5"), encoding="utf-8")
    commit(repo, "improve gamma")  # by the submitter, who did not make sys-b
    r = run()
    b = r.benchmarks[0]
    assert r.exit_code == 1 and b.targets == ["sys-b"]
    (f,) = [f for f in b.findings if f.check == "foreign-edit"]
    assert f.severity == "error" and "sys-b" in f.message and "B Owner" in f.message
    (ne,) = b.new_entries
    assert ne.before is not None and ne.entry.metrics != ne.before.metrics


def test_a_forged_git_author_does_not_make_an_owner(repo: Path) -> None:
    """Anyone can commit as b@example.org: ownership is judged by paths and the contact."""
    path = repo / BENCH / "sys-b" / "responses.csv"
    path.write_text(path.read_text().replace("11.5", "12.5"), encoding="utf-8")
    commit(repo, "rerun", email="b@example.org")  # the e-mail in sys-b's contact
    r = run()
    assert r.exit_code == 1
    (f,) = [f for f in r.benchmarks[0].findings if f.check == "foreign-edit"]
    assert f.severity == "error" and "B Owner" in f.message and "responses.csv" in f.message


def test_rewriting_the_contact_of_a_bundle_is_called_out(repo: Path) -> None:
    toml = repo / BENCH / "sys-b" / "submission.toml"
    text = toml.read_text(encoding="utf-8")
    contact = next(ln for ln in text.splitlines() if ln.startswith("contact"))
    toml.write_text(text.replace(contact, 'contact = "Mallory <m@example.org>"'),
                    encoding="utf-8")
    commit(repo, "take over")
    r = run()
    found = [f for f in r.benchmarks[0].findings if f.check == "foreign-edit"]
    assert [f.field for f in found] == ["-", "contact"] and r.exit_code == 1


def test_deleting_another_submitters_bundle(repo: Path) -> None:
    shutil.rmtree(repo / BENCH / "sys-b")
    commit(repo, "drop sys-b")
    r = run()
    b = r.benchmarks[0]
    assert b.deleted == ["sys-b"] and [e.agent for e in b.removed] == ["gamma"]
    assert checks(r)["foreign-edit"] == ["error"] and r.exit_code == 1


def test_dates_in_the_future_and_a_breakthrough(repo: Path) -> None:
    best = {"omega": {i: v + 100.0 for i, v in REF["ref"].items()}}
    files = bundle("toy-aref", "omega", best, system="Omega")
    files[f"{BENCH}/omega/agents.csv"] = "agent,date\nomega,2099-01-01\n"
    write(repo, files)
    commit(repo, "omega")
    r = run()
    found = checks(r)
    assert found["dates"] == ["error"]  # 2099 is after TODAY
    assert found["beats-reference"] == ["warning"]  # flagged for review, not rejected
    assert r.exit_code == 1


def test_invalid_bundle_is_reported_and_not_scored(repo: Path) -> None:
    write(repo, bundle("toy-aref", "broken", {"x": {"i1": float("nan")}}))
    commit(repo, "broken")
    r = run()
    b = r.benchmarks[0]
    assert b.unscored == ["broken"] and r.exit_code == 1
    assert any("broken/responses.csv" in p.file for p in b.problems)
    assert "not scored" in to_markdown(r)


def test_version_bump_marks_existing_entries_stale(repo: Path) -> None:
    p = repo / BENCH / "benchmark.toml"
    p.write_text(p.read_text().replace('version = "1.0.0"', 'version = "1.1.0"'),
                 encoding="utf-8")
    commit(repo, "bump", email="maintainer@example.org")
    r = run()
    b = r.benchmarks[0]
    assert b.targets == [] and b.version == "1.1.0"
    assert sorted(s.bundle for s in b.stale) == ["ref-agent", "sys-a", "sys-b"]
    assert {s.version for s in b.stale} == {"1.0.0"}
    assert "benchmark-change" in checks(r) and "Stale entries" in to_markdown(r)


def test_mixed_pull_request_and_releases(repo: Path) -> None:
    write(repo, bundle("toy-aref", "new-sys", NEW))
    write(repo, {"README.md": "changed\n",
                 "submissions/releases.toml": '[[release]]\nname = "x"\ndate = 2024-01-01\n'})
    commit(repo, "mixed")
    found = checks(run())
    assert found["mixed-pull-request"] == ["warning"]
    assert found["releases-file"] == ["error"]  # adding a release: cut on main by maintainers


def test_a_pull_request_that_rewrites_gmeter_or_ci_asks_for_a_maintainer(repo: Path) -> None:
    write(repo, bundle("toy-aref", "new-sys", NEW))
    write(repo, {"pipeline/check/generic.py": "# every check passes now\n",
                 ".github/workflows/check-submission.yml": "on: push\n",
                 "Makefile": "check-submission:\n\ttrue\n",
                 "submissions/releases/r1.csv": "kind\n"})
    commit(repo, "rewrite the checker")
    found = checks(run())
    assert found["maintainer-only"] == ["error", "error"]  # code/CI, and a frozen file


def test_untracked_bundle_is_seen_before_commit(repo: Path) -> None:
    write(repo, bundle("toy-aref", "new-sys", NEW))
    r = run()
    assert r.benchmarks[0].targets == ["new-sys"]


def test_no_change_passes_with_a_note(repo: Path) -> None:
    r = run()
    assert r.benchmarks == [] and r.exit_code == 0 and r.notes


def test_paths_mode_compares_with_the_benchmark_without_the_bundle(repo: Path) -> None:
    write(repo, bundle("toy-aref", "new-sys", NEW))
    r = check(paths=[Path(BENCH) / "new-sys"], executor=InProcessExecutor(), today=TODAY)
    (b,) = r.benchmarks
    assert r.mode == "paths" and b.targets == ["new-sys"] and b.entries_before == 4


def test_bad_base_ref_and_nothing_to_check(repo: Path) -> None:
    with pytest.raises(GmeterError, match="not found") as exc:
        run(base="origin/nope")
    assert "fetch" in exc.value.hint
    with pytest.raises(UsageError):
        check(executor=InProcessExecutor())


def test_outside_a_repository(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "submissions").mkdir()
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("GIT_CEILING_DIRECTORIES", str(tmp_path.parent))
    with pytest.raises(GmeterError, match="not inside a git repository"):
        run()


def test_items_are_the_fixture_items() -> None:
    assert tuple(REF["ref"]) == ITEMS


def test_store_history_and_published_scores(repo: Path, tmp_path: Path) -> None:
    """An existing store adds resubmissions of retired bundles and store-based stale markers."""
    from pipeline.ingest import ingest
    from pipeline.score import score_all
    from pipeline.store import open_store

    db = tmp_path / "published.duckdb"
    with open_store(db) as store:
        ingest(store, [Path("submissions")])
        score_all(store, executor=InProcessExecutor())
    git(repo, "checkout", "-q", "main")
    saved = (repo / BENCH / "sys-b").rename(tmp_path / "sys-b")  # retired on main since
    commit(repo, "retire sys-b", email="maintainer@example.org")
    git(repo, "checkout", "-q", "-B", "pr")
    shutil.copytree(saved, repo / BENCH / "sys-b-again")
    p = repo / BENCH / "benchmark.toml"
    p.write_text(p.read_text().replace('version = "1.0.0"', 'version = "2.0.0"'),
                 encoding="utf-8")
    commit(repo, "sys-b again, and a new version")
    r = run(store_path=db)
    b = r.benchmarks[0]
    (f,) = [f for f in b.findings if f.check == "resubmission"]
    assert "toy-aref/sys-b" in f.message  # known from the store's history only
    why = {(s.bundle, s.why) for s in b.stale}
    assert ("sys-a", "scored") in why and ("sys-a", "submitted") in why
    assert "published score was computed on v1.0.0" in to_markdown(r)


def test_removing_a_whole_benchmark(repo: Path) -> None:
    shutil.rmtree(repo / BENCH)
    commit(repo, "drop the benchmark")
    r = run()
    (b,) = r.benchmarks
    assert b.status == "removed" and b.deleted == ["ref-agent", "sys-a", "sys-b"]
    found = checks(r)
    assert found["benchmark-change"] == ["warning"] and found["foreign-edit"] == ["error"] * 3


def test_edited_copy_of_another_bundle(repo: Path) -> None:
    # Six items are too few for a near-copy verdict; use a wider benchmark.
    items = [f"i{k}" for k in range(12)]
    ref = {"ref": {i: 10.0 + k for k, i in enumerate(items)}}
    src = {"src": {i: 3.25 + 1.5 * k for k, i in enumerate(items)}}
    write(repo, {f"{BENCH}/ref-agent/responses.csv": "agent,item,value\n" + "".join(
        f"ref,{i},{v}\n" for i, v in ref["ref"].items())})
    write(repo, bundle("toy-aref", "src", src, system="Source"))
    shutil.rmtree(repo / BENCH / "sys-a")
    shutil.rmtree(repo / BENCH / "sys-b")
    commit(repo, "wider", email="maintainer@example.org")
    git(repo, "branch", "-f", "main", "HEAD")  # the wider benchmark is the base
    edited = {"copy": dict(src["src"])}
    edited["copy"]["i3"] = 99.75  # one score "improved", the rest copied
    write(repo, bundle("toy-aref", "copy", edited, system="Copy", contact="C <c@example.org>"))
    commit(repo, "copy")
    found = checks(run())
    assert found["duplicate-agent"] == ["error"]  # 11 of 12 items equal
    assert found["copied-column"] == ["error"]  # the value column, 11 of 12 positions


@pytest.mark.parametrize("transform", ["aref", "dref"])
def test_populational_is_the_benchmarks_own_setting(tmp_path: Path,
                                                    monkeypatch: pytest.MonkeyPatch,
                                                    transform: str) -> None:
    """Whether a new bundle moves the others is decided per benchmark by its track (DRef:
    fixed reference distributions, nobody else moves; ARef: everyone's difficulty moves), and
    the check reports and uses exactly the track's answer."""
    from pipeline.tracks import get_track

    root = tmp_path / "repo"
    root.mkdir()
    git(root, "init", "-q", "-b", "main")
    settings = {"transform": transform}
    toml = GENERALITY_BENCH.replace('transform = "aref"', f'transform = "{transform}"')
    files = {f"{BENCH}/benchmark.toml": toml}
    scale = 1.0
    if transform == "dref":  # a Beta reference per item: responses in [0, 1]
        scale = 0.01
        files[f"{BENCH}/benchmark.toml"] = toml.replace('reference_agent = "ref"\n', "")
        files[f"{BENCH}/reference/items.csv"] = "item,ref_mean,ref_variance\n" + "".join(
            f"{i},{0.1 * (k + 1):.1f},0.01\n" for k, i in enumerate(ITEMS))

    def scaled(rows: dict[str, dict[str, float]]) -> dict[str, dict[str, float]]:
        return {a: {i: v * scale for i, v in r.items()} for a, r in rows.items()}

    write(root, files)
    write(root, bundle("toy-aref", "ref-agent", scaled(REF), system="Reference"))
    write(root, bundle("toy-aref", "sys-a", scaled(SYS_A), system="System A"))
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "benchmark")
    git(root, "checkout", "-q", "-b", "pr")
    monkeypatch.chdir(root)
    write(root, bundle("toy-aref", "new-sys", scaled(NEW), system="New",
                       contact="n <n@example.org>"))
    commit(root, "add new-sys")
    (b,) = run().benchmarks
    expected = get_track("generality").populational_for(settings)
    assert b.status != "invalid", b.problems
    assert b.populational is expected
    assert ("populational" in to_text(run())) is expected
    # Nobody else's capability moves on a non-populational benchmark.
    moved = {c.agent for c in b.others if any(m == "capability" for m, _, _ in c.metric_changes)}
    assert bool(moved) is expected
