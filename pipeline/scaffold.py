"""``gmeter new``: write a bundle (and, if needed, its benchmark) with commented manifests.

The manifests carry ``TODO`` markers that fail validation until they are filled in, so a
scaffold can never be submitted by accident; once filled, it validates.
"""

from __future__ import annotations

import datetime as dt
import re
from pathlib import Path

from pipeline.errors import UsageError
from pipeline.manifest import ID_PATTERN
from pipeline.tracks import get_track, track_names

SUBMISSION_TEMPLATE = """\
# submission.toml — one bundle of results for the benchmark "{benchmark}".
# Every field is described by `gmeter schema submission`; check with `gmeter validate {where}`.

submitted = {today}              # the date the results were produced (YYYY-MM-DD, no quotes)
contact = "TODO: your name <you@example.org>"
licence = "CC-BY-4.0"            # licence of the files in this bundle
description = \"\"\"
TODO: what was run, with which settings, and how the files were produced.
\"\"\"

[system]
name = "TODO: system name"       # shown on the leaderboard
version = ""                     # optional
organisation = ""                # optional
url = ""                         # optional: paper or home page, https://...
"""

BENCHMARK_TEMPLATE = """\
# benchmark.toml — the benchmark "{benchmark}" ({track} track).
# Every field is described by `gmeter schema benchmark`.

id = "{benchmark}"               # must equal the folder name
title = "TODO: title"
track = "{track}"
version = "1.0.0"                # bump when the reference data changes: older entries turn stale
description = \"\"\"
TODO: what this benchmark measures and how.
\"\"\"
licence = "TODO: licence of the benchmark data"
created = {today}

[origin]                         # optional: where the data comes from
paper = ""
url = ""
notes = ""
"""


def scaffold(root: Path, track: str, name: str, *, benchmark: str | None = None,
             today: dt.date | None = None) -> list[Path]:
    """Create ``root/<benchmark>/<bundle>/`` with templates; return the files written.

    ``name`` is ``BENCHMARK/BUNDLE`` or, with ``benchmark``, just ``BUNDLE``. An existing
    bundle folder is never overwritten.

    Raises
    ------
    UsageError
        On an unknown track, a bad id, or an existing bundle.
    """
    if track not in track_names():
        raise UsageError(f"unknown track {track!r}", hint=f"use one of {', '.join(track_names())}")
    if "/" in name:
        benchmark, _, name = name.partition("/")
    if not benchmark:
        raise UsageError("which benchmark?", hint="write BENCHMARK/BUNDLE or pass --benchmark")
    for ident in (benchmark, name):
        if not re.match(ID_PATTERN, ident):
            raise UsageError(f"{ident!r} is not a valid id",
                             hint="lower-case letters, digits, '.', '_' and '-'")
    today = today or dt.date.today()
    spec = get_track(track)
    bench_dir = root / benchmark
    bundle_dir = bench_dir / name
    if bundle_dir.exists():
        raise UsageError(f"{bundle_dir} already exists", hint="choose another bundle name")
    written: list[Path] = []
    if not (bench_dir / "benchmark.toml").exists():
        files = {"benchmark.toml": BENCHMARK_TEMPLATE.format(benchmark=benchmark, track=track,
                                                             today=today.isoformat())}
        extra = spec.benchmark_template() if spec.benchmark_template else {}
        files["benchmark.toml"] += extra.pop("benchmark.toml", f"\n[{track}]\n")
        files.update(extra)
        written += _write(bench_dir, files)
    files = {"submission.toml": SUBMISSION_TEMPLATE.format(
        benchmark=benchmark, today=today.isoformat(), where=bundle_dir)}
    extra = spec.bundle_template() if spec.bundle_template else {}
    files["submission.toml"] += extra.pop("submission.toml", "")
    files.update(extra)
    written += _write(bundle_dir, files)
    return written


def _write(folder: Path, files: dict[str, str]) -> list[Path]:
    out = []
    for rel, text in sorted(files.items()):
        path = folder / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        out.append(path)
    return out
