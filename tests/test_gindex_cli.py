"""gmeter delta / omega / gindex / import maya-experiment."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from cli.app import app

ROOT = Path(__file__).resolve().parents[1]
DOMAINS = ROOT / "submissions" / "maya-fbp-16" / "reference" / "domains"
EXPERIMENTS = ROOT / "tests" / "data" / "gindex" / "experiments"
ORDER = ROOT / "submissions" / "maya-fbp-16" / "reference" / "domain-order.txt"
runner = CliRunner()

HTTP_A = DOMAINS / "http" / "http-00dcbf.json"
HTTP_B = DOMAINS / "http" / "http-ce5a63.json"


def run(*args: str):
    return runner.invoke(app, ["-q", *args], catch_exceptions=True)


def test_delta_prints_the_number():
    r = run("delta", str(HTTP_A), str(HTTP_B))
    assert r.exit_code == 0, r.output
    assert float(r.stdout.strip()) == pytest.approx(0.0975, abs=1e-12)


def test_delta_json_keys_and_flow_list_input(tmp_path):
    a = json.loads(HTTP_A.read_text())["flow"]
    (tmp_path / "a.json").write_text(json.dumps(a))  # a bare node list works too
    r = run("delta", str(tmp_path / "a.json"), str(HTTP_B), "--json", "--convention", "paper")
    assert r.exit_code == 0, r.output
    d = json.loads(r.stdout)
    assert set(d) == {"delta", "sum_w", "n_a", "n_b", "mapping", "exact", "seconds"}
    assert d["n_a"] == d["n_b"] == 4 and d["exact"] is True


def test_delta_bad_convention_is_a_usage_error():
    r = run("delta", str(HTTP_A), str(HTTP_B), "--convention", "nope")
    assert r.exit_code != 0


def test_delta_pairs_json_lines(tmp_path):
    a = json.loads(HTTP_A.read_text())
    b = json.loads(HTTP_B.read_text())["flow"]
    lines = [
        json.dumps({"id": "p1", "a": a, "b": b}),
        json.dumps({"id": "p2", "a": b, "b": a}),
        json.dumps({"id": 3, "a": [], "b": b}),
    ]
    f = tmp_path / "pairs.jsonl"
    f.write_text("\n".join(lines) + "\n")
    r = run("delta", "--pairs", str(f), "--executor", "inprocess")
    assert r.exit_code == 0, r.output
    out = [json.loads(x) for x in r.stdout.splitlines()]
    assert [o["id"] for o in out] == ["p1", "p2", 3]
    assert out[0]["delta"] == pytest.approx(0.0975, abs=1e-12)
    assert out[2]["delta"] == 1.0
    assert set(out[0]) == {"id", "delta", "sum_w", "n_a", "n_b", "mapping", "exact", "seconds"}


def test_delta_pairs_bad_line_reported(tmp_path):
    f = tmp_path / "pairs.jsonl"
    f.write_text('{"id": 1, "a": [], "b": []}\nnot json\n{"id": 2, "a": [{"type": "t"}], '
                 '"b": []}\n')
    r = run("delta", "--pairs", str(f), "--executor", "inprocess")
    assert r.exit_code == 1
    out = [json.loads(x) for x in r.stdout.splitlines()]
    assert len(out) == 3 and "error" in out[1] and "error" in out[2]


def test_gindex_published_value_json():
    r = run("gindex", str(EXPERIMENTS / "GPT2-345M_2.json"), "--domains", str(DOMAINS),
            "--domain-order", str(ORDER), "--json")
    assert r.exit_code == 0, r.output
    d = json.loads(r.stdout)
    assert d["g_index"] == 7955.369
    assert len(d["tasks"]) == 16
    assert {"task", "theta", "contribution"} <= set(d["tasks"][0])
    assert d["E"] == pytest.approx(6.994692854585606)


def test_gindex_default_order_for_the_published_domains(tmp_path):
    # a copy of the domains without domain-order.txt: the authors' order is still used
    import shutil

    shutil.copytree(DOMAINS, tmp_path / "domains")
    r = run("gindex", str(EXPERIMENTS / "GPT2-774M_2.json"), "--domains",
            str(tmp_path / "domains"), "--json")
    assert json.loads(r.stdout)["g_index"] == 4086.830
    # an explicit sorted order gives the sorted-order value (spec §6)
    order = tmp_path / "order.txt"
    order.write_text("\n".join(sorted(p.name for p in DOMAINS.iterdir())) + "\n")
    r = run("gindex", str(EXPERIMENTS / "GPT2-774M_2.json"), "--domains",
            str(tmp_path / "domains"), "--domain-order", str(order), "--json")
    assert json.loads(r.stdout)["g_index"] == 4085.332


def test_gindex_text_output():
    r = runner.invoke(app, ["gindex", str(EXPERIMENTS / "GPT2-345M_1.json"), "--domains",
                            str(DOMAINS)])
    assert r.exit_code == 0, r.output
    assert "4424.42" in r.stdout


def test_gindex_bad_order_file(tmp_path):
    order = tmp_path / "o.txt"
    order.write_text("http\n")
    r = run("gindex", str(EXPERIMENTS / "GPT2-345M_1.json"), "--domains", str(DOMAINS),
            "--domain-order", str(order))
    assert r.exit_code != 0


def test_omega_matrix_json():
    r = run("omega", "--domains", str(DOMAINS), "--json", "--executor", "inprocess")
    assert r.exit_code == 0, r.output
    d = json.loads(r.stdout)
    assert d["order"][0] == "template-slider"
    m = d["matrix"]
    assert len(m) == 16 and all(m[i][j] == m[j][i] for i in range(16) for j in range(16))


def test_omega_of_a_task():
    r = run("omega", str(HTTP_A), "--domains", str(DOMAINS), "--json")
    d = json.loads(r.stdout)[0]
    assert d["omega"]["http"] == 0.0 and d["level"] == "L0"


def test_import_maya_experiment(tmp_path):
    out = tmp_path / "b"
    r = run("import", "maya-experiment", str(EXPERIMENTS / "GPT2_1_5B_1.json"), "--out",
            str(out))
    assert r.exit_code == 0, r.output
    assert sorted(p.name for p in out.iterdir()) == [
        "compute.csv", "curriculum.csv", "divergences.csv", "submission.toml"]
    shipped = ROOT / "submissions" / "maya-fbp-16" / "gpt2-1-5b-1"
    for name in ("compute.csv", "curriculum.csv", "divergences.csv"):
        assert (out / name).read_bytes() == (shipped / name).read_bytes()
    r = run("import", "maya-experiment", str(EXPERIMENTS / "GPT2_1_5B_1.json"), "--out",
            str(out))
    assert r.exit_code != 0  # exists, no --force


def test_exit_codes_through_main(tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text("{")
    p = subprocess.run([sys.executable, "-m", "cli", "delta", str(bad), str(HTTP_B)],
                       capture_output=True, text=True, cwd=ROOT)
    assert p.returncode == 1 and "Traceback" not in p.stderr
    p = subprocess.run([sys.executable, "-m", "cli", "delta", str(HTTP_A), str(HTTP_B),
                        "--convention", "x"], capture_output=True, text=True, cwd=ROOT)
    assert p.returncode == 2
