"""Which chart a track's data becomes: dispatch by chart name, with a generic fallback.

Track scorers store JSON chart data under a name (``charts`` table). Known names get the
paper's chart; any other name goes to :func:`generic_chart`, which draws a heatmap, scatter or
bar chart from a shape it recognises and otherwise returns nothing — a new chart name or shape
never breaks the build. No Altair here: builders live in :mod:`pipeline.site.charts`.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Callable, Mapping
from typing import Any

from pipeline.site import charts as ch
from pipeline.site.chartdata import Records, as_matrix, as_records, humanise
from pipeline.site.charts import ChartSpec, fmt

CURVE_LIMIT = 25
GROUP_LIMIT = 4
SERIES_LIMIT = 8
"""Most bundles a capability chart tells apart by colour and shape (more: one colour)."""
POINT_LABELS = 12
"""Scatter charts with at most this many points write each point's name beside it."""


def _is_num(v: Any) -> bool:
    return isinstance(v, int | float) and not isinstance(v, bool) and math.isfinite(v)


def _pt(label: str, x: Any, y: Any, **extra: Any) -> dict[str, Any]:
    point = {"label": label, "x": x, "y": y, **extra}
    if point.get("series") == label:
        del point["label"]  # the series already names the point
    return point


# --------------------------------------------------------------------------- generality


def _acc(key: str, data: Any) -> list[ChartSpec]:
    curves = [c for c in data.get("curves", []) if isinstance(c, Mapping)]
    shown = curves[:CURVE_LIMIT]
    recs = []
    for c in shown:
        agent = str(c.get("agent", ""))
        for x, y in zip(c.get("x") or [], c.get("psi") or [], strict=False):
            if _is_num(x) and _is_num(y):
                recs.append(_pt(agent, x, y, series=agent))
    if not recs:
        return []
    note = f" (first {len(shown)} of {len(curves)} agents)" if len(curves) > len(shown) else ""
    return [
        ch.line_chart(
            key,
            recs,
            title=f"Agent characteristic curves{note}",
            x=("difficulty h", "difficulty units"),
            y=("ψ(h)", "mean result, 0–1"),
            what="Each agent's characteristic curve ψ(h) as integrated, with its observed points",
            points=len(recs) <= 400,
        )
    ]


def _aggregated(key: str, data: Any) -> list[ChartSpec]:
    recs = [
        {"x": x, "y": y}
        for x, y in zip(data.get("x") or [], data.get("psi") or [], strict=False)
        if _is_num(x) and _is_num(y)
    ]
    if not recs:
        return []
    cap, spr = data.get("capability"), data.get("spread")
    return [
        ch.line_chart(
            key,
            recs,
            title=f"Aggregated ACC (Ψ = {fmt(cap)}, S = {fmt(spr)})",
            x=("difficulty h", "difficulty units"),
            y=("ψ(h)", "mean result, 0–1"),
            what="The characteristic curve of the column means of all agents",
        )
    ]


def _cap_spread(key: str, data: Any) -> list[ChartSpec]:
    pts = [p for p in data.get("points", []) if isinstance(p, Mapping)]
    iso = data.get("isometrics") or {}
    xs = iso.get("capability") or []
    curves: Records = []
    for name, field in (
        ("γ = 0 (constant curve)", "constant"),
        ("γ = −1 (maximum spread)", "maximum"),
    ):
        ys = iso.get(field) or []
        for k, (x, y) in enumerate(zip(xs, ys, strict=False)):
            if _is_num(x) and _is_num(y):
                curves.append({"curve": name, "x": x, "y": y, "end": k == len(xs) // 2})
    # Several bundles (e.g. humans and machines, the paper's Fig. S11): colour and shape
    # each point by its bundle, with a legend.
    bundles = sorted({str(p.get("bundle") or "") for p in pts} - {""})
    by_bundle = 2 <= len(bundles) <= SERIES_LIMIT

    def points(field: str) -> Records:
        out: Records = []
        for p in pts:
            if not (_is_num(p.get("capability")) and _is_num(p.get(field))):
                continue
            extra = {"series": str(p.get("bundle") or "")} if by_bundle else {}
            out.append(
                {"label": str(p.get("agent", "")), "x": p["capability"], "y": p[field], **extra}
            )
        return out

    labels = len(pts) <= POINT_LABELS
    legend = f"; colour and shape: bundle ({', '.join(bundles)})" if by_bundle else ""
    out = []
    recs = points("spread")
    if recs:
        out.append(
            ch.scatter_chart(
                key,
                recs,
                title="Capability vs spread",
                x=("capability Ψ", "difficulty units"),
                y=("spread S", "difficulty units"),
                curves=curves,
                what="dashed curves are the isometrics of normalised generality (supplement "
                "Figs. 4–5); points above the constant curve are abstruse" + legend,
                labels=labels,
                shapes=by_bundle,
            )
        )
    recs = points("normalised_generality")
    if recs:
        out.append(
            ch.scatter_chart(
                key + "-gamma",
                recs,
                title="Capability vs normalised generality",
                x=("capability Ψ", "difficulty units"),
                y=("normalised generality γ", "−1–1"),
                what=legend.removeprefix("; "),
                labels=labels,
                shapes=by_bundle,
            )
        )
    return out


def _evolution(key: str, data: Any) -> list[ChartSpec]:
    rows = as_records(data) or []
    recs = [
        _pt(str(r.get("agent", "")), str(r.get("date")), r.get("capability"))
        for r in rows
        if r.get("date") and _is_num(r.get("capability"))
    ]
    if not recs:
        return []
    return [
        ch.scatter_chart(
            key,
            recs,
            title="Capability over time",
            x=("date", ""),
            y=("capability Ψ", "difficulty units"),
            temporal=True,
            labels=len(recs) <= 40,
            what="each agent at its publication date",
        )
    ]


# --------------------------------------------------------------------------- similarity


def _groups(rows: Records) -> dict[str, Records]:
    """Rows by run (bundle · configuration), each bundle's main run first.

    Only the first :data:`GROUP_LIMIT` are drawn, so every bundle gets one before any bundle
    gets a second: its run at the paper's p = 0.5 when it has several (a sweep's other
    runs are drawn by the sweep chart).
    """
    out: dict[str, Records] = defaultdict(list)
    bundle_of: dict[str, str] = {}
    for r in rows:
        label = " · ".join(str(r[k]) for k in ("bundle", "config") if r.get(k))
        out[label].append(r)
        bundle_of[label] = str(r.get("bundle") or "")
    firsts: dict[str, str] = {}
    for label in sorted(out, key=lambda k: ("p=0.5" not in k, k)):
        firsts.setdefault(bundle_of[label], label)
    first = set(firsts.values())
    order = sorted(out, key=lambda k: (k not in first, k))
    return {k: out[k] for k in order}


def _sim_sweep(key: str, data: Any) -> list[ChartSpec]:
    """S against the merge proportion p, a line per pair, a chart per agent (Figs. 2–3)."""
    rows = data.get("sweep") if isinstance(data, Mapping) else data
    by_agent: dict[str, Records] = defaultdict(list)
    for r in rows if isinstance(rows, list) else []:
        if isinstance(r, Mapping) and _is_num(r.get("p")) and _is_num(r.get("similarity")):
            label = " · ".join(str(r[k]) for k in ("bundle", "agent") if r.get(k))
            by_agent[label].append(
                {"x": r["p"], "y": r["similarity"], "series": str(r.get("pair", ""))}
            )
    out = []
    for i, label in enumerate(sorted(by_agent)[:GROUP_LIMIT]):
        recs = sorted(by_agent[label], key=lambda p: (p["series"], p["x"]))
        out.append(
            ch.line_chart(
                f"{key}-{i + 1}" if i else key,
                recs,
                title="Similarity against the proportion p" + (f" — {label}" if label else ""),
                x=("proportion p of test A in the merge", "0–1"),
                y=("similarity S", "−1–1"),
                what="S of each pair at each merge proportion p (Pereyda & Holder 2020, "
                "Figs. 2–3); a line per pair",
            )
        )
    return out


def _sim_published(key: str, data: Any) -> list[ChartSpec]:
    """The paper's own similarity matrix, on the same colour scale as the measured ones."""
    rows = as_records(data) or []
    r_l: list[str] = []
    c_l: list[str] = []
    cells: dict[tuple[str, str], Any] = {}
    for r in rows:
        a, b = str(r.get("row")), str(r.get("col"))
        r_l += [a] if a not in r_l else []
        c_l += [b] if b not in c_l else []
        v = r.get("similarity")
        cells[(a, b)] = v if _is_num(v) else None
    if not cells:
        return []
    return [
        ch.heatmap_chart(
            key,
            (r_l, c_l),
            [[cells.get((a, b)) for b in c_l] for a in r_l],
            title="Published similarity S(A, B) (Pereyda & Holder 2020)",
            value=("similarity S", "−1–1"),
            domain=(-1.0, 1.0),
            axes=("test A", "test B"),
        )
    ]


def _sim_heatmap(key: str, data: Any) -> list[ChartSpec]:
    rows = as_records(data) or []
    out = []
    for i, (label, group) in enumerate(list(_groups(rows).items())[:GROUP_LIMIT]):
        r_l: list[str] = []
        c_l: list[str] = []
        cells: dict[tuple[str, str], Any] = {}
        for r in group:
            a, b = str(r.get("row")), str(r.get("col"))
            r_l += [a] if a not in r_l else []
            c_l += [b] if b not in c_l else []
            cells[(a, b)] = r.get("similarity", r.get("value"))
        m = [[cells.get((a, b)) for b in c_l] for a in r_l]
        title = "Similarity S(A, B)" + (f" — {label}" if label else "")
        out.append(
            ch.heatmap_chart(
                f"{key}-{i + 1}" if i else key,
                (r_l, c_l),
                m,
                title=title,
                value=("similarity S", "−1–1"),
                domain=(-1.0, 1.0),
                axes=("test A", "test B"),
            )
        )
    return out


def _sim_map(key: str, data: Any) -> list[ChartSpec]:
    rows = as_records(data) or []
    out = []
    for i, (label, group) in enumerate(list(_groups(rows).items())[:GROUP_LIMIT]):
        recs = [
            _pt(str(r.get("test", "")), r.get("x"), r.get("y"))
            for r in group
            if _is_num(r.get("x")) and _is_num(r.get("y"))
        ]
        if not recs:
            continue
        title = "Map of the tests (classical MDS of 1 − S)" + (f" — {label}" if label else "")
        out.append(
            ch.scatter_chart(
                f"{key}-{i + 1}" if i else key,
                recs,
                title=title,
                x=("MDS dimension 1", "dissimilarity units"),
                y=("MDS dimension 2", "dissimilarity units"),
                labels=True,
                what="tests close together behave alike for the baseline agent",
            )
        )
    return out


# --------------------------------------------------------------------------- AIQ


def _aiq_el(key: str, data: Any) -> list[ChartSpec]:
    rows = as_records(data) or []
    recs = []
    for r in rows:
        el: Any = r.get("episode_length")
        v = r.get("aiq")
        if not (_is_num(el) and _is_num(v) and el > 0):
            continue
        p = {
            "x": el,
            "y": v,
            "label": str(r.get("agent", "")),
            "series": str(r.get("series", r.get("agent", ""))),
        }
        if _is_num(r.get("ci_low")) and _is_num(r.get("ci_high")):
            p["low"], p["high"] = r["ci_low"], r["ci_high"]
        recs.append(p)
    if not recs:
        return []
    return [
        ch.line_chart(
            key,
            recs,
            title="AIQ vs episode length",
            x=("episode length", "cycles, log scale"),
            y=("AIQ", "reward per cycle"),
            log_x=True,
            what="Each agent's AIQ with its 95 % interval at each episode length "
            "(Legg & Veness, Fig. 1)",
        )
    ]


def _aiq_lengths(key: str, data: Any) -> list[ChartSpec]:
    rows = as_records(data) or []
    recs = [
        {"x": r["length"], "y": r["fraction"], "series": str(r.get("series", ""))}
        for r in rows
        if _is_num(r.get("length")) and _is_num(r.get("fraction"))
    ]
    if not recs:
        return []
    drawn = data.get("drawn") if isinstance(data, Mapping) else None
    title = "Program lengths" + (f" ({drawn:,} programs drawn)" if _is_num(drawn) else "")
    return [
        ch.line_chart(
            key,
            recs,
            title=title,
            x=("program length", "BF symbols"),
            y=("fraction of programs", "0–1"),
            points=False,
            what="Distribution of the lengths of the sampled environment programs",
        )
    ]


SKIP = frozenset(
    {"aiq_by_agent", "generality_psychometric", "similarity_flags", "similarity_suites"}
)
"""Chart data drawn elsewhere: the score chart (AIQ per agent), the run notes (the
psychometric summary) and the tables (similarity flags and suite diversities)."""

KNOWN: dict[str, Callable[[str, Any], list[ChartSpec]]] = {
    "aiq_vs_episode_length": _aiq_el,
    "aiq_program_lengths": _aiq_lengths,
    "generality_acc": _acc,
    "generality_aggregated_acc": _aggregated,
    "generality_capability_spread": _cap_spread,
    "generality_evolution": _evolution,
    "similarity_heatmap": _sim_heatmap,
    "similarity_map": _sim_map,
    "similarity_published": _sim_published,
    "similarity_sweep": _sim_sweep,
}
"""Chart names with a dedicated drawing; every other name uses :func:`generic_chart`."""


# --------------------------------------------------------------------------- generic


def _fields(records: Records) -> tuple[list[str], list[str]]:
    first = records[0]
    num = [k for k in first if all(_is_num(r.get(k)) for r in records)]
    txt = [k for k in first if all(isinstance(r.get(k), str) for r in records)]
    return num, txt


def generic_chart(key: str, name: str, data: Any) -> ChartSpec | None:
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


def track_charts(key: str, name: str, data: Any) -> list[ChartSpec]:
    """Return the charts for one ``charts`` row (possibly none); never raise on odd data."""
    if name in SKIP:
        return []
    try:
        special = KNOWN.get(name)
        if special is not None and isinstance(data, Mapping | list):
            made = special(key, data)
            if made:
                return made
        generic = generic_chart(key, name, data)
        return [generic] if generic is not None else []
    except (KeyError, TypeError, ValueError, IndexError, AttributeError):
        return []
