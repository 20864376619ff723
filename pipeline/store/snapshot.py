"""The site's snapshot: every row the static site shows, read from the store in one go.

:func:`read_snapshot` returns plain frozen dataclasses (:mod:`pipeline.site.pages`), so page
building is a pure function of them and is tested without DuckDB. Every statement is sorted:
the same store gives the same snapshot.
"""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from pipeline.site.pages import (
    BenchmarkRow,
    BundleRow,
    ChartRecord,
    FileRow,
    ReleaseRow,
    RunRecord,
    ScoreRecord,
    Snapshot,
)

if TYPE_CHECKING:
    from pipeline.store import Store


def _loads(text: Any) -> Any:
    if text is None:
        return None
    return json.loads(text) if isinstance(text, str) else text


def read_snapshot(
    store: Store, *, site_date: Callable[[list[dt.date]], dt.date], generator: str
) -> Snapshot:
    """Read everything the site shows from an open store, sorted.

    ``site_date`` picks the build date from the dates in the store (the build honours
    ``SOURCE_DATE_EPOCH``); ``generator`` names the program in the pages.
    """
    q = store.query
    _, rows = q(
        "select id, content_hash, track, title, version, description, licence, created, "
        "manifest, source_path, git_commit, current from benchmarks "
        "order by id, ingested_at, content_hash"
    )
    benchmarks = tuple(
        BenchmarkRow(
            r[0],
            r[1],
            r[2],
            r[3],
            r[4] or "",
            r[5] or "",
            r[6] or "",
            r[7],
            _loads(r[8]) or {},
            r[9] or "",
            r[10] or "",
            bool(r[11]),
        )
        for r in rows
    )
    _, frows = q(
        "select content_hash, path, sha256, size from bundle_files order by content_hash, path"
    )
    files: dict[str, list[FileRow]] = {}
    for h, path, sha, size in frows:
        files.setdefault(h, []).append(FileRow(path, sha, int(size)))
    _, rows = q(
        "select benchmark, id, content_hash, system_name, system_version, organisation, "
        "url, submitted, licence, manifest, source_path, git_commit, current, "
        "benchmark_version from bundles "
        "order by benchmark, id, ingested_at, content_hash"
    )
    bundles = []
    for r in rows:
        manifest = _loads(r[9]) or {}
        bundles.append(
            BundleRow(
                r[0],
                r[1],
                r[2],
                r[3],
                r[4] or "",
                r[5] or "",
                r[6] or "",
                r[7],
                r[8] or "",
                str(manifest.get("description", "") or ""),
                r[10] or "",
                r[11] or "",
                bool(r[12]),
                tuple(files.get(r[2], ())),
                r[13] or "",
            )
        )
    _, rows = q("select name, date, notes, code_version from releases order by date, name")
    releases = tuple(ReleaseRow(r[0], r[1], r[2] or "", r[3] or "") for r in rows)
    _, rows = q(
        "select release, benchmark, bundle, content_hash, agent, metric, value, ci_low, "
        "ci_high, rank, verified, code_version, json_extract(details, '$.display'), "
        "json_extract(details, '$.marks') from scores "
        "order by release, benchmark, bundle, agent, metric"
    )
    scores = tuple(
        ScoreRecord(
            r[0],
            r[1],
            r[2],
            r[3],
            r[4],
            r[5],
            r[6],
            r[7],
            r[8],
            None if r[9] is None else int(r[9]),
            bool(r[10]),
            r[11] or "",
            _loads(r[12]),
            tuple(str(m) for m in (_loads(r[13]) or ()) if isinstance(m, str)),
        )
        for r in rows
    )
    _, rows = q(
        "select release, benchmark, name, data from charts order by release, benchmark, name"
    )
    charts = tuple(ChartRecord(r[0], r[1], r[2], _loads(r[3])) for r in rows)
    _, rows = q(
        "select release, benchmark, benchmark_hash, track, code_version, notes "
        "from score_runs order by release, benchmark"
    )
    runs = tuple(
        RunRecord(
            r[0], r[1], r[2] or "", r[3], r[4] or "", tuple(str(n) for n in _loads(r[5]) or ())
        )
        for r in rows
    )
    primary: dict[str, str] = {}
    if "primary_metrics" in store.table_names():
        _, rows = q("select track, metric from primary_metrics order by track")
        primary = {r[0]: r[1] for r in rows}
    dates = (
        [r.date for r in releases]
        + [b.submitted for b in bundles if b.submitted]
        + [b.created for b in benchmarks if b.created]
    )
    return Snapshot(
        benchmarks,
        tuple(bundles),
        releases,
        scores,
        charts,
        runs,
        primary,
        site_date(dates),
        generator,
    )
