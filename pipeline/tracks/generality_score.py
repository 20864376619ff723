"""Scoring of the ``generality`` track: the population matrix, the transform, the indicators.

:func:`assemble` stacks every bundle's responses into one agents × items matrix,
:func:`analyse` applies the declared difficulty transform and runs the study
(:mod:`pipeline.metrics.study`), and :func:`score` turns the result into score rows (and
chart data via :mod:`pipeline.tracks.generality_charts`). Re-exported by
:mod:`pipeline.tracks.generality`.
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from pipeline.errors import ScoringError
from pipeline.tracks.base import (
    BenchmarkInput,
    BundleInput,
    ScoreContext,
    ScoreRow,
    TrackResult,
)
from pipeline.tracks.generality_data import BundleData, ItemTable, read_bundle, read_items
from pipeline.tracks.generality_settings import METRICS, BenchmarkSettings, settings_of


@dataclass(frozen=True)
class Population:
    """All agents of a benchmark as one matrix (rows: agents, columns: items)."""

    agents: tuple[str, ...]
    bundles: tuple[str, ...]
    items: tuple[str, ...]
    values: np.ndarray
    dates: Mapping[str, str]


def assemble(items: ItemTable | None, data: Sequence[tuple[str, BundleData]]) -> Population:
    """Stack the bundles' responses into one agents × items matrix (NaN = missing).

    Raises
    ------
    ScoringError
        The same agent name in two bundles.
    """
    owner: dict[str, str] = {}
    for bid, bd in data:
        for a in bd.agents:
            if a in owner:
                raise ScoringError(
                    f"agent {a!r} appears in bundles {owner[a]!r} and {bid!r}",
                    hint="give each agent one bundle (agent names are unique per benchmark)",
                )
            owner[a] = bid
    agents = tuple(owner)
    if items is not None:
        names = items.items
    else:
        names = tuple(dict.fromkeys(i for _, bd in data for i in bd.item))
    col = {n: k for k, n in enumerate(names)}
    row = {a: k for k, a in enumerate(agents)}
    values = np.full((len(agents), len(names)), np.nan)
    for _, bd in data:
        cols = np.array([col.get(i, -1) for i in bd.item], dtype=np.int64)
        rows = np.array([row[a] for a in bd.agent], dtype=np.int64)
        ok = cols >= 0
        values[rows[ok], cols[ok]] = bd.value[ok]
    dates = {a: d for _, bd in data for a, d in bd.dates.items()}
    return Population(agents, tuple(owner[a] for a in agents), names, values, dates)


def _seed(root: int, benchmark: str) -> int:
    digest = hashlib.sha256(benchmark.encode("utf-8")).digest()
    ss = np.random.SeedSequence([root, int.from_bytes(digest[:8], "little")])
    return int(ss.generate_state(1, np.uint64)[0])


@dataclass(frozen=True)
class Analysis:
    """A computed benchmark: who was scored, the study result and what was left out."""

    population: Population
    kept: np.ndarray
    points: Any
    result: Any
    notes: tuple[str, ...]


def analyse(
    s: BenchmarkSettings,
    items: ItemTable | None,
    pop: Population,
    *,
    seed: int = 0,
    executor: Any = None,
) -> Analysis:
    """Apply the declared transformation and compute every indicator (the use case)."""
    from pipeline.metrics import transforms as tf
    from pipeline.metrics.fullstudy import bin_difficulties
    from pipeline.metrics.study import StudyOptions, run_study

    notes: list[str] = []
    raw = pop.values.copy()
    if s.clip_negative:
        raw = np.where(raw < 0, 0.0, raw)
    kept = np.ones(len(pop.agents), dtype=bool)
    if s.min_mean_response is not None:
        with np.errstate(invalid="ignore"):
            means = np.nanmean(raw, axis=1)
        kept = means >= s.min_mean_response
        if (~kept).any():
            notes.append(
                f"{int((~kept).sum())} agent(s) with mean response below "
                f"{s.min_mean_response} left out"
            )
    raw = raw[kept]
    agents = [a for a, k in zip(pop.agents, kept, strict=True) if k]
    if not agents:
        raise ScoringError("no agent left to score", hint="check min_mean_response")
    try:
        if s.transform == "intrinsic":
            assert items is not None
            d = np.array(items.column("difficulty"), dtype=float)
            if s.difficulty_bins:
                d = bin_difficulties(d, s.difficulty_bins)
            pts = tf.intrinsic(raw, d, s.epsilon)
        elif s.transform == "aref":
            if s.reference_agent not in agents:
                raise ScoringError(
                    f"the reference agent {s.reference_agent!r} is in no bundle",
                    hint="add a bundle with its responses or fix reference_agent",
                )
            pts = tf.aref(raw, agents.index(s.reference_agent), s.aref_convention)
        elif s.transform == "rnk":
            scores = raw
            if s.group_items:
                assert items is not None
                groups: dict[str, list[int]] = {}
                for k, g in enumerate(items.column("group") or ()):
                    groups.setdefault(str(g), []).append(k)
                scores = tf.group_items(raw, list(groups.values()))
                notes.append(f"{len(groups)} item groups ranked on their mean scores")
            pts = tf.rnk(scores, s.columns)
        elif s.transform == "dref":
            assert items is not None
            pts = tf.dref(
                raw,
                np.array(items.column("ref_mean"), dtype=float),
                np.array(items.column("ref_variance"), dtype=float),
                s.columns,
                s.distribution,
            )
        else:
            pos = {a: k for k, a in enumerate(agents)}
            cols = [k for k, it in enumerate(pop.items) if it in pos]
            table = np.full((len(agents), len(agents)), np.nan)
            for k in cols:
                table[:, pos[pop.items[k]]] = raw[:, k]
            pts = tf.opp(table)
    except ValueError as exc:
        raise ScoringError(f"cannot apply transform {s.transform!r}: {exc}") from exc
    if s.kmin is not None or s.pipeline == "padded":
        kmin = s.kmin
    else:
        dmin = float(pts.difficulty.min())
        kmin = 0.0 if dmin >= 0 else dmin
    opts = StudyOptions(
        pipeline=s.pipeline,
        kmin=kmin,
        kmax=s.kmax,
        normalisation=s.normalisation,
        capability_range=s.capability_range,
        bootstrap=s.bootstrap,
        confidence=s.confidence,
        seed=seed,
    )
    result = run_study(pts, opts, executor=executor)
    return Analysis(pop, kept, pts, result, tuple(notes))


def _finite(x: float) -> float | None:
    return float(x) if math.isfinite(x) else None


def score(bench: BenchmarkInput, bundles: Sequence[BundleInput], ctx: ScoreContext) -> TrackResult:
    """Recompute the whole benchmark from all its bundles (see the module docstring)."""
    s = settings_of(bench)
    items, problems = read_items(bench.files, s)
    if problems:
        raise ScoringError(f"benchmark {bench.id}: {problems[0]}")
    result = TrackResult()
    data: list[tuple[str, BundleData]] = []
    for b in sorted(bundles, key=lambda x: x.id):
        bd, probs = read_bundle(b.files, s)
        errors = [p for p in probs if p.severity == "error"]
        if bd is None or errors:
            result.notes.append(f"bundle {b.id} skipped: {errors[0] if errors else 'unreadable'}")
            continue
        data.append((b.id, bd))
    if not data:
        result.notes.append("no bundle to score")
        return result
    seed = _seed(ctx.seed, bench.id)
    an = analyse(s, items, assemble(items, data), seed=seed, executor=ctx.executor)
    result.notes.extend(an.notes)
    result.rows.extend(_rows(s, an, seed))
    from pipeline.tracks.generality_charts import charts, summary_notes

    result.charts.update(charts(an))
    result.notes.extend(summary_notes(s, an))
    return result


def _rows(s: BenchmarkSettings, an: Analysis, seed: int) -> list[ScoreRow]:
    res = an.result
    ind = res.indicators
    norm = res.normalised
    rows: list[ScoreRow] = []
    pop = an.population
    idx = np.flatnonzero(an.kept)
    for j, k in enumerate(idx):
        agent, bundle = pop.agents[k], pop.bundles[k]
        details = {
            "transform": s.transform,
            "pipeline": s.pipeline,
            "normalisation": norm.mode,
            "capability_range": [norm.low, norm.high],
            "abstruse": bool(norm.abstruse[j]),
            "status": str(ind.status[j]),
        }
        if res.capability_ci is not None:
            details["bootstrap"] = {"replicates": s.bootstrap, "seed": seed}

        def ci(interval: Any, j: int = j) -> tuple[float | None, float | None]:
            if interval is None:
                return None, None
            return _finite(interval.low[j]), _finite(interval.high[j])

        values = {
            "capability": (float(ind.capability[j]), ci(res.capability_ci)),
            "spread": (float(ind.spread[j]), ci(res.spread_ci)),
            "generality": (float(ind.generality[j]), (None, None)),
            "normalised_generality": (float(norm.gamma[j]), (None, None)),
            "expected_difficulty": (float(ind.expected_difficulty[j]), (None, None)),
        }
        for metric in METRICS:
            v, (lo, hi) = values[metric]
            d = dict(details)
            if math.isnan(v):
                d["why"] = f"undefined ({ind.status[j]})"
            rows.append(ScoreRow(bundle, agent, metric, v, lo, hi, True, d))
    return rows
