"""Gaming tests (issue 20, item 12) for the generality and similarity tracks.

Take an honest bundle, vary every field a bundle may set — each manifest field, each field of
the track's ``[track]`` section, each rule the benchmark owns written into the bundle — and
each observation a submitter could bend (missing answers, values outside the benchmark's
domain). Every variation must be refused by validation, or leave every score unchanged, or
(when an observation changed) never lift the bundle above its honest twin. Through the same
path as ``gmeter validate``/``ingest``: a folder on disk, loaded and validated, then scored.
"""

from __future__ import annotations

import math
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest

from pipeline.errors import ValidationFailed
from pipeline.manifest import Origin, SubmissionManifest, SystemInfo
from pipeline.tracks.base import ScoreContext
from pipeline.validate import benchmark_inputs

Scores = dict[tuple[str, str, str], float]

BENCH = """id = "{id}"
title = "A gaming testbed"
track = "{track}"
version = "1.0.0"
description = "Honest and varied bundles."
licence = "CC0-1.0"
created = 2024-01-01

{section}
"""
MANIFEST = """submitted = 2024-02-01
contact = "Lab {name} <lab@example.org>"
licence = "CC0-1.0"
description = "Bundle {name}."

[system]
name = "System {name}"
{extra}"""

# ---------------------------------------------------------------- generality boards
ITEMS = [f"i{k}" for k in range(1, 7)]
#: agent → responses on ITEMS; values on the unit scale (raw boards scale them by 10).
HONEST = {"H1": [1, 1, 0, 1, 0, 0.5], "H2": [1, 0, 1, 0, 0, 1]}
OTHERS = {
    "O1": [1, 1, 1, 0.5, 0, 0],
    "O2": [0.5, 1, 0, 0, 1, 0],
    "O3": [1, 1, 1, 1, 0.5, 0],
    "REF": [0.5, 0.5, 0.5, 0.5, 0.5, 0.5],
}
GEN_BOARDS = {
    "intrinsic": 'transform = "intrinsic"',
    "aref": 'transform = "aref"\nreference_agent = "REF"',
    "rnk": 'transform = "rnk"\ncolumns = 10',
}


def _responses(rows: dict[str, list[float | str]], raw: bool) -> str:
    out = ["agent,item,value"]
    for a, vals in rows.items():
        for i, v in zip(ITEMS, vals, strict=True):
            cell = v if isinstance(v, str) else repr(float(v) * (10 if raw else 1))
            out.append(f"{a},{i},{cell}")
    return "\n".join(out) + "\n"


def gen_tree(root: Path, board: str) -> Path:
    """A generality benchmark with an honest bundle ``h`` and a population bundle ``o``."""
    b = root / f"gen-{board}"
    section = f"[generality]\n{GEN_BOARDS[board]}\nkmin = 0.0\nbootstrap = 0\n"
    (b / "reference").mkdir(parents=True)
    (b / "benchmark.toml").write_text(
        BENCH.format(id=b.name, track="generality", section=section), encoding="utf-8"
    )
    items = "item,difficulty\n" + "".join(f"{i},{k}\n" for k, i in enumerate(ITEMS, start=1))
    (b / "reference" / "items.csv").write_text(items, encoding="utf-8")
    raw = board != "intrinsic"
    for bid, rows in (("h", HONEST), ("o", OTHERS)):
        (b / bid).mkdir()
        (b / bid / "submission.toml").write_text(
            MANIFEST.format(name=bid, extra=""), encoding="utf-8"
        )
        (b / bid / "responses.csv").write_text(_responses(rows, raw), encoding="utf-8")
    return b


def scores(bench_dir: Path, track: str) -> Scores | None:
    """Every score of the board, or None when validation refuses the folder."""
    from pipeline.tracks import get_track

    try:
        bench, bundles = benchmark_inputs(bench_dir, track)
    except ValidationFailed:
        return None
    res = get_track(track).score(bench, bundles, ScoreContext())
    return {(r.bundle, r.agent, r.metric): r.value for r in res.rows}


def same(a: Scores, b: Scores) -> bool:
    return a.keys() == b.keys() and all(
        a[k] == b[k] or (math.isnan(a[k]) and math.isnan(b[k])) for k in a
    )


def manifest_variations(track: str) -> list[tuple[str, str]]:
    """(name, TOML to append or section to write) for every field a bundle's manifest has."""
    out: list[tuple[str, str]] = []
    for f in SubmissionManifest.model_fields:
        if f in ("system", "origin"):
            continue
        out.append((f, f"{f} = 2024-03-03\n" if f == "submitted" else f'{f} = "varied {f}"\n'))
    system = "".join(
        f'{f} = "{"https://example.org/v" if f == "url" else "varied " + f}"\n'
        for f in SystemInfo.model_fields
    )
    out.append(("system.*", system))
    origin = "".join(f'{f} = "varied {f}"\n' for f in Origin.model_fields if f != "url")
    out.append(("origin.*", "[origin]\n" + origin + 'url = "https://example.org/o"\n'))
    return out


def set_manifest(bundle: Path, field: str, text: str) -> None:
    """Rewrite ``submission.toml`` with one field varied (top-level keys before [system])."""
    name = bundle.name
    if field == "system.*":
        body = MANIFEST.format(name=name, extra="").replace(f'name = "System {name}"\n', "")
        body += text
    elif field == "origin.*":
        body = MANIFEST.format(name=name, extra="") + "\n" + text
    else:
        lines = [
            ln for ln in MANIFEST.format(name=name, extra="").splitlines(keepends=True)
            if not ln.startswith(f"{field} =")
        ]
        body = text + "".join(lines)
    (bundle / "submission.toml").write_text(body, encoding="utf-8")


@pytest.mark.parametrize("board", sorted(GEN_BOARDS))
def test_generality_every_bundle_field_is_refused_or_harmless(board: str, tmp_path: Path):
    from pipeline.tracks.generality.settings import BENCHMARK_RULES, BenchmarkSettings

    base = gen_tree(tmp_path / "base", board)
    honest = scores(base, "generality")
    assert honest is not None and honest

    def varied(mutate: Callable[[Path], None]) -> Scores | None:
        work = tmp_path / "work"
        shutil.rmtree(work, ignore_errors=True)
        shutil.copytree(base, work / base.name)
        mutate(work / base.name / "h")
        return scores(work / base.name, "generality")

    # the manifest: free text and provenance never change a number
    for field, text in manifest_variations("generality"):
        got = varied(lambda h, f=field, t=text: set_manifest(h, f, t))
        assert got is not None and same(got, honest), field  # valid text, same numbers
    # the track's own section: notes only
    notes = varied(lambda h: _append(h, '\n[generality]\nnotes = "varied"\n'))
    assert notes is not None and same(notes, honest)
    # every rule the benchmark owns, written into the bundle: refused, whatever its value
    defaults = BenchmarkSettings(transform="aref", reference_agent="REF").model_dump(mode="json")
    hostile = {"raw_scale": [-1e9, 1.0], "missing": "exclude", "min_coverage": 0.01}
    for rule in sorted(BENCHMARK_RULES):
        value = hostile.get(rule, defaults.get(rule))
        if value is None:
            value = "x"
        toml = f"\n[generality]\n{rule} = {_toml(value)}\n"
        assert varied(lambda h, t=toml: _append(h, t)) is None, rule
    # observations: out of the benchmark's domain is refused
    raw = board != "intrinsic"
    for bad in ("1e12", "-1e12", "2" if not raw else "1e10", "-0.5" if not raw else "-1e10"):
        got = varied(lambda h, v=bad: _set_cell(h, "H1", "i3", v))
        assert got is None, (board, bad)
    # NA on every wrong (or tied) answer never lifts an agent above its honest twin
    lowest = min(v for rows in (HONEST, OTHERS) for vals in rows.values() for v in vals)
    for agent, vals in HONEST.items():
        for k, v in enumerate(vals):
            if v != lowest and not (board == "aref" and v <= 0.5):
                continue
            got = varied(lambda h, a=agent, i=ITEMS[k]: _set_cell(h, a, i, "NA"))
            assert got is not None
            key = ("h", agent, "capability")
            assert not got[key] > honest[key] + 1e-12, (board, agent, ITEMS[k])
            if board == "intrinsic":  # NA is a wrong answer (0), exactly
                assert same(got, honest), (board, agent, ITEMS[k])
    # dates are an observation that changes no score
    dated = varied(lambda h: (h / "agents.csv").write_text("agent,date\nH1,2023-05-01\n"))
    assert dated is not None and same(dated, honest)


def _append(bundle: Path, text: str) -> None:
    with (bundle / "submission.toml").open("a", encoding="utf-8") as fh:
        fh.write(text)


def _toml(value: object) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return f'"{value}"'
    if isinstance(value, list | tuple):
        return "[" + ", ".join(_toml(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{}"
    return repr(value)


def _set_cell(bundle: Path, agent: str, item: str, value: str) -> None:
    path = bundle / "responses.csv"
    lines = path.read_text(encoding="utf-8").splitlines()
    out = [
        f"{agent},{item},{value}" if ln.startswith(f"{agent},{item},") else ln for ln in lines
    ]
    path.write_text("\n".join(out) + "\n", encoding="utf-8")


# ---------------------------------------------------------------- similarity
RUNS = (
    "test_a,test_b,p,merge,agent,v_a,v_b,v_ab\n"
    "t1,t2,0.5,sampling,q,0.9,0.5,0.8\n"
    "t1,t3,0.5,sampling,q,0.9,0.3,0.5\n"
    "t2,t3,0.5,sampling,q,0.5,0.3,0.45\n"
)


def sim_tree(root: Path) -> Path:
    b = root / "sim-game"
    b.mkdir(parents=True)
    section = '[similarity]\ntests = [{ id = "t1" }, { id = "t2" }, { id = "t3" }]\n'
    (b / "benchmark.toml").write_text(
        BENCH.format(id=b.name, track="similarity", section=section), encoding="utf-8"
    )
    (b / "h").mkdir()
    (b / "h" / "submission.toml").write_text(MANIFEST.format(name="h", extra=""), "utf-8")
    (b / "h" / "runs.csv").write_text(RUNS, encoding="utf-8")
    return b


def test_similarity_every_bundle_field_is_refused_or_harmless(tmp_path: Path):
    from pipeline.tracks.similarity.settings import BENCHMARK_RULES, BenchmarkSettings

    base = sim_tree(tmp_path / "base")
    honest = scores(base, "similarity")
    assert honest is not None and honest

    def varied(mutate: Callable[[Path], None]) -> Scores | None:
        work = tmp_path / "work"
        shutil.rmtree(work, ignore_errors=True)
        shutil.copytree(base, work / base.name)
        mutate(work / base.name / "h")
        return scores(work / base.name, "similarity")

    for field, text in manifest_variations("similarity"):
        got = varied(lambda h, f=field, t=text: set_manifest(h, f, t))
        assert got is not None and same(got, honest), field  # valid text, same numbers
    for text in ('baseline = "varied"', "experiment = { note = 1 }"):
        got = varied(lambda h, t=text: _append(h, f"\n[similarity]\n{t}\n"))
        assert got is not None and same(got, honest), text
    # a transcription (reported) rounds S to the printed digits and nothing else
    rep = varied(lambda h: _append(h, '\n[similarity]\nreported = "a paper"\ndigits = 2\n'))
    assert rep is not None and rep.keys() == honest.keys()
    assert all(abs(rep[k] - honest[k]) <= 0.005 + 1e-12 for k in rep if math.isfinite(honest[k]))
    defaults = BenchmarkSettings.model_validate({"tests": [{"id": "t1"}, {"id": "t2"}]})
    dumped = defaults.model_dump(mode="json")
    hostile = {"scale": [-1e9, 1e9], "convention": "mixture", "confidence": 0.51}
    for rule in sorted(BENCHMARK_RULES):
        value = hostile.get(rule, dumped.get(rule))
        toml = f"\n[similarity]\n{rule} = {_toml(value if value is not None else 'x')}\n"
        assert varied(lambda h, t=toml: _append(h, t)) is None, rule
    # observations out of the benchmark's domain [0, 1]
    for old, new in (("0.9,0.5,0.8", "0.9,0.5,5"), ("0.9,0.5,0.8", "-3,0.5,0.8"),
                     ("0.5,0.3,0.45", "0.5,1.0000001,0.45"), ("0.9,0.3,0.5", "0.9,0.3,-1e300")):
        got = varied(lambda h, o=old, n=new: _edit(h / "runs.csv", o, n))
        assert got is None, new


def _edit(path: Path, old: str, new: str) -> None:
    text = path.read_text(encoding="utf-8")
    assert old in text
    path.write_text(text.replace(old, new, 1), encoding="utf-8")
