"""Integrity checks on in-memory bundles: each tampering is caught with an actionable message."""

from __future__ import annotations

import copy
import datetime as dt
import json
from pathlib import Path
from typing import Any

import pytest

from pipeline.check.registry import all_checks, run_benchmark_checks, run_pull_request_checks
from pipeline.inputs import BenchmarkInput, BundleInput, FileSet
from pipeline.tracks import review as integrity
from pipeline.tracks.aiq import integrity as aiq_checks
from pipeline.tracks.gindex.integrity import same_program
from pipeline.tracks.review import Finding, IntegrityContext, PullRequestContext

ROOT = Path(__file__).resolve().parents[1]
# A small Node-RED flow in the shape of the benchmark's reference programs: an HTTP endpoint.
FLOW: dict[str, Any] = {
    "flow": [
        {
            "id": "a1",
            "type": "http in",
            "z": "t",
            "x": 100,
            "y": 100,
            "wires": [["a2", "a3"]],
            "name": "",
            "url": "localhost:3000/knee",
            "method": "HEAD",
            "upload": False,
        },
        {
            "id": "a2",
            "type": "http response",
            "z": "t",
            "x": 300,
            "y": 100,
            "wires": [],
            "name": "",
            "statusCode": "200",
            "headers": {},
        },
        {
            "id": "a3",
            "type": "debug",
            "z": "t",
            "x": 300,
            "y": 200,
            "wires": [],
            "active": True,
            "complete": "payload",
        },
    ]
}
MANIFEST = 'submitted = 2024-01-01\ncontact = "x"\nlicence = "MIT"\n[system]\nname = "S"\n'


def bench(
    track: str,
    files: dict[str, str] | None = None,
    settings: dict[str, Any] | None = None,
    created: dt.date = dt.date(2020, 1, 1),
) -> BenchmarkInput:
    fs = {"benchmark.toml": "id = 'b'\n", **(files or {})}
    return BenchmarkInput(
        "b",
        track,
        "1.0.0",
        {"created": created, "title": "B"},
        settings or {},
        FileSet("submissions/b", {k: v.encode() for k, v in fs.items()}),
    )


def bundle(
    name: str,
    files: dict[str, str],
    settings: dict[str, Any] | None = None,
    manifest: dict[str, Any] | None = None,
) -> BundleInput:
    data = {"submission.toml": MANIFEST + f"# {name}\n", **files}
    enc = {k: v.encode() for k, v in data.items()}
    from pipeline.bundles import content_hash

    return BundleInput(
        name,
        "b",
        manifest or {"submitted": dt.date(2024, 1, 1)},
        settings or {},
        FileSet(f"submissions/b/{name}", enc),
        content_hash(enc),
    )


def run(
    b: BenchmarkInput,
    targets: list[BundleInput],
    peers: list[BundleInput] = (),  # type: ignore[assignment]
    **kw: Any,
) -> list[Finding]:
    ctx = IntegrityContext(
        benchmark=b, targets=targets, peers=list(peers), today=dt.date(2024, 6, 1), **kw
    )
    return run_benchmark_checks(ctx)


def names(findings: list[Finding]) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for f in findings:
        out.setdefault(f.check, []).append(f.severity)
    return out


# --------------------------------------------------------------------------- registry
def test_every_check_is_described_and_documented() -> None:
    docs = (ROOT / "docs" / "submitting.md").read_text(encoding="utf-8")
    specs = all_checks()
    assert len({s.name for s in specs}) == len(specs) >= 15
    for s in specs:
        assert s.title and len(s.description) > 60, s.name
        assert f"`{s.name}`" in docs, f"docs/submitting.md does not explain {s.name}"


def test_a_crashing_check_becomes_a_warning(monkeypatch: pytest.MonkeyPatch) -> None:
    def boom(ctx: IntegrityContext) -> list[Finding]:
        raise RuntimeError("hostile input")

    spec = integrity.CheckSpec("boom", None, "benchmark", "t", "d", boom)
    monkeypatch.setitem(integrity._REGISTRY, "boom", spec)
    found = [f for f in run(bench("generality"), [bundle("x", {})]) if f.check == "boom"]
    assert found and found[0].severity == "warning" and "hostile input" in found[0].message


def test_finding_as_problem() -> None:
    f = Finding("info", "c", "file", "-", "msg", "fix")
    p = f.as_problem()
    assert p.severity == "warning" and "[c] msg" in p.message and p.fix == "fix"


# --------------------------------------------------------------------------- generic
def test_near_duplicate_and_resubmission() -> None:
    files = {f"f{i}.csv": f"a,b\n{i},{i * 1.5}\n" for i in range(10)}
    peer = bundle("peer", files)
    almost = bundle("almost", {**files, "f9.csv": "a,b\n9,99.5\n"})
    assert names(run(bench("similarity"), [almost], [peer]))["near-duplicate"] == ["warning"]
    same_data = bundle("same", files, manifest={"submitted": dt.date(2024, 1, 1), "x": 1})
    assert names(run(bench("similarity"), [same_data], [peer]))["near-duplicate"] == ["error"]
    known = {peer.content_hash: ["b/peer"]}
    clone = bundle("peer", files)
    found = run(bench("similarity"), [clone], known_hashes=known)
    assert "resubmission" not in names(found)  # its own earlier version: not a resubmission
    other = BundleInput("other", "b", clone.manifest, {}, clone.files, clone.content_hash)
    (f,) = [
        f
        for f in run(bench("similarity"), [other], known_hashes=known)
        if f.check == "resubmission"
    ]
    assert f.severity == "error" and "b/peer" in f.message


@pytest.mark.parametrize(
    "contact",
    ["Ada <ada@example.org>", "ADA@example.org", "Ada", "ada@example.org, someone@else.org"],
)
def test_a_contact_copied_from_the_victim_never_softens_a_copy(contact: str) -> None:
    col = "v\n" + "".join(f"{0.5 + k / 7:.6f}\n" for k in range(12))
    victim = {"submitted": dt.date(2024, 1, 1), "contact": "Ada <ada@example.org>"}
    peer = bundle("peer", {"a.csv": col}, manifest=victim)
    copy = bundle("copy", {"b.csv": col}, manifest={**victim, "contact": contact})
    assert names(run(bench("similarity"), [copy], [peer]))["copied-column"] == ["error"]
    whole = bundle(
        "whole", {"a.csv": col}, manifest={**victim, "contact": contact, "description": "mine"}
    )
    assert "error" in names(run(bench("similarity"), [whole], [peer]))["near-duplicate"]


LOOKALIKE_AGENTS = [
    "RAINB\u041eW noop",
    "\uff32\uff12\uff24\uff12",
    "R2\u200bD2",
    "R2\u202eD2",
    "r2-d2",
    "R2D2\u0301",
    "x" * 201,
]


@pytest.mark.parametrize("name", LOOKALIKE_AGENTS)
def test_agent_names_get_the_rules_of_system_names(name: str) -> None:
    peer = bundle("peer", {"r.csv": "agent,item,value\nRAINBOW noop,i1,1\nR2D2,i1,0\n"})
    target = bundle("mal", {"r.csv": f"agent,item,value\n{name},i1,1\n"})
    assert names(run(bench("similarity"), [target], [peer])).get("lookalike-name") == ["error"]


def test_an_agent_named_exactly_like_another_is_not_a_lookalike() -> None:
    peer = bundle("peer", {"r.csv": "agent,item,value\nR2D2,i1,1\n"})
    target = bundle("mine", {"r.csv": "agent,item,value\nR2D2,i1,0\nC3PO,i1,1\n"})
    assert "lookalike-name" not in names(run(bench("similarity"), [target], [peer]))


def test_dates_before_the_benchmark_need_an_origin() -> None:
    early = bundle("e", {}, manifest={"submitted": dt.date(2019, 1, 1)})
    assert names(run(bench("similarity"), [early]))["dates"] == ["warning"]
    cited = bundle("c", {}, manifest={"submitted": dt.date(2019, 1, 1), "origin": {"url": "u"}})
    assert "dates" not in names(run(bench("similarity"), [cited]))


def test_releases_are_immutable() -> None:
    before = b'[[release]]\nname = "r1"\ndate = 2024-01-01\n'
    after = b'[[release]]\nname = "r1"\ndate = 2024-02-01\n'
    ctx = PullRequestContext(bundle_changes=1, releases_before=before, releases_after=after)
    (f,) = [f for f in run_pull_request_checks(ctx) if f.check == "releases-file"]
    assert f.severity == "error" and "r1" in f.message and "restore" in f.resolution


CODE = [
    "pipeline/check/generic.py",
    "cli/app.py",
    "Makefile",
    "pyproject.toml",
    ".github/workflows/check-submission.yml",
    ".ci/run",
    "site_templates/base.html",
    "tests/conftest.py",
    "setup.py",
    ".gmeter/gmeter.duckdb",
    ".gitattributes",
    "docs/.gitattributes",
    ".gitmodules",
    ".lfsconfig",
    "sitecustomize.py",
    "docs/conf.py",
    "tools/x.pth",
    "tox.ini",
    ".pre-commit-config.yaml",
]


@pytest.mark.parametrize("path", CODE)
def test_any_change_to_gmeter_or_ci_is_an_error_for_a_maintainer(path: str) -> None:
    ctx = PullRequestContext(bundle_changes=1, outside=[path])
    (f,) = [f for f in run_pull_request_checks(ctx) if f.check == "maintainer-only"]
    assert f.severity == "error" and path in f.message and "maintainer" in f.resolution


@pytest.mark.parametrize("path", ["README.md", "docs/gindex.md", "CHANGELOG.md"])
def test_documentation_only_is_not_maintainer_only(path: str) -> None:
    ctx = PullRequestContext(bundle_changes=0, outside=[path])
    assert not [f for f in run_pull_request_checks(ctx) if f.check == "maintainer-only"]


def test_frozen_release_files_and_new_releases_are_errors() -> None:
    ctx = PullRequestContext(
        bundle_changes=0, root_files=[("M", "submissions/releases/2026.11.csv")]
    )
    (f,) = [f for f in run_pull_request_checks(ctx) if f.check == "maintainer-only"]
    assert f.severity == "error" and "2026.11.csv" in f.file
    added = PullRequestContext(
        bundle_changes=0,
        releases_before=b"",
        releases_after=b'[[release]]\nname = "x"\ndate = 2024-01-01\n',
    )
    (g,) = [f for f in run_pull_request_checks(added) if f.check == "releases-file"]
    assert g.severity == "error"


# --------------------------------------------------------------------------- gindex
def _flow() -> dict[str, Any]:
    return copy.deepcopy(FLOW)


def _relabel(flow: dict[str, Any]) -> dict[str, Any]:
    """The same program with new node ids and another layout."""
    out = copy.deepcopy(flow)
    ids = {n["id"]: f"n{i}" for i, n in enumerate(out["flow"])}
    for n in out["flow"]:
        n["id"] = ids[n["id"]]
        n["x"], n["y"] = n.get("x", 0) + 70, n.get("y", 0) + 30
        n["wires"] = [[ids.get(w, w) for w in port] for port in n.get("wires", [])]
    return out


def test_same_program_ignores_ids_and_layout_only() -> None:
    flow = _flow()
    assert same_program(json.dumps(flow).encode(), json.dumps(_relabel(flow)).encode())
    changed = _relabel(flow)
    changed["flow"][0]["url"] = "localhost:3000/something-else"
    assert not same_program(json.dumps(flow).encode(), json.dumps(changed).encode())
    assert not same_program(b"not json", b"[]")


def test_reference_program_is_a_leak_whatever_the_curriculum() -> None:
    flow = _flow()
    b = bench("gindex", {"reference/domains/http/http-00dcbf.json": json.dumps(flow)})
    prog = {"programs/http-00dcbf.json": json.dumps(_relabel(flow))}
    leaky = bundle("leaky", {**prog, "curriculum.csv": "domain,samples\ngmail-send,10\n"})
    (f,) = [f for f in run(b, [leaky]) if f.check == "program-leak"]
    assert f.severity == "error" and "http-00dcbf" in f.message and f.resolution
    trained = bundle("trained", {**prog, "curriculum.csv": "domain,samples\nhttp,10\n"})
    assert "program-leak" in names(run(b, [trained]))
    stripped = _relabel(flow)
    stripped["flow"] = [{k: v for k, v in n.items() if k in ("id", "wires")}
                        for n in stripped["flow"]]  # fmt: skip
    strip = bundle("strip", {"programs/http-00dcbf.json": json.dumps(stripped),
                             "curriculum.csv": "domain,samples\nhttp,10\n"})  # fmt: skip
    from pipeline.metrics.gindex.delta import delta

    if delta(flow["flow"], stripped["flow"], convention="paper").delta == 0.0:
        assert "program-leak" in names(run(b, [strip]))


def test_programs_copied_from_another_submission() -> None:
    flow = _flow()
    other = copy.deepcopy(flow)
    other["flow"][0]["method"] = "GET"
    peer = bundle(
        "peer", {"programs/t1.json": json.dumps(flow), "programs/t2.json": json.dumps(other)}
    )
    copied = bundle(
        "copied",
        {
            "programs/t1.json": json.dumps(_relabel(flow)),
            "programs/t2.json": json.dumps(_relabel(other)),
        },
    )
    (f,) = [f for f in run(bench("gindex"), [copied], [peer]) if f.check == "copied-programs"]
    assert f.severity == "error" and "2 of 2" in f.message and "'peer'" in f.message
    third = copy.deepcopy(flow)
    third["flow"][0]["url"] = "x"
    partial = bundle(
        "partial",
        {
            "programs/t1.json": json.dumps(_relabel(flow)),
            "programs/t2.json": json.dumps(third),
            "programs/t3.json": json.dumps(third),
        },
    )
    assert names(run(bench("gindex"), [partial], [peer]))["copied-programs"] == ["warning"]


@pytest.mark.parametrize(
    ("log", "expect"),
    [
        ("tflops,seconds\n1e9,1\n", "error"),  # 1 ZFLOPS: no such computer
        ("compute,seconds\n1e9,10\n", "error"),  # 1e9 PFLOP·s in 10 s: 1e11 TFLOPS
        ("tflops,seconds,compute\n10,100,5\n", "error"),  # 10 × 100 / 1000 = 1, not 5
        ("tflops,seconds\n10,1e9\n", "warning"),  # 1e7 PFLOP·s vs the peers' ~1: 7 orders
        ("tflops,seconds,compute\n10,100,1\n", None),
    ],
)
def test_compute_log(log: str, expect: str | None) -> None:
    peers = [bundle(f"p{i}", {"compute.csv": f"tflops,seconds\n{10 + i},100\n"}) for i in range(3)]
    found = names(run(bench("gindex"), [bundle("t", {"compute.csv": log})], peers))
    if expect is None:
        assert "compute-log" not in found
    else:
        assert expect in found["compute-log"]


def test_copied_divergences() -> None:
    rows = [
        ("a", 0.123456),
        ("b", 0.234567),
        ("c", 0.345678),
        ("d", 0.456789),
        ("e", 0.567891),
        ("f", 0.678912),
        ("g", 0.2),
    ]
    table = "domain,divergence\n" + "".join(f"{d},{v}\n" for d, v in rows)
    edited = table.replace("0.678912", "0.078912")  # one domain "improved"
    peer = bundle("peer", {"divergences.csv": table})
    found = [
        f
        for f in run(bench("gindex"), [bundle("t", {"divergences.csv": edited})], [peer])
        if f.check == "copied-divergences"
    ]
    # 0.2 is too round to count: 5 of the 6 precise values are the peer's.
    assert [f.severity for f in found] == ["error"] and "5 of 6" in found[0].message


def test_declared_average_divergence_is_checked() -> None:
    t = bundle("t", {}, settings={"average_divergence": 0.1})
    row = {"bundle": "t", "metric": "theta_mean", "value": 0.75, "verified": True}
    ctx = IntegrityContext(benchmark=bench("gindex"), targets=[t], scores=[row])
    (f,) = [f for f in run_benchmark_checks(ctx) if f.check == "gindex-claimed"]
    assert f.severity == "warning" and "0.25" in f.message  # 1 - 0.75


# --------------------------------------------------------------------------- aiq
def test_aiq_same_agent_and_seed(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(aiq_checks, "_verify_function", lambda: None)
    peer = bundle("peer", {"aiq.toml": 'agent = "q0"\nseed = 7\n'})
    same = bundle("same", {"aiq.toml": 'agent = "q0"\nseed = 7\n'})
    paired = bundle("paired", {"aiq.toml": 'agent = "hlq-lambda"\nseed = 7\n'})
    found = run(bench("aiq"), [same, paired], [peer])
    seeds = [f for f in found if f.check == "aiq-seed"]
    assert [(f.severity, f.file) for f in seeds] == [("warning", "submissions/b/same/aiq.toml")]
    # Without the engine the replay check says so instead of passing silently.
    assert names(found)["aiq-replay"] == ["info", "info"]


def test_aiq_forged_reward_from_the_engine(monkeypatch: pytest.MonkeyPatch) -> None:
    from pipeline.errors import Problem

    def verify(bundle: BundleInput, bench: BenchmarkInput) -> list[Problem]:
        return [
            Problem(
                bundle.files.where("samples.csv"),
                "line 7: reward",
                "logged 100 but the replay gives -100",
                "",
            )
        ]

    monkeypatch.setattr(aiq_checks, "_verify_function", lambda: verify)
    (f,) = [
        f for f in run(bench("aiq"), [bundle("t", {"aiq.toml": ""})]) if f.check == "aiq-replay"
    ]
    assert f.severity == "error" and "replay gives -100" in f.message and f.resolution


# --------------------------------------------------------------------------- similarity
def test_repeated_similarity_runs() -> None:
    runs = (
        "test_a,test_b,p,merge,agent,v_a,v_b,v_ab,seed\n"
        "A,B,0.5,sampling,q,0.9,0.5,0.7,1\nA,B,0.5,sampling,q,0.9,0.5,0.7,2\n"
    )
    (f,) = [
        f
        for f in run(bench("similarity"), [bundle("t", {"runs.csv": runs})])
        if f.check == "repeated-runs"
    ]
    assert f.severity == "warning" and "A–B" in f.message


@pytest.mark.parametrize("path", ["submissions/.gitattributes", "submissions/README.md",
                                  "submissions/x.csv"])
def test_a_file_of_the_submissions_folder_itself_is_for_a_maintainer(path: str) -> None:
    ctx = PullRequestContext(bundle_changes=1, root_files=[("A", path)])
    (f,) = [f for f in run_pull_request_checks(ctx) if f.check == "maintainer-only"]
    assert f.severity == "error" and path in f.file


def test_any_edit_of_releases_toml_is_an_error() -> None:
    before = b'[[release]]\nname = "r1"\ndate = 2024-01-01\n'
    ctx = PullRequestContext(bundle_changes=0, releases_before=before,
                             releases_after=b"# a comment\n" + before)
    (f,) = [f for f in run_pull_request_checks(ctx) if f.check == "releases-file"]
    assert f.severity == "error" and "restore" in f.resolution
    ctx = PullRequestContext(bundle_changes=0, releases_before=before, releases_after=before)
    assert not [f for f in run_pull_request_checks(ctx) if f.check == "releases-file"]


def _responses(agent: str) -> str:
    return "agent,item,value\n" + "".join(f"{agent},i{k},{0.5 + k / 7:.6f}\n" for k in range(12))


COPIES = {  # track → (the victim's files, the copier's files)
    "generality": ({"responses.csv": _responses("victim")},
                   {"responses.csv": _responses("copier")}),
    "similarity": ({"a.csv": "v\n" + "".join(f"{0.25 + k / 9:.6f}\n" for k in range(12))},
                   {"b.csv": "v\n" + "".join(f"{0.25 + k / 9:.6f}\n" for k in range(12))}),
}


@pytest.mark.parametrize("track", sorted(COPIES))
def test_no_finding_depends_on_the_contact(track: str) -> None:
    """The whole class: every check gives the same findings whatever contact the copier types."""
    victim_files, copy_files = COPIES[track]
    victim = {"submitted": dt.date(2024, 1, 1), "contact": "Ada <ada@example.org>",
              "system": {"name": "Victim"}}
    peer = bundle("peer", victim_files, manifest=victim)
    seen = []
    for contact in ("Ada <ada@example.org>", "Mallory <m@evil.example>", ""):
        for files in (copy_files, victim_files):  # a renamed copy, and the same file names
            copier = bundle("copy", files, manifest={**victim, "contact": contact})
            found = sorted((f.check, f.severity, f.file, f.field, f.message)
                           for f in run(bench(track), [copier], [peer]))
            assert any(s == "error" for _, s, *_ in found), found  # the copy is caught
            seen.append(found)
    assert seen[0::2] == [seen[0]] * 3 and seen[1::2] == [seen[1]] * 3, seen
