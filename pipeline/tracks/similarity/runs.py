"""Read a similarity ``runs.csv`` and analyse it: pairs, matrices, diversity and the 2-D map.

Shared by the ``similarity`` track (scoring bundles) and ``gmeter similarity RUNS.csv`` (a file
on its own, read by :mod:`pipeline.lab.similarity.show`). Everything here is a pure function
of the rows.

``runs.csv`` has one row per (pair of tests, merge, proportion, baseline agent, seed)::

    test_a,test_b,p,merge,agent,v_a,v_b,v_ab[,seed]

``p`` is the proportion of ``test_a`` in the merge. Rows are *canonicalised* by test name
(``(b, a, 1 - p)`` becomes ``(a, b, p)`` when ``a < b``), so a pair may be written in either
order; a *configuration* is one (agent, merge, p of the name-first test), and each
configuration gets its own matrix. Several rows of the same cell are replicates told apart by
``seed``.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Literal

import numpy as np

from pipeline.errors import Problem
from pipeline.inputs import FileSet
from pipeline.metrics.similarity.mds import Embedding, classical_mds
from pipeline.metrics.similarity.measure import CONVENTIONS, Convention, SimilarityEstimate
from pipeline.metrics.similarity.measure import estimate_similarity as _estimate
from pipeline.metrics.similarity.suite import (
    Diversity,
    PairSamples,
    SimilarityMatrix,
    bootstrap_diversity,
    similarity_matrix,
    suite_diversity,
)
from pipeline.tracks.filecheck import Column, check_csv

RUNS_FILE = "runs.csv"
MERGES: tuple[str, ...] = ("sampling", "stitching")
CSV_COLUMNS: tuple[str, ...] = (
    "test_a",
    "test_b",
    "p",
    "similarity",
    "dissimilarity",
    "sufficient",
)


@dataclass(frozen=True)
class RunRow:
    """One validated row of ``runs.csv`` (canonical: ``test_a <= test_b`` by name)."""

    test_a: str
    test_b: str
    p: float
    merge: str
    agent: str
    v_a: float
    v_b: float
    v_ab: float
    seed: str = ""


def _columns(merges: Sequence[str]) -> list[Column]:
    return [
        Column("test_a"),
        Column("test_b"),
        Column("p", "float", low=0.0, high=1.0),
        Column("merge", choices=tuple(merges)),
        Column("agent"),
        Column("v_a", "float"),
        Column("v_b", "float"),
        Column("v_ab", "float"),
        Column("seed", required=False),
    ]


def canonical(row: RunRow) -> RunRow:
    """Return ``row`` with its tests in name order (``p`` follows ``test_a``)."""
    if row.test_a <= row.test_b:
        return row
    return RunRow(
        row.test_b,
        row.test_a,
        round(1.0 - row.p, 12),
        row.merge,
        row.agent,
        row.v_b,
        row.v_a,
        row.v_ab,
        row.seed,
    )


def read_runs(
    fs: FileSet,
    path: str = RUNS_FILE,
    *,
    tests: Sequence[str] | None = None,
    merges: Sequence[str] = MERGES,
    scale: tuple[float, float] = (0.0, 1.0),
    max_problems: int = 20,
) -> tuple[list[RunRow], list[Problem]]:
    """Check ``runs.csv`` and return its canonical rows and every problem found.

    Beyond the column rules (finite numbers, known merge): ``0 < p < 1``; with ``tests`` given,
    every test must be declared; no two rows may describe the same replicate of the same cell
    (after canonicalisation); replicates of a cell need distinct ``seed`` labels; every
    performance ``v_a``, ``v_b``, ``v_ab`` lies in ``scale`` (the benchmark's domain, [0, 1]
    by default) — a row outside it is reported and left out.
    """
    where = fs.where(path)
    parsed, problems = check_csv(fs, path, _columns(merges), max_problems=max_problems)
    if problems and not parsed:
        return [], problems
    known = set(tests) if tests is not None else None
    rows: list[RunRow] = []
    seen: dict[tuple[object, ...], int] = {}
    extra = 0

    def add(problem: Problem) -> None:
        nonlocal extra
        extra += 1
        if extra <= max_problems:
            problems.append(problem)

    for n, r in enumerate(parsed, start=1):
        line = f"row {n}"
        bad = False
        if not 0.0 < r["p"] < 1.0:
            add(
                Problem(
                    where,
                    f"{line}: p",
                    f"is {r['p']}; a merge needs 0 < p < 1",
                    "give the proportion of test_a in the merge, strictly between 0 and 1",
                )
            )
            bad = True
        for col in ("test_a", "test_b"):
            if known is not None and r[col] not in known:
                add(
                    Problem(
                        where,
                        f"{line}: {col}",
                        f"unknown test {r[col]!r}",
                        f"use a test declared in benchmark.toml ({', '.join(sorted(known))})",
                    )
                )
                bad = True
        for col in ("v_a", "v_b", "v_ab"):
            if not scale[0] <= r[col] <= scale[1]:
                add(
                    Problem(
                        where,
                        f"{line}: {col}",
                        f"{col} is {r[col]!r}, outside the benchmark's scale "
                        f"[{scale[0]:g}, {scale[1]:g}]",
                        "give the normalised performance on the benchmark's scale",
                    )
                )
                bad = True
        if bad:
            continue
        row = canonical(
            RunRow(
                r["test_a"],
                r["test_b"],
                float(r["p"]),
                r["merge"],
                r["agent"],
                float(r["v_a"]),
                float(r["v_b"]),
                float(r["v_ab"]),
                (r.get("seed") or "").strip(),
            )
        )
        key = (row.test_a, row.test_b, round(row.p, 9), row.merge, row.agent, row.seed)
        if key in seen:
            fix = (
                "give each replicate its own seed label"
                if not row.seed
                else "keep one row per seed"
            )
            add(
                Problem(
                    where,
                    f"{line}",
                    f"repeats row {seen[key]} (same pair, p, merge, agent "
                    f"and seed {row.seed!r}; a pair may be written in either order)",
                    fix,
                )
            )
            continue
        seen[key] = n
        rows.append(row)
    if extra > max_problems:
        problems.append(Problem(where, "-", f"{extra - max_problems} more problems not shown", ""))
    return rows, problems


# --------------------------------------------------------------------------- analysis
@dataclass(frozen=True)
class Config:
    """One configuration of a runs file: baseline agent, merge method, proportion."""

    agent: str
    merge: str
    p: float

    def label(self) -> str:
        """Return a short human label, e.g. ``HLQ(λ), sampling, p=0.5``."""
        return f"{self.agent}, {self.merge}, p={self.p:g}"


@dataclass(frozen=True)
class PairResult:
    """The similarity of one cell (pair of tests within a configuration)."""

    config: Config
    first: str
    second: str
    estimate: SimilarityEstimate
    seeds: tuple[str, ...]

    @property
    def easier(self) -> str:
        """The test the baseline agent scored higher on (A of eq. 3)."""
        return self.second if self.estimate.point.swapped else self.first

    @property
    def harder(self) -> str:
        """The other test (B of eq. 3)."""
        return self.first if self.estimate.point.swapped else self.second

    @property
    def key(self) -> str:
        """A stable name for the pair, tests in name order: ``first|second``."""
        return f"{self.first}|{self.second}"

    @property
    def status(self) -> PairStatus:
        """Whether this cell is a measurement: see :func:`pair_status`."""
        return pair_status(self.estimate)


PairStatus = Literal["sufficient", "insufficient", "gap unresolved", "forced by the design",
                     "identity"]  # fmt: skip
"""What a pair's ``S`` is: only ``sufficient`` cells are measurements of eq. 3."""

WHY_NOT_MEASURED: dict[str, str] = {
    "insufficient": "insufficient agent: V_AB outside [V_B, V_A], eq. 3 saturates at ±1",
    "gap unresolved": "the seeds do not resolve which test is easier (V_A − V_B)",
    "forced by the design": "the value is fixed by the design, not estimated",
}
"""Why a pair of each non-measurement status carries no value (boards and the CLI alike)."""


def pair_status(e: SimilarityEstimate) -> PairStatus:
    r"""Classify one cell: is its ``S`` a measurement (Pereyda & Holder 2020, eq. 3)?

    * ``identity`` — a test with itself (``S = 1`` by definition).
    * ``forced by the design`` — ``V_A = V_B`` (eq. 3 undefined), or the seeds agree exactly
      so the interval collapses to a point (``[lo, lo]``): the value is set by the design
      (e.g. the evaluation split), not estimated.
    * ``insufficient`` — the mean ``V_AB`` lies outside ``[V_B, V_A]``: eq. 3's absolute
      values saturate at ``±1`` and the number says only *that* the agent is insufficient.
    * ``gap unresolved`` — the seeds do not establish which test is easier (Fieller's set for
      ``(V_A + V_B - 2 V_AB)/(V_A - V_B)`` is unbounded, or some seeds reverse the order), so
      the denominator of eq. 3 is noise.
    * ``sufficient`` — everything else: a measured ``S`` with its interval. With a single
      seed (published transcriptions) the gap cannot be tested and a sufficient point counts.
    """
    pt = e.point
    if pt.status == "identity":
        return "identity"
    if pt.status == "undefined":
        return "forced by the design"
    if pt.status == "insufficient":
        return "insufficient"
    if e.n_seeds >= 2 and (e.gap_resolved is False or e.n_reversed > 0):
        return "gap unresolved"
    if e.ci_low is not None and e.ci_high is not None and e.ci_high - e.ci_low < 1e-9:
        # a point interval (up to float rounding): the seeds cannot vary, the design fixes S
        return "forced by the design"
    return "sufficient"


@dataclass(frozen=True)
class ConfigResult:
    """Everything computed for one configuration."""

    config: Config
    tests: tuple[str, ...]
    pairs: tuple[PairResult, ...]
    matrix: SimilarityMatrix
    diversity: Diversity
    diversity_ci: tuple[float, float] | None
    embedding: Embedding | None
    embedding_note: str = ""


@dataclass(frozen=True)
class RunsReport:
    """The analysis of a whole runs file."""

    configs: tuple[ConfigResult, ...]
    convention: str
    confidence: float
    notes: tuple[str, ...] = field(default_factory=tuple)


def _seed_order(labels: Sequence[str]) -> list[str]:
    try:
        return sorted(labels, key=lambda s: (float(s), s))
    except ValueError:
        return sorted(labels)


def analyse_runs(
    rows: Sequence[RunRow],
    *,
    tests: Sequence[str] | None = None,
    convention: str = "paper",
    confidence: float = 0.95,
    seed: int = 0,
    n_boot: int = 2000,
) -> RunsReport:
    """Estimate every cell, then per configuration the matrix, diversity and 2-D map.

    Parameters
    ----------
    rows : sequence of RunRow
        Validated, canonical rows (see :func:`read_runs`).
    tests : sequence of str, optional
        Declared order of the tests (default: name order of the tests that appear).
    convention : {"paper", "mixture"}
        See :func:`pipeline.metrics.similarity.measure.similarity`.
    confidence : float
        Level of every interval.
    seed : int
        Seed of the diversity bootstrap.
    n_boot : int
        Bootstrap replicates for the diversity interval.

    Returns
    -------
    RunsReport
        Configurations sorted by (agent, merge, p); pairs by name.
    """
    if convention not in CONVENTIONS:
        raise ValueError(f"convention must be one of {CONVENTIONS}, got {convention!r}")
    conv: Convention = convention  # type: ignore[assignment]
    groups: dict[Config, dict[tuple[str, str], list[RunRow]]] = {}
    for r in rows:
        cfg = Config(r.agent, r.merge, 0.5 if r.test_a == r.test_b else round(r.p, 9))
        groups.setdefault(cfg, {}).setdefault((r.test_a, r.test_b), []).append(r)
    out: list[ConfigResult] = []
    notes: list[str] = []
    for cfg in sorted(groups, key=lambda c: (c.agent, c.merge, c.p)):
        cells = groups[cfg]
        present = {t for pair in cells for t in pair}
        order = tuple(t for t in tests if t in present) if tests else tuple(sorted(present))
        pairs: list[PairResult] = []
        samples: list[PairSamples] = []
        for (ta, tb), cell_rows in sorted(cells.items()):
            by_seed = {r.seed: r for r in cell_rows}
            labels = _seed_order(list(by_seed))
            va = [by_seed[s].v_a for s in labels]
            vb = [by_seed[s].v_b for s in labels]
            vab = [by_seed[s].v_ab for s in labels]
            p = cell_rows[0].p
            est = _estimate(
                va, vb, vab, p, convention=conv, identical=ta == tb, confidence=confidence
            )
            pairs.append(PairResult(cfg, ta, tb, est, tuple(labels)))
            if ta != tb:
                samples.append(
                    PairSamples(
                        ta, tb, p, np.asarray(va), np.asarray(vb), np.asarray(vab), tuple(labels)
                    )
                )
        values = {(pr.first, pr.second): pr.estimate.value for pr in pairs}
        matrix = similarity_matrix(order, values)
        # Diversity only over measurements: a saturated, forced or unresolved S is not one,
        # so it is left out and counted (Diversity.n_missing), never averaged in.
        measured = {(pr.first, pr.second) for pr in pairs if pr.status == "sufficient"}
        div = suite_diversity(
            similarity_matrix(order, {k: v for k, v in values.items() if k in measured})
        )
        kept = [c for c in samples if (c.test_a, c.test_b) in measured]
        div_ci = (
            bootstrap_diversity(
                kept, convention=conv, confidence=confidence, n_boot=n_boot, seed=seed
            )
            if kept
            else None
        )
        emb: Embedding | None = None
        emb_note = ""
        if len(order) < 2:
            emb_note = "fewer than two tests"
        elif matrix.missing:
            emb_note = "no 2-D map: pairs without a value: " + ", ".join(
                f"{a}|{b}" for a, b in matrix.missing
            )
        else:
            emb = classical_mds(matrix.dissimilarity, order, dims=2)
        if emb_note:
            notes.append(f"{cfg.label()}: {emb_note}")
        n_insuff = sum(pr.estimate.point.status == "insufficient" for pr in pairs)
        if n_insuff:
            notes.append(
                f"{cfg.label()}: the baseline agent is insufficient on {n_insuff} "
                f"pair(s) (V_AB outside [V_B, V_A]); their S is eq. 3's saturated ±1"
            )
        out.append(ConfigResult(cfg, order, tuple(pairs), matrix, div, div_ci, emb, emb_note))
    return RunsReport(tuple(out), convention, confidence, tuple(notes))


def _num(x: float | None) -> float | None:
    """Return ``x`` as a JSON-ready number (``None`` for missing or NaN)."""
    return None if x is None or (isinstance(x, float) and math.isnan(x)) else float(x)


def pair_record(pr: PairResult) -> dict[str, object]:
    """Return a JSON-ready description of one pair (A = the easier test)."""
    e = pr.estimate
    pt = e.point
    return {
        "test_a": pr.easier,
        "test_b": pr.harder,
        "p": pt.p,
        "merge": pr.config.merge,
        "agent": pr.config.agent,
        "similarity": _num(pt.value),
        "dissimilarity": _num(pt.dissimilarity),
        "ci_low": _num(e.ci_low),
        "ci_high": _num(e.ci_high),
        "sufficient": pt.sufficient,
        "status": pt.status,
        "measurement": pr.status,
        "v_a": pt.v_a,
        "v_b": pt.v_b,
        "v_ab": pt.v_ab,
        "linear": _num(pt.linear),
        "unrelated": _num(pt.unrelated),
        "n_seeds": e.n_seeds,
        "gap_resolved": e.gap_resolved,
        "n_insufficient_seeds": e.n_insufficient,
        "n_reversed_seeds": e.n_reversed,
        "reason": pt.reason,
    }


def shown_record(pr: PairResult) -> dict[str, object]:
    """:func:`pair_record` as ``gmeter similarity show`` prints it: only measurements have S.

    A pair whose status is not ``sufficient`` (nor ``identity``) keeps eq. 3's number as
    ``eq3_value`` with the reason in ``why``; its ``similarity``, ``dissimilarity`` and
    interval are ``None`` — a saturated ±1 or an unresolved ratio is not a measurement.
    """
    rec = pair_record(pr)
    if pr.status not in ("sufficient", "identity"):
        rec["eq3_value"] = rec["similarity"]
        rec["why"] = WHY_NOT_MEASURED[pr.status] + (f" ({rec['reason']})" if rec["reason"] else "")
        rec.update(similarity=None, dissimilarity=None, ci_low=None, ci_high=None)
    return rec


_STATUS_ORDER = {"sufficient": 0, "gap unresolved": 1, "insufficient": 2,
                 "forced by the design": 3, "identity": 4}  # fmt: skip


def most_similar_first(pairs: Sequence[PairResult]) -> list[PairResult]:
    """The pairs as a "most similar" list: measured pairs by ``S`` descending, then the rest.

    Non-measurements (insufficient, gap unresolved, forced by the design) follow every
    sufficient pair whatever eq. 3 gives them, grouped by status, so a saturated ``+1`` never
    tops the list.
    """

    def key(pr: PairResult) -> tuple[int, float, str]:
        measured = pr.status == "sufficient" and math.isfinite(pr.estimate.point.value)
        return (_STATUS_ORDER[pr.status], -pr.estimate.point.value if measured else 0.0, pr.key)

    return sorted(pairs, key=key)


def status_matrix(c: ConfigResult) -> list[list[str]]:
    """Return the status of each cell's pair in the configuration's matrix.

    ``identity`` on the diagonal, ``missing`` for a pair without runs.
    """
    by_pair = {frozenset((pr.first, pr.second)): pr.status for pr in c.pairs}
    return [
        ["identity" if a == b else by_pair.get(frozenset((a, b)), "missing") for b in c.tests]
        for a in c.tests
    ]


def report_json(report: RunsReport) -> dict[str, object]:
    """Return the whole report as a JSON-ready mapping (NaN becomes ``null``).

    The matrices hold eq. 3's numbers for every cell (the map is drawn from them) beside
    ``status``, the status of each cell; ``pairs`` lists the pairs most similar first
    (:func:`most_similar_first`), with S and its interval only for measurements
    (:func:`shown_record`).
    """
    configs = []
    for c in report.configs:
        n = len(c.tests)
        configs.append(
            {
                "agent": c.config.agent,
                "merge": c.config.merge,
                "p": c.config.p,
                "tests": list(c.tests),
                "similarity": [
                    [_num(float(c.matrix.values[i, j])) for j in range(n)] for i in range(n)
                ],
                "dissimilarity": [
                    [_num(float(c.matrix.dissimilarity[i, j])) for j in range(n)] for i in range(n)
                ],
                "diversity": _num(c.diversity.value),
                "diversity_ci": list(c.diversity_ci) if c.diversity_ci else None,
                "n_pairs": c.diversity.n_pairs,
                "n_missing": c.diversity.n_missing,
                "map": c.embedding.as_records() if c.embedding else None,
                "map_explained": c.embedding.explained if c.embedding else None,
                "map_negative_mass": c.embedding.negative_mass if c.embedding else None,
                "map_note": c.embedding_note,
                "status": status_matrix(c),
                "pairs": [shown_record(pr) for pr in most_similar_first(c.pairs)],
            }
        )
    return {
        "convention": report.convention,
        "confidence": report.confidence,
        "configs": configs,
        "notes": list(report.notes),
    }


def pair_rows(report: RunsReport) -> list[dict[str, object]]:
    """Return one row per pair with the columns of ``--format csv`` (A the easier test).

    The columns are :data:`CSV_COLUMNS` and ``status`` (:func:`pair_status`); a pair that is
    not a measurement has empty ``similarity`` and ``dissimilarity``. A file with several
    configurations (agents, merges or proportions) gets ``merge`` and ``agent`` appended so
    its rows stay unambiguous. Pairs come most similar first (:func:`most_similar_first`).
    """
    cols = CSV_COLUMNS + ("status",) + (("merge", "agent") if len(report.configs) > 1 else ())
    out = []
    for c in report.configs:
        for pr in most_similar_first(c.pairs):
            rec = shown_record(pr)
            rec["status"] = rec["measurement"]
            out.append({k: rec[k] for k in cols})
    return out
