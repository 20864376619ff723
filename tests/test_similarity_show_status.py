"""``gmeter similarity show`` marks what is not a measurement, as the boards do (issue 24, item 3).

Per pair a status (sufficient, insufficient, gap unresolved, forced by the design); no S and no
interval for a pair that is not sufficient, in every format; the pairs listed most similar
first with every non-measurement after every measurement; matrix cells marked.
"""

from __future__ import annotations

import csv
import io
import json
import re
from pathlib import Path

import numpy as np
import pytest
from test_similarity_status import _runs
from typer.testing import CliRunner

from cli.app import app

STATUSES = ("sufficient", "insufficient", "gap unresolved", "forced by the design")


def _file(tmp_path: Path, seed: int) -> tuple[Path, dict[str, str]]:
    rng = np.random.default_rng(seed)
    runs, expect = _runs(rng, int(rng.integers(8, 21)))
    path = tmp_path / "runs.csv"
    path.write_text(runs, encoding="utf-8")
    return path, expect


def _show(path: Path, *fmt: str) -> str:
    res = CliRunner().invoke(app, ["similarity", "show", str(path), *fmt],
                             env={"COLUMNS": "200"})  # fmt: skip
    assert res.exit_code == 0, res.output
    return res.stdout


@pytest.mark.parametrize("seed", range(3))
def test_csv_and_json_carry_a_status_and_numbers_only_for_measurements(
    tmp_path: Path, seed: int
) -> None:
    path, expect = _file(tmp_path, seed)
    rows = list(csv.DictReader(io.StringIO(_show(path, "--format", "csv"))))
    got = {"|".join(sorted((r["test_a"], r["test_b"]))): r for r in rows}
    assert {k: r["status"] for k, r in got.items()} == expect
    for r in rows:
        assert (r["similarity"] != "") == (r["status"] == "sufficient"), r
        assert (r["dissimilarity"] != "") == (r["status"] == "sufficient"), r
    # most similar first: no non-measurement before a measurement
    flags = [r["status"] == "sufficient" for r in rows]
    assert flags == sorted(flags, reverse=True)
    data = json.loads(_show(path, "--format", "json"))
    (cfg,) = data["configs"]
    for pr in cfg["pairs"]:
        measured = pr["measurement"] == "sufficient"
        assert (pr["ci_low"] is not None) == measured and (pr["ci_high"] is not None) == measured
        assert (pr["similarity"] is not None) == measured
        if not measured:
            assert pr["why"] and "eq3_value" in pr
        else:
            assert pr["ci_low"] < pr["ci_high"]  # never a degenerate interval
    assert cfg["pairs"][0]["measurement"] == "sufficient"
    n = len(cfg["tests"])
    assert [cfg["status"][i][i] for i in range(n)] == ["identity"] * n
    assert cfg["n_pairs"] == sum(v == "sufficient" for v in expect.values())


@pytest.mark.parametrize("seed", range(3))
def test_table_prints_status_and_no_interval_for_non_measurements(
    tmp_path: Path, seed: int
) -> None:
    path, expect = _file(tmp_path, seed)
    out = _show(path)
    lines = [ln for ln in out.splitlines() if any(f" {s} " in ln for s in STATUSES)
             and ln.startswith("│")]  # fmt: skip
    assert len(lines) == len(expect)
    interval = re.compile(r"-?\d\.\d\d…-?\d\.\d\d")
    seen_other = False
    for ln in lines:
        cells = [c.strip() for c in ln.strip("│").split("│")]
        status = cells[8]
        assert status in STATUSES
        if status == "sufficient":
            assert not seen_other, "a non-measurement listed above a measurement"
            assert interval.fullmatch(cells[7]) and cells[6] != "—"
        else:
            seen_other = True
            assert cells[6] == "—" and cells[7] == "—", ln
    assert re.search(r"diversity .*: (—|\d\.\d{3}.*), 1 sufficient of \d+ pair\(s\)", out)
    for mark in ("insuff.", "unresolved", "forced"):
        assert mark in out  # the matrices mark each kind of non-measurement
