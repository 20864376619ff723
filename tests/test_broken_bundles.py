"""A corpus of broken bundles, one defect each: every message names the file and the field.

Each case copies the good fixture tree, applies one defect and asserts that ``validate``
reports an error whose file and field point at the defect — and that ``ingest`` then writes
nothing for that bundle.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest

from pipeline import bundles
from pipeline.validate import collect

GEN = "gen-mini"
SIM = "sim-mini"


def edit(path: Path, old: str, new: str) -> None:
    text = path.read_text(encoding="utf-8")
    assert old in text, f"fixture drift: {old!r} not in {path}"
    path.write_text(text.replace(old, new, 1), encoding="utf-8")


def append(path: Path, text: str) -> None:
    with path.open("a", encoding="utf-8") as fh:
        fh.write(text)


@dataclass(frozen=True)
class Case:
    name: str
    mutate: Callable[[Path], None]
    file: str  # substring of Problem.file
    field: str  # substring of Problem.field


def _sub(root: Path) -> Path:
    return root / GEN / "alpha" / "submission.toml"


def _resp(root: Path) -> Path:
    return root / GEN / "alpha" / "responses.csv"


def _runs(root: Path) -> Path:
    return root / SIM / "beta" / "runs.csv"


def _symlink(root: Path) -> None:
    os.symlink("/etc/passwd", root / GEN / "alpha" / "extra.csv")


def _big(root: Path) -> None:
    (root / GEN / "alpha" / "big.txt").write_bytes(b"x" * 4096)


def _no_benchmark(root: Path) -> None:
    stray = root / "stray"
    stray.mkdir()
    shutil.copytree(root / GEN / "alpha", stray / "alpha")


def _case_duplicate(root: Path) -> None:
    shutil.copytree(root / GEN / "alpha", root / GEN / "ALPHA")


CASES = [
    Case("missing field", lambda r: edit(_sub(r), 'contact = "Test Lab <lab@example.org>"\n', ""),
         "alpha/submission.toml", "contact"),
    Case("unknown field", lambda r: edit(_sub(r), "[system]", 'colour = "red"\n[system]'),
         "alpha/submission.toml", "colour"),
    Case("mistyped field", lambda r: edit(_sub(r), 'licence = "CC0-1.0"', "licence = 3"),
         "alpha/submission.toml", "licence"),
    Case("mistyped nested field", lambda r: edit(_sub(r), 'name = "Alpha"', "name = ['A']"),
         "alpha/submission.toml", "system.name"),
    Case("bad date", lambda r: edit(_sub(r), "submitted = 2024-02-01", 'submitted = "2024-13-45"'),
         "alpha/submission.toml", "submitted"),
    Case("future date", lambda r: edit(_sub(r), "submitted = 2024-02-01", "submitted = 2999-01-01"),
         "alpha/submission.toml", "submitted"),
    Case("bad url", lambda r: edit(_sub(r), "https://example.org/alpha", "javascript:alert(1)"),
         "alpha/submission.toml", "system.url"),
    Case("toml syntax", lambda r: append(_sub(r), "\nthis is = = not toml\n"),
         "alpha/submission.toml", "line"),
    Case("unknown track", lambda r: edit(r / GEN / "benchmark.toml", 'track = "generality"',
                                         'track = "iq"'), "gen-mini/benchmark.toml", "track"),
    Case("benchmark id mismatch", lambda r: edit(r / GEN / "benchmark.toml", 'id = "gen-mini"',
                                                 'id = "other"'), "gen-mini/benchmark.toml", "id"),
    Case("foreign track section", lambda r: append(r / GEN / "benchmark.toml", "\n[aiq]\nx = 1\n"),
         "gen-mini/benchmark.toml", "aiq"),
    Case("unknown track setting", lambda r: append(r / GEN / "benchmark.toml", "wibble = 1\n"),
         "gen-mini/benchmark.toml", "generality.wibble"),
    Case("bad benchmark version", lambda r: edit(r / GEN / "benchmark.toml", 'version = "1.0.0"',
                                                 'version = "one"'),
         "gen-mini/benchmark.toml", "version"),
    Case("unknown benchmark", _no_benchmark, "stray", "benchmark"),
    Case("duplicate bundle id", _case_duplicate, "gen-mini/ALPHA", "bundle id"),
    Case("missing csv column", lambda r: edit(_resp(r), "agent,item,value", "agent,item,score"),
         "alpha/responses.csv", "header"),
    Case("not a number", lambda r: edit(_resp(r), "A1,i2,1", "A1,i2,abc"),
         "alpha/responses.csv", "line 3: value"),
    Case("NaN", lambda r: edit(_resp(r), "A1,i2,1", "A1,i2,nan"),
         "alpha/responses.csv", "line 3: value"),
    Case("infinity", lambda r: edit(_resp(r), "A1,i2,1", "A1,i2,inf"),
         "alpha/responses.csv", "line 3: value"),
    Case("duplicate agent,item", lambda r: append(_resp(r), "A1,i1,0\n"),
         "alpha/responses.csv", "agent,item"),
    Case("ragged row", lambda r: append(_resp(r), "A3,i1\n"), "alpha/responses.csv", "line 12"),
    Case("unknown item", lambda r: append(_resp(r), "A1,i9,1\n"), "alpha/responses.csv", "item"),
    Case("header only", lambda r: _resp(r).write_text("agent,item,value\n"),
         "alpha/responses.csv", ""),
    Case("non-UTF-8 text", lambda r: _resp(r).write_bytes(b"agent,item,value\nA\xff,i1,1\n"),
         "alpha/responses.csv", "encoding"),
    Case("symbolic link", _symlink, "alpha/extra.csv", "file type"),
    Case("file over size limit", _big, "alpha/big.txt", "size"),
    Case("empty bundle", lambda r: _resp(r).unlink(), "gen-mini/alpha", "files"),
    Case("folder without manifest", lambda r: (r / GEN / "half").mkdir(),
         "gen-mini/half", "submission.toml"),
    Case("bad bundle id", lambda r: shutil.move(r / GEN / "alpha", r / GEN / "my bundle"),
         "gen-mini/my bundle", "bundle id"),
    Case("json does not parse", lambda r: (r / GEN / "alpha" / "meta.json").write_text("{x: 1}"),
         "alpha/meta.json", "line 1"),
    Case("json with NaN", lambda r: (r / GEN / "alpha" / "meta.json").write_text('{"x": NaN}'),
         "alpha/meta.json", "line"),
    Case("hidden folder", lambda r: (r / GEN / "alpha" / ".git").mkdir(),
         "alpha/.git", "file name"),
    Case("p out of range", lambda r: edit(_runs(r), "t1,t2,0.5", "t1,t2,1.5"),
         "beta/runs.csv", "p"),
    Case("unknown test", lambda r: edit(_runs(r), "t1,t3,0.5", "t1,t9,0.5"),
         "beta/runs.csv", "test_b"),
    Case("unknown merge", lambda r: edit(_runs(r), "0.5,sampling,q,0.9,0.3", "0.5,zip,q,0.9,0.3"),
         "beta/runs.csv", "merge"),
    Case("path traversal in settings",
         lambda r: append(r / GEN / "benchmark.toml", 'items_file = "../../../etc/passwd"\n'),
         "gen-mini/benchmark.toml", "items_file"),
]


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_broken_bundle_is_reported_with_file_and_field(case, subs, monkeypatch):
    monkeypatch.setattr(bundles, "MAX_FILE_BYTES", 1024)
    case.mutate(subs)
    report = collect([subs])
    errors = report.errors
    assert errors, f"{case.name}: no error reported"
    hits = [p for p in errors if case.file in p.file and case.field in p.field]
    assert hits, f"{case.name}: expected file~{case.file!r} field~{case.field!r}, got:\n" + \
        "\n".join(map(str, errors))
    for p in hits:
        assert p.message
        assert p.fix, f"{case.name}: {p} gives no fix"


def test_corpus_is_large_enough():
    assert len(CASES) >= 25


def test_good_fixtures_validate(subs):
    assert collect([subs]).problems == []


def test_every_independent_defect_is_listed_at_once(subs):
    edit(_sub(subs), 'contact = "Test Lab <lab@example.org>"\n', "")
    edit(_sub(subs), "submitted = 2024-02-01", "submitted = 2999-01-01")
    edit(_resp(subs), "A1,i2,1", "A1,i2,nan")
    append(_resp(subs), "A2,i5,1\n")
    os.symlink("/etc/passwd", subs / GEN / "alpha" / "link.csv")
    edit(_runs(subs), "t1,t2,0.5", "t1,t2,7")
    fields = {(Path(p.file).name, p.field.split(":")[-1].strip()) for p in collect([subs]).errors}
    assert ("submission.toml", "contact") in fields
    assert ("submission.toml", "submitted") in fields
    assert ("responses.csv", "value") in fields
    assert ("responses.csv", "agent,item") in fields
    assert ("link.csv", "file type") in fields
    assert ("runs.csv", "p") in fields


def test_bundle_outside_a_benchmark_is_reported(subs):
    _no_benchmark(subs)
    report = collect([subs / "stray" / "alpha"])
    assert [(Path(p.file).name, p.field) for p in report.errors] == [("alpha", "benchmark")]
