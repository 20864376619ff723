"""Intervals from seed-level variation hold up when more seeds come (issue 24, item 2).

A rerun with more seeds must fall inside the committed intervals. Two checks of the class:

* every committed measured bundle, cut to its first 10 seeds: the interval of each pair that
  is sufficient both ways contains the point estimate of all its (≥ 20) seeds — the rerun with
  more seeds, as ``--from … --seeds N`` does it (the same root seed, so the first seeds repeat);
* (slow) a cheap experiment run twice with *independent* root seeds, 10 and 20 replicates:
  the 10-seed 95 % intervals cover most of the 20-seed points (a calibration check that shared
  seeds cannot flatter).
"""

from __future__ import annotations

from pathlib import Path

import pytest
from test_similarity_committed import _measured_bundles

from pipeline.inputs import FileSet
from pipeline.tracks.similarity.runs import RunRow, RunsReport, analyse_runs, read_runs


def _rows(bundle: Path) -> list[RunRow]:
    fs = FileSet(str(bundle), {"runs.csv": (bundle / "runs.csv").read_bytes()})
    rows, problems = read_runs(fs, scale=(-1e9, 1e9))
    assert not problems
    return rows


def _covered(small: RunsReport, big: RunsReport) -> tuple[int, int]:
    """(points of ``big`` inside ``small``'s intervals, pairs compared): sufficient both ways."""
    inside = compared = 0
    for cs, cb in zip(small.configs, big.configs, strict=True):
        assert cs.config == cb.config
        by_key = {pr.key: pr for pr in cb.pairs}
        for pr in cs.pairs:
            other = by_key[pr.key]
            if pr.status != "sufficient" or other.status != "sufficient":
                continue
            lo, hi = pr.estimate.ci_low, pr.estimate.ci_high
            assert lo is not None and hi is not None and lo < hi
            compared += 1
            inside += lo <= other.estimate.value <= hi
    return inside, compared


def test_committed_intervals_of_10_seeds_contain_the_point_of_all_seeds() -> None:
    inside = compared = 0
    for bundle in _measured_bundles():
        rows = _rows(bundle)
        first = [r for r in rows if int(r.seed) <= 10]
        assert len({r.seed for r in rows}) >= 20 > len({r.seed for r in first})
        i, n = _covered(analyse_runs(first), analyse_runs(rows))
        inside, compared = inside + i, compared + n
    assert compared >= 30  # enough pairs for the check to mean something
    assert inside >= 0.95 * compared, f"{inside} of {compared}"


@pytest.mark.slow
def test_independent_reruns_fall_inside_the_intervals() -> None:
    from pipeline.lab.similarity.experiment import ExperimentSettings, run_experiment
    from pipeline.tracks.similarity.runs import canonical

    def run(seeds: int, root: int) -> RunsReport:
        s = ExperimentSettings(programs=30, episode_length=300, seeds=seeds, root_seed=root)
        rows = [canonical(RunRow(r["test_a"], r["test_b"], r["p"], r["merge"], r["agent"],
                                 r["v_a"], r["v_b"], r["v_ab"], r["seed"]))
                for r in run_experiment(s).rows]  # fmt: skip
        return analyse_runs(rows)

    inside, compared = _covered(run(10, 11), run(20, 22))
    assert compared >= 5
    assert inside >= 0.75 * compared, f"{inside} of {compared}"
