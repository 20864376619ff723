"""``gmeter check`` on a g-index benchmark: copied programs and leaked reference solutions.

A two-domain toy benchmark: ``http`` (one task) and ``log`` (one task), each reference
program a three-node flow. The honest bundle trained on ``http`` only and generated its own
programs; the pull request adds a bundle that copies the honest bundle's ``http`` program and
submits the reference solution of the ``log`` task, which its curriculum never saw.
"""

from __future__ import annotations

import copy
import datetime as dt
import json
from pathlib import Path
from typing import Any

import pytest
from check_fixtures import commit, git, write

from pipeline.check.run import CheckReport, check
from pipeline.executor import InProcessExecutor

BENCH = "submissions/toy-gindex"
BENCHMARK = """\
id = "toy-gindex"
title = "Toy g-index benchmark"
track = "gindex"
version = "1.0.0"
description = "Two task domains with one reference program each."
licence = "MIT"
created = 2021-01-01

[gindex]
domain_order = ["http", "log"]
resamples = 100
"""
MANIFEST = """\
submitted = 2024-05-01
contact = "{who} <{who}@example.org>"
licence = "MIT"

[system]
name = "{name}"
"""


def node(i: str, kind: str, wires: list[str], **attrs: Any) -> dict[str, Any]:
    return {"id": i, "type": kind, "z": "t", "x": 100, "y": 100, "wires": [wires], **attrs}


HTTP = [node("h1", "http in", ["h2"], url="/ping", method="get"),
        node("h2", "function", ["h3"], func="return msg;"),
        node("h3", "http response", [], statusCode="200")]
LOG = [node("l1", "inject", ["l2"], repeat="60", payload="tick"),
       node("l2", "change", ["l3"], rules="set"),
       node("l3", "debug", [], active=True, complete="payload")]


def relabel(flow: list[dict[str, Any]], prefix: str) -> list[dict[str, Any]]:
    """The same program with other node ids and another layout."""
    out = copy.deepcopy(flow)
    ids = {n["id"]: f"{prefix}{k}" for k, n in enumerate(out)}
    for n in out:
        n["id"] = ids[n["id"]]
        n["x"], n["y"] = n["x"] + 40, n["y"] + 80
        n["wires"] = [[ids[w] for w in port] for port in n["wires"]]
    return out


def gbundle(name: str, who: str, programs: dict[str, Any], curriculum: str) -> dict[str, str]:
    files = {f"{BENCH}/{name}/submission.toml": MANIFEST.format(who=who, name=name),
             f"{BENCH}/{name}/curriculum.csv": "domain,num_samples\n" + curriculum,
             f"{BENCH}/{name}/compute.csv": "tflops,seconds\n100,3600\n"}
    for task, flow in programs.items():
        files[f"{BENCH}/{name}/programs/{task}.json"] = json.dumps({"flow": flow})
    for line in curriculum.splitlines():  # the curriculum's samples: its size is counted
        domain, n = line.split(",")
        files[f"{BENCH}/{name}/curriculum/{domain}.jsonl"] = "".join(
            json.dumps({"prompt": f"{domain} {k}"}) + "\n" for k in range(int(n)))
    return files


@pytest.fixture
def repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    root = tmp_path / "repo"
    mine = copy.deepcopy(HTTP)
    mine[1]["func"] = "msg.payload = 1; return msg;"  # its own, slightly different program
    write(root, {f"{BENCH}/benchmark.toml": BENCHMARK,
                 f"{BENCH}/reference/domains/http/http-a.json": json.dumps({"flow": HTTP}),
                 f"{BENCH}/reference/domains/log/log-a.json": json.dumps({"flow": LOG})})
    write(root, gbundle("honest", "ada", {"http-a": mine, "log-a": []}, "http,100\n"))
    git(root, "init", "-q", "-b", "main")
    commit(root, "toy g-index benchmark", email="maintainer@example.org")
    git(root, "checkout", "-q", "-b", "pr")
    monkeypatch.chdir(root)
    return root


def run() -> CheckReport:
    return check(base="main", executor=InProcessExecutor(), today=dt.date(2024, 6, 1))


def test_honest_bundle_is_verified_and_placed(repo: Path) -> None:
    other = copy.deepcopy(LOG)
    other[0]["payload"] = "tock"
    write(repo, gbundle("second", "bob", {"http-a": [], "log-a": other}, "log,50\n"))
    commit(repo, "second")
    r = run()
    (b,) = r.benchmarks
    assert r.exit_code == 0, [str(f) for f in b.findings] + [str(p) for p in b.problems]
    (ne,) = b.new_entries
    assert ne.entry.bundle == "second" and ne.entry.verified and ne.of == 2


def test_copied_programs_and_a_leaked_solution(repo: Path) -> None:
    honest = json.loads((repo / BENCH / "honest/programs/http-a.json").read_text())["flow"]
    write(repo, gbundle("cheat", "eve", {"http-a": relabel(honest, "c"),
                                         "log-a": relabel(LOG, "x")}, "http,10\n"))
    commit(repo, "cheat")
    r = run()
    findings = {f.check: f for f in r.benchmarks[0].findings}
    assert r.exit_code == 1
    leak = findings["program-leak"]
    assert leak.severity == "error" and "log-a" in leak.message and "log" in leak.message
    copied = findings["copied-programs"]
    assert copied.severity == "error" and "1 of 2" in copied.message  # [] is never "the same"
    assert "'honest'" in copied.message and copied.resolution
