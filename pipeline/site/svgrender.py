"""Charts drawn at build time: every Vega-Lite spec becomes a wide and a narrow SVG.

vl-convert (a dependency already: it ships the Vega bundle) renders Vega-Lite to SVG offline,
so a visitor sees every chart at first paint without JavaScript; ``vega.js`` is loaded only
when they ask for interaction. Two widths are drawn — :data:`WIDE` for desktops and
:data:`NARROW` for phones (``<picture>`` picks one, so a visitor downloads one of them).

Rendering is the slow part of a build, so results are memoised in-process and cached on disk
(keyed by the spec, the width and the vl-convert version) next to the Vega bundle: a rebuild
with unchanged charts renders nothing. The cache is only an optimisation; any failure to use
it is ignored. A build that meets many charts missing from the cache (a cold one) draws them
in parallel on the local executor (:func:`batched`, :func:`draw_all`).
"""

from __future__ import annotations

import copy
import hashlib
import json
import re
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any

from pipeline.errors import BuildError
from pipeline.site.assets import cache_dir, cache_put

WIDE = 560
NARROW = 320
"""Drawing widths in CSS pixels (a phone of 390 px shows the narrow one at about its size)."""

_SIZE = re.compile(r'<svg[^>]*\swidth="([\d.]+)"[^>]*\sheight="([\d.]+)"')
_BAD_TEXT = re.compile(r">\s*(undefined|NaN|null)\s*<")


@dataclass(frozen=True)
class Svg:
    """A rendered chart: the SVG text and its size in CSS pixels."""

    text: str
    width: int
    height: int


def sized(spec: dict[str, Any], width: int) -> dict[str, Any]:
    """Return ``spec`` drawn ``width`` pixels wide (charts declare ``width: container``)."""
    out = copy.copy(spec)
    if out.get("width") == "container" or "width" not in out:
        out["width"] = width
    if width < WIDE:
        out = _steeper(out)
        narrow = (out.get("usermeta") or {}).get("narrow_labels")
        if narrow:  # point labels placed for a phone's plot (see charts.place_labels)
            side, dx = narrow
            out = _reads(out, {"datum.side": f"datum.{side}", "datum.dx": f"datum.{dx}"})
        cfg = dict(out.get("config") or {})
        legend = dict(cfg.get("legend") or {})
        legend.update({"orient": "bottom", "columns": 2, "symbolLimit": 12})
        cfg["legend"] = legend
        out["config"] = cfg
    out.pop("autosize", None)
    if (out.get("usermeta") or {}).get("aspect") == "equal":
        # a map whose distances must read true: a square plot, its axes outside it
        side = int(out.get("height") or width)
        side = min(side, width - 90)
        out["width"] = out["height"] = side
        out["autosize"] = {"type": "pad"}
        return out
    out["autosize"] = {"type": "fit-x", "contains": "padding"}
    return out


def _reads(node: Any, fields: dict[str, str]) -> Any:
    """``node`` with every expression reading ``fields``' keys reading their values."""
    if isinstance(node, dict):
        return {k: _reads(v, fields) for k, v in node.items()}
    if isinstance(node, list):
        return [_reads(v, fields) for v in node]
    if isinstance(node, str) and "datum." in node:
        return re.sub(r"datum\.\w+", lambda m: fields.get(m.group(0), m.group(0)), node)
    return node


def _steeper(node: Any) -> Any:
    """Slanted axis labels stand upright on a phone (a heatmap's columns are narrow)."""
    if isinstance(node, dict):
        return {
            k: (-90 if k == "labelAngle" and isinstance(v, int | float) and v < 0 else _steeper(v))
            for k, v in node.items()
        }
    if isinstance(node, list):
        return [_steeper(v) for v in node]
    return node


def _version() -> str:
    import vl_convert

    return str(getattr(vl_convert, "__version__", "unknown"))


def _key(text: str, width: int) -> str:
    """The cache key of a sized spec's canonical JSON ``text`` drawn at ``width``."""
    return hashlib.sha256(f"{_version()}|{width}|{text}".encode()).hexdigest()


_GRADIENT = re.compile(r"gradient_(\d+)")


def canonical_ids(svg: str) -> str:
    """Number the SVG's gradients 1, 2, … in order of appearance.

    Vega numbers them with a counter of the whole drawing process, so the same chart drawn
    after other charts (or in another worker) would get other ids; renumbered, a chart's SVG
    depends on its spec alone. Each SVG is its own document (``<img>``), so ids never meet.
    """
    if "gradient_" not in svg:
        return svg
    order: dict[str, str] = {}
    for m in _GRADIENT.finditer(svg):
        order.setdefault(m.group(1), str(len(order) + 1))
    return _GRADIENT.sub(lambda m: "gradient_" + order[m.group(1)], svg)


_GEOMETRY = re.compile(r'(\s(?:transform|d|x|y|x1|x2|y1|y2|dx|dy|width|height|points)=")([^"]*)"')
_LONG = re.compile(r"(\d\.\d\d)\d+|(\d\d\.\d)\d+")
_INERT = re.compile(
    r' (?:aria-(?:roledescription|hidden|label)|role|pointer-events)="[^"]*"'
    r'| class="mark-[^"]*"| opacity="1"'
)
_FONT = re.compile(r' font-family="[^"]*"')


def compact(svg: str) -> str:
    """The same drawing in a fifth fewer bytes (a release copy is mostly charts).

    Vega writes coordinates to 15 digits and repeats the font, ARIA roles and class names on
    every mark. The SVG is shown as an image (``<img>``/``<picture>``), whose inside has no
    accessibility tree or pointer events, and its text alternative and data table are in the
    page, so those attributes go; coordinates keep a hundredth of a pixel (two decimals,
    one from 10 px up), invisible at any zoom a reader uses; the most common font is set once
    on the root (text inherits it). Text content is left as drawn.
    """
    svg = _GEOMETRY.sub(lambda m: m.group(1) + _LONG.sub(r"\1\2", m.group(2)) + '"', svg)
    svg = _INERT.sub("", svg)
    fonts = _FONT.findall(svg)
    if fonts:
        common = max(sorted(set(fonts)), key=fonts.count)
        svg = svg.replace(common, "")
        svg = svg.replace("<svg ", "<svg" + common + " ", 1)
    return svg


def _tidy(svg: str) -> str:
    # A stray "undefined"/"NaN" text is a bug in the chart's data (tests fail on it); a
    # visitor still must never read it, so the drawn text becomes a dash.
    return _BAD_TEXT.sub(">—<", svg)


def _cache_file(key: str) -> Path:
    return cache_dir() / "svg" / f"{key[:40]}.svg"


@lru_cache(maxsize=4096)
def _render_cached(key: str, text: str, width: int) -> str:
    path = _cache_file(key)
    try:
        return path.read_text(encoding="utf-8")
    except OSError:
        pass
    import vl_convert

    try:
        svg = vl_convert.vegalite_to_svg(json.loads(text))
    except Exception as exc:  # vl-convert raises plain ValueError/RuntimeError
        raise BuildError(
            f"a chart could not be drawn: {exc}", hint="report this chart's spec (its .vl.json)"
        ) from exc
    svg = _tidy(svg)
    cache_put(path, svg)
    return svg


def _final_file(key: str) -> Path:
    """Where the drawing of ``key`` is kept as pages show it (compacted, ids canonical).

    Kept per code (:func:`~pipeline.site.assets.code_cache_dir`): a change to
    :func:`compact` or :func:`canonical_ids` makes them again from the drawings, which stay.
    """
    from pipeline.site.assets import code_cache_dir

    return code_cache_dir("svg-final") / key[:2] / f"{key[:40]}.svg"


def _final_cached(key: str) -> str | None:
    """The drawing of ``key`` as pages show it, if kept (0.4 s of compacting a build saves)."""
    try:
        return _final_file(key).read_text(encoding="utf-8")
    except OSError:
        return None


DEFER_AFTER = 12
"""Charts missing from the cache that a batch draws one by one before it only lists the rest."""


@dataclass
class Batch:
    """Charts met while assembling the pages (see :func:`batched`)."""

    misses: int = 0
    deferred: dict[str, str] = field(default_factory=dict)  # key → sized spec (JSON)


_BATCHES: list[Batch] = []


DRAW_SLICE = 2000
"""Deferred charts drawn per call of the pool (their SVGs are stored before the next slice)."""


@contextmanager
def batched() -> Iterator[Batch]:
    """Collect the charts missing from the cache while pages are assembled.

    Beyond :data:`DEFER_AFTER` misses, charts are listed in the batch (and drawn blank)
    instead of drawn; :func:`draw_all` then draws them on all cores and the caller assembles
    the pages again. A build with few new charts (one new bundle) draws them in place and
    never assembles twice.
    """
    batch = Batch()
    _BATCHES.append(batch)
    try:
        yield batch
    finally:
        _BATCHES.pop()


def _draw(text: str) -> str | None:
    """Draw one sized spec (JSON) in a worker; ``None`` if Vega cannot (reported later)."""
    import vl_convert

    try:
        return _tidy(vl_convert.vegalite_to_svg(json.loads(text)))
    except Exception:  # drawn again in the build process, whose BuildError names it
        return None


def draw_all(batch: Batch, workers: int | None = None) -> int:
    """Draw every deferred chart of ``batch`` in parallel into the cache; return how many."""
    from pipeline.executor import get_executor

    keys = sorted(batch.deferred)
    if not keys:
        return 0
    try:
        with get_executor("local", workers) as ex:
            # in slices, each stored as it comes: a large site's drawings (hundreds of MB)
            # are never all in memory at once
            for i in range(0, len(keys), DRAW_SLICE):
                part = keys[i : i + DRAW_SLICE]
                drawn = ex.map(_draw, [batch.deferred[k] for k in part], label="drawing charts")
                for key, svg in zip(part, drawn, strict=True):
                    if svg is not None:
                        cache_put(_cache_file(key), svg)
    except Exception:  # no pool here (a frozen script, no semaphores): they are drawn in place
        batch.deferred.clear()
        return 0
    batch.deferred.clear()
    return len(keys)


def draw_page(specs: list[dict[str, Any]], widths: tuple[int, ...]) -> int:
    """Draw one page's missing charts at once, on all cores, into the cache; return how many.

    A page's charts (several, each wide and narrow) were drawn one after another while the
    page was made: with a few new ones (one new bundle) that was most of a build's drawing
    time. Vega's drawing runs outside Python's lock, so threads draw them side by side; then
    :func:`render` finds them drawn. Charts the batch would defer (more than
    :data:`DEFER_AFTER` in the build) are left to it; one that cannot be drawn is left to
    :func:`render`, whose error names it.
    """
    import os
    from concurrent.futures import ThreadPoolExecutor

    todo: dict[str, str] = {}
    for spec in specs:
        for width in widths:
            text = json.dumps(sized(spec, width), sort_keys=True, separators=(",", ":"),
                              default=str)  # fmt: skip
            key = _key(text, width)
            if not (_final_file(key).is_file() or _cache_file(key).is_file()):
                todo[key] = text
    batch = _BATCHES[-1] if _BATCHES else None
    workers = min(len(todo), os.cpu_count() or 1)
    if workers < 2 or (batch is not None and batch.misses + len(todo) > DEFER_AFTER):
        return 0
    if batch is not None:
        batch.misses += len(todo)  # counted as render would have counted them
    with ThreadPoolExecutor(workers) as pool:
        for key, svg in zip(todo, pool.map(_draw, todo.values()), strict=True):
            if svg is not None:
                cache_put(_cache_file(key), svg)
    return len(todo)


def render(spec: dict[str, Any], width: int) -> Svg:
    """Draw ``spec`` at ``width`` as SVG (memoised and cached on disk)."""
    s = sized(spec, width)
    text = json.dumps(s, sort_keys=True, separators=(",", ":"), default=str)
    key = _key(text, width)
    svg = _final_cached(key)
    if svg is None:
        batch = _BATCHES[-1] if _BATCHES else None
        if batch is not None and not _cache_file(key).is_file():
            batch.misses += 1
            if batch.misses > DEFER_AFTER:
                batch.deferred[key] = text
                return Svg("", width, 300)
        svg = compact(canonical_ids(_render_cached(key, text, width)))
        cache_put(_final_file(key), svg)
    m = _SIZE.search(svg)
    w, h = (round(float(m.group(1))), round(float(m.group(2)))) if m else (width, 300)
    return Svg(svg, w, h)


def bad_text(svg: str) -> list[str]:
    """Return the drawn texts that read ``undefined``, ``NaN`` or ``null`` (should be none)."""
    return [m.group(1) for m in _BAD_TEXT.finditer(svg)]
