"""Property-based fuzzing of the readers a bundle reaches: TOML, JSON, CSV, gzip, file names.

Whatever the bytes, each reader returns problems (or its documented exception) — never a
``RecursionError``, ``MemoryError`` or any other crash — and bounded: the nesting, size and
problem-count limits hold. Examples are kept small and few so the suite stays fast.
"""

from __future__ import annotations

import gzip
import json
import math

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pipeline.inputs import FileSet
from pipeline.limits import (
    MAX_NESTING,
    MAX_PROBLEMS_PER_FILE,
    bad_name,
    bad_text,
    gzip_problem,
    json_nesting,
    loads_bounded,
    parse_toml,
    skeleton,
    toml_nesting,
    walk,
)
from pipeline.manifest import load_submission_manifest
from pipeline.tracks.filecheck import Column, check_csv, iter_json_problems

FAST = settings(max_examples=150, deadline=None,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])

TOML_ATOMS = st.sampled_from([
    "[", "]", "{", "}", "=", ",", ".", '"', "'", '"""', "'''", "#", "\n", " ", "a", "b", "1",
    "1e999", "nan", "inf", "-inf", "true", "2024-01-01", "\\u0000", "\\u001b", "\\", "[[x]]",
    "[s]", "x = ", "9223372036854775808", "\u202e", "\x00", "\x1b",
])
JSON_ATOMS = st.sampled_from([
    "[", "]", "{", "}", ":", ",", '"', '"a"', "1", "-0", "1e999", "NaN", "Infinity", "true",
    "null", " ", "\\u0000", '"\\ud800"', '"\\u001b"', "9" * 50,
])


def _toml_text(parts: list[str]) -> str:
    return "".join(parts)


@FAST
@given(st.lists(TOML_ATOMS, max_size=80).map(_toml_text))
def test_toml_reader_never_crashes(text: str) -> None:
    data, problems = parse_toml("f.toml", text.encode("utf-8", "surrogatepass"))
    assert (data is None) == bool(problems)
    if data is not None:
        for _, leaf in walk(data):
            assert not (isinstance(leaf, float) and not math.isfinite(leaf))
            assert not (isinstance(leaf, str) and bad_text(leaf))


@FAST
@given(st.integers(min_value=MAX_NESTING + 1, max_value=3000), st.sampled_from("[{"))
def test_any_toml_nesting_beyond_the_limit_is_one_problem(depth: int, kind: str) -> None:
    close = "]" if kind == "[" else "}"
    body = (kind if kind == "[" else "{a = ") * depth
    text = "x = " + body + ("1" if kind == "{" else "") + close * depth + "\n"
    data, problems = parse_toml("f.toml", text.encode())
    assert data is None and len(problems) == 1 and problems[0].field == "syntax"
    assert toml_nesting(text) == depth


@FAST
@given(st.binary(max_size=400))
def test_submission_manifest_from_random_bytes(data: bytes) -> None:
    raw, _, problems = load_submission_manifest("s.toml", data, "generality")
    assert raw is not None or problems


@FAST
@given(st.lists(JSON_ATOMS, max_size=60).map("".join))
def test_json_reader_raises_only_value_errors(text: str) -> None:
    try:
        value = loads_bounded(text)
    except ValueError:  # JSONDecodeError is a ValueError
        return
    for _, leaf in walk(value):
        assert not (isinstance(leaf, float) and not math.isfinite(leaf))


@FAST
@given(st.integers(min_value=MAX_NESTING + 1, max_value=20000))
def test_deep_json_is_refused_before_parsing(depth: int) -> None:
    text = "[" * depth + "]" * depth
    assert json_nesting(text) == depth
    fs = FileSet("b", {"x.json": text.encode()})
    (p,) = list(iter_json_problems(fs, ["x.json"]))
    assert f"nests {depth} levels deep" in p.message


@FAST
@given(st.recursive(st.none() | st.booleans() | st.integers() | st.text(max_size=5)
                    | st.floats(allow_nan=False, allow_infinity=False),
                    lambda kids: st.lists(kids, max_size=3)
                    | st.dictionaries(st.text(max_size=3), kids, max_size=3),
                    max_leaves=20))
def test_json_round_trip_of_plain_values(value: object) -> None:
    text = json.dumps(value)
    clean = not any(isinstance(leaf, str) and bad_text(leaf) for _, leaf in walk(value)) and \
        not any(bad_text(k) for k in _keys(value))
    try:
        assert loads_bounded(text) == value
    except ValueError:
        assert not clean


def _keys(value: object) -> list[str]:
    out: list[str] = []
    stack = [value]
    while stack:
        v = stack.pop()
        if isinstance(v, dict):
            out += list(v)
            stack += list(v.values())
        elif isinstance(v, list):
            stack += v
    return out


CSV_CELLS = st.one_of(
    st.text(alphabet=st.sampled_from(list('ab1.,"\n\r\t-e\x00\x1b\u202e')), max_size=12),
    st.sampled_from(["nan", "inf", "-inf", "1e999", "0.5", "NaN", ""]),
)


@FAST
@given(st.lists(st.lists(CSV_CELLS, min_size=1, max_size=4), max_size=30))
def test_csv_checker_never_crashes_and_caps_problems(rows: list[list[str]]) -> None:
    import csv
    import io

    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(["name", "value"])
    w.writerows(rows)
    fs = FileSet("b", {"t.csv": buf.getvalue().encode()})
    parsed, problems = check_csv(fs, "t.csv", [Column("name"), Column("value", "float")],
                                 max_problems=MAX_PROBLEMS_PER_FILE)
    assert len(problems) <= MAX_PROBLEMS_PER_FILE + 1
    for r in parsed:
        assert math.isfinite(r["value"]) and not bad_text(r["name"])


@FAST
@given(st.binary(max_size=300))
def test_csv_checker_on_random_bytes(data: bytes) -> None:
    fs = FileSet("b", {"t.csv": data})
    check_csv(fs, "t.csv", [Column("name"), Column("value", "float")])


@FAST
@given(st.binary(max_size=200), st.integers(min_value=0, max_value=60))
def test_gzip_check_on_damaged_members(payload: bytes, cut: int) -> None:
    good = gzip.compress(payload, mtime=0)
    assert gzip_problem(good) == ""
    if cut:
        assert gzip_problem(good[:-cut]) != ""
    assert gzip_problem(good + good) != ""


@FAST
@given(st.binary(max_size=300))
def test_gzip_check_on_random_bytes(data: bytes) -> None:
    assert isinstance(gzip_problem(data), str)


@FAST
@given(st.text(max_size=30))
def test_names_and_skeletons(name: str) -> None:
    why = bad_name(name)
    assert isinstance(why, str)
    key = skeleton(name)
    assert key == skeleton(key) or isinstance(key, str)
    if not why:
        assert not bad_text(name)
