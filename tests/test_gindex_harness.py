"""``gmeter gindex run``: a system answers the benchmark's prompts; the bundle is verified."""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from cli.app import app

ROOT = Path(__file__).resolve().parents[1]
BENCH = ROOT / "submissions/maya-fbp-16"

SYSTEM = """
import json, sys
for line in sys.stdin:
    req = json.loads(line)
    assert set(req) == {"task", "domain", "prompt"} and req["prompt"]
    k = len(req["prompt"]) % 3 + 1
    nodes = [{"id": f"n{i}", "type": "inject" if i == 0 else "debug",
              "wires": [[f"n{i + 1}"]] if i + 1 < k else []} for i in range(k)]
    print(json.dumps({"program": nodes if req["domain"] != "http" else []}), flush=True)
"""


def _system(tmp_path: Path, body: str) -> str:
    path = tmp_path / "system.py"
    path.write_text(body, encoding="utf-8")
    return f"cmd:{sys.executable} {path}"


def _run(tmp_path: Path, system: str, *extra: str):
    cur = tmp_path / "curriculum.csv"
    cur.write_text("domain,num_samples\ncron-reminder,40\nhttp,10\n", encoding="utf-8")
    args = ["gindex", "run", "--system", system, "--benchmark", str(BENCH), "--curriculum",
            str(cur), "--compute", "3.5", "--out", str(tmp_path / "out"), *extra]  # fmt: skip
    return CliRunner().invoke(app, args)


def test_a_system_answers_every_prompt_and_the_bundle_is_verified(tmp_path):
    samples = tmp_path / "samples"
    samples.mkdir()
    for domain, n in (("cron-reminder", 40), ("http", 10)):
        (samples / f"{domain}.jsonl").write_text(
            "".join(json.dumps({"prompt": f"{domain} {k}"}) + "\n" for k in range(n)))
    out = _run(tmp_path, _system(tmp_path, SYSTEM), "--name", "toy",
               "--curriculum-samples", str(samples))
    assert out.exit_code == 0, out.output
    programs = sorted((tmp_path / "out/programs").glob("*.json"))
    refs = sorted(BENCH.glob("reference/domains/*/*.json"))
    assert [p.name for p in programs] == sorted(p.name for p in refs) and len(programs) == 32
    assert json.loads(programs[0].read_text())["flow"][0]["type"] == "inject"
    assert "(2 empty)" in out.stderr and "validates" in out.stderr
    # scored as a bundle of the benchmark: verified, from the programs
    from pipeline.tracks.base import ScoreContext
    from pipeline.tracks.gindex.track import TRACK
    from pipeline.validate import benchmark_inputs

    bench_dir = tmp_path / "maya-fbp-16"
    shutil.copytree(BENCH / "reference", bench_dir / "reference")
    shutil.copy(BENCH / "benchmark.toml", bench_dir)
    shutil.copytree(tmp_path / "out", bench_dir / "toy-system")
    toml = (bench_dir / "toy-system/submission.toml").read_text()
    assert 'name = "toy"' in toml and "compute = 3.5" in toml
    bench, bundles = benchmark_inputs(bench_dir, track="gindex")
    res = TRACK.score(bench, bundles, ScoreContext())
    [row] = [r for r in res.rows if r.metric == "g_index"]
    assert row.verified is True and row.value > 0


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ("import time, sys\nsys.stdin.readline()\ntime.sleep(5)\n", "no reply within"),
        ("import sys\nsys.stdin.readline()\nprint('hello', flush=True)\nsys.stdin.read()\n",
         "is not JSON"),
        ("import sys\nsys.stdin.readline()\nprint('{\"flow\": []}', flush=True)\n"
         "sys.stdin.read()\n", "program"),
        ("import sys, json\nsys.stdin.readline()\nprint(json.dumps({'program': [{'id': 'a', "
         "'type': 't', 'wires': [['a']]}]}), flush=True)\nsys.stdin.read()\n", "cycle"),
        ("import sys\nsys.exit(3)\n", "exited"),
    ],
)
def test_a_misbehaving_system_is_an_error_naming_the_task(tmp_path, body, message):
    out = _run(tmp_path, _system(tmp_path, body), "--timeout", "1")
    assert out.exit_code == 1, out.output
    assert "task cron-reminder-" in out.output and message in out.output
    assert not (tmp_path / "out/programs").exists()  # nothing half-written


def test_only_cmd_systems(tmp_path):
    out = _run(tmp_path, "python:my.module")
    assert out.exit_code == 2 and "cmd:PROGRAM" in out.output


def test_a_bad_curriculum_is_reported(tmp_path):
    cur = tmp_path / "c.csv"
    cur.write_text("domain,num_samples\nno-such-domain,3\n", encoding="utf-8")
    args = ["gindex", "run", "--system", _system(tmp_path, SYSTEM), "--benchmark", str(BENCH),
            "--curriculum", str(cur), "--compute", "3", "--out", str(tmp_path / "o")]
    out = CliRunner().invoke(app, args)
    assert out.exit_code == 1 and "does not validate" in out.output
    assert "no-such-domain" in out.output


def test_the_published_experiment_form_still_works():
    experiment = sorted((ROOT / "tests/data/gindex/experiments").glob("*.json"))[0]
    out = CliRunner().invoke(app, ["gindex", str(experiment), "--domains",
                                   str(BENCH / "reference/domains"), "--json"])
    assert out.exit_code == 0, out.output
    assert "g_index" in json.loads(out.stdout)
