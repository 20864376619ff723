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
import csv
import datetime as dt
import io
import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from pipeline.site.chartdata import clean
from pipeline.site.checked_specs import checked_dict, kept_template
from pipeline.tracks.presentation import Axis, Records, fmt
from pipeline.untrusted import csv_cell, csv_number_or_cell


class _Altair:
    """Altair, imported when a template is first made (0.3 s a process).

    Templates are kept in the chart cache (:func:`~pipeline.site.checked_specs.kept_template`):
    a build whose templates are all kept never imports it.
    """

    def __getattr__(self, name: str) -> Any:
        import altair

        return getattr(altair, name)


alt: Any = _Altair()


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
"""Rows of a chart's data table shown on the page; every row is in the chart's CSV file."""
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
    table_total: int = 0
    """Rows of the whole data table (``table_rows`` holds the first :data:`TABLE_LIMIT`)."""
    csv: str = ""
    """Every row of the data table as CSV (written next to the spec, linked from the figure)."""


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
    if (template.get("usermeta") or {}).get("aspect") == "equal":
        spec["autosize"] = {"type": "pad"}  # a fixed square: fitting the width would stretch it
    return spec


def _to_dict(chart: Any) -> dict[str, Any]:
    spec = checked_dict(chart)  # the schema check of a template runs once, not every build
    spec.pop("config", None)
    return spec


def _csv(head: Sequence[str], rows: Sequence[Sequence[Any]]) -> str:
    """The data table as CSV (raw values: numbers unrounded, absent cells empty).

    Text cells (agent and system names) are neutralised for spreadsheets like every CSV the
    site publishes (:func:`pipeline.untrusted.csv_number_or_cell`); numbers stay numbers.
    """
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow([csv_cell(h) for h in head])
    for r in rows:
        w.writerow(["" if v is None else csv_number_or_cell(v) for v in r])
    return buf.getvalue()


def _table(
    records: Records, cols: Sequence[tuple[str, str]]
) -> tuple[tuple[str, ...], tuple[tuple[str, ...], ...], int, str]:
    """The data table of a chart: head, the rows shown, the row count, all rows as CSV.

    Every chart has one (a chart is only accessible with its numbers in text); long ones
    show their first :data:`TABLE_LIMIT` rows and link the rest as CSV.
    """
    if not records:
        return (), (), 0, ""
    head = tuple(t for _, t in cols)
    shown = tuple(tuple(fmt(r.get(f)) for f, _ in cols) for r in records[:TABLE_LIMIT])
    raw = [[r.get(f) for f, _ in cols] for r in records]
    return head, shown, len(records), _csv(head, raw)


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
    head, rows, total, text = _table(records, cols)
    spec = _finish(template, title, alt_text, values=records, **(extra or {}))
    return ChartSpec(key, title, alt_text, spec, head, rows, wide, total, text)


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


@kept_template
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
TICK_FORMAT = "~r"
"""Value ticks: the significant digits the tick step needs, no trailing zeros (Vega sets the
precision from the step; a fixed `~g` printed 8e+3)."""


def day_step(records: Records) -> int:
    """Days between date ticks for a time axis over ``records`` (0: Vega's own choice).

    Releases a few days apart made Vega tick in clock hours; dates are days here, so a span
    of under a month ticks every day or every few days, and longer spans tick by Vega's
    calendar (weeks, months, years), always printed as dates.
    """
    days = []
    for r in records:
        try:
            days.append(dt.date.fromisoformat(str(r.get("x"))[:10]))
        except ValueError:
            continue
    if len(days) < 2:
        return 1
    span = (max(days) - min(days)).days
    return 0 if span > 31 else max(1, math.ceil(span / 6))


def _time_x(title: str, step: int, **scale: Any) -> Any:
    """A date x axis (ticks every ``step`` days, or Vega's calendar ticks for 0)."""
    ticks: Any = {"interval": "day", "step": step} if step else alt.Undefined
    return alt.X(
        "x:T",
        title=title,
        axis=alt.Axis(format=DATE_FORMAT, tickCount=ticks, labelAngle=0),
        scale=alt.Scale(**scale) if scale else alt.Undefined,
    )


def flat_domain(records: Records, field: str = "y") -> tuple[float, float] | None:
    """A y domain around a single value (all points equal), else ``None`` (Vega's own).

    A flat line drew one tick on a zero-height scale; around ±10 % of the value (±1 at 0)
    the axis reads as a scale.
    """
    ys = {float(r[field]) for r in records if isinstance(r.get(field), int | float)}
    if len(ys) != 1:
        return None
    v = ys.pop()
    half = abs(v) * 0.1 or 1.0
    return (v - half, v + half)


def _x_tip(title: str, temporal: bool) -> Any:
    if temporal:
        return alt.Tooltip("x:T", title=title, format=DATE_FORMAT)
    return alt.Tooltip("x:Q", title=title, format=NUM_FORMAT)


@kept_template
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
    days: int = 0,
    y_domain: tuple[float, float] | None = None,
) -> dict[str, Any]:
    base = alt.Chart(alt.Data(name="values"))
    x_scale = (
        alt.Scale(type="log", nice=False, padding=14)
        if log_x
        else alt.Scale(zero=False, nice=False, padding=8)
    )
    y_scale = alt.Scale(zero=False, domain=list(y_domain)) if y_domain else alt.Scale(zero=False)
    enc: dict[str, Any] = {
        "x": _time_x(x_title, days, padding=14)
        if temporal
        else alt.X("x:Q", title=x_title, scale=x_scale),
        "y": alt.Y(
            "y:Q", title=y_title, scale=y_scale, axis=alt.Axis(format=TICK_FORMAT, tickCount=5)
        ),
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
        day_step(records) if temporal else 0,
        None if bars else flat_domain(records),
    )
    return _make(key, title, alt_text, tmpl, records, cols, wide=wide)


# --------------------------------------------------------------------------- scatter


@kept_template
def _scatter_template(
    x_title: str,
    y_title: str,
    size_title: str,
    color: bool,
    curves: bool,
    labels: bool,
    temporal: bool,
    shapes: bool = False,
    days: int = 0,
    square: tuple[tuple[float, float], tuple[float, float]] | None = None,
) -> dict[str, Any]:
    base = alt.Chart(alt.Data(name="values"))
    tips = [
        alt.Tooltip("label:N", title="entry"),
        _x_tip(x_title, temporal),
        alt.Tooltip("y:Q", title=y_title, format=NUM_FORMAT),
    ]
    # reference curves fix the frame (Ψ from the range's start, S from 0); else pad the points
    pad = 0 if curves else 12
    # a square map is narrow on a phone: five ticks a side keep its labels apart
    ticks = alt.Axis(format=TICK_FORMAT, tickCount=5 if square is not None else alt.Undefined)
    if square is not None:  # equal scales: one unit is as long across as it is up
        x_enc = alt.X(
            "x:Q",
            title=x_title,
            axis=ticks,
            scale=alt.Scale(domain=list(square[0]), nice=False, zero=False),
        )
        y_scale = alt.Scale(domain=list(square[1]), nice=False, zero=False)
    else:
        x_enc = (
            _time_x(x_title, days, padding=12)
            if temporal
            else alt.X("x:Q", title=x_title, axis=ticks, scale=alt.Scale(zero=False, padding=pad))
        )
        y_scale = alt.Scale(zero=bool(curves), padding=pad)
    enc: dict[str, Any] = {"x": x_enc, "y": alt.Y("y:Q", title=y_title, axis=ticks, scale=y_scale)}
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
    if labels:  # each label on the side where it overlaps nothing (see place_labels)
        layers.append(
            base.transform_filter("datum.side !== ''")
            .mark_text(
                align=alt.ExprRef("datum.side === 'l' ? 'right' : 'left'"),
                dx=alt.ExprRef("datum.dx"),
                fontSize=10,
                color="#334155",
            )
            .encode(x=enc["x"], y=enc["y"], text="label:N")
        )
    meta = {"narrow_labels": list(LABEL_KEYS["narrow"])} if labels else {}
    if square is not None:
        chart = alt.layer(*layers).properties(width=EQUAL_SIDE, height=EQUAL_SIDE)
        return {**_to_dict(chart), "usermeta": {"aspect": "equal", **meta}}
    out = _to_dict(alt.layer(*layers).properties(width="container", height=320))
    return {**out, "usermeta": meta} if meta else out


EQUAL_SIDE = 420
"""Side of an equal-scale map's square plot on a desktop (narrower on a phone)."""
LABEL_PX = (500.0, 300.0, 6.2, 13.0)
"""Plot width and height, a character's width and a label's height, in pixels, as drawn on
a desktop: enough to tell which point labels would overlap."""
WIDE_PLOT = 490.0
"""Width of a desktop chart (560 px) less its y axis and the gap before a legend."""
NARROW_PLOT = (250.0, 300.0)
"""Plot width and height of a chart drawn for a phone (320 px wide with its axes; an
equal-scale map is a square of :data:`NARROW_SIDE`)."""
NARROW_SIDE = 230.0
"""Side of an equal-scale map's plot on a phone (320 px less its axes)."""
LABEL_KEYS = {"wide": ("side", "dx"), "narrow": ("nside", "ndx")}
"""Record fields of a label's placement on a desktop and on a phone; the phone drawing reads
the second pair (:func:`pipeline.site.svgrender.sized` switches them)."""


def place_labels(
    records: Records,
    *,
    log_x: bool = False,
    plot: tuple[float, float] = (LABEL_PX[0], LABEL_PX[1]),
    domain: tuple[tuple[float, float], tuple[float, float]] | None = None,
    keys: tuple[str, str] = LABEL_KEYS["wide"],
    overhang: float = 40.0,
    pad: float = 0.0,
) -> tuple[Records, int]:
    """Put each point's label right or left of it where it overlaps no other label or point.

    Points are taken in order (a board's best first); a label that fits on neither side is
    not drawn (the tooltip and the data table name every point). Bubbles count at their
    drawn radius (area 30–900 px² over a size scale from 0). ``plot`` is the plot's size in
    pixels and ``domain`` its fixed x and y domains (an equal-scale map), else the points'
    range, drawn ``pad`` pixels inside the plot's edges; a label may reach ``overhang``
    pixels beyond the plot. Returns the records with
    the two ``keys`` set — the side (``r``, ``l`` or ``""``) and the label's offset in
    pixels — and how many labels were left out.
    """
    side_key, dx_key = keys
    pts = [
        (float(r["x"]), float(r["y"]))
        if isinstance(r.get("x"), int | float) and isinstance(r.get("y"), int | float)
        else None
        for r in records
    ]
    xs = [math.log10(p[0]) if log_x and p[0] > 0 else p[0] for p in pts if p]
    ys = [p[1] for p in pts if p]
    if not xs:
        return [{**r, side_key: "", dx_key: 0} for r in records], 0
    w, h = plot
    _w, _h, cw, lh = LABEL_PX
    x0, x1, y0, y1 = min(xs), max(xs), min(ys), max(ys)
    if domain is not None and not log_x:
        (x0, x1), (y0, y1) = domain
    sx = (w - 2 * pad) / (x1 - x0) if _span(x0, x1) else 0.0
    sy = (h - 2 * pad) / (y1 - y0) if _span(y0, y1) else 0.0
    sizes = [float(r["size"]) for r in records if isinstance(r.get("size"), int | float)]
    top = max(sizes, default=0.0)

    def radius(r: dict[str, Any]) -> float:
        v = r.get("size")
        area = 30 + 870 * float(v) / top if isinstance(v, int | float) and top > 0 else 30.0
        return math.sqrt(max(area, 0.0) / math.pi)

    where: list[tuple[float, float, float] | None] = []
    for r, p in zip(records, pts, strict=True):
        if p is None:
            where.append(None)
            continue
        px = pad + ((math.log10(p[0]) if log_x and p[0] > 0 else p[0]) - x0) * sx
        where.append((px, pad + (y1 - p[1]) * sy, radius(r)))
    dots = [(px - rad, py - rad, px + rad, py + rad) for px, py, rad in filter(None, where)]

    def free(box: tuple[float, float, float, float], others: list[Any]) -> bool:
        return all(
            box[2] <= b[0] or box[0] >= b[2] or box[3] <= b[1] or box[1] >= b[3] for b in others
        )

    boxes: list[tuple[float, float, float, float]] = []
    out: Records = []
    dropped = 0
    for r, at in zip(records, where, strict=True):
        if at is None:
            out.append({**r, side_key: "", dx_key: 0})
            continue
        px, py, rad = at
        width = cw * len(str(r.get("label", "")))
        gap = rad + 3
        own = (px - rad, py - rad, px + rad, py + rad)
        placed = ("", 0.0)
        for name, left, dx in (("r", px + gap, gap), ("l", px - gap - width, -gap)):
            # a pixel between two labels: drawn text is a little wider than its estimate
            box = (left - 1, py - lh / 2, left + width + 1, py + lh / 2)
            if left < -overhang or left + width > w + overhang:
                continue
            if free(box, boxes) and free(box, [d for d in dots if d != own]):
                boxes.append(box)
                placed = (name, dx)
                break
        dropped += placed[0] == ""
        out.append({**r, side_key: placed[0], dx_key: round(placed[1], 1)})
    return out, dropped


def nice(lo: float, hi: float, count: int = 10) -> tuple[float, float]:
    """``lo``…``hi`` widened to whole ticks, as Vega's ``nice`` does (about ``count`` ticks)."""
    if not _span(lo, hi):
        return lo, hi
    raw = (hi - lo) / count
    power = 10 ** math.floor(math.log10(raw))
    err = raw / power
    step = power * (10 if err >= math.sqrt(50) else 5 if err >= math.sqrt(10) else
                    2 if err >= math.sqrt(2) else 1)  # fmt: skip
    return math.floor(lo / step) * step, math.ceil(hi / step) * step


def nice_domain(
    records: Records, curves: Records | None
) -> tuple[tuple[float, float], tuple[float, float]] | None:
    """The x and y domains Vega draws points (and reference curves, y from 0) in."""
    both = [*records, *(curves or [])]
    xs = [float(r["x"]) for r in both if isinstance(r.get("x"), int | float)]
    ys = [float(r["y"]) for r in both if isinstance(r.get("y"), int | float)]
    if not xs or not ys:
        return None
    if curves is not None:
        ys.append(0.0)
    return nice(min(xs), max(xs)), nice(min(ys), max(ys))


def _span(lo: float, hi: float) -> bool:
    """Whether ``lo``…``hi`` is a range to scale to pixels (not one value up to rounding)."""
    return hi - lo > 1e-9 * max(1.0, abs(lo), abs(hi))


def square_domain(records: Records) -> tuple[tuple[float, float], tuple[float, float]] | None:
    """Domains of equal length around the points, for a map whose distances must read true."""
    xs = [float(r["x"]) for r in records if isinstance(r.get("x"), int | float)]
    ys = [float(r["y"]) for r in records if isinstance(r.get("y"), int | float)]
    if not xs or not ys:
        return None
    half = max(max(xs) - min(xs), max(ys) - min(ys)) / 2 * 1.12 or 1.0
    cx, cy = (max(xs) + min(xs)) / 2, (max(ys) + min(ys)) / 2
    return (_r6(cx - half), _r6(cx + half)), (_r6(cy - half), _r6(cy + half))


def _r6(v: float) -> float:
    """Six significant digits: short, stable numbers in a spec."""
    return float(f"{v:.6g}")


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
    equal: bool = False,
) -> ChartSpec:
    """Points ``x`` vs ``y``, optionally sized, coloured by ``series``, labelled, with curves.

    ``records``: ``label, x, y`` (+ ``size``, ``series``); ``curves``: ``curve, x, y, end``
    (``end`` marks where a curve's name is written). ``shapes`` gives each ``series`` its own
    shape as well as its colour (one legend, readable without colour) and names the series
    in the tooltip and the data table. ``equal`` draws both axes to one scale on a square
    plot (a map, e.g. MDS, whose distances are the message). Drawn labels never overlap:
    one that would is left out (see :func:`place_labels`).
    """
    x_title, y_title = axis_title(*x), axis_title(*y)
    s_title = axis_title(*size) if size else ""
    # the tooltip (and the drawn labels) read ``label``: every point has one
    records = [{**r, "label": short(str(r.get("label") or r.get("series") or ""))} for r in records]
    color = any("series" in r for r in records)
    if color:  # a point without a series would be drawn as "undefined" in the legend
        records = [{**r, "series": str(r.get("series") or r["label"])} for r in records]
    dropped = 0
    square = square_domain(records) if equal and not temporal else None
    if labels:
        # where Vega puts the points: the fixed square, else the nice range of the points
        # (and of the reference curves, which fix the frame, S from 0), padded 12 px
        frame = square or nice_domain(records, curves)
        pad = 0.0 if square or curves is not None else 12.0
        wide = (float(EQUAL_SIDE), float(EQUAL_SIDE)) if square else (LABEL_PX[0], LABEL_PX[1])
        if color and not shapes and not square:  # a legend on the right narrows a desktop plot
            names = max((len(str(r.get("series", ""))) for r in records), default=0)
            legend = max(LABEL_PX[2] * names + 30, 90.0 if size else 0.0)
            wide = (min(wide[0], WIDE_PLOT - legend), wide[1])
        records, dropped = place_labels(records, plot=wide, domain=frame, pad=pad)
        # a phone's drawing is half as wide with text as large: its labels are placed again
        records, _ = place_labels(
            records,
            plot=(NARROW_SIDE, NARROW_SIDE) if square else NARROW_PLOT,
            domain=frame,
            pad=pad,
            keys=LABEL_KEYS["narrow"],
            overhang=8.0,
        )
    alt_text = (
        f"Scatter plot of {y[0]} against {x[0]} for {len(records)} entries"
        + (f", bubble size {size[0]}" if size else "")
        + (", both axes to one scale" if equal else "")
        + (f"; {what}" if what else "")
        + (f"; {dropped} labels that would overlap are left out" if dropped else "")
        + "."
    )
    cols = [("label", "entry"), ("x", x_title), ("y", y_title)]
    shapes = shapes and color
    if shapes:
        cols.insert(1, ("series", "bundle"))
    if size:
        cols.append(("size", s_title))
    tmpl = _scatter_template(
        x_title,
        y_title,
        s_title,
        color,
        curves is not None,
        labels,
        temporal,
        shapes,
        day_step(records) if temporal else 0,
        square,
    )
    extra = {"curves": curves} if curves is not None else {}
    return _make(key, title, alt_text, tmpl, records, cols, extra=extra)


# --------------------------------------------------------------------------- heatmap, bars


@kept_template
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
    if len(cols_l) <= 12:  # a readable grid: the matrix itself
        head: tuple[str, ...] = ("", *map(str, cols_l))
        raw = [[r, *line] for r, line in zip(rows_l, matrix, strict=False)]
    else:  # too wide to read as a grid: one line per cell
        head = (axes[0] or "row", axes[1] or "column", v_title)
        raw = [[r["row"], r["col"], r["value"]] for r in records]
    table = tuple(tuple(fmt(v) if i else str(v) for i, v in enumerate(r)) for r in raw)
    return ChartSpec(
        key,
        title,
        alt_text,
        spec,
        head,
        table[:TABLE_LIMIT],
        wide=len(cols_l) > 14,
        table_total=len(table),
        csv=_csv(head, raw),
    )


@kept_template
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
