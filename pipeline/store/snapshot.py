"""The site's snapshot: every row the static site shows, read from the store in one go.

:func:`read_snapshot` returns plain frozen dataclasses (:mod:`pipeline.store.rows`), so page
building is a pure function of them and is tested without DuckDB. Every statement is sorted:
the same store gives the same snapshot, and every row is read by column name, never position.
"""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from pipeline.store.rows import (
    BenchmarkRow,
    BundleRow,
    ChartRecord,
    ErratumRow,
    FileRow,
    MissingRelease,
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


def _records(store: Store, sql: str) -> list[dict[str, Any]]:
    """The rows of ``sql`` as column name → value (names as the statement spells them)."""
    columns, rows = store.query(sql)
    return [dict(zip(columns, r, strict=True)) for r in rows]


def read_snapshot(
    store: Store, *, site_date: Callable[[list[dt.date]], dt.date], generator: str
) -> Snapshot:
    """Read everything the site shows from an open store, sorted.

    ``site_date`` picks the build date from the dates in the store (the build honours
    ``SOURCE_DATE_EPOCH``); ``generator`` names the program in the pages.
    """
    benchmarks = tuple(
        BenchmarkRow(
            id=r["id"],
            content_hash=r["content_hash"],
            track=r["track"],
            title=r["title"],
            version=r["version"] or "",
            description=r["description"] or "",
            licence=r["licence"] or "",
            created=r["created"],
            manifest=_loads(r["manifest"]) or {},
            source_path=r["source_path"] or "",
            git_commit=r["git_commit"] or "",
            current=bool(r["current"]),
        )
        for r in _records(
            store,
            "select id, content_hash, track, title, version, description, licence, created, "
            "manifest, source_path, git_commit, current from benchmarks "
            "order by id, ingested_at, content_hash",
        )
    )
    files: dict[str, list[FileRow]] = {}
    for r in _records(
        store,
        "select content_hash, path, sha256, size from bundle_files order by content_hash, path",
    ):
        files.setdefault(r["content_hash"], []).append(
            FileRow(path=r["path"], sha256=r["sha256"], size=int(r["size"]))
        )
    bundles = tuple(
        BundleRow(
            benchmark=r["benchmark"],
            id=r["id"],
            content_hash=r["content_hash"],
            system_name=r["system_name"],
            system_version=r["system_version"] or "",
            organisation=r["organisation"] or "",
            url=r["url"] or "",
            submitted=r["submitted"],
            licence=r["licence"] or "",
            description=str((_loads(r["manifest"]) or {}).get("description", "") or ""),
            source_path=r["source_path"] or "",
            git_commit=r["git_commit"] or "",
            current=bool(r["current"]),
            files=tuple(files.get(r["content_hash"], ())),
            benchmark_version=r["benchmark_version"] or "",
        )
        for r in _records(
            store,
            "select benchmark, id, content_hash, system_name, system_version, organisation, "
            "url, submitted, licence, manifest, source_path, git_commit, current, "
            "benchmark_version from bundles "
            "order by benchmark, id, ingested_at, content_hash",
        )
    )
    releases = tuple(
        ReleaseRow(name=r["name"], date=r["date"], notes=r["notes"] or "",
                   code_version=r["code_version"] or "")
        for r in _records(
            store, "select name, date, notes, code_version from releases order by date, name"
        )
    )
    scores = tuple(
        ScoreRecord(
            release=r["release"],
            benchmark=r["benchmark"],
            bundle=r["bundle"],
            content_hash=r["content_hash"],
            agent=r["agent"],
            metric=r["metric"],
            value=r["value"],
            ci_low=r["ci_low"],
            ci_high=r["ci_high"],
            rank=None if r["rank"] is None else int(r["rank"]),
            verified=bool(r["verified"]),
            code_version=r["code_version"] or "",
            display=_loads(r["display"]),
            marks=tuple(str(m) for m in (_loads(r["marks"]) or ()) if isinstance(m, str)),
            training=_loads(r["training"]),
        )
        for r in _records(
            store,
            "select release, benchmark, bundle, content_hash, agent, metric, value, ci_low, "
            "ci_high, rank, verified, code_version, "
            "json_extract(details, '$.display') as display, "
            "json_extract(details, '$.marks') as marks, "
            "json_extract(details, '$.training') as training from scores "
            "order by release, benchmark, bundle, agent, metric",
        )
    )
    charts = tuple(
        ChartRecord(release=r["release"], benchmark=r["benchmark"], name=r["name"],
                    data=_loads(r["data"]))
        for r in _records(
            store,
            "select release, benchmark, name, data from charts order by release, benchmark, name",
        )
    )
    runs = tuple(
        RunRecord(
            release=r["release"],
            benchmark=r["benchmark"],
            benchmark_hash=r["benchmark_hash"] or "",
            track=r["track"],
            code_version=r["code_version"] or "",
            notes=tuple(str(n) for n in _loads(r["notes"]) or ()),
        )
        for r in _records(
            store,
            "select release, benchmark, benchmark_hash, track, code_version, notes "
            "from score_runs order by release, benchmark",
        )
    )
    primary: dict[str, str] = {}
    if "primary_metrics" in store.table_names():
        primary = {
            r["track"]: r["metric"]
            for r in _records(store, "select track, metric from primary_metrics order by track")
        }
    tables = set(store.table_names())
    errata = tuple(
        ErratumRow(r["release"], r["code_version"], int(r["compared"]), int(r["differ"]))
        for r in (_records(store, "select release, code_version, compared, differ from "
                           "release_errata order by release, code_version")
                  if "release_errata" in tables else [])
    )
    missing = tuple(
        MissingRelease(r["name"], r["reason"])
        for r in (_records(store, "select name, reason from missing_releases order by name")
                  if "missing_releases" in tables else [])
    )
    dates = (
        [r.date for r in releases]
        + [b.submitted for b in bundles if b.submitted]
        + [b.created for b in benchmarks if b.created]
    )
    return Snapshot(
        benchmarks=benchmarks,
        bundles=bundles,
        releases=releases,
        scores=scores,
        charts=charts,
        runs=runs,
        primary_metrics=primary,
        site_date=site_date(dates),
        generator=generator,
        errata=errata,
        missing_releases=missing,
    )
