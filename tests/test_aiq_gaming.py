"""AIQ gaming test (issue 20, items 3, 5, 6 and 12): every field a bundle sets, varied.

An honest traced bundle, run with the benchmark's seed and samples, is verified. Each variant
changes one thing a submitter controls — a field of ``aiq.toml`` (settings, seed, samples,
method, episode length, the ``[result]`` and ``[training]`` tables, an unknown key), a column
of ``samples.csv`` (ids, programs, strata, signs, run seeds, rewards, steps, statuses,
stages, weights), the traces, ``submission.toml`` — and must be refused by ``validate``, or
scored *reported* (never ranked above a verified entry), or leave the score exactly as it
was. A forged reported claim never outranks the verified leader; look-alike names are
errors.
"""

from __future__ import annotations

import gzip
import tomllib
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from aiq_fixtures import small_benchmark

from pipeline.inputs import BenchmarkInput, BundleInput, FileSet
from pipeline.lab.aiq.run import run_to_bundle
from pipeline.ranking import ranked_pool
from pipeline.tracks.aiq.settings import LOG_DOMAINS, AIQBenchmarkSettings, AIQSubmissionSettings
from pipeline.tracks.aiq.track import TRACK
from pipeline.tracks.base import ScoreContext

Files = dict[str, bytes]


def _files(folder: Path) -> Files:
    return {p.relative_to(folder).as_posix(): p.read_bytes()
            for p in sorted(folder.rglob("*")) if p.is_file()}  # fmt: skip


def bench_input(folder: Path) -> BenchmarkInput:
    manifest = tomllib.loads((folder / "benchmark.toml").read_text())
    settings = AIQBenchmarkSettings.model_validate(manifest["aiq"]).model_dump()
    files = {p.relative_to(folder).as_posix(): p.read_bytes() for p in folder.rglob("*")
             if p.is_file() and (p.parent == folder or "reference" in p.parts)}  # fmt: skip
    return BenchmarkInput(folder.name, "aiq", "1.0.0", manifest, settings,
                          FileSet(folder.name, files))  # fmt: skip


def bundle(bid: str, files: Files) -> BundleInput:
    manifest = tomllib.loads(files["submission.toml"].decode())
    settings = AIQSubmissionSettings.model_validate(manifest.get("aiq", {})).model_dump()
    return BundleInput(bid, "aiq-gaming", manifest, settings, FileSet(bid, files))


@pytest.fixture(scope="module")
def setup(tmp_path_factory) -> tuple[BenchmarkInput, Files, Files]:
    folder = small_benchmark(tmp_path_factory.mktemp("b") / "aiq-gaming", 600, seed=7,
                             samples=40, method="mc-antithetic")  # fmt: skip
    run_to_bundle("freq", 100, None, None, folder / "honest", benchmark=folder, traces=True)
    run_to_bundle("random", 100, None, None, folder / "rival", benchmark=folder, traces=True)
    return bench_input(folder), _files(folder / "honest"), _files(folder / "rival")


# ----------------------------------------------------------------------------- edits
def _toml_set(key: str, value: str) -> Callable[[Files], None]:
    """Set (or add) a top-level ``aiq.toml`` key, or ``table.key``."""

    def edit(f: Files) -> None:
        lines = f["aiq.toml"].decode().splitlines()
        table, _, name = key.rpartition(".")
        current = ""
        for k, line in enumerate(lines):
            if line.startswith("["):
                current = line.strip("[] ")
            elif current == table and line.split("=")[0].strip() == name:
                lines[k] = f"{name} = {value}"
                break
        else:
            at = next((k + 1 for k, line in enumerate(lines) if line.strip() == f"[{table}]"),
                      None) if table else 0  # fmt: skip
            if at is None:  # a table the log does not have yet
                lines += [f"[{table}]"]
                at = len(lines)
            lines.insert(at, f"{name} = {value}")
        f["aiq.toml"] = ("\n".join(lines) + "\n").encode()

    return edit


def _toml_drop(key: str) -> Callable[[Files], None]:
    def edit(f: Files) -> None:
        lines = [x for x in f["aiq.toml"].decode().splitlines()
                 if x.split("=")[0].strip() != key]  # fmt: skip
        f["aiq.toml"] = ("\n".join(lines) + "\n").encode()

    return edit


def _rows(f: Files) -> tuple[list[str], list[dict[str, str]]]:
    import csv
    import io

    reader = csv.DictReader(io.StringIO(f["samples.csv"].decode()))
    return list(reader.fieldnames or []), list(reader)


def _write_rows(f: Files, header: list[str], rows: list[dict[str, str]]) -> None:
    import csv
    import io

    out = io.StringIO()
    w = csv.DictWriter(out, header, lineterminator="\n", extrasaction="ignore")
    w.writeheader()
    w.writerows(rows)
    f["samples.csv"] = out.getvalue().encode()


def _column(name: str, value: Callable[[dict[str, str], int], str]) -> Callable[[Files], None]:
    def edit(f: Files) -> None:
        header, rows = _rows(f)
        for k, r in enumerate(rows):
            r[name] = value(r, k)
        _write_rows(f, header, rows)

    return edit


def _drop_bad_runs(f: Files) -> None:
    """Strategic dropout: the runs below the median reward marked overtime."""
    header, rows = _rows(f)
    rewards = sorted(float(r["reward"]) for r in rows if r["reward"])
    median = rewards[len(rewards) // 2]
    for r in rows:
        if r["reward"] and float(r["reward"]) < median:
            r["status"], r["reward"] = "overtime", ""
    _write_rows(f, header, rows)


def _rows_edit(how: str) -> Callable[[Files], None]:
    def edit(f: Files) -> None:
        header, rows = _rows(f)
        if how == "reverse":
            rows.reverse()
        elif how == "duplicate":
            rows = rows + rows[:2]
        elif how == "drop-pair":
            rows = rows[2:]
        elif how == "no-weight":
            header = [h for h in header if h != "weight"]
        _write_rows(f, header, rows)

    return edit


def _traces(how: str) -> Callable[[Files], None]:
    def edit(f: Files) -> None:
        if how == "drop":
            f.pop("traces/actions.csv.gz")
            return
        text = gzip.decompress(f["traces/actions.csv.gz"]).decode().splitlines()
        cells = text[1].split(",")
        cells[2] = "".join("1" if c == "0" else "0" for c in cells[2])
        text[1] = ",".join(cells)
        f["traces/actions.csv.gz"] = gzip.compress(("\n".join(text) + "\n").encode())

    return edit


def _submission(extra: str) -> Callable[[Files], None]:
    def edit(f: Files) -> None:
        f["submission.toml"] = f["submission.toml"] + extra.encode()

    return edit


ALT = {"int": "3", "bool": "true", "float": "0.5", "str": '"x"'}
VARIANTS: dict[str, Callable[[Files], None]] = {
    **{f"aiq.toml {k} changed": _toml_set(k, ALT[kind]) for k, (kind, _, _) in LOG_DOMAINS.items()},
    **{f"aiq.toml {k} removed": _toml_drop(k) for k in LOG_DOMAINS},
    "aiq.toml seed 8": _toml_set("seed", "8"),
    "aiq.toml samples 20": _toml_set("samples", "20"),
    "aiq.toml samples 80": _toml_set("samples", "80"),
    "aiq.toml method stratified": _toml_set("method", '"stratified"'),
    "aiq.toml method mc": _toml_set("method", '"mc"'),
    "aiq.toml episode_length 200": _toml_set("episode_length", "200"),
    "aiq.toml discount 0.9": _toml_set("discount", "0.9"),
    "aiq.toml unknown rule": _toml_set("rho", "1.0"),
    "aiq.toml result.aiq": _toml_set("result.aiq", "99.0"),
    "aiq.toml result.half_ci": _toml_set("result.half_ci", "0.0"),
    "aiq.toml training.seed": _toml_set("training.seed", "5"),
    "aiq.toml training.steps": _toml_set("training.steps", "1"),
    "samples program_id": _column("program_id", lambda r, k: str(int(r["program_id"]) + 1)),
    "samples program": _column("program", lambda r, k: "+"),
    "samples stratum": _column("stratum", lambda r, k: "1"),
    "samples sign": _column("sign", lambda r, k: "1"),
    "samples seed": _column("seed", lambda r, k: str(k)),
    "samples reward up": _column("reward",
                                 lambda r, k: str(min(100.0, float(r["reward"] or 0) + 5))),
    "samples reward max": _column("reward", lambda r, k: "100.0"),
    "samples steps": _column("steps", lambda r, k: "0"),
    "samples cycles": _column("cycles", lambda r, k: "1"),
    "samples status dropout": _drop_bad_runs,
    "samples status dropout, weights dropped": lambda f: (_drop_bad_runs(f),
                                                          _rows_edit("no-weight")(f)),
    "samples stage": _column("stage", lambda r, k: "0"),
    "samples weight skewed": _column("weight", lambda r, k: "0.5" if k < 2 else "0.0"),
    "samples rows reversed": _rows_edit("reverse"),
    "samples rows duplicated": _rows_edit("duplicate"),
    "samples a pair dropped": _rows_edit("drop-pair"),
    "samples weight column dropped": _rows_edit("no-weight"),
    "traces dropped": _traces("drop"),
    "traces edited": _traces("edit"),
    "submission [aiq] agent": _submission('\n[aiq]\nagent = "my tuned agent"\ncode_url = "x"\n'),
}  # fmt: skip


def _variant(honest: Files, name: str) -> Files:
    files = dict(honest)
    VARIANTS[name](files)
    return files


@pytest.fixture(scope="module")
def scored(setup) -> dict[str, Any]:
    """Every variant that validates, scored in one board with the honest and rival entries."""
    bench, honest, rival = setup
    refused: dict[str, list[str]] = {}
    board = [bundle("honest", honest), bundle("rival", rival)]
    for k, name in enumerate(sorted(VARIANTS)):
        b = bundle(f"v{k:02d}", _variant(honest, name))
        errors = [str(p) for p in TRACK.validate_bundle(b, bench) if p.severity == "error"]
        if errors:
            refused[name] = errors
        else:
            board.append(b)
    res = TRACK.score(bench, board, ScoreContext(seed=1))
    rows = {r.bundle: r for r in res.rows if r.metric == "aiq"}
    return {"refused": refused, "rows": rows,
            "names": {f"v{k:02d}": n for k, n in enumerate(sorted(VARIANTS))}}  # fmt: skip


def test_the_honest_bundle_is_verified(scored) -> None:  # type: ignore[no-untyped-def]
    rows = scored["rows"]
    assert rows["honest"].verified and rows["rival"].verified
    assert "samples reward max" not in scored["refused"]  # a case that must reach the board


@pytest.mark.parametrize("name", sorted(VARIANTS))
def test_every_variant_is_refused_reported_or_harmless(scored, name: str) -> None:  # type: ignore[no-untyped-def]
    if name in scored["refused"]:
        return
    bid = next(b for b, n in scored["names"].items() if n == name)
    rows = scored["rows"]
    honest = rows["honest"]
    row = rows.get(bid)
    if row is None:
        return  # not scored: never on the board
    if not row.verified:
        return  # reported: ranked apart (below)
    assert (row.value, row.ci_low, row.ci_high) == (honest.value, honest.ci_low, honest.ci_high)


def test_owned_rules_are_refused(scored) -> None:  # type: ignore[no-untyped-def]
    """The benchmark's rules given otherwise in a bundle are validation errors."""
    must = ["aiq.toml seed 8", "aiq.toml samples 20", "aiq.toml samples 80",
            "aiq.toml method stratified", "aiq.toml method mc", "aiq.toml discount 0.9",
            "aiq.toml unknown rule", "samples seed", "samples a pair dropped",
            "samples weight skewed", "samples program", "samples program_id"]  # fmt: skip
    missed = [n for n in must if n not in scored["refused"]]
    assert missed == []


def test_forged_observations_are_never_verified(scored) -> None:  # type: ignore[no-untyped-def]
    """Rewards, statuses or traces that do not replay: refused or reported, never verified."""
    rows, names = scored["rows"], scored["names"]
    for name in ("samples reward up", "samples reward max", "samples status dropout",
                 "samples status dropout, weights dropped",
                 "traces dropped", "traces edited", "aiq.toml episode_length 200",
                 "samples steps", "samples stratum", "samples sign"):  # fmt: skip
        if name in scored["refused"]:
            continue
        bid = next(b for b, n in names.items() if n == name)
        assert bid not in rows or not rows[bid].verified, name


def test_a_forged_reported_claim_never_outranks_the_verified_leader(scored) -> None:  # type: ignore[no-untyped-def]
    rows, names = scored["rows"], scored["names"]
    bids = sorted(rows)
    pool = ranked_pool([rows[b].verified for b in bids])
    ranked = sorted((b for b, p in zip(bids, pool, strict=True) if p),
                    key=lambda b: -rows[b].value)  # fmt: skip
    forged = next(b for b, n in names.items() if n == "samples reward max")
    assert rows[forged].value > rows["honest"].value  # the claim is higher …
    assert forged not in ranked  # … and not ranked against verified entries
    assert ranked[0] in ("honest", "rival") or rows[ranked[0]].value == rows["honest"].value


# ----------------------------------------------------------------------------- names
LOOKALIKES = {
    "cyrillic O": "RAINB\u041eW noop",  # Cyrillic О
    "fullwidth": "\uff32\uff12\uff24\uff12",  # Ｒ２Ｄ２
    "zero-width": "R2\u200bD2",
    "separator": "r2-d2",
}


@pytest.mark.parametrize("kind", sorted(LOOKALIKES))
def test_lookalike_agent_names_are_errors(setup, kind: str) -> None:  # type: ignore[no-untyped-def]
    from pipeline.check.generic import lookalike_name
    from pipeline.tracks.review import IntegrityContext

    bench, honest, rival = setup

    def named(bid: str, files: Files, name: str) -> BundleInput:
        f = dict(files)
        text = f["submission.toml"].decode()
        start = text.index("[system]")
        line = next(x for x in text[start:].splitlines() if x.startswith("name"))
        f["submission.toml"] = text.replace(line, f'name = "{name}"', 1).encode()
        return bundle(bid, f)

    peers = [named("rainbow", honest, "RAINBOW noop"), named("r2d2", rival, "R2D2")]
    target = named("mimic", honest, LOOKALIKES[kind])
    ctx = IntegrityContext(benchmark=bench, targets=[target], peers=peers)
    found = [f for f in lookalike_name(ctx) if f.severity == "error"]
    from pipeline.manifest import load_submission_manifest

    _, _, problems = load_submission_manifest("s.toml", target.files.files["submission.toml"],
                                              "aiq")  # fmt: skip
    refused = [p for p in problems if p.severity == "error"]
    assert found or refused, kind


@pytest.mark.parametrize("spec", ["\uff46\uff52\uff45\uff51", "freq\u202e", "freq\u200b"])
def test_an_agent_spec_that_reaches_the_charts_follows_the_name_rules(setup, spec: str) -> None:  # type: ignore[no-untyped-def]
    """``aiq.toml`` ``agent`` names the chart series: NFKC, no invisible characters."""
    bench, honest, _ = setup
    f = dict(honest)
    _toml_set("agent", f'"{spec},epsilon=0.07"')(f)
    problems = TRACK.validate_bundle(bundle("spec", f), bench)
    assert any(p.field == "agent" and p.severity == "error" for p in problems), problems


SPEC_LOOKALIKES = {
    "cyrillic e in the kind": ("fr\u0435q", None),  # Cyrillic е: the honest agent's series
    "other case": ("FREQ", None),
    "separator": ("fr-eq", None),
    "whole spec, cyrillic": (None, "\u0435"),  # the honest spec with a Cyrillic е in it
}


@pytest.mark.parametrize("kind", sorted(SPEC_LOOKALIKES))
def test_an_agent_spec_that_looks_like_another_on_the_board_is_an_error(setup, kind: str) -> None:  # type: ignore[no-untyped-def]
    """The spec and its kind name chart series: look-alikes of any name on the board are
    errors in ``validate`` and in ``check``, like an ``agent`` column (issue 20, item 6)."""
    from pipeline.bundles import LoadedBenchmark, LoadedBundle
    from pipeline.check.generic import lookalike_name
    from pipeline.tracks.review import IntegrityContext, log_agent_names
    from pipeline.validate import agent_name_problems

    bench, honest, rival = setup
    spec = tomllib.loads(honest["aiq.toml"].decode())["agent"]
    new_kind, letter = SPEC_LOOKALIKES[kind]
    forged = spec.replace("e", letter, 1) if letter else new_kind + ",epsilon=0.5"
    f = dict(honest)
    _toml_set("agent", f'"{forged}"')(f)
    f["submission.toml"] = f["submission.toml"].replace(b"[system]\nname = \"",
                                                        b"[system]\nname = \"Mimic ")
    mimic, peers = bundle("mimic", f), [bundle("honest", honest), bundle("rival", rival)]
    assert forged in log_agent_names(mimic.files)
    ctx = IntegrityContext(benchmark=bench, targets=[mimic], peers=peers)
    found = [x for x in lookalike_name(ctx) if x.severity == "error"]
    assert found and all(x.field.startswith("agent") for x in found), kind
    loaded = LoadedBenchmark(bench.id, Path(bench.id), bench.id, "aiq", bench, [], [
        LoadedBundle(b.id, Path(b.id), f"{bench.id}/{b.id}", b, []) for b in [*peers, mimic]])
    problems = agent_name_problems([loaded])
    assert (bench.id, "mimic") in problems, kind
    assert all(p.file.endswith("mimic") and p.fix for p in problems[(bench.id, "mimic")])
