"""Scale: a synthetic store of 10,000 bundles × 20 releases, built cold, then again unchanged.

The store comes from the site tests' generator (``tests/site_fixtures.py``): four small
benchmarks of every track plus one g-index benchmark of 10,000 bundles (``--quick``: 1,000),
20 releases and the working state, the bundles arriving over the versions. Its generation is
setup, not timed.

Each build runs in a fresh process (``gmeter build``) so that its peak resident memory is its
own (``ru_maxrss`` of the child, the largest of it and the chart drawers it started): the first
with an empty chart cache (the cold build, charts drawn on all cores), the second unchanged.
Reported: time, pages, files, bytes on disk, charts drawn and peak memory. Targets: the site
under 1 GB (GitHub Pages' limit), peak memory under 2 GB (a CI runner has 7 GB, but builds
stream their pages), the unchanged rebuild under 5 % of the cold one.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from bench.harness import quick

REPO = Path(__file__).resolve().parent.parent
BUNDLES = 1000 if quick() else 10_000
RELEASES = 20
_state: dict[str, Any] = {"builds": {}}


def _setup() -> dict[str, Any]:
    if "db" not in _state:
        sys.path.insert(0, str(REPO / "tests"))
        from site_fixtures import make_store

        root = Path(tempfile.mkdtemp(prefix="gmeter-bench-scale-"))
        t = time.perf_counter()
        db = make_store(root / ".gmeter" / "gmeter.duckdb", big=BUNDLES, releases=RELEASES)
        _state.update(root=root, db=db, out=root / "public", cache=root / ".gmeter" / "cache",
                      store_seconds=time.perf_counter() - t)  # fmt: skip
    return _state


# Runs a command and prints its peak resident memory (its own and its descendants'): each
# build gets a fresh measuring process, so a smaller later build is measured too.
_MEASURE = ("import resource, subprocess, sys; r = subprocess.run(sys.argv[1:]); "
            "print('maxrss', resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss, "
            "file=sys.stderr); sys.exit(r.returncode)")  # fmt: skip


def _build(label: str) -> None:
    s = _setup()
    env = {**os.environ, "GMETER_CACHE_DIR": str(s["cache"]), "PYTHONDONTWRITEBYTECODE": "1"}
    cmd = [sys.executable, "-m", "cli", "--db", str(s["db"]), "-q", "build", "--out",
           str(s["out"]), "--format", "json"]  # fmt: skip
    t = time.perf_counter()
    done = subprocess.run([sys.executable, "-c", _MEASURE, *cmd], cwd=REPO, env=env,
                          capture_output=True, text=True, check=False)  # fmt: skip
    seconds = time.perf_counter() - t
    if done.returncode != 0:
        raise RuntimeError(f"build failed: {(done.stderr or done.stdout)[-800:]}")
    peak_kb = int(done.stderr.strip().splitlines()[-1].split()[1])
    files, size = 0, 0
    for dirpath, _dirs, names in os.walk(s["out"]):
        for name in names:
            files += 1
            size += os.lstat(os.path.join(dirpath, name)).st_size
    svg = s["cache"] / "svg"
    charts = sum(1 for p in svg.iterdir() if p.suffix == ".svg") if svg.is_dir() else 0
    pages = json.loads(done.stdout.strip().splitlines()[-1])["pages"]
    _state["builds"][label] = {"seconds": seconds, "files": files, "bytes": size,
                               "pages": pages, "charts": charts, "peak_mb": peak_kb / 1024}


def _cold() -> None:
    _build("cold")


def _again() -> None:
    _build("unchanged")


def _ok_cold(med: float, base: float | None) -> bool:
    b = _state["builds"].get("cold", {})
    peak = b.get("peak_mb")
    return b.get("bytes", 1 << 40) < 1e9 and peak is not None and peak < 2048


def benchmarks() -> list[dict[str, Any]]:
    _setup()
    return [
        {
            "name": f"scale: cold build, {BUNDLES:,} bundles × {RELEASES} releases",
            "run": _cold, "baseline": None, "repeat": 1, "warmup": 0,
            "target": "site < 1 GB, peak memory < 2 GB (time reported)",
            "check": _ok_cold,
            "note": "gmeter build in a fresh process from a synthetic store, empty chart "
                    "cache; bytes and peak memory in the section below",
        },
        {
            "name": f"scale: unchanged rebuild, {BUNDLES:,} bundles × {RELEASES} releases",
            "run": _again, "baseline": _cold, "repeat": 1, "warmup": 0,
            "target": "<= 5% of the cold build",
            "check": lambda med, base: base is not None and med <= 0.05 * base,
            "note": "the same build again on the unchanged store (ratio = cold / this)",
        },
    ]  # fmt: skip


def report(results: list[dict[str, Any]]) -> str:
    """Size, files and memory of the scale builds (this run)."""
    builds = _state["builds"]
    if not builds:
        return ""
    lines = [f"### Scale: {BUNDLES:,} bundles × {RELEASES} releases (this run)", "",
             f"Synthetic store generated in {_state.get('store_seconds', 0):.0f} s (setup).", "",
             "| build | time | pages | files | site size | charts in the cache | peak memory |",
             "|---|---:|---:|---:|---:|---:|---:|"]  # fmt: skip
    for label, b in builds.items():
        peak = f"{b['peak_mb']:.0f} MB"
        lines.append(f"| {label} | {b['seconds']:.1f} s | {b['pages']:,} | {b['files']:,} | "
                     f"{b['bytes'] / 1e6:.0f} MB | {b['charts']:,} | {peak} |")  # fmt: skip
    lines += ["", "Site size is the bytes of its files (du counts blocks); GitHub Pages allows "
              "1 GB. The charts are SVG drawings (wide and narrow) in the chart cache that the "
              "workflows keep between runs: only a cold cache draws them all."]  # fmt: skip
    return "\n".join(lines)


def teardown() -> None:
    root = _state.get("root")
    if root is not None:
        shutil.rmtree(root, ignore_errors=True)
