"""Site benchmarks: a full build of 1,000 bundles × 5 releases, and the leaderboard's weight.

The store is generated once in :func:`benchmarks` (setup, not timed) by the synthetic store
generator of the site tests (``tests/site_fixtures.py``): four small benchmarks of every track
plus one g-index benchmark with 1,000 bundles, five releases and the working state, i.e. about
6,000 system pages, 30 leaderboards and their charts, the data exports and the link check.
"""

from __future__ import annotations

import shutil
import sys
import tempfile
from pathlib import Path
from typing import Any

from bench.harness import quick

REPO = Path(__file__).resolve().parent.parent
BUNDLES = 200 if quick() else 1000
RELEASES = 5
WEIGHT_LIMIT = 300_000  # bytes, the leaderboard page without the shared JavaScript

_state: dict[str, Any] = {}


def _setup() -> tuple[Path, Path]:
    if "db" not in _state:
        sys.path.insert(0, str(REPO / "tests"))
        from site_fixtures import make_store

        root = Path(tempfile.mkdtemp(prefix="gmeter-bench-site-"))
        _state["root"] = root
        _state["db"] = make_store(root / "store.duckdb", big=BUNDLES, releases=RELEASES)
        _state["out"] = root / "public"
    return _state["db"], _state["out"]


def _build() -> Any:
    from pipeline.site.build import build_site

    db, out = _setup()
    report = build_site(db, out)
    _state["pages"] = report.pages
    return report


def _weight() -> int:
    """Bytes of the 1,000-entry leaderboard page (its CSS included, the Vega bundle not)."""
    _db, out = _setup()
    page = out / "benchmarks" / "gindex-large" / "index.html"
    if not page.exists():
        _build()
    size = page.stat().st_size + (out / "assets" / "site.css").stat().st_size
    _state["weight"] = size
    return size


def benchmarks() -> list[dict[str, Any]]:
    _setup()
    return [
        {
            "name": f"site: build {BUNDLES:,} bundles × {RELEASES} releases",
            "run": _build,
            "baseline": None,
            "repeat": 1 if quick() else 3,
            "target": "< 60 s",
            "check": lambda med, base: med < 60.0,
            "note": "gmeter build from a synthetic store: every release rendered as a frozen "
            "permalink plus the latest at the root (≈3,500 pages, most of them system pages), "
            "charts, API, feed, data exports (DuckDB, Parquet, CSV), raw files, SHA-256 "
            "manifest, link check",
        },
        {
            "name": f"site: leaderboard page weight at {BUNDLES:,} entries",
            "run": _weight,
            "baseline": None,
            "repeat": 1,
            "target": f"< {WEIGHT_LIMIT // 1000} KB (page + CSS, shared JavaScript excluded)",
            "check": lambda med, base: _state.get("weight", WEIGHT_LIMIT) < WEIGHT_LIMIT,
            "note": "the time column is the measurement's; the size is in the section below",
        },
    ]


def report(results: list[dict[str, Any]]) -> str:
    """A RESULTS.md section with the page weight and page count, then clean up the store."""
    weight = _state.get("weight")
    pages = _state.get("pages")
    lines = ["### Site", ""]
    if weight is not None:
        lines.append(
            f"- leaderboard with {BUNDLES:,} entries: {weight / 1000:.0f} KB "
            f"(limit {WEIGHT_LIMIT // 1000} KB) without the shared Vega bundle"
        )
    if pages is not None:
        lines.append(f"- pages per build: {pages:,}")
    root = _state.get("root")
    if root is not None:
        shutil.rmtree(root, ignore_errors=True)
    return "\n".join(lines)
