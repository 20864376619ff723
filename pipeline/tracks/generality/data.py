"""Reading ``generality`` benchmarks and bundles, with every problem found on the way.

The benchmark's item catalogue (:func:`read_items`), a bundle's ``responses.csv`` and
``agents.csv`` (:func:`read_bundle`, with a fast path for clean files), the declared raw scale
and the coverage rule (every agent answers every item). Used by validation
(:mod:`pipeline.tracks.generality.validate`) and scoring.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from pipeline.errors import Problem
from pipeline.inputs import FileSet
from pipeline.tracks.filecheck import Column, check_csv
from pipeline.tracks.generality.settings import (
    AGENTS,
    BOUND,
    MISSING_MARK,
    RESPONSES,
    BenchmarkSettings,
)

#: Transforms whose responses lie in [0, 1] (the benchmark's ``raw_scale`` may map onto it).
UNIT_RESPONSES = ("intrinsic", "irt", "dref")


@dataclass(frozen=True)
class ItemTable:
    """The benchmark's item catalogue (``items_file``)."""

    items: tuple[str, ...]
    columns: Mapping[str, tuple[Any, ...]]

    def column(self, name: str) -> tuple[Any, ...] | None:
        """Return one optional column's values, or None when the file lacks it."""
        return self.columns.get(name)


def _item_columns(s: BenchmarkSettings) -> list[Column]:
    cols = [Column("item")]
    cols.append(Column("difficulty", "float", required=s.transform == "intrinsic"))
    cols.append(Column("group", required=s.group_items))
    dref = s.transform == "dref"
    cols.append(Column("ref_mean", "float", required=dref))
    cols.append(Column("ref_variance", "float", required=dref, low=0.0))
    return cols


def read_items(fs: FileSet, s: BenchmarkSettings) -> tuple[ItemTable | None, list[Problem]]:
    """Parse the items file; None (and no problem) when it is absent and optional."""
    needed = s.transform in ("intrinsic", "dref") or s.group_items
    if not fs.has(s.items_file):
        if needed:
            return None, [
                Problem(
                    fs.where(s.items_file),
                    "-",
                    f"transform {s.transform!r} needs the items file",
                    "add it with columns item and "
                    + ("difficulty" if s.transform == "intrinsic" else "ref_mean, ref_variance")
                    + (", group" if s.group_items else ""),
                )
            ]
        return None, []
    rows, problems = check_csv(
        fs, s.items_file, _item_columns(s), unique=("item",), allow_extra=True
    )
    if problems:
        return None, problems
    names = tuple(str(r["item"]) for r in rows)
    present = {k for r in rows for k in r}
    cols = {k: tuple(r.get(k) for r in rows) for k in present if k != "item"}
    return ItemTable(names, cols), []


@dataclass(frozen=True)
class BundleData:
    """One bundle's parsed responses (columns of ``responses.csv``, in file order).

    ``value`` is NaN where the file says ``NA`` (an explicit "not attempted"), and already
    mapped onto [0, 1] when the benchmark declares a ``raw_scale``.
    """

    agent: tuple[str, ...]
    item: tuple[str, ...]
    value: np.ndarray
    dates: Mapping[str, str]

    @property
    def agents(self) -> tuple[str, ...]:
        """Distinct agents in order of first appearance."""
        return tuple(dict.fromkeys(self.agent))


#: Bounds of raw scores when the benchmark declares no ``raw_scale`` (finite, bounded).
RAW_BOUND = BOUND


def value_bounds(s: BenchmarkSettings) -> tuple[float, float]:
    """The domain ``[low, high]`` of a response of this benchmark, as given in the bundle.

    The benchmark's ``raw_scale`` when it declares one; otherwise [0, 1] for transforms whose
    responses are shares (``low`` open with ``clip_negative``), ±:data:`RAW_BOUND` for raw
    scores (aref, rnk, dref normal). Opp cells are game scores in [0, 1].
    """
    if s.raw_scale is not None:
        return s.raw_scale
    if s.transform in ("aref", "rnk") or (s.transform == "dref" and s.distribution == "normal"):
        return -RAW_BOUND, RAW_BOUND
    low = -RAW_BOUND if (s.transform == "intrinsic" and s.clip_negative) else 0.0
    return low, 1.0


def maps_scale(s: BenchmarkSettings) -> bool:
    """Whether the benchmark's ``raw_scale`` maps responses onto [0, 1] (else only bounds)."""
    return s.raw_scale is not None and s.transform in UNIT_RESPONSES and not (
        s.transform == "dref" and s.distribution == "normal"
    )


def _value_rule(s: BenchmarkSettings) -> Column:
    low, high = value_bounds(s)
    return Column("value", "float", low=low, high=high, missing=(MISSING_MARK,))


def response_columns(s: BenchmarkSettings) -> list[Column]:
    """The columns of a bundle's ``responses.csv`` (the value in the benchmark's domain)."""
    return [Column("agent"), Column("item"), _value_rule(s)]


AGENT_COLUMNS = (Column("agent"), Column("date", "date", required=False, allow_empty=True))
"""The columns of a bundle's optional ``agents.csv`` (other columns are allowed, not read)."""


def _fast_responses(fs: FileSet, rule: Column) -> tuple[list[str], list[str], np.ndarray] | None:
    """Parse a clean ``responses.csv`` quickly; None at the first irregularity.

    The generic :func:`check_csv` then re-reads the file to name every problem precisely.
    """
    try:
        text = fs.text(RESPONSES)
    except (KeyError, UnicodeDecodeError):
        return None
    reader = csv.reader(io.StringIO(text.lstrip("\ufeff"), newline=""))
    try:
        header = [h.strip() for h in next(reader)]
        rows = [r for r in reader if r and any(x.strip() for x in r)]
    except (StopIteration, csv.Error):
        return None
    if sorted(header) != ["agent", "item", "value"] or not rows:
        return None
    if any(len(r) != 3 for r in rows):
        return None
    ia, ii, iv = header.index("agent"), header.index("item"), header.index("value")
    agents = [r[ia].strip() for r in rows]
    items = [r[ii].strip() for r in rows]
    if not all(agents) or not all(items):
        return None
    cells = [r[iv].strip() for r in rows]
    marked = np.array([c == MISSING_MARK for c in cells], dtype=bool)
    try:
        values = np.array(
            ["nan" if m else c for c, m in zip(cells, marked, strict=True)], dtype=np.float64
        )
    except ValueError:
        return None
    given = values[~marked]
    if not np.isfinite(given).all():
        return None
    if (rule.low is not None and (given < rule.low).any()) or (
        rule.high is not None and (given > rule.high).any()
    ):
        return None
    if len(set(zip(agents, items, strict=True))) != len(rows):
        return None
    return agents, items, values


def read_bundle(fs: FileSet, s: BenchmarkSettings) -> tuple[BundleData | None, list[Problem]]:
    """Parse and check ``responses.csv`` (and ``agents.csv`` if present).

    Every value must lie in the benchmark's domain (:func:`value_bounds`); with a declared
    ``raw_scale`` on a [0, 1] transform each is mapped onto [0, 1] as
    ``(v − low) / (high − low)``. Opp takes no ``NA`` (a game not played has no score).
    """
    rule = _value_rule(s)
    problems: list[Problem] = []
    fast = _fast_responses(fs, rule)
    if fast is None:
        rows, problems = check_csv(fs, RESPONSES, response_columns(s), unique=("agent", "item"))
        if problems:
            return None, problems
        fast = (
            [str(r["agent"]) for r in rows],
            [str(r["item"]) for r in rows],
            np.array([np.nan if r["value"] is None else float(r["value"]) for r in rows]),
        )
    agent, item, value = fast
    if maps_scale(s):
        assert s.raw_scale is not None
        low, high = s.raw_scale
        value = (value - low) / (high - low)
    if s.transform == "opp":
        for a, i, v in zip(agent, item, value, strict=True):
            if a != i and np.isnan(v):
                problems.append(
                    Problem(
                        fs.where(RESPONSES),
                        f"agent {a}, item {i}",
                        f"is {MISSING_MARK}; Opp needs a score for every game (its crosstable "
                        "takes no missing value)",
                        "give the game's score (1 win, 0.5 draw, 0 loss) or remove the "
                        "opponent from every agent's rows",
                    )
                )
            if a == i and not np.isnan(v) and v != 0.5:
                problems.append(
                    Problem(
                        fs.where(RESPONSES),
                        f"agent {a}, item {i}",
                        f"a game against itself is {v}; Opp counts it as a draw",
                        "remove the row or give 0.5",
                    )
                )
    dates: dict[str, str] = {}
    if fs.has(AGENTS):
        arows, more = check_csv(
            fs,
            AGENTS,
            list(AGENT_COLUMNS),
            unique=("agent",),
            allow_extra=True,
        )
        problems += more
        known = set(agent)
        for r in arows:
            if r["agent"] not in known:
                problems.append(
                    Problem(
                        fs.where(AGENTS),
                        f"agent {r['agent']}",
                        "has no responses in responses.csv",
                        "remove the row or add its responses",
                    )
                )
            elif r.get("date") is not None:
                dates[str(r["agent"])] = r["date"].isoformat()
    return BundleData(tuple(agent), tuple(item), value, dates), problems


def coverage_problems(
    fs: FileSet, data: BundleData, items: tuple[str, ...] | None, s: BenchmarkSettings
) -> list[Problem]:
    """Agents that lack a row for some item of the benchmark.

    Every agent must answer every item (``items``: the benchmark's items file; without one,
    every item the bundle mentions), writing ``NA`` where it gave no answer, so that a bundle
    cannot skip the items it failed and be ranked as if it had answered everything. For Opp
    the agent's own column (the self-game) is optional.
    """
    expected = list(items) if items is not None else list(dict.fromkeys(data.item))
    have: dict[str, set[str]] = {}
    for a, i in zip(data.agent, data.item, strict=True):
        have.setdefault(a, set()).add(i)
    problems: list[Problem] = []
    short = 0
    for a, got in have.items():
        lack = [i for i in expected if i not in got and not (s.transform == "opp" and i == a)]
        if not lack:
            continue
        short += 1
        if short <= 20:
            problems.append(
                Problem(
                    fs.where(RESPONSES),
                    f"agent {a}",
                    f"has no row for {len(lack)} of the {len(expected)} items "
                    f"(e.g. {', '.join(lack[:3])})",
                    "add one row per opponent (Opp takes no missing game)"
                    if s.transform == "opp"
                    else f"add one row per item; write {MISSING_MARK} as the value of an item "
                    "the agent did not attempt (it counts as the benchmark's missing policy "
                    "says)",
                )
            )
    if short > 20:
        problems.append(
            Problem(fs.where(RESPONSES), "agent", f"{short - 20} more incomplete agents", "")
        )
    return problems
