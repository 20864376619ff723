"""Which chart a track's data becomes: the track's own drawing, or a generic one.

Track scorers store JSON chart data under a name (``charts`` table). A track's presentation
(:class:`~pipeline.tracks.presentation.Presentation`) may draw a name itself, as typed chart
requests that :func:`draw` turns into charts, or hide it; any other name goes to
:func:`generic_chart`, which draws a heatmap, scatter or bar chart from a shape it recognises
and otherwise returns nothing — a new chart name or shape never breaks the build. No Altair
here: builders live in :mod:`pipeline.site.charts`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, assert_never

from pipeline.site import charts as ch
from pipeline.site.chartdata import as_matrix, humanise
from pipeline.tracks.presentation import (
    BarChart,
    ChartRequest,
    HeatmapChart,
    LineChart,
    Presentation,
    Records,
    ScatterChart,
    as_records,
    fmt,
    is_number,
)


def _pt(label: str, x: Any, y: Any, **extra: Any) -> dict[str, Any]:
    point = {"label": label, "x": x, "y": y, **extra}
    if point.get("series") == label:
        del point["label"]  # the series already names the point
    return point


def draw(key: str, req: ChartRequest) -> ch.ChartSpec:
    """Draw one chart request with the site's primitives (its key: ``key`` + its suffix)."""
    key += req.suffix
    if isinstance(req, LineChart):
        return ch.line_chart(
            key,
            req.records,
            title=req.title,
            x=req.x,
            y=req.y,
            what=req.what,
            temporal=req.temporal,
            step=req.step,
            points=req.points,
            log_x=req.log_x,
            draw_labels=req.draw_labels,
        )
    if isinstance(req, ScatterChart):
        return ch.scatter_chart(
            key,
            req.records,
            title=req.title,
            x=req.x,
            y=req.y,
            size=req.size,
            curves=req.curves,
            what=req.what,
            labels=req.labels,
            temporal=req.temporal,
            shapes=req.shapes,
            equal=req.equal,
        )
    if isinstance(req, HeatmapChart):
        return ch.heatmap_chart(
            key,
            (req.rows, req.cols),
            req.matrix,
            title=req.title,
            value=req.value,
            axes=req.axes,
            domain=req.domain,
        )
    if isinstance(req, BarChart):
        return ch.bar_chart(
            key, req.records, title=req.title, category=req.category, value=req.value
        )
    assert_never(req)


# --------------------------------------------------------------------------- generic


def _fields(records: Records) -> tuple[list[str], list[str]]:
    first = records[0]
    num = [k for k in first if all(is_number(r.get(k)) for r in records)]
    txt = [k for k in first if all(isinstance(r.get(k), str) for r in records)]
    return num, txt


def generic_chart(key: str, name: str, data: Any) -> ch.ChartSpec | None:
    """Draw any recognisable chart data; ``None`` when nothing sensible can be drawn.

    Recognised: a matrix (``{"labels", "matrix"}``, ``rows``/``cols``, a dict of dicts, or
    records with ``row``, ``col`` and one number) → heatmap; records with two numeric fields
    → lines when they carry a ``series`` text field, else a scatter (coloured by a text field
    with at most 10 values); one text and one numeric field → bars. A dict may describe itself
    with ``title``, ``x``/``y``/``size`` (``{"field", "label", "unit"}``, ``size`` making a
    bubble chart) and ``value`` (``{"label", "unit"}``) next to its ``records``.
    """
    meta: Mapping[str, Any] = data if isinstance(data, Mapping) else {}
    title = str(meta.get("title") or humanise(name))
    raw_value = meta.get("value")
    vmeta: Mapping[str, Any] = raw_value if isinstance(raw_value, Mapping) else {}
    matrix = as_matrix(data)
    if matrix is not None:
        value_axis = (str(vmeta.get("label", "value")), str(vmeta.get("unit", "")))
        return ch.heatmap_chart(key, matrix[0], matrix[1], title=title, value=value_axis)
    records = as_records(data)
    if not records:
        return None
    num, txt = _fields(records)
    if "row" in txt and "col" in txt and num:
        r_l = list(dict.fromkeys(str(r["row"]) for r in records))
        c_l = list(dict.fromkeys(str(r["col"]) for r in records))
        cells = {(str(r["row"]), str(r["col"])): r[num[0]] for r in records}
        m = [[cells.get((a, b)) for b in c_l] for a in r_l]
        value_axis = (str(vmeta.get("label", humanise(num[0]))), str(vmeta.get("unit", "")))
        return ch.heatmap_chart(key, (r_l, c_l), m, title=title, value=value_axis)

    def axis(which: str, default: str) -> tuple[str, str, str]:
        m = meta.get(which)
        if isinstance(m, Mapping) and m.get("field") in num:
            return str(m["field"]), str(m.get("label", m["field"])), str(m.get("unit", ""))
        return default, humanise(default), ""

    if len(num) >= 2:
        xf, xl, xu = axis("x", num[0])
        yf, yl, yu = axis("y", next(n for n in num if n != xf))
        if "series" in txt:
            lines = [
                {"x": r[xf], "y": r[yf], "series": str(r["series"])}
                for r in sorted(records, key=lambda r: (str(r["series"]), r[xf]))
            ]
            xs = [float(p["x"]) for p in lines]
            log_x = min(xs) > 0 and max(xs) / min(xs) >= 1000  # orders of magnitude: log axis
            return ch.line_chart(
                key,
                lines,
                title=title,
                x=(xl, ", ".join(u for u in (xu, "log scale" if log_x else "") if u)),
                y=(yl, yu),
                what=f"{yl} against {xl}, one line per series",
                points=len(lines) <= 200,
                log_x=log_x,
            )
        size_meta = meta.get("size")
        sf = (
            str(size_meta["field"])
            if isinstance(size_meta, Mapping) and size_meta.get("field") in num
            else ""
        )
        label = txt[0] if txt else ""
        series = label if label and len({r[label] for r in records}) <= 10 else ""
        recs = []
        for i, r in enumerate(records):
            extra: dict[str, Any] = {"series": str(r[series])} if series else {}
            if sf:
                extra["size"] = r[sf]
            recs.append(_pt(str(r.get(label, i)) if label else str(i), r[xf], r[yf], **extra))
        size = None
        if sf and isinstance(size_meta, Mapping):
            size = (str(size_meta.get("label", sf)), str(size_meta.get("unit", "")))
        return ch.scatter_chart(
            key,
            recs,
            title=title,
            x=(xl, xu),
            y=(yl, yu),
            size=size,
            labels=bool(sf) and len(recs) <= 30,
        )
    if len(num) == 1 and txt:
        bars = [
            {"label": str(r[txt[0]]), "value": r[num[0]], "value_text": fmt(r[num[0]])}
            for r in records
        ]
        return ch.bar_chart(
            key, bars, title=title, category=humanise(txt[0]), value=(humanise(num[0]), "")
        )
    return None


def track_charts(
    key: str, name: str, data: Any, presentation: Presentation | None = None
) -> list[ch.ChartSpec]:
    """Return the charts for one ``charts`` row of a track (possibly none).

    The track's drawer for ``name`` comes first; when it draws nothing the generic chart
    tries the data's shape. Neither raises on odd data: both read it defensively.
    """
    shown = presentation or Presentation()
    if name in shown.hidden:
        return []
    drawer = shown.charts.get(name)
    if drawer is not None and isinstance(data, Mapping | list):
        made = [draw(key, req) for req in drawer(data)]
        if made:
            return made
    generic = generic_chart(key, name, data)
    return [generic] if generic is not None else []
