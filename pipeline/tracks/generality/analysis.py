"""The analysis of a ``generality`` benchmark: the population matrix, the transform, the study.

:func:`assemble` stacks every bundle's responses into one agents × items matrix and
:func:`analyse` applies the declared difficulty transform and runs the study
(:mod:`pipeline.metrics.generality.study`). :mod:`pipeline.tracks.generality.score` turns an
:class:`Analysis` into score rows, :mod:`pipeline.tracks.generality.charts` into chart data.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from pipeline.errors import GmeterError, ScoringError
from pipeline.tracks.generality.data import BundleData, ItemTable, value_bounds
from pipeline.tracks.generality.settings import BenchmarkSettings


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
    missing: np.ndarray | None = None
    irt: Any = None


def analyse(
    s: BenchmarkSettings,
    items: ItemTable | None,
    pop: Population,
    *,
    seed: int = 0,
    executor: Any = None,
) -> Analysis:
    """Apply the declared transformation and compute every indicator (the use case)."""
    from pipeline.metrics.generality import transforms as tf
    from pipeline.metrics.generality.fullstudy import bin_difficulties
    from pipeline.metrics.generality.study import StudyOptions, run_study

    notes: list[str] = []
    raw = pop.values.copy()
    if s.clip_negative:
        raw = np.where(raw < 0, 0.0, raw)
    missing_all = _missing_counts(s, pop.agents, pop.items, raw)
    if s.missing in ("worst", "zero"):
        raw = fill_worst(s, raw)
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
    missing = missing_all[kept]
    notes += _missing_notes(s, agents, missing, len(pop.items))
    irt = None
    try:
        if s.transform == "intrinsic":
            assert items is not None
            d = np.array(items.column("difficulty"), dtype=float)
            if s.difficulty_bins:
                d = bin_difficulties(d, s.difficulty_bins)
            pts = tf.intrinsic(raw, d, s.epsilon)
        elif s.transform == "irt":
            pts, irt, more = _irt_points(s, items, pop.items, raw)
            notes += more
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
    except (ValueError, GmeterError) as exc:
        if isinstance(exc, ScoringError):
            raise
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
    try:
        result = run_study(pts, opts, map_fn=executor.map if executor is not None else None)
    except ValueError as exc:  # a degenerate population (e.g. every IRT difficulty equal)
        raise ScoringError(f"cannot compute the study: {exc}") from exc
    return Analysis(pop, kept, pts, result, tuple(notes), missing, irt)


def _missing_counts(
    s: BenchmarkSettings, agents: Sequence[str], items: Sequence[str], raw: np.ndarray
) -> np.ndarray:
    """Items without a response per agent (NA or no row), the Opp self-game not counted."""
    counts = np.isnan(raw).sum(axis=1)
    if s.transform == "opp":
        col = {it: k for k, it in enumerate(items)}
        for j, a in enumerate(agents):
            if a in col and np.isnan(raw[j, col[a]]):
                counts[j] -= 1
    return np.asarray(counts, dtype=np.int64)


def fill_worst(s: BenchmarkSettings, raw: np.ndarray) -> np.ndarray:
    """Replace each missing response (NaN) by the worst value of the benchmark's scale.

    Responses in [0, 1] (intrinsic, irt, dref beta, after any ``raw_scale`` mapping and
    clipping): 0. Raw scores (aref, rnk, dref normal): the low end of the benchmark's domain
    (:func:`~pipeline.tracks.generality.data.value_bounds`: the declared ``raw_scale``, else
    :math:`-10^9`). A missing answer thus scores exactly as the worst answer the benchmark
    accepts, so writing ``NA`` is never a strategy (issue 20). Opp has no missing values
    (refused by validation).
    """
    gaps = np.isnan(raw)
    if not gaps.any():
        return raw
    raw_scores = s.transform in ("aref", "rnk") or (
        s.transform == "dref" and s.distribution == "normal"
    )
    if not raw_scores:
        return np.where(gaps, 0.0, raw)
    return np.where(gaps, float(value_bounds(s)[0]), raw)


def _missing_notes(
    s: BenchmarkSettings, agents: Sequence[str], missing: np.ndarray, n_items: int
) -> list[str]:
    short = [(a, int(m)) for a, m in zip(agents, missing, strict=True) if m > 0]
    if not short:
        return []
    how = (
        "left out: their curves use only the items they answered; agents answering less "
        f"than {s.min_coverage:.0%} of the items are not ranked"
        if s.missing == "exclude"
        else "counted as the worst value of the scale (a wrong answer)"
    )
    shown = ", ".join(f"{a} ({m} of {n_items})" for a, m in short[:10])
    more = f" and {len(short) - 10} more" if len(short) > 10 else ""
    return [f"{len(short)} agent(s) have items without a response (NA), {how}: {shown}{more}"]


def _irt_points(
    s: BenchmarkSettings, items: ItemTable | None, names: Sequence[str], raw: np.ndarray
) -> tuple[Any, Any, list[str]]:
    """Difficulty from a 1PL/2PL IRT fit, rescaled onto ``irt_range`` (transform ``irt``)."""
    from pipeline.metrics.generality import transforms as tf
    from pipeline.metrics.generality.irt import fit_irt, rescale

    fit = fit_irt(raw, tuple(names), s.irt_model)
    if s.irt_range is not None:
        low, high = s.irt_range
    elif items is not None and items.column("difficulty") is not None:
        ref = np.array(items.column("difficulty"), dtype=float)
        low, high = float(ref.min()), float(ref.max())
    else:
        low, high = 0.0, 1.0
    keep = [k for k, n in enumerate(names) if n in set(fit.items)]
    d = rescale(fit.difficulty, low, high)
    notes = [
        f"difficulty: {fit.model.upper()} IRT (marginal ML) on {len(fit.items)} items, "
        f"rescaled onto [{low:g}, {high:g}]"
    ]
    if fit.dropped:
        notes.append(
            f"{len(fit.dropped)} item(s) everyone passed or everyone failed have no finite IRT "
            f"difficulty and are left out: {', '.join(fit.dropped[:10])}"
        )
    if fit.binarised:
        notes.append(f"IRT binarised {fit.binarised} graded response(s) (>= 0.5 counts as 1)")
    return tf.intrinsic(raw[:, keep], d, None), fit, notes
