"""Vega-Lite chart specs for the site: the only module that imports altair.

Every chart is built once per *shape* with Altair over named data sets (``values``,
``curves``) and cached; a page's chart is that template plus its own ``datasets``. This keeps
thousands of per-system charts cheap and every spec deterministic.

Each builder returns a :class:`ChartSpec`: a title, axis titles with units, tooltips, a text
alternative (``alt``, also the spec's ``description``, which Vega turns into the SVG's ARIA
label) and, for small data, a table of the plotted numbers. Which chart a track's data becomes
is decided in :mod:`pipeline.site.track_charts` (with the track's own drawers).
"""

from __future__ import annotations

import copy
import math
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import altair as alt

from pipeline.site.chartdata import clean
from pipeline.tracks.presentation import Axis, Records, fmt

THEME: dict[str, Any] = {
    # Drawn at build time by vl-convert, which measures text with the fonts it finds: a
    # concrete, wide family (Verdana's metrics) keeps every label inside the SVG for readers
    # whose fonts are narrower; "system-ui" resolved to a narrow face and clipped labels.
    "font": "DejaVu Sans, Verdana, Bitstream Vera Sans, Arial, sans-serif",
    "view": {"continuousWidth": 560, "continuousHeight": 300, "stroke": None},
    "axis": {
        "labelFontSize": 11,
        "titleFontSize": 12,
        "gridColor": "#e6e8eb",
        "titleFontWeight": 600,
        "titleColor": "#334155",
        "labelColor": "#475569",
    },
    "legend": {"labelFontSize": 11, "titleFontSize": 11, "labelLimit": 0, "titleLimit": 0},
    "title": {"fontSize": 14, "anchor": "start", "offset": 10, "color": "#0f172a"},
    # No per-mark ARIA labels: the figure carries one text alternative and a data table, and
    # per-point labels printed "NaN" for absent fields and tripled the SVG's size.
    "aria": False,
    "range": {
        "category": [
            "#2563eb",
            "#d97706",
            "#059669",
            "#dc2626",
            "#7c3aed",
            "#0891b2",
            "#db2777",
            "#65a30d",
            "#475569",
            "#ea580c",
        ],
    },
}
TABLE_LIMIT = 25
LABEL_CHARS = 26
"""Longest axis or point label drawn (longer ones end in "…"); the full text is in the
tooltip and the data table. Labels are cut here, not by Vega's ``labelLimit``, which measures
every label's width and made a 40-row chart take over a second to render."""


def short(text: str, limit: int = LABEL_CHARS) -> str:
    """Cut a label to ``limit`` characters, ending in "…" when cut."""
    text = str(text)
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


@dataclass(frozen=True)
class ChartSpec:
    """A finished chart: title, text alternative, Vega-Lite spec and optional data table."""

    key: str
    title: str
    alt: str
    spec: dict[str, Any]
    table_head: tuple[str, ...] = ()
    table_rows: tuple[tuple[str, ...], ...] = ()
    wide: bool = False


def axis_title(label: str, unit: str) -> str:
    """``label (unit)``, or the label alone (also for the non-unit ``index``)."""
    return f"{label} ({unit})" if unit and unit != "index" else label


def _finish(template: dict[str, Any], title: str, alt_text: str, **data: Records) -> dict[str, Any]:
    del title  # kept in the signature: the ChartSpec carries it
    spec = copy.copy(template)
    # The title is the figure's HTML heading (it wraps on a phone); drawn inside the chart
    # it was clipped at narrow widths.
    spec["description"] = alt_text
    spec["datasets"] = {k: clean(v) for k, v in sorted(data.items())}
    spec["config"] = THEME
    spec["autosize"] = {"type": "fit-x", "contains": "padding"}
    return spec


def _to_dict(chart: Any) -> dict[str, Any]:
    spec: dict[str, Any] = chart.to_dict()
    spec.pop("config", None)
    return spec


def _table(
    records: Records, cols: Sequence[tuple[str, str]]
) -> tuple[tuple[str, ...], tuple[tuple[str, ...], ...]]:
    if not records or len(records) > TABLE_LIMIT:
        return (), ()
    return tuple(t for _, t in cols), tuple(tuple(fmt(r.get(f)) for f, _ in cols) for r in records)


def _make(
    key: str,
    title: str,
    alt_text: str,
    template: dict[str, Any],
    records: Records,
    cols: Sequence[tuple[str, str]],
    *,
    wide: bool = False,
    extra: dict[str, Records] | None = None,
) -> ChartSpec:
    head, rows = _table(records, cols)
    spec = _finish(template, title, alt_text, values=records, **(extra or {}))
    return ChartSpec(key, title, alt_text, spec, head, rows, wide)


# --------------------------------------------------------------------------- interval


def _unique_labels(records: Records, source: str) -> Records:
    """Give each record a short, unique ``label`` (from ``source`` unless it has one)."""
    out: Records = []
    seen: set[str] = set()
    for r in records:
        lbl = short(str(r.get("label") or r.get(source) or ""))
        base, k = lbl, 2
        while lbl in seen:
            lbl = f"{short(base, LABEL_CHARS - 4)} ({k})"
            k += 1
        seen.add(lbl)
        out.append({**r, "label": lbl, "collection": r.get("collection", "")})
    return out


@lru_cache(maxsize=64)
def _interval_template(x_title: str) -> dict[str, Any]:
    base = alt.Chart(alt.Data(name="values"))
    y = alt.Y("label:N", sort=None, title=None, axis=alt.Axis(labelLimit=0))
    tips = [
        alt.Tooltip("entry:N", title="entry"),
        alt.Tooltip("collection:N", title="submitted in"),
        alt.Tooltip("value_text:N", title=x_title),
        alt.Tooltip("interval:N", title="interval"),
        alt.Tooltip("group:N", title="tie group"),
    ]
    rule = base.mark_rule(strokeWidth=2, color="#94a3b8").encode(
        y=y, x=alt.X("low:Q", title=x_title, scale=alt.Scale(zero=False)), x2="high:Q"
    )
    point = base.mark_point(filled=True, size=70, opacity=1).encode(
        y=y,
        x=alt.X("value:Q", title=x_title),
        color=alt.Color(
            "tied:N",
            title=None,
            sort=None,
            scale=alt.Scale(
                domain=["tied with the leader", "below the leader"], range=["#2563eb", "#94a3b8"]
            ),
            legend=alt.Legend(orient="bottom"),
        ),
        tooltip=tips,
    )
    return _to_dict(alt.layer(rule, point).properties(width="container", height=alt.Step(20)))


def interval_chart(key: str, records: Records, *, title: str, x: Axis, what: str) -> ChartSpec:
    """Each entry's score as a point with its interval as a bar, in rank order.

    ``records``: ``entry, value, low, high, value_text, interval, group, tied`` (``tied`` is
    ``tied with the leader`` for tie group 1, else ``below the leader``), optionally
    ``collection`` (the bundle an agent came in, shown in the tooltip); ``label`` (the drawn
    axis label, unique) is derived from ``entry`` when absent.
    """
    records = _unique_labels(records, "entry")
    x_title = axis_title(*x)
    best = records[0] if records else {}
    alt_text = f"{what}: {x[0]} of {len(records)} entries with their intervals, in rank order" + (
        f"; the leader is {best.get('entry')} at {best.get('value_text')}." if best else "."
    )
    cols = [
        ("entry", "entry"),
        ("value_text", x_title),
        ("interval", "interval"),
        ("group", "tie group"),
    ]
    return _make(key, title, alt_text, _interval_template(x_title), records, cols)


# --------------------------------------------------------------------------- lines


NUM_FORMAT = ".4~g"
DATE_FORMAT = "%Y-%m-%d"


def _x_tip(title: str, temporal: bool) -> Any:
    if temporal:
        return alt.Tooltip("x:T", title=title, format=DATE_FORMAT)
    return alt.Tooltip("x:Q", title=title, format=NUM_FORMAT)


@lru_cache(maxsize=64)
def _line_template(
    x_title: str,
    y_title: str,
    series: bool,
    labelled: bool,
    temporal: bool,
    step: bool,
    points: bool,
    log_x: bool,
    bars: bool,
    draw_labels: bool = False,
) -> dict[str, Any]:
    base = alt.Chart(alt.Data(name="values"))
    x_scale = (
        alt.Scale(type="log", nice=False, padding=14)
        if log_x
        else alt.Scale(zero=False, nice=False, padding=8)
    )
    enc: dict[str, Any] = {
        "x": alt.X("x:T", title=x_title)
        if temporal
        else alt.X("x:Q", title=x_title, scale=x_scale),
        "y": alt.Y("y:Q", title=y_title, scale=alt.Scale(zero=False)),
    }
    tips = [_x_tip(x_title, temporal), alt.Tooltip("y:Q", title=y_title, format=NUM_FORMAT)]
    if labelled:
        tips.insert(0, alt.Tooltip("label:N", title="point"))
    if series:
        enc["color"] = alt.Color("series:N", title=None, sort=None)
        tips.insert(0, alt.Tooltip("series:N", title="series"))
    line = base.mark_line(interpolate="step-after" if step else "linear", strokeWidth=2).encode(
        **enc, tooltip=tips
    )
    layers = [line]
    if bars:
        bar_enc = {k: v for k, v in enc.items() if k != "y"}
        layers.append(
            base.mark_rule(strokeWidth=1.5, opacity=0.7).encode(**bar_enc, y="low:Q", y2="high:Q")
        )
        tips.append(alt.Tooltip("low:Q", title="interval low", format=NUM_FORMAT))
        tips.append(alt.Tooltip("high:Q", title="interval high", format=NUM_FORMAT))
    if points:
        layers.append(base.mark_point(filled=True, size=45, opacity=1).encode(**enc, tooltip=tips))
    if draw_labels:
        layers.append(
            base.mark_text(align="left", dx=6, dy=-8, fontSize=10, color="#334155").encode(
                x=enc["x"], y=enc["y"], text="label:N"
            )
        )
    return _to_dict(alt.layer(*layers).properties(width="container", height=280))


def line_chart(
    key: str,
    records: Records,
    *,
    title: str,
    x: Axis,
    y: Axis,
    what: str,
    temporal: bool = False,
    step: bool = False,
    points: bool = True,
    log_x: bool = False,
    draw_labels: bool = False,
) -> ChartSpec:
    """Lines of ``y`` against ``x`` (one per ``series`` when present).

    ``records``: ``x, y`` (+ ``series``, ``label``, and ``low``/``high`` for interval bars);
    dates as ISO strings. Tooltips format the numbers themselves (4 significant digits), so
    records carry no display copies. ``draw_labels`` writes each point's ``label`` beside it
    (up to 12 points).
    """
    x_title, y_title = axis_title(*x), axis_title(*y)
    has_series = any("series" in r for r in records)
    if has_series:
        records = [{**r, "series": str(r.get("series", ""))} for r in records]
    labelled = any("label" in r for r in records)
    n_series = len({r.get("series") for r in records}) if has_series else 1
    alt_text = f"{what} ({len(records)} points" + (
        f" in {n_series} series)." if has_series else ")."
    )
    cols = (
        ([("series", "series")] if has_series else [])
        + ([("label", "point")] if labelled else [])
        + [("x", x_title), ("y", y_title)]
    )
    bars = any("low" in r and "high" in r for r in records)
    if labelled:
        records = [{**r, "label": short(str(r.get("label", "")))} for r in records]
    if bars:  # every record then carries both ends (its point when it has no interval)
        records = [
            {**r, "low": r.get("low", r["y"]), "high": r.get("high", r["y"])} for r in records
        ]
    wide = n_series > 10
    tmpl = _line_template(
        x_title,
        y_title,
        has_series,
        labelled,
        temporal,
        step,
        points or bars,
        log_x,
        bars,
        labelled and draw_labels and len(records) <= 12,
    )
    return _make(key, title, alt_text, tmpl, records, cols, wide=wide)


# --------------------------------------------------------------------------- scatter


@lru_cache(maxsize=64)
def _scatter_template(
    x_title: str,
    y_title: str,
    size_title: str,
    color: bool,
    curves: bool,
    labels: bool,
    temporal: bool,
    shapes: bool = False,
) -> dict[str, Any]:
    base = alt.Chart(alt.Data(name="values"))
    tips = [
        alt.Tooltip("label:N", title="entry"),
        _x_tip(x_title, temporal),
        alt.Tooltip("y:Q", title=y_title, format=NUM_FORMAT),
    ]
    # reference curves fix the frame (Ψ from the range's start, S from 0); else pad the points
    pad = 0 if curves else 12
    x_enc = (
        alt.X("x:T", title=x_title, scale=alt.Scale(padding=12))
        if temporal
        else alt.X("x:Q", title=x_title, scale=alt.Scale(zero=False, padding=pad))
    )
    enc: dict[str, Any] = {
        "x": x_enc,
        "y": alt.Y("y:Q", title=y_title, scale=alt.Scale(zero=bool(curves), padding=pad)),
    }
    if size_title:
        enc["size"] = alt.Size("size:Q", title=size_title, scale=alt.Scale(range=[30, 900]))
        tips.append(alt.Tooltip("size:Q", title=size_title, format=NUM_FORMAT))
    if color:
        legend = alt.Legend(orient="bottom", direction="vertical") if shapes else alt.Undefined
        enc["color"] = alt.Color("series:N", title=None, sort=None, legend=legend)
        if shapes:  # the same field: one legend with both colour and shape
            enc["shape"] = alt.Shape("series:N", title=None, sort=None, legend=legend)
            tips.insert(1, alt.Tooltip("series:N", title="bundle"))
    layers: list[Any] = []
    if curves:
        cbase = alt.Chart(alt.Data(name="curves"))
        layers.append(
            cbase.mark_line(strokeDash=[4, 3], strokeWidth=1.2, color="#94a3b8").encode(
                x="x:Q",
                y="y:Q",
                detail="curve:N",
                tooltip=[alt.Tooltip("curve:N", title="isometric")],
            )
        )
        layers.append(
            cbase.transform_filter("datum.end")
            .mark_text(align="left", dx=5, dy=-4, fontSize=10, color="#64748b")
            .encode(x="x:Q", y="y:Q", text="curve:N")
        )
    mark = (
        base.mark_point(filled=True, size=60, opacity=0.85, stroke="#1e293b", strokeWidth=0.5)
        if shapes
        else base.mark_circle(opacity=0.8, stroke="#1e293b", strokeWidth=0.5)
    )
    layers.append(mark.encode(**enc, tooltip=tips))
    if labels:
        layers.append(
            base.mark_text(align="left", dx=7, fontSize=10, color="#334155").encode(
                x=enc["x"], y=enc["y"], text="label:N"
            )
        )
    return _to_dict(alt.layer(*layers).properties(width="container", height=320))


def scatter_chart(
    key: str,
    records: Records,
    *,
    title: str,
    x: Axis,
    y: Axis,
    size: Axis | None = None,
    curves: Records | None = None,
    what: str = "",
    labels: bool = False,
    temporal: bool = False,
    shapes: bool = False,
) -> ChartSpec:
    """Points ``x`` vs ``y``, optionally sized, coloured by ``series``, labelled, with curves.

    ``records``: ``label, x, y`` (+ ``size``, ``series``); ``curves``: ``curve, x, y, end``
    (``end`` marks where a curve's name is written). ``shapes`` gives each ``series`` its own
    shape as well as its colour (one legend, readable without colour) and names the series
    in the tooltip and the data table.
    """
    x_title, y_title = axis_title(*x), axis_title(*y)
    s_title = axis_title(*size) if size else ""
    # the tooltip (and the drawn labels) read ``label``: every point has one
    records = [
        {**r, "label": short(str(r.get("label") or r.get("series") or ""))} for r in records
    ]
    color = any("series" in r for r in records)
    if color:  # a point without a series would be drawn as "undefined" in the legend
        records = [{**r, "series": str(r.get("series") or r["label"])} for r in records]
    alt_text = (
        f"Scatter plot of {y[0]} against {x[0]} for {len(records)} entries"
        + (f", bubble size {size[0]}" if size else "")
        + (f"; {what}" if what else "")
        + "."
    )
    cols = [("label", "entry"), ("x", x_title), ("y", y_title)]
    shapes = shapes and color
    if shapes:
        cols.insert(1, ("series", "bundle"))
    if size:
        cols.append(("size", s_title))
    tmpl = _scatter_template(
        x_title, y_title, s_title, color, curves is not None, labels, temporal, shapes
    )
    extra = {"curves": curves} if curves is not None else {}
    return _make(key, title, alt_text, tmpl, records, cols, extra=extra)


# --------------------------------------------------------------------------- heatmap, bars


@lru_cache(maxsize=64)
def _heatmap_template(
    value_title: str,
    row_title: str,
    col_title: str,
    diverging: bool,
    domain: tuple[float, float] | None,
) -> dict[str, Any]:
    if domain is not None:
        scale = alt.Scale(scheme="redblue", domain=list(domain), domainMid=0)
    elif diverging:
        scale = alt.Scale(scheme="redblue", domainMid=0)
    else:
        scale = alt.Scale(scheme="viridis")
    rect = (
        alt.Chart(alt.Data(name="values"))
        .mark_rect()
        .encode(
            x=alt.X(
                "col:N",
                sort=None,
                title=col_title or None,
                axis=alt.Axis(labelAngle=-40, labelLimit=0),
            ),
            y=alt.Y("row:N", sort=None, title=row_title or None, axis=alt.Axis(labelLimit=0)),
            color=alt.Color("value:Q", title=value_title, scale=scale),
            tooltip=[
                alt.Tooltip("row:N", title=row_title or "row"),
                alt.Tooltip("col:N", title=col_title or "column"),
                alt.Tooltip("value_text:N", title=value_title),
            ],
        )
    )
    return _to_dict(rect.properties(width="container", height=alt.Step(24)))


def heatmap_chart(
    key: str,
    labels: tuple[Sequence[str], Sequence[str]],
    matrix: Sequence[Sequence[float | None]],
    *,
    title: str,
    value: Axis,
    axes: tuple[str, str] = ("", ""),
    domain: tuple[float, float] | None = None,
) -> ChartSpec:
    """Draw a matrix as coloured cells (``labels`` = row labels, column labels).

    ``domain`` fixes a diverging colour scale (e.g. −1…1 for similarities) so that every
    heatmap of a measure reads the same; otherwise the scale is diverging around 0 when the
    values straddle it, else sequential.
    """
    rows_l, cols_l = [short(x) for x in labels[0]], [short(x) for x in labels[1]]
    records = [
        {"row": r, "col": c, "value": v, "value_text": fmt(v)}
        for r, line in zip(rows_l, matrix, strict=False)
        for c, v in zip(cols_l, line, strict=False)
    ]
    finite = [v for line in matrix for v in line if isinstance(v, int | float) and math.isfinite(v)]
    diverging = bool(finite) and min(finite) < 0 < max(finite)
    v_title = axis_title(*value)
    alt_text = (
        f"Heatmap of {value[0]} between {len(rows_l)} × {len(cols_l)} items"
        + (f", from {fmt(min(finite))} to {fmt(max(finite))}" if finite else "")
        + "."
    )
    spec = _finish(
        _heatmap_template(v_title, axes[0], axes[1], diverging, domain),
        title,
        alt_text,
        values=records,
    )
    head: tuple[str, ...] = ()
    table: tuple[tuple[str, ...], ...] = ()
    if len(cols_l) <= 12 and len(rows_l) <= TABLE_LIMIT:
        head = ("", *map(str, cols_l))
        table = tuple(
            (str(r), *(fmt(v) for v in line)) for r, line in zip(rows_l, matrix, strict=False)
        )
    return ChartSpec(key, title, alt_text, spec, head, table, wide=len(cols_l) > 14)


@lru_cache(maxsize=64)
def _bar_template(cat_title: str, value_title: str) -> dict[str, Any]:
    bar = (
        alt.Chart(alt.Data(name="values"))
        .mark_bar(color="#2563eb")
        .encode(
            y=alt.Y("label:N", sort=None, title=cat_title or None, axis=alt.Axis(labelLimit=0)),
            x=alt.X("value:Q", title=value_title),
            tooltip=[
                alt.Tooltip("label:N", title=cat_title or "item"),
                alt.Tooltip("value_text:N", title=value_title),
            ],
        )
    )
    return _to_dict(bar.properties(width="container", height=alt.Step(20)))


def bar_chart(key: str, records: Records, *, title: str, category: str, value: Axis) -> ChartSpec:
    """Horizontal bars: ``records`` hold ``label, value, value_text``."""
    v_title = axis_title(*value)
    records = [{**r, "label": short(str(r.get("label", "")))} for r in records]
    alt_text = f"Bar chart of {value[0]} for {len(records)} {category or 'items'}."
    cols = [("label", category or "item"), ("value_text", v_title)]
    return _make(key, title, alt_text, _bar_template(category, v_title), records, cols)
