"""Scoring plumbing: trace decoding, bulk store writes and kept AIQ verifications.

Trace decoding: every trace of the committed ``aiq-bf5/random-el1000`` bundle (10,008 runs ×
1,000 actions; ``--quick``: 2,000 runs) decoded by the array decoder
(:func:`pipeline.metrics.aiq.traces.decode_each`, timed) and by the per-character reference
``decode_actions`` (baseline, same traces, equal results asserted first). Target ≥ 20×.

Bulk writes: ``Store.replace_scores`` of 16,000 score rows (``--quick``: 4,000) into a store
file, with the bulk insert (timed) and with the ``executemany`` insert it replaced (baseline,
same rows; the tests prove both fill identical tables). Target ≥ 10×.

Kept verifications: the AIQ track scoring the ``aiq-bf5/q0-el1000`` bundle when its
verification is kept (timed) against replaying its 10,032 runs (baseline). What a release, a
later ``score`` or ``score --force`` pays per unchanged bundle. Target ≥ 3×.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import math
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from bench.harness import quick

REPO = Path(__file__).resolve().parent.parent
AIQ = REPO / "submissions" / "aiq-bf5"
TRACES = 2000 if quick() else None
SCORE_ROWS = 4000 if quick() else 16_000
NOW = dt.datetime(2026, 1, 1)
_state: dict[str, Any] = {}


def _traces() -> list[str]:
    from pipeline.bundles import read_folder
    from pipeline.inputs import FileSet
    from pipeline.tracks.aiq.bundle import read_traces

    folder = AIQ / "random-el1000"
    read = read_folder(folder, "random-el1000")
    _, traces, _ = read_traces(FileSet("random-el1000", read.files))
    texts = [traces[k] for k in sorted(traces)]
    return texts[:TRACES] if TRACES else texts


def _decoding() -> list[dict[str, Any]]:
    from pipeline.metrics.aiq.runs import decode_actions
    from pipeline.metrics.aiq.traces import decode_each

    texts = _traces()

    def new() -> int:
        return sum(d.actions.size for d in decode_each(texts, 5) if d.actions is not None)

    def old() -> int:
        return sum(len(decode_actions(t, 5)) for t in texts)

    sample = texts[:200]
    assert [d.actions.tolist() for d in decode_each(sample, 5) if d.actions is not None] == [
        decode_actions(t, 5) for t in sample
    ]
    actions = sum(map(len, texts))
    return [{
        "name": f"trace decoding: {len(texts):,} AIQ traces ({actions / 1e6:.1f} M actions)",
        "run": new, "baseline": old, "repeat": 5, "warmup": 1,
        "target": ">= 20x the per-character decoder",
        "check": lambda med, base: base is not None and base / med >= 20,
        "note": "array decoder (lookup table over the joined code points, chunks of 4 M "
                "characters) vs runs.decode_actions per trace, the same traces of "
                "aiq-bf5/random-el1000",
    }]  # fmt: skip


@contextlib.contextmanager
def _row_by_row() -> Iterator[None]:
    import pipeline.store as store_module
    from pipeline.store.bulk import insert_rows, insert_rows_each

    store_module.insert_rows = insert_rows_each  # type: ignore[assignment]
    try:
        yield
    finally:
        store_module.insert_rows = insert_rows


def _score_rows() -> list[dict[str, Any]]:
    values = [41.5, math.nan, math.inf, -3.25, 0.0]
    return [{"bundle": f"bundle-{i % 1000:04d}", "content_hash": f"{i % 1000:064x}",
             "agent": f"agent {i}", "metric": ("aiq", "gamma", "spread", "other")[i % 4],
             "value": values[i % 5], "ci_low": values[(i + 1) % 5] if i % 3 else None,
             "ci_high": None, "rank": i % 50 or None, "verified": bool(i % 2),
             "details": {"i": i, "why": "synthetic"} if i % 7 else None}
            for i in range(SCORE_ROWS)]  # fmt: skip


def _writes() -> list[dict[str, Any]]:
    from pipeline.store import open_store

    root = Path(tempfile.mkdtemp(prefix="gmeter-bench-store-"))
    _state["root"] = root
    rows = _score_rows()

    def write(db: Path) -> None:
        with open_store(db) as s:
            s.replace_scores(release="current", benchmark="b", benchmark_hash="h", track="aiq",
                             rows=rows, charts={}, code_version="bench", seed=1, options={},
                             notes=[], now=NOW)  # fmt: skip

    def bulk() -> None:
        write(root / "bulk.duckdb")

    def each() -> None:
        with _row_by_row():
            write(root / "each.duckdb")

    return [{
        "name": f"store: replace_scores of {SCORE_ROWS:,} rows",
        "run": bulk, "baseline": each, "repeat": 3, "warmup": 1,
        "target": ">= 10x executemany",
        "check": lambda med, base: base is not None and base / med >= 10,
        "note": "one Store.replace_scores on a store file (delete, insert, commit): NumPy "
                "columns scanned by DuckDB in one statement vs executemany, same rows",
    }]  # fmt: skip


def _verifications() -> list[dict[str, Any]]:
    import tomllib

    from pipeline.bundles import content_hash, read_folder
    from pipeline.inputs import BenchmarkInput, BundleInput, FileSet
    from pipeline.tracks.aiq.settings import AIQBenchmarkSettings
    from pipeline.tracks.aiq.track import TRACK
    from pipeline.tracks.base import ScoreContext

    manifest = tomllib.loads((AIQ / "benchmark.toml").read_text(encoding="utf-8"))
    settings = AIQBenchmarkSettings.model_validate(manifest["aiq"]).model_dump()
    bench_files = {"benchmark.toml": (AIQ / "benchmark.toml").read_bytes()}
    for p in (AIQ / "reference").iterdir():
        bench_files[f"reference/{p.name}"] = p.read_bytes()
    bench = BenchmarkInput("aiq-bf5", "aiq", "1.0.0", manifest, settings,
                           FileSet("submissions/aiq-bf5", bench_files), "bench")  # fmt: skip
    read = read_folder(AIQ / "q0-el1000", "q0-el1000")
    bundle = BundleInput("q0-el1000", "aiq-bf5", {}, {},
                         FileSet("submissions/aiq-bf5/q0-el1000", read.files),
                         content_hash(read.files))  # fmt: skip

    class Memo:
        def __init__(self) -> None:
            self.kept: dict[Any, Any] = {}

        def recall(self, verifier: str, keys: Any) -> dict[Any, Any]:
            return {k: self.kept[k] for k in keys if k in self.kept}

        def keep(self, verifier: str, results: Any) -> None:
            self.kept.update({k: v[1] for k, v in results.items()})

    memo = Memo()
    first = TRACK.score(bench, [bundle], ScoreContext(verifications=memo))
    assert memo.kept and first.rows[0].verified

    def kept() -> Any:
        out = TRACK.score(bench, [bundle], ScoreContext(verifications=memo))
        assert out.rows == first.rows
        return out

    def replayed() -> Any:
        return TRACK.score(bench, [bundle], ScoreContext())

    return [{
        "name": "aiq: score a bundle whose verification is kept (10,032 runs)",
        "run": kept, "baseline": replayed, "repeat": 3, "warmup": 0,
        "target": ">= 3x replaying every run",
        "check": lambda med, base: base is not None and base / med >= 3,
        "note": "TRACK.score of aiq-bf5/q0-el1000 with its verification recalled (as every "
                "release and every later score does) vs verified afresh (decode + replay)",
    }]  # fmt: skip


def benchmarks() -> list[dict[str, Any]]:
    return [*_decoding(), *_writes(), *_verifications()]


def teardown() -> None:
    root = _state.get("root")
    if root is not None:
        shutil.rmtree(root, ignore_errors=True)
