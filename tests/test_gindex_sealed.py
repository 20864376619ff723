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

from pipeline.inputs import BenchmarkInput
from pipeline.tracks.base import ScoreContext
from pipeline.tracks.gindex.sealed import SEALED_ENV, commitment, public_set
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


def test_without_the_set_entries_are_unscored_with_a_note(opened, sealed_set, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.delenv(SEALED_ENV, raising=False)
    res = TRACK.score(_sealed(opened, sealed_set), _board(opened), ScoreContext())
    assert res.rows == []
    assert any("sealed test set not available" in n and "unscored" in n for n in res.notes)


@pytest.mark.parametrize("how", ["option", "env"])
def test_with_the_set_the_scores_are_the_open_benchmarks(opened, sealed_set, tmp_path, monkeypatch,  # type: ignore[no-untyped-def]
                                                         how) -> None:
    folder = _write(tmp_path, sealed_set)
    if how == "env":
        monkeypatch.setenv(SEALED_ENV, str(folder))
        ctx = ScoreContext(seed=3)
    else:
        monkeypatch.delenv(SEALED_ENV, raising=False)
        ctx = ScoreContext(seed=3, options={"sealed": str(folder)})
    got = TRACK.score(_sealed(opened, sealed_set), _board(opened), ctx)
    want = TRACK.score(opened, _board(opened), ScoreContext(seed=3))
    assert [(r.bundle, r.metric, r.value, r.ci_low, r.ci_high, r.verified) for r in got.rows] == \
        [(r.bundle, r.metric, r.value, r.ci_low, r.ci_high, r.verified) for r in want.rows]
    assert any("commitment verified" in n for n in got.notes)


def test_a_set_that_differs_from_the_commitment_is_refused(opened, sealed_set, tmp_path) -> None:  # type: ignore[no-untyped-def]
    tampered = dict(sealed_set)
    first = sorted(tampered)[0]
    tampered[first] = tampered[first].replace(b'"type"', b'"type" ', 1)
    folder = _write(tmp_path, tampered)
    res = TRACK.score(_sealed(opened, sealed_set), _board(opened),
                      ScoreContext(options={"sealed": str(folder)}))  # fmt: skip
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
