"""How a track is shown on the site: typed chart requests, notes, methodology and citation.

A track's ``charts`` module builds one :class:`Presentation`; its ``TrackSpec`` carries it.
The site (:mod:`pipeline.site`) draws what it asks for with generic primitives (a line, a
scatter, a heatmap, bars), prints its texts and cites its paper, and names no paper itself:
a new track gets a board without a line of ``site/`` changing.

Chart requests are data plus kind plus encodings: one frozen dataclass per kind
(:class:`LineChart`, :class:`ScatterChart`, :class:`HeatmapChart`, :class:`BarChart`), whose
fields are the records to draw and how they map to axes, colours and sizes. A drawer (one per
chart name a track stores) turns stored chart data into requests; it must return ``[]`` for
data it cannot read, never raise — the store may hold data of an older scorer.

Also here, because both the tracks' drawers and the site use them: :func:`fmt` (numbers as
the site prints them), :func:`as_records` (records from chart data of several shapes) and
:func:`find_setting` (a key anywhere in a manifest).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

Records = list[dict[str, Any]]
Axis = tuple[str, str]
"""(label, unit) of an axis; the site titles it ``label (unit)``."""


# --------------------------------------------------------------------------- chart requests


@dataclass(frozen=True)
class LineChart:
    """Lines of ``y`` against ``x``, one per ``series`` when the records carry one.

    Attributes
    ----------
    title : str
        The figure's heading.
    records : Records
        ``x, y`` (+ ``series``, ``label``, and ``low``/``high`` for interval bars); dates as
        ISO strings when ``temporal``.
    x, y : Axis
        Axis label and unit.
    what : str
        What the chart shows, in words (the start of its text alternative).
    temporal, step, points, log_x, draw_labels : bool
        A date axis; step-after lines; a mark at every point; a log x axis; each point's
        ``label`` written beside it (small charts only).
    suffix : str
        Appended to the chart's key when a drawer makes several charts of one name
        (``"-2"``, ``"-gamma"``).
    """

    title: str
    records: Records
    x: Axis
    y: Axis
    what: str
    temporal: bool = False
    step: bool = False
    points: bool = True
    log_x: bool = False
    draw_labels: bool = False
    suffix: str = ""


@dataclass(frozen=True)
class ScatterChart:
    """Points ``x`` against ``y``: optionally sized, coloured by ``series``, labelled.

    Attributes
    ----------
    title : str
        The figure's heading.
    records : Records
        ``label, x, y`` (+ ``size``, ``series``).
    x, y : Axis
        Axis label and unit.
    size : Axis or None
        The bubble size's label and unit (records then carry ``size``).
    curves : Records or None
        Reference curves drawn dashed behind the points: ``curve, x, y, end`` (``end`` marks
        where a curve's name is written).
    what : str
        What the chart shows, in words.
    labels, temporal, shapes, equal : bool
        Each point's label written beside it; a date x axis; a shape per ``series`` as well
        as a colour (one legend, readable without colour); both axes to one scale on a
        square plot (a map whose distances are the message, e.g. MDS).
    suffix : str
        Appended to the chart's key (see :class:`LineChart`).
    """

    title: str
    records: Records
    x: Axis
    y: Axis
    size: Axis | None = None
    curves: Records | None = None
    what: str = ""
    labels: bool = False
    temporal: bool = False
    shapes: bool = False
    suffix: str = ""
    equal: bool = False


@dataclass(frozen=True)
class HeatmapChart:
    """A matrix as coloured cells.

    Attributes
    ----------
    title : str
        The figure's heading.
    rows, cols : Sequence[str]
        Row and column labels.
    matrix : Sequence[Sequence[float | None]]
        ``len(rows)`` lines of ``len(cols)`` values (``None``: no value).
    value : Axis
        What a cell holds, label and unit.
    axes : tuple[str, str]
        Titles of the row and the column axis.
    domain : tuple[float, float] or None
        A fixed diverging colour scale (every heatmap of one measure then reads the same).
    suffix : str
        Appended to the chart's key (see :class:`LineChart`).
    """

    title: str
    rows: Sequence[str]
    cols: Sequence[str]
    matrix: Sequence[Sequence[float | None]]
    value: Axis
    axes: tuple[str, str] = ("", "")
    domain: tuple[float, float] | None = None
    suffix: str = ""


@dataclass(frozen=True)
class BarChart:
    """Horizontal bars: ``records`` hold ``label, value, value_text``."""

    title: str
    records: Records
    category: str
    value: Axis
    suffix: str = ""


ChartRequest = LineChart | ScatterChart | HeatmapChart | BarChart
"""One chart a track asks the site to draw."""

ChartDrawer = Callable[[Any], list[ChartRequest]]
"""Stored chart data (JSON) → the charts it becomes; ``[]`` for data it cannot read."""


# --------------------------------------------------------------------------- the rest


@dataclass(frozen=True)
class MetricScatter:
    """A bubble chart of each board entry drawn from its scores (no chart data needed).

    Attributes
    ----------
    key : str
        The chart's key on the board page.
    title, what : str
        Heading and description.
    x, y, size : str
        The metrics on the x axis, the y axis and as bubble size (labels and units come from
        the metric registry).
    unless : str
        A chart name whose data, when the scorer stored it, replaces this chart.
    """

    key: str
    title: str
    what: str
    x: str
    y: str
    size: str
    unless: str = ""


@dataclass(frozen=True)
class Citation:
    """The paper a track implements, for BibTeX and ``CITATION.cff``.

    Attributes
    ----------
    bibtex : str
        The paper's BibTeX entry (DOI where the paper has one).
    title : str
        The paper's title.
    kind : str
        Its Citation File Format reference type (``article``, ``conference-paper``).
    year : int
        Year of publication.
    authors : tuple[str, ...]
        Family names, in the paper's order.
    doi : str
        The DOI, when the paper has one.
    """

    bibtex: str
    title: str
    kind: str
    year: int
    authors: tuple[str, ...]
    doi: str = ""


IntervalNote = Callable[[str, Mapping[str, Any]], str]
"""``(level, manifest) -> text``: how a board's intervals are computed; ``level`` is the
confidence level as the site prints it (``95 %``), ``manifest`` the benchmark's."""


@dataclass(frozen=True)
class Presentation:
    """Everything the site shows of a track besides its scores.

    Attributes
    ----------
    charts : Mapping[str, ChartDrawer]
        The track's drawing of a stored chart name; any other name is drawn by the site's
        generic chart (from the data's shape) or not at all.
    hidden : frozenset[str]
        Chart names whose data is shown otherwise (as the score chart, in the run notes, as a
        table), never drawn.
    metric_scatter : MetricScatter or None
        A chart the site draws from the scores of every board of the track.
    interval_note : IntervalNote or None
        The board's sentence on intervals; without one the site writes a generic sentence.
    methodology : str
        The methodology section as an HTML fragment (written by gmeter's authors, printed
        as it is; never text from a bundle). Empty: the site's generic paragraph.
    citation : Citation or None
        The paper, for the board's BibTeX, ``cite/papers.bib`` and ``CITATION.cff``.
    agent_rows : bool
        Whether a board row is an agent (that gets its own agent page when it came in a
        collection); False when a row is something else (a pair of tests).
    worded_intervals : bool
        On "Other results", intervals of metrics other than the primary read ``(CI a to b)``
        instead of ``[a, b]``, so that they are never taken for the primary's.
    """

    charts: Mapping[str, ChartDrawer] = field(default_factory=dict)
    hidden: frozenset[str] = frozenset()
    metric_scatter: MetricScatter | None = None
    interval_note: IntervalNote | None = None
    methodology: str = ""
    citation: Citation | None = None
    agent_rows: bool = True
    worded_intervals: bool = False


# --------------------------------------------------------------------------- shared helpers


def fmt(v: Any) -> str:
    """Format a value for tooltips, tables and titles (four significant digits; ``∞``; ``—``)."""
    if v is None:
        return "—"
    if isinstance(v, float):
        if math.isnan(v):
            return "NaN"
        if math.isinf(v):
            return "∞" if v > 0 else "-∞"
        return f"{v:.4g}"
    return str(v)


def is_number(v: Any) -> bool:
    """A finite int or float (not a bool): what a chart can place on an axis."""
    return isinstance(v, int | float) and not isinstance(v, bool) and math.isfinite(v)


def _numeric(v: Any) -> bool:
    return isinstance(v, int | float) and not isinstance(v, bool)


def as_records(data: Any) -> Records | None:
    """Return records from chart data, or ``None``.

    Accepted: a list of dicts, ``{"records"|"points"|"values"|"data"|"rows": [...]}``, a
    ``{name: number}`` mapping or a ``{series: [numbers]}`` mapping.
    """
    if isinstance(data, Mapping):
        for key in ("records", "points", "values", "data", "rows"):
            inner = data.get(key)
            if isinstance(inner, list) and inner and all(isinstance(r, Mapping) for r in inner):
                return [dict(r) for r in inner]
        items = sorted(data.items(), key=lambda kv: str(kv[0]))
        if items and all(_numeric(v) for _, v in items):
            return [{"name": str(k), "value": v} for k, v in items]
        if items and all(
            isinstance(v, list) and v and all(_numeric(x) for x in v) for _, v in items
        ):
            return [
                {"series": str(k), "index": i, "value": x}
                for k, v in items
                for i, x in enumerate(v)
            ]
        return None
    if isinstance(data, list) and data:
        if all(isinstance(r, Mapping) for r in data):
            return [dict(r) for r in data]
        if all(_numeric(x) for x in data):
            return [{"index": i, "value": x} for i, x in enumerate(data)]
    return None


def find_setting(obj: object, key: str, depth: int = 0) -> object:
    """The first value of ``key`` in a manifest: its own level first, then each table in order."""
    if depth > 4 or not isinstance(obj, dict):
        return None
    if key in obj:
        return obj[key]
    for v in obj.values():
        found = find_setting(v, key, depth + 1)
        if found is not None:
            return found
    return None
