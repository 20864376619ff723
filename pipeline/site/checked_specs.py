"""Vega-Lite specs checked once: the schema check of a chart template is kept by its hash.

Altair checks every spec it writes against the Vega-Lite JSON schema (``to_dict()``); on a
build that check is most of the cost of the chart templates (about 60 ms each, some seventy
per fresh process), although the templates are the same from one build to the next. The
check's verdict depends only on the spec and on Altair's version (which carries the schema),
so a spec that passed once passes again: its hash is kept in the chart cache
(:func:`pipeline.site.assets.cache_dir`), and a spec found there is written without checking
again. The spec written is the same either way (the check only raises).
"""

from __future__ import annotations

import hashlib
import json
from importlib.metadata import PackageNotFoundError, version
from typing import Any

from pipeline.site.assets import cache_dir, cache_put

FOLDER = "checked-specs"


def _altair() -> str:
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
