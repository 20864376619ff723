"""Pure parts of ``gmeter check``: path classification, standings, escaping."""

from __future__ import annotations

import math
import re
from pathlib import Path

import pytest

from pipeline.check.gitdiff import FileChange, _parse_name_status, classify
from pipeline.check.report import MARKER, code, md, to_json, to_markdown, to_text
from pipeline.check.run import BenchmarkCheck, CheckReport, Entry, compare, entries_of
from pipeline.errors import UsageError


# --------------------------------------------------------------------------- gitdiff
def test_name_status_parsing() -> None:
    out = "A\0submissions/b/new/x.csv\0M\0README.md\0D\0odd name|with\ttab.csv\0"
    assert _parse_name_status(out) == [FileChange("A", "submissions/b/new/x.csv"),
                                       FileChange("M", "README.md"),
                                       FileChange("D", "odd name|with\ttab.csv")]


def test_classify_sorts_every_kind_of_path() -> None:
    files = [FileChange(s, p) for s, p in [
        ("A", "submissions/b/new/submission.toml"), ("A", "submissions/b/new/r.csv"),
        ("M", "submissions/b/old/r.csv"), ("D", "submissions/b/gone/submission.toml"),
        ("M", "submissions/b/benchmark.toml"), ("A", "submissions/b/reference/items.csv"),
        ("M", "submissions/releases.toml"), ("M", "pipeline/x.py"),
        ("A", "submissions/b/stray/notes.txt"),  # no submission.toml anywhere: the benchmark's
    ]]
    base = {("b", "old"), ("b", "gone")}
    now = {("b", "old"), ("b", "new")}
    bundles, bench, root, outside = classify(files, "submissions", base, now)
    assert [(x.bundle, x.kind, len(x.files)) for x in bundles] == [
        ("gone", "deleted", 1), ("new", "new", 2), ("old", "modified", 1)]
    assert [f.path for f in bench["b"]] == ["submissions/b/benchmark.toml",
                                            "submissions/b/reference/items.csv",
                                            "submissions/b/stray/notes.txt"]
    assert [f.path for f in root] == ["submissions/releases.toml"]
    assert [f.path for f in outside] == ["pipeline/x.py"]


def test_classify_with_submissions_in_a_subfolder() -> None:
    files = [FileChange("A", "data/subs/b/x/r.csv"), FileChange("A", "submissions/b/x/r.csv")]
    bundles, _, _, outside = classify(files, "data/subs", set(), {("b", "x")})
    assert [x.bundle for x in bundles] == ["x"] and [f.path for f in outside] == [
        "submissions/b/x/r.csv"]


# --------------------------------------------------------------------------- standings
def _row(bundle: str, agent: str, metric: str, value: float, rank: int | None,
         lo: float | None = None, hi: float | None = None) -> dict[str, object]:
    return {"bundle": bundle, "agent": agent, "metric": metric, "value": value, "ci_low": lo,
            "ci_high": hi, "rank": rank, "verified": True, "content_hash": bundle * 4,
            "code_version": "gmeter test", "details": None}


def test_compare_new_entries_overtakes_and_others() -> None:
    before = [_row("a", "a", "m", 0.9, 1), _row("b", "b", "m", 0.5, 2), _row("c", "c", "m", 0.1, 3),
              _row("a", "a", "x", 1.0, 1)]
    after = [_row("a", "a", "m", 0.9, 1), _row("n", "n", "m", 0.6, 2), _row("b", "b", "m", 0.5, 3),
             _row("c", "c", "m", 0.1, 4), _row("a", "a", "x", 2.0, 1)]
    bc = BenchmarkCheck("bench", "bench", "generality", targets=["n"], primary_metric="m")
    compare(bc, entries_of(before, "m", "higher"), entries_of(after, "m", "higher"))
    (ne,) = bc.new_entries
    assert ne.entry.rank == 2 and ne.of == 4 and ne.before is None
    assert [o.bundle for o in ne.overtakes] == ["b", "c"]
    moved = {c.bundle: c for c in bc.others}
    assert set(moved) == {"a", "b", "c"}  # a: metric x changed; b, c: rank moved
    assert moved["a"].metric_changes == (("x", 1.0, 2.0),) and moved["a"].rank_after == 1
    assert (moved["b"].rank_before, moved["b"].rank_after) == (2, 3)
    assert (bc.entries_before, bc.entries_after) == (3, 4) and not bc.removed


def test_compare_an_updated_entry_overtakes_only_those_it_passed() -> None:
    before = [_row("a", "a", "m", 0.9, 1), _row("b", "b", "m", 0.5, 2), _row("u", "u", "m", 0.2, 3)]
    after = [_row("a", "a", "m", 0.9, 1), _row("u", "u", "m", 0.7, 2), _row("b", "b", "m", 0.5, 3)]
    bc = BenchmarkCheck("bench", "bench", "generality", targets=["u"], primary_metric="m")
    compare(bc, entries_of(before, "m", "higher"), entries_of(after, "m", "higher"))
    (ne,) = bc.new_entries
    assert ne.before is not None and ne.before.rank == 3
    assert [o.bundle for o in ne.overtakes] == ["b"]


# --------------------------------------------------------------------------- rendering
HOSTILE_MD = [
    "</script><script>alert(1)</script> | *bold* [x](y)\nnext",
    "[clk](https://evil.example/x) ![i](https://evil.example/i.png)",
    "@octocat please look #1 :tada: www.evil.example mail@evil.example",
    "a`b``c|d\\|e", "\x1b[2J\u202eevil\x9b", "", "  ", "|||",
]


@pytest.mark.parametrize("evil", HOSTILE_MD)
def test_markdown_holds_untrusted_text_in_one_code_span(evil: str) -> None:
    """Whatever a submitter typed is one inline code span on one line: GitHub links,
    embeds, renders, formats and notifies nothing inside code; a table cell stays one cell."""
    out = md(evil)
    assert ("\n" not in out and out.startswith("`") and out.endswith("`")) or out == "—"
    inner = out[1:-1]
    assert "`" not in inner
    assert "|" not in inner.replace("\\|", "")  # every pipe escaped for the table
    assert not any(c in inner for c in "\x1b\u202e\x9b")
    assert code("a`b|c") == "`a'b\\|c`"


def _report() -> CheckReport:
    e = Entry("evil|bundle", "<b>agent</b>", "f" * 64, 0.5, 0.4, 0.6, 1, 1, True, "gmeter t",
              {"m": (0.5, 0.4, 0.6), "other": (math.inf, None, None)})
    bc = BenchmarkCheck("b", "b", "generality", title="T | x", version="1.0.0",
                        primary_metric="m", targets=["evil|bundle"])
    from pipeline.check.run import NewEntry

    bc.new_entries.append(NewEntry(e, 1, (), None))
    return CheckReport("paths", benchmarks=[bc])


def test_report_formats() -> None:
    r = _report()
    md_text = to_markdown(r)
    assert "`<b>agent</b> (evil\\|bundle)`" in md_text
    outside_code = re.sub(r"`[^`\n]*`", "", md_text.replace(MARKER, ""))
    assert md_text.count("\n| ") >= 3 and "<" not in outside_code
    assert "<b>agent</b> (evil|bundle)" in to_text(r)
    assert '"inf"' in to_json(r)


def test_check_needs_a_base_or_paths(tmp_path: Path) -> None:
    from pipeline.check.run import check

    with pytest.raises(UsageError):
        check()
    with pytest.raises(UsageError, match="neither a benchmark nor a bundle"):
        check(paths=[tmp_path])
    with pytest.raises(UsageError, match="no such"):
        check(paths=[tmp_path / "missing"])
