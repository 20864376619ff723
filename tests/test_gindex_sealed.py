"""Sealed test sets (issue 20, item 4e), tested with a sealed copy of maya-fbp-16.

The sealed benchmark commits only the SHA-256 of its reference programs and the task list.
It validates; bundles validate against the task list; scoring without the set leaves every
entry unscored with a note (never a failure), with the set (``--option sealed=DIR`` or
``GMETER_SEALED``) gives exactly the scores of the open benchmark; a set that differs from the
commitment is refused with a note naming it; a revealed set is held to the commitment.
"""

from __future__ import annotations

import tomllib
from pathlib import Path

import pytest

from pipeline.bundles import SEALED_ENV, read_sealed
from pipeline.inputs import BenchmarkInput
from pipeline.tracks.base import ScoreContext
from pipeline.tracks.gindex.sealed import SEALED_FILES, commitment, public_set
from pipeline.tracks.gindex.track import TRACK
from tests.test_gindex_track import (
    BENCH,
    _files,
    _reference,
    _verified_files,
    bench_input,
    bundle_input,
)


@pytest.fixture(scope="module")
def opened() -> BenchmarkInput:
    return bench_input()


@pytest.fixture(scope="module")
def sealed_set(opened) -> dict[str, bytes]:  # type: ignore[no-untyped-def]
    return public_set(opened)


def _sealed(opened: BenchmarkInput, refs: dict[str, bytes], reveal: dict[str, bytes] | None
            = None) -> BenchmarkInput:
    """maya-fbp-16 with its references replaced by their commitment (optionally revealed)."""
    files = {p: d for p, d in _files(BENCH, skip_bundles=True).items()
             if not p.startswith("reference/domains/")}  # fmt: skip
    for p, d in (reveal or {}).items():
        files[f"reference/domains/{p}"] = d
    tasks = sorted(p[:-5] for p in refs)
    return bench_input(files, sealed_sha256=commitment(refs), sealed_tasks=tasks)


def _board(opened):  # type: ignore[no-untyped-def]
    verified = bundle_input("echo", _verified_files(_reference(opened)))
    reported = bundle_input("gpt2-345m-1", _files(BENCH / "gpt2-345m-1"))
    return [verified, reported]


def _write(folder: Path, files: dict[str, bytes]) -> Path:
    for p, d in files.items():
        (folder / "maya-fbp-16" / p).parent.mkdir(parents=True, exist_ok=True)
        (folder / "maya-fbp-16" / p).write_bytes(d)
    return folder


def test_the_sealed_benchmark_commits_no_program(opened, sealed_set) -> None:  # type: ignore[no-untyped-def]
    sealed = _sealed(opened, sealed_set)
    assert not any(p.startswith("reference/domains/") for p in sealed.files.files)
    assert len(sealed.settings["sealed_tasks"]) == 32
    assert TRACK.validate_benchmark(sealed) == []
    for b in _board(opened):
        assert TRACK.validate_bundle(b, sealed) == []
    manifest = tomllib.loads(sealed.files.files["benchmark.toml"].decode())
    assert manifest["id"] == "maya-fbp-16"


def test_without_the_set_entries_are_unscored_with_a_note(opened, sealed_set) -> None:  # type: ignore[no-untyped-def]
    res = TRACK.score(_sealed(opened, sealed_set), _board(opened), ScoreContext())
    assert res.rows == []
    assert any("sealed test set not available" in n and "unscored" in n for n in res.notes)


def test_with_the_set_the_scores_are_the_open_benchmarks(opened, sealed_set, tmp_path) -> None:  # type: ignore[no-untyped-def]
    files = read_sealed(_write(tmp_path, sealed_set), "maya-fbp-16")
    assert files == sealed_set
    ctx = ScoreContext(seed=3, options={SEALED_FILES: files})
    got = TRACK.score(_sealed(opened, sealed_set), _board(opened), ctx)
    want = TRACK.score(opened, _board(opened), ScoreContext(seed=3))
    assert [(r.bundle, r.metric, r.value, r.ci_low, r.ci_high, r.verified) for r in got.rows] == \
        [(r.bundle, r.metric, r.value, r.ci_low, r.ci_high, r.verified) for r in want.rows]
    assert any("commitment verified" in n for n in got.notes)


def test_gmeter_score_reads_the_set_from_the_environment_and_rescores(tmp_path) -> None:
    """Through the CLI: unscored without GMETER_SEALED (exit 0), scored once it is given."""
    import shutil

    from typer.testing import CliRunner

    from cli.app import app

    subs = tmp_path / "subs"
    shutil.copytree(BENCH, subs / "maya-fbp-16")
    sealed = tmp_path / "sealed" / "maya-fbp-16"
    shutil.move(subs / "maya-fbp-16" / "reference" / "domains", sealed)
    refs = {p.relative_to(sealed).as_posix(): p.read_bytes() for p in sealed.glob("*/*.json")}
    toml = subs / "maya-fbp-16" / "benchmark.toml"
    tasks = ", ".join(f'"{p[:-5]}"' for p in sorted(refs))
    toml.write_text(toml.read_text().replace(
        "[gindex]\n", f'[gindex]\nsealed_sha256 = "{commitment(refs)}"\n'
        f"sealed_tasks = [{tasks}]\n", 1))
    db = str(tmp_path / "w.duckdb")
    run = CliRunner()
    assert run.invoke(app, ["--db", db, "ingest", str(subs)]).exit_code == 0

    def count(env: dict[str, str]) -> str:
        res = run.invoke(app, ["--db", db, "score"], env=env)
        assert res.exit_code == 0, res.output
        q = run.invoke(app, ["--db", db, "query", "select count(*) as n from scores"])
        return q.stdout

    assert "│ 0 " in count({SEALED_ENV: ""})
    # four metrics (g_index, theta_mean, omega_mean, compute_log2) for every bundle
    bundles = [d for d in (subs / "maya-fbp-16").iterdir() if (d / "submission.toml").is_file()]
    assert f"│ {4 * len(bundles)} " in count({SEALED_ENV: str(tmp_path / "sealed")})


def test_a_set_that_differs_from_the_commitment_is_refused(opened, sealed_set, tmp_path) -> None:  # type: ignore[no-untyped-def]
    tampered = dict(sealed_set)
    first = sorted(tampered)[0]
    tampered[first] = tampered[first].replace(b'"type"', b'"type" ', 1)
    files = read_sealed(_write(tmp_path, tampered), "maya-fbp-16")
    res = TRACK.score(_sealed(opened, sealed_set), _board(opened),
                      ScoreContext(options={SEALED_FILES: files}))  # fmt: skip
    assert res.rows == []
    assert any("does not match the commitment" in n for n in res.notes)


def test_a_revealed_set_is_held_to_the_commitment(opened, sealed_set) -> None:  # type: ignore[no-untyped-def]
    revealed = _sealed(opened, sealed_set, reveal=sealed_set)
    assert TRACK.validate_benchmark(revealed) == []
    res = TRACK.score(revealed, _board(opened), ScoreContext(seed=3))
    assert res.rows and any("revealed" in n for n in res.notes)
    other = dict(sealed_set)
    other.pop(sorted(other)[0])
    wrong = _sealed(opened, sealed_set, reveal=other)
    problems = TRACK.validate_benchmark(wrong)
    assert any("do not match gindex.sealed_sha256" in p.message for p in problems)
