"""The gindex track: validation, verified and reported scoring, charts; the maya-fbp-16 data."""

from __future__ import annotations

import json
import math
import tomllib
from pathlib import Path

import numpy as np
import pytest

from pipeline.inputs import BenchmarkInput, BundleInput, FileSet
from pipeline.lab.gindex.published import maya_experiment_bundle
from pipeline.metrics.gindex.flows import mutate_flow
from pipeline.metrics.gindex.index import companion_g_index
from pipeline.metrics.gindex.omega import domain_distance_matrix
from pipeline.tracks.base import ScoreContext
from pipeline.tracks.gindex.settings import BenchmarkSettings, SubmissionSettings
from pipeline.tracks.gindex.track import TRACK
from pipeline.tracks.gindex.validate import _cycle

ROOT = Path(__file__).resolve().parents[1]
BENCH = ROOT / "submissions" / "maya-fbp-16"
EXPERIMENTS = ROOT / "tests" / "data" / "gindex" / "experiments"


def _files(folder: Path, skip_bundles: bool = False) -> dict[str, bytes]:
    out = {}
    for p in sorted(folder.rglob("*")):
        rel = p.relative_to(folder).as_posix()
        if p.is_file():
            if skip_bundles and (folder / rel.split("/")[0] / "submission.toml").exists():
                continue
            out[rel] = p.read_bytes()
    return out


def bench_input(files: dict[str, bytes] | None = None, **override) -> BenchmarkInput:
    files = files if files is not None else _files(BENCH, skip_bundles=True)
    manifest = tomllib.loads(files["benchmark.toml"].decode())
    raw = {**manifest.get("gindex", {}), **override}
    settings = BenchmarkSettings(**raw).model_dump()
    return BenchmarkInput("maya-fbp-16", "gindex", "1.0.0", manifest, settings,
                          FileSet("submissions/maya-fbp-16", files))


def bundle_input(bid: str, files: dict[str, bytes]) -> BundleInput:
    manifest = tomllib.loads(files["submission.toml"].decode())
    settings = SubmissionSettings(**manifest.get("gindex", {})).model_dump()
    return BundleInput(bid, "maya-fbp-16", manifest, settings,
                       FileSet(f"submissions/maya-fbp-16/{bid}", files))


PUBLISHED = {
    "gpt2-345m-2": 7955.369, "gpt-neo-2-7b-1": 6462.947, "gpt2-1-5b-1": 6464.137,
    "gpt2-1-5b-2": 6045.588, "gpt2-774m-1": 4916.152, "gpt-neo-2-7b-2": 4491.585,
    "gpt2-345m-1": 4424.420, "gpt2-774m-2": 4086.830,
}


@pytest.fixture(scope="module")
def bench() -> BenchmarkInput:
    return bench_input()


@pytest.fixture(scope="module")
def shipped_bundles() -> list[BundleInput]:
    return [bundle_input(b, _files(BENCH / b)) for b in sorted(PUBLISHED)]


def test_benchmark_and_bundles_validate(bench, shipped_bundles):
    assert TRACK.validate_benchmark(bench) == []
    for b in shipped_bundles:
        assert TRACK.validate_bundle(b, bench) == []


def test_reported_bundles_score_the_published_values(bench, shipped_bundles):
    res = TRACK.score(bench, shipped_bundles, ScoreContext(seed=1))
    g = {r.bundle: r for r in res.rows if r.metric == "g_index"}
    assert {k: r.value for k, r in g.items()} == PUBLISHED
    for r in g.values():
        assert not r.verified
        assert r.ci_low < r.value < r.ci_high
        assert len(r.details["tasks"]) == 16
    metrics = {r.metric for r in res.rows}
    assert metrics == {"g_index", "theta_mean", "omega_mean", "compute_log2"}
    assert {"gindex_domain_distance", "gindex_theta_compute", "gindex_theta_samples",
            "gindex_contributions", "gindex_published", "gindex_responsiveness_theta",
            "gindex_responsiveness_compute"} <= set(res.charts)
    heat = res.charts["gindex_domain_distance"]
    assert len(heat["labels"]) == len(heat["matrix"]) == 16
    json.dumps(res.charts)  # JSON-ready


def test_scores_are_deterministic(bench, shipped_bundles):
    a = TRACK.score(bench, shipped_bundles[:2], ScoreContext(seed=5))
    b = TRACK.score(bench, shipped_bundles[:2], ScoreContext(seed=5))
    assert [(r.value, r.ci_low, r.ci_high) for r in a.rows] == \
        [(r.value, r.ci_low, r.ci_high) for r in b.rows]


def test_import_round_trip(bench):
    obj = json.loads((EXPERIMENTS / "GPT2-345M_1.json").read_text())
    files = maya_experiment_bundle(obj, source="x.json", system="GPT2-345M")
    assert files == _files(BENCH / "gpt2-345m-1") | {"submission.toml": files["submission.toml"]}
    b = bundle_input("gpt2-345m-1", files)
    assert TRACK.validate_bundle(b, bench) == []


# --------------------------------------------------------------------------- verified bundles
def _reference(bench: BenchmarkInput) -> dict[str, list]:
    out = {}
    for p, data in bench.files.files.items():
        if p.startswith("reference/domains/") and p.endswith(".json"):
            out[p.split("/")[-1][:-5]] = json.loads(data)["flow"]
    return out


def _verified_files(programs: dict[str, list]) -> dict[str, bytes]:
    files = {
        "submission.toml": b'submitted = 2024-01-01\ncontact = "x"\nlicence = "MIT"\n'
                           b'[system]\nname = "Echo"\n[gindex]\nmodel = "echo"\n',
        "curriculum.csv": b"domain,num_samples\nhttp,10\ntwitter,20\n",
        "compute.csv": b"tflops,seconds\n10,1000\n",  # 10 PFLOP·s: above the floor
    }
    for t, flow in programs.items():
        files[f"programs/{t}.json"] = json.dumps({"flow": flow}).encode()
    files.update(curriculum_samples({"http": 10, "twitter": 20}))
    return files


def curriculum_samples(sizes: dict[str, int]) -> dict[str, bytes]:
    """``curriculum/<domain>.jsonl`` with ``n`` training samples per domain."""
    return {f"curriculum/{d}.jsonl": "".join(
        json.dumps({"prompt": f"{d} sample {k}", "program": []}) + "\n" for k in range(n)
    ).encode() for d, n in sizes.items()}


def test_verified_bundle_scores_theta_from_programs(bench):
    refs = _reference(bench)
    rng = np.random.default_rng(0)
    progs = {}
    for i, (t, f) in enumerate(sorted(refs.items())):
        m = mutate_flow(f, rng, 2) if i % 3 else f
        progs[t] = f if _cycle(m) else m  # a mutation may reverse an edge into a 2-cycle
    b = bundle_input("echo", _verified_files(progs))
    assert TRACK.validate_bundle(b, bench) == []
    res = TRACK.score(bench, [b], ScoreContext(seed=3))
    g = next(r for r in res.rows if r.metric == "g_index")
    assert g.verified
    # expected: θ per domain = 1 - mean Δ(program, reference) under the board's convention
    # (never the companion code's, issue 20 4b); E = log2(10*1000/1000)
    from pipeline.metrics.gindex.delta import delta
    from pipeline.tracks.gindex.settings import BOARD_CONVENTION

    by_dom: dict[str, list[float]] = {}
    for p, _ in bench.files.files.items():
        if p.startswith("reference/domains/") and p.endswith(".json"):
            d, t = p.split("/")[2], p.split("/")[3][:-5]
            by_dom.setdefault(d, []).append(delta(progs[t], refs[t], BOARD_CONVENTION).delta)
    order = bench.settings["domain_order"]
    domains = {}
    for p, data in sorted(bench.files.files.items()):
        if p.startswith("reference/domains/") and p.endswith(".json"):
            domains.setdefault(p.split("/")[2], []).append(json.loads(data)["flow"])
    dd = domain_distance_matrix(domains, order).as_mapping()
    import statistics

    divs = [(d, statistics.mean(by_dom[d])) for d in order]
    want = companion_g_index(divs, [("http", 10), ("twitter", 20)], 10.0, dd)
    assert g.value == want.g_index
    assert g.details["E"] == math.log2(10.0)


def test_verified_bundle_task_form(bench):
    refs = _reference(bench)
    b = bundle_input("echo", _verified_files(refs))
    res = TRACK.score(bench, [b], ScoreContext(options={"form": "task"}))
    g = next(r for r in res.rows if r.metric == "g_index")
    assert g.details["form"] == "task" and len(g.details["tasks"]) == 32
    theta = next(r for r in res.rows if r.metric == "theta_mean")
    assert theta.value == 1.0  # every program is its reference


# --------------------------------------------------------------------------- problems
def _problems(bench, files):
    return TRACK.validate_bundle(bundle_input("bad", files), bench)


def test_bundle_problems(bench):
    refs = _reference(bench)
    good = _verified_files(refs)
    t0, t1, t2 = sorted(refs)[:3]
    bad = dict(good)
    del bad[f"programs/{t0}.json"]
    bad[f"programs/{t1}.json"] = b"{not json"
    bad[f"programs/{t2}.json"] = json.dumps([
        {"id": "a", "type": "x", "wires": [["b"]]},
        {"id": "b", "type": "x", "wires": [["a"]]},
        {"id": "b", "type": "x"},
        {"id": "c", "wires": [["a"]]},
    ]).encode()
    bad["programs/nope.json"] = b"[]"
    bad["curriculum.csv"] = b"domain,num_samples\nmars,10\nhttp,0\n"
    bad["compute.csv"] = b"tflops,seconds\nnan,3\n"
    probs = _problems(bench, bad)
    text = "\n".join(str(p) for p in probs)
    assert f"programs/{t0}.json: -: is missing" in text
    assert "JSON does not parse" in text
    assert "repeats the id 'b'" in text
    assert "type: is missing" in text
    assert "nope.json" in text
    assert "unknown domain 'mars'" in text
    assert "below the minimum" in text
    assert "is NaN" in text
    # every problem names a file and a fix
    assert all(p.file and p.fix for p in probs)


def test_cycle_is_a_problem(bench):
    refs = _reference(bench)
    files = _verified_files(refs)
    t = sorted(refs)[0]
    files[f"programs/{t}.json"] = json.dumps([
        {"id": "a", "type": "x", "wires": [["b"]]},
        {"id": "b", "type": "x", "wires": [["a"]]},
    ]).encode()
    text = "\n".join(str(p) for p in _problems(bench, files))
    assert "cycle (a → b → a)" in text


def test_reported_bundle_missing_domain(bench, shipped_bundles):
    files = dict(shipped_bundles[0].files.files)
    lines = files["divergences.csv"].decode().splitlines()
    files["divergences.csv"] = ("\n".join(lines[:-1]) + "\n").encode()
    text = "\n".join(str(p) for p in _problems(bench, files))
    assert "is missing" in text


def test_neither_programs_nor_divergences(bench):
    files = _verified_files({})
    text = "\n".join(str(p) for p in _problems(bench, files))
    assert "neither programs/ nor divergences.csv" in text


def test_benchmark_problems():
    files = _files(BENCH, skip_bundles=True)
    b = bench_input(files, domain_order=["http", "mars"])
    text = "\n".join(str(p) for p in TRACK.validate_benchmark(b))
    assert "missing" in text and "unknown mars" in text
    empty = bench_input({"benchmark.toml": files["benchmark.toml"]})
    assert TRACK.validate_benchmark(empty)[0].field == "gindex.domains_dir"


def test_compute_must_match_declared(bench, shipped_bundles):
    files = dict(next(b for b in shipped_bundles if b.id == "gpt2-345m-1").files.files)
    files["submission.toml"] = files["submission.toml"].replace(b"compute = 74.75",
                                                                b"compute = 75.0")
    text = "\n".join(str(p) for p in _problems(bench, files))
    assert "gindex.compute" in text
