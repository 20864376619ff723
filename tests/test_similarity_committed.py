"""The committed similarity experiments, as a class (issue 24, items 2-4).

* every measured bundle of every ``track = "similarity"`` benchmark in ``submissions/`` has at
  least :data:`MIN_SEEDS` seeds in every cell (pair, merge, proportion, agent) — published
  transcriptions (``[similarity] reported``) are not experiments and have none;
* (slow) the site built from those benchmarks never says S near 1 means transfer and never
  prints a degenerate interval such as ``[1.000, 1.000]``;
* ``gmeter similarity run --out`` writes wherever it is told (temporary, nested, not-an-id
  parents) — stitching rows included.
"""

from __future__ import annotations

import csv
import io
import re
import shutil
import subprocess
import sys
import tomllib
from collections import defaultdict
from pathlib import Path

import pytest
from test_similarity_meaning import _CLAIM

ROOT = Path(__file__).resolve().parents[1]
SUBMISSIONS = ROOT / "submissions"
MIN_SEEDS = 20


def _similarity_benchmarks() -> list[Path]:
    out = []
    for bench in sorted(SUBMISSIONS.glob("*/benchmark.toml")):
        data = tomllib.loads(bench.read_text(encoding="utf-8"))
        if data.get("track") == "similarity":
            out.append(bench.parent)
    return out


def _measured_bundles() -> list[Path]:
    out = []
    for bench in _similarity_benchmarks():
        for sub in sorted(bench.glob("*/submission.toml")):
            data = tomllib.loads(sub.read_text(encoding="utf-8"))
            if not data.get("similarity", {}).get("reported"):
                out.append(sub.parent)
    return out


def test_the_class_is_not_empty() -> None:
    # every similarity benchmark but the transcription of the paper has measured bundles
    benches = {b.parent.name for b in _measured_bundles()}
    assert benches == {b.name for b in _similarity_benchmarks()} - {"pereyda-holder-2020"}
    assert len(_measured_bundles()) >= 8


@pytest.mark.parametrize("bundle", _measured_bundles(), ids=lambda p: f"{p.parent.name}/{p.name}")
def test_every_measured_pair_has_at_least_20_seeds(bundle: Path) -> None:
    rows = list(csv.DictReader(io.StringIO((bundle / "runs.csv").read_text(encoding="utf-8"))))
    seeds: dict[tuple[str, ...], set[str]] = defaultdict(set)
    for r in rows:
        a, b = sorted((r["test_a"], r["test_b"]))
        p = float(r["p"]) if a == r["test_a"] else 1.0 - float(r["p"])
        seeds[(a, b, f"{p:.6f}", r["merge"], r["agent"])].add(r["seed"])
    assert seeds
    few = {k: len(v) for k, v in seeds.items() if len(v) < MIN_SEEDS}
    assert not few, f"{bundle}: cells with fewer than {MIN_SEEDS} seeds: {few}"
    recorded = tomllib.loads((bundle / "submission.toml").read_text(encoding="utf-8"))
    experiment = recorded.get("similarity", {}).get("experiment", {})
    if "seeds" in experiment:  # the settings a rerun uses say the same
        assert experiment["seeds"] >= MIN_SEEDS


_DEGENERATE = re.compile(r"\[\s*([−-]?\d+\.\d+)\s*[,…]\s*\1\s*\]")


@pytest.mark.slow
def test_built_similarity_pages_keep_one_meaning_of_s_and_no_point_interval(
    tmp_path: Path,
) -> None:
    # The site of the similarity benchmarks, built as `make site` builds it, every text file
    # read: the wrong reading of S (transfer) nowhere, no interval collapsed to a point.
    repo = tmp_path / "repo"
    (repo / "submissions").mkdir(parents=True)
    shutil.copy(ROOT / "gmeter.toml", repo / "gmeter.toml")
    for bench in _similarity_benchmarks():
        shutil.copytree(bench, repo / "submissions" / bench.name)
    res = subprocess.run(
        [sys.executable, "-c", "from cli.app import main; main()", "site", "--out", "public"],
        cwd=repo, capture_output=True, text=True, timeout=900,
    )  # fmt: skip
    assert res.returncode == 0, res.stderr[-2000:]
    pages = 0
    for path in sorted((repo / "public").rglob("*")):
        if path.suffix not in (".html", ".json", ".csv", ".svg", ".md", ".txt", ".bib"):
            continue
        text = path.read_text(encoding="utf-8", errors="replace")
        pages += path.suffix == ".html"
        hit = _CLAIM.search(text)
        assert hit is None, f"{path}: {hit.group(0)!r}"
        if path.suffix == ".html" and "benchmarks" in path.parts:
            bad = _DEGENERATE.search(text)
            assert bad is None, f"{path}: degenerate interval {bad.group(0)!r}"
    assert pages >= len(_similarity_benchmarks())
    docs = (ROOT / "docs" / "similarity.md").read_text(encoding="utf-8")
    assert _CLAIM.search(docs) is None


@pytest.mark.parametrize(
    "parts",
    [("run",), ("Not An Id", "nested deeper", "My Run 1"), ("tmp.Xy Z", "Ünïcode run")],
)
def test_run_writes_stitching_rows_wherever_it_is_told(tmp_path: Path, parts: tuple[str]) -> None:
    from typer.testing import CliRunner

    from cli.app import app

    out = tmp_path.joinpath(*parts)
    args = ["similarity", "run", "--experiment", "classification", "--merge", "stitching",
            "--tests", "iris,wine", "--seeds", "2", "--size", "60", "--max-iter", "10",
            "--hidden", "4", "--executor", "inprocess", "--out", str(out)]  # fmt: skip
    res = CliRunner().invoke(app, args)
    assert res.exit_code == 0, res.output
    rows = list(csv.DictReader(io.StringIO((out / "runs.csv").read_text(encoding="utf-8"))))
    assert {r["merge"] for r in rows} == {"stitching"} and {r["seed"] for r in rows} == {"1", "2"}
    assert (out / "submission.toml").is_file() and (out.parent / "benchmark.toml").is_file()
