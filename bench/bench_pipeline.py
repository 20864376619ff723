"""The whole pipeline on this repository: a fresh run, an unchanged one and one new bundle.

Side by side in one run, each step a ``gmeter`` command as ``make site`` runs it (validate,
ingest, score, build; a fresh interpreter each, so start-up counts):

1. **full**: a fresh store and an empty chart cache in a scratch folder (what a fresh clone
   or a CI runner pays; its ``build`` step is the cold-build figure);
2. **unchanged**: the same four commands again, nothing changed (target ≤ 5 % of full);
3. **one new bundle**: a generality bundle added (``iris-kdn/humans`` copied as a second
   group: its participants and system renamed), then the four commands (target ≤ 15 % of
   full).

After the third run the incremental site is compared with a full build (``--full``) from the
same store: every file must be byte-identical (an error otherwise). ``--quick`` uses three
benchmarks only (one per scored track plus the generality one that gains the bundle).
"""

from __future__ import annotations

import filecmp
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
NEW_IN = "iris-kdn"  # the generality benchmark that gains a bundle
QUICK_SET = ("iris-kdn", "maya-fbp-16", "aiq-families")
STEPS = ("validate", "ingest", "score", "build")
_state: dict[str, Any] = {"steps": {}}


def _setup() -> dict[str, Any]:
    if "root" not in _state:
        root = Path(tempfile.mkdtemp(prefix="gmeter-bench-pipeline-"))
        subs = root / "submissions"
        if quick():
            subs.mkdir()
            for name in QUICK_SET:
                shutil.copytree(REPO / "submissions" / name, subs / name)
        else:
            shutil.copytree(REPO / "submissions", subs)
        _state.update(root=root, subs=subs, db=root / ".gmeter" / "gmeter.duckdb",
                      out=root / "public", cache=root / ".gmeter" / "cache")  # fmt: skip
    return _state


def _gmeter(*args: str) -> None:
    s = _setup()
    env = {**os.environ, "GMETER_CACHE_DIR": str(s["cache"]), "PYTHONDONTWRITEBYTECODE": "1"}
    cmd = [sys.executable, "-m", "cli", "--db", str(s["db"]), "-q", *args]
    done = subprocess.run(cmd, cwd=REPO, env=env, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise RuntimeError(f"{' '.join(args)} failed: {(done.stderr or done.stdout)[-800:]}")


def _pipeline(label: str) -> None:
    s = _setup()
    times = {}
    for step, args in zip(STEPS, (("validate", str(s["subs"])), ("ingest", str(s["subs"])),
                                  ("score",), ("build", "--out", str(s["out"]))), strict=True):
        t = time.perf_counter()
        _gmeter(*args)
        times[step] = time.perf_counter() - t
    _state["steps"][label] = times


RELEASE_BUDGET = 5 * 1024 * 1024
"""Bytes one light release copy may weigh at today's size (issue 23, item 9: 5 MB, read as
5 MiB; the table prints decimal MB, so a copy of 5.01 MB is within it)."""


def _full() -> None:
    _pipeline("full")
    _state["weights"] = _weights(_state["out"])


def _bytes(folder: Path) -> int:
    return sum(p.stat().st_size for p in folder.rglob("*") if p.is_file())


def _weights(site: Path) -> dict[str, int]:
    """Bytes of the whole site, of each release copy and of the published DuckDB file."""
    out = {"site": _bytes(site), "data/gmeter.duckdb": (site / "data/gmeter.duckdb").stat().st_size}
    releases = site / "releases"
    for rel in sorted(p for p in releases.iterdir() if p.is_dir()) if releases.is_dir() else []:
        out[f"releases/{rel.name}"] = _bytes(rel)
    return out


def _unchanged() -> None:
    _pipeline("unchanged")


def _one_new_bundle() -> None:
    s = _setup()
    bench = s["subs"] / NEW_IN
    source = bench / "humans"
    target = bench / "humans-again"
    shutil.copytree(source, target)
    # agents are unique per benchmark: the new bundle's participants get their own names
    responses = target / "responses.csv"
    responses.write_text(responses.read_text(encoding="utf-8").replace("\nhuman", "\nagain-human"),
                         encoding="utf-8")  # fmt: skip
    toml = target / "submission.toml"
    toml.write_text(toml.read_text(encoding="utf-8").replace(
        'name = "Human participants"', 'name = "Human participants, second group"'),
        encoding="utf-8")  # fmt: skip
    _pipeline("one new bundle")
    full = s["root"] / "public-full"
    _gmeter("build", "--out", str(full), "--full")
    diff = _differences(s["out"], full)
    _state["identical"] = not diff
    if diff:
        raise RuntimeError(f"the incremental site differs from a full build: {diff[:5]}")


def _differences(a: Path, b: Path) -> list[str]:
    files_a = {p.relative_to(a).as_posix() for p in a.rglob("*") if p.is_file()}
    files_b = {p.relative_to(b).as_posix() for p in b.rglob("*") if p.is_file()}
    out = sorted(files_a ^ files_b)
    out += [r for r in sorted(files_a & files_b) if not filecmp.cmp(a / r, b / r, shallow=False)]
    return out


def benchmarks() -> list[dict[str, Any]]:
    _setup()
    return [
        {
            "name": "pipeline: full run, fresh store and cold chart cache",
            "run": _full, "baseline": None, "repeat": 1, "warmup": 0,
            "target": "reported (its build step is the cold build)",
            "check": lambda med, base: None,
            "note": "gmeter validate, ingest, score, build on a copy of submissions/, each a "
                    "fresh process, empty .gmeter/ (store and chart cache)",
        },
        {
            "name": "pipeline: unchanged repository, again",
            "run": _unchanged, "baseline": _full, "repeat": 1, "warmup": 0,
            "target": "<= 5% of the full run",
            "check": lambda med, base: base is not None and med <= 0.05 * base,
            "note": "the same four commands with nothing changed (ratio = full / this)",
        },
        {
            "name": "pipeline: one new generality bundle",
            "run": _one_new_bundle, "baseline": _full, "repeat": 1, "warmup": 0,
            "target": "<= 15% of the full run; site = a full build",
            "check": lambda med, base: base is not None and med <= 0.15 * base
            and bool(_state.get("identical")),
            "note": f"a bundle added to {NEW_IN}, then the four commands; the incremental "
                    "site is then compared byte for byte with gmeter build --full",
        },
    ]  # fmt: skip


def report(results: list[dict[str, Any]]) -> str:
    """Step times of the three runs (seconds), from this run."""
    runs = _state["steps"]
    if not runs:
        return ""
    lines = ["### Pipeline steps (seconds, this run)", "",
             "| run | " + " | ".join(STEPS) + " | total |",
             "|---|" + "---:|" * (len(STEPS) + 1)]  # fmt: skip
    for label, times in runs.items():
        cells = [f"{times.get(s, float('nan')):.1f}" for s in STEPS]
        lines.append(f"| {label} | " + " | ".join(cells) + f" | {sum(times.values()):.1f} |")
    weights = _state.get("weights", {})
    if weights:
        lines += ["", "### Site weight after the full run", "", "| part | MB |", "|---|---:|"]
        lines += [f"| {k} | {v / 1e6:.2f} |" for k, v in weights.items()]
        heavy = [k for k, v in weights.items() if k.startswith("releases/") and v > RELEASE_BUDGET]
        lines += ["", f"Release copies within {RELEASE_BUDGET / 2**20:g} MiB each: "
                  f"{'no (' + ', '.join(heavy) + ')' if heavy else 'yes'}."]  # fmt: skip
    lines += ["", "The full run's build step is the cold build (empty chart cache, charts drawn "
              "on all cores). The one-new-bundle site was byte-identical to a full build: "
              f"{'yes' if _state.get('identical') else 'no'}."]  # fmt: skip
    return "\n".join(lines)


def teardown() -> None:
    root = _state.get("root")
    if root is not None:
        shutil.rmtree(root, ignore_errors=True)
