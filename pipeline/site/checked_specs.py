"""Vega-Lite chart templates made and checked once, kept in the chart cache.

Templates (:func:`kept_template`): a chart template is a pure function of its arguments (axis
titles, flags) and of the code and Altair that make it; building it through Altair's objects
costs 10-30 ms, and an incremental build that redraws one board would otherwise import Altair
and build every template of every board again (about a second). The template's JSON is kept
in the chart cache under the hash of its function, arguments, Altair's version and gmeter's
code (:func:`pipeline.site.incremental.code_digest`), and read back as the same dict.

Checks (:func:`checked_dict`): the schema check of a chart template is kept by its hash.

Altair checks every spec it writes against the Vega-Lite JSON schema (``to_dict()``); on a
build that check is most of the cost of the chart templates (about 60 ms each, some seventy
per fresh process), although the templates are the same from one build to the next. The
check's verdict depends only on the spec and on Altair's version (which carries the schema),
so a spec that passed once passes again: its hash is kept in the chart cache
(:func:`pipeline.site.assets.cache_dir`), and a spec found there is written without checking
again. The spec written is the same either way (the check only raises).
"""

from __future__ import annotations

import functools
import hashlib
import json
from collections.abc import Callable
from importlib.metadata import PackageNotFoundError, version
from typing import Any

from pipeline.site.assets import cache_dir, cache_put, code_cache_dir

FOLDER = "checked-specs"
TEMPLATES = "chart-templates"


@functools.lru_cache(maxsize=1)
def _altair() -> str:
    """Altair's installed version (read once a process: reading package metadata takes 1 ms)."""
    try:
        return version("altair")
    except PackageNotFoundError:  # pragma: no cover - a dependency of gmeter
        return "-"


def spec_key(spec: dict[str, Any]) -> str:
    """SHA-256 of the spec (canonical JSON) and of the Altair version that checks it."""
    text = json.dumps(spec, sort_keys=True, separators=(",", ":"), default=str)
    return hashlib.sha256(f"altair {_altair()}\n{text}".encode()).hexdigest()


def checked_dict(chart: Any) -> dict[str, Any]:
    """``chart.to_dict()``, with the schema check skipped when this spec passed it before.

    ``chart`` is an Altair chart. A spec that fails the check raises as ``to_dict()`` does,
    and is not recorded.
    """
    spec: dict[str, Any] = chart.to_dict(validate=False)
    key = spec_key(spec)
    mark = cache_dir() / FOLDER / f"{key[:2]}" / f"{key}.ok"
    if mark.is_file():
        return spec
    checked: dict[str, Any] = chart.to_dict()  # raises on a spec the schema refuses
    cache_put(mark, "")
    return checked


def kept_template(make: Callable[..., dict[str, Any]]) -> Callable[..., dict[str, Any]]:
    """``make`` (a template function of hashable, JSON-writable arguments) kept on disk.

    The result is read from the chart cache when this function, these arguments, this
    Altair and this code made it before, else made and stored; within a process the same dict
    is returned for the same arguments (callers copy before changing it). Any cache failure
    makes the template again: the cache only saves time.
    """

    @functools.lru_cache(maxsize=64)
    def kept(*args: Any) -> dict[str, Any]:
        from pipeline.site.incremental import code_digest

        what = json.dumps([make.__module__, make.__qualname__, list(args)], default=repr)
        key = hashlib.sha256(f"{what}\naltair {_altair()}\n{code_digest()}".encode()).hexdigest()
        path = code_cache_dir(TEMPLATES) / key[:2] / f"{key}.json"
        try:
            found = json.loads(path.read_text(encoding="utf-8"))
            if isinstance(found, dict):
                return found
        except (OSError, ValueError):
            pass
        spec = make(*args)
        try:
            text = json.dumps(spec, separators=(",", ":"), allow_nan=False)
        except (TypeError, ValueError):  # not plain JSON: made again next time
            return spec
        cache_put(path, text)
        return spec

    return functools.wraps(make)(kept)
