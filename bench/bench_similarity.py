"""Similarity benchmarks: the merged-lifetime AIQ kernel and the analysis of a large suite.

* 200 merged lifetimes of 1000 cycles (Q(λ), BF(5), p = 0.5) on sampled programs: the inner
  work of ``gmeter similarity run`` (the committed experiment runs 50 400 such runs a bundle);
* a 30-test suite (435 pairs × 8 seeds = 3480 rows): Fieller interval per pair, the
  joint-seed bootstrap of the diversity (2000 replicates) and the classical-MDS map.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from bench.harness import quick
from pipeline.metrics.aiq.agents_fast import run_episode
from pipeline.metrics.aiq.bf import BFConfig
from pipeline.metrics.aiq.bf_fast import program_arrays, seed64
from pipeline.metrics.aiq.merged_episode import run_merged_episode
from pipeline.metrics.aiq.sampler_fast import sample_block_fast
from pipeline.tracks.similarity.runs import RunRow, analyse_runs

N_LIFETIMES = 40 if quick() else 200
LENGTH = 1000
N_TESTS = 12 if quick() else 30
N_SEEDS = 8
MACHINE = (5, 1, False, 100_000, 25, 1000)
Q_LAMBDA = np.array([0.0, 0.5, 0.5, 0.04, 0.6])


def _programs() -> list[tuple[np.ndarray, np.ndarray]]:
    block = sample_block_fast(7, 2 * N_LIFETIMES, BFConfig())
    return [program_arrays(p) for p in block.programs]


def _suite_rows() -> list[RunRow]:
    rng = np.random.default_rng(1)
    level = rng.uniform(10, 90, N_TESTS)
    rows = []
    for i in range(N_TESTS):
        for j in range(i + 1, N_TESTS):
            for k in range(N_SEEDS):
                va, vb = level[i] + rng.normal(0, 2), level[j] + rng.normal(0, 2)
                vab = min(va, vb) + 0.4 * abs(va - vb) + rng.normal(0, 2)
                rows.append(
                    RunRow(
                        f"t{i:02d}",
                        f"t{j:02d}",
                        0.5,
                        "sampling",
                        "q-lambda",
                        float(va),
                        float(vb),
                        float(vab),
                        str(k + 1),
                    )
                )
    return rows


def benchmarks() -> list[dict[str, Any]]:
    """The similarity benchmarks (programs sampled and kernels compiled before timing)."""
    progs = _programs()
    pairs = [(progs[2 * i], progs[2 * i + 1]) for i in range(N_LIFETIMES)]
    (oa, ja), (ob, jb) = pairs[0]
    run_merged_episode(
        oa,
        ja,
        ob,
        jb,
        *MACHINE,
        2,
        Q_LAMBDA,
        10,
        1.0,
        0.5,
        seed64(1),
        seed64(2),
        seed64(3),
        seed64(4),
    )  # compile outside the timing
    run_episode(oa, ja, *MACHINE, 2, Q_LAMBDA, 10, 1.0, 1.0, seed64(1), seed64(3), False)

    def merged() -> Any:
        return [
            run_merged_episode(
                a[0],
                a[1],
                b[0],
                b[1],
                *MACHINE,
                2,
                Q_LAMBDA,
                LENGTH,
                1.0,
                0.5,
                seed64(i),
                seed64(i + 1),
                seed64(i + 2),
                seed64(i + 3),
            )[0]
            for i, (a, b) in enumerate(pairs)
        ]

    def single() -> Any:  # the same work as one-environment AIQ runs, for comparison
        return [
            run_episode(
                a[0], a[1], *MACHINE, 2, Q_LAMBDA, LENGTH, 1.0, 1.0, seed64(i), seed64(i + 2), False
            )[0]
            for i, (a, _) in enumerate(pairs)
        ]

    rows = _suite_rows()

    def analyse() -> Any:
        return analyse_runs(rows, seed=3)

    cycles = N_LIFETIMES * LENGTH
    return [
        {
            "name": f"merged AIQ lifetimes, {N_LIFETIMES} x {LENGTH} cycles, Q(λ)",
            "run": merged,
            "baseline": single,
            "repeat": 3,
            "target": ">= 0.3 M cycles/s and within 2x of single-environment runs",
            "check": lambda med, base: cycles / med >= 3e5 and (base is None or med <= 2.0 * base),
            "note": "baseline = the AIQ engine's run_episode on the first program of each pair",
        },
        {
            "name": f"similarity suite analysis, {N_TESTS} tests x {N_SEEDS} seeds",
            "run": analyse,
            "baseline": None,
            "repeat": 3,
            "target": "< 5 s (Fieller per pair, 2000-replicate joint bootstrap, MDS)",
            "check": lambda med, base: med < 5.0,
            "note": f"{len(rows)} rows",
        },
    ]
