"""Data for readers: ``data/``, ``api/`` JSON, the Atom feed and raw bundle files.

``data/`` holds the DuckDB file, a DuckDB file of views over the Parquet files, Parquet and
CSV per table and the SHA-256 manifest; the raw
files of every bundle version shown are published under ``files/``.

JSON conventions (API and specs): keys sorted, NaN as ``null``, ±∞ as the strings ``"inf"`` /
``"-inf"`` (as in the store's JSON columns).
"""

from __future__ import annotations

import hashlib
import math
import os
import re
import shutil
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from pipeline.site.incremental import Ledger, key_of
from pipeline.site.model import Site, raw_path, safe_segment
from pipeline.site.pages import FeedEntry, FeedPage
from pipeline.site.standings import Standing, Version
from pipeline.store import Store
from pipeline.untrusted import neutralise_csv

FEED_LIMIT = 100
BATCH = 200


def _num(v: float | None) -> float | str | None:
    if v is None or math.isnan(v):
        return None
    if math.isinf(v):
        return "inf" if v > 0 else "-inf"
    return v


DATAPACKAGE = "datapackage.json"
"""The CSV files' schema sidecar in ``data/`` (a Frictionless Data Package)."""

_FIELD_TYPES = {
    "VARCHAR": "string",
    "BOOLEAN": "boolean",
    "DATE": "date",
    "TIMESTAMP": "datetime",
    "INTEGER": "integer",
    "BIGINT": "integer",
    "DOUBLE": "number",
    "JSON": "object",
}
"""DuckDB column types as Table Schema field types (anything else is published as text)."""


def datapackage(columns: dict[str, list[tuple[str, str]]]) -> dict[str, Any]:
    """The Data Package descriptor of the published CSV files (Frictionless Table Schema).

    Spreadsheet and data-frame readers guess a column's type from its text, and a release
    named ``2026.11`` or a version ``1.10`` looks like a number to them (pandas and polars
    read it as ``2026.11``/``1.1``). The descriptor says which columns are text; readers
    pass it on (``dtype=`` in pandas, ``schema_overrides=`` in polars; docs/schema.md shows
    how), and Frictionless tools read it as is. ``columns`` maps each table to its
    ``(column, DuckDB type)`` pairs as exported.
    """
    resources = []
    for name in sorted(columns):
        fields = []
        for column, duck in columns[name]:
            kind = _FIELD_TYPES.get(duck.upper(), "string")
            field: dict[str, Any] = {"name": column, "type": kind}
            if kind == "datetime":
                field["format"] = "any"  # "YYYY-MM-DD hh:mm:ss[.ffffff]", UTC
            fields.append(field)
        resources.append({
            "name": name.replace("_", "-"),
            "path": f"{name}.csv",
            "format": "csv",
            "mediatype": "text/csv",
            "encoding": "utf-8",
            "schema": {"fields": fields, "missingValues": [""]},
        })
    return {
        "profile": "tabular-data-package",
        "name": "gmeter-data",
        "resources": resources,
    }


class Pending:
    """Work an export left running in a thread; :meth:`wait` joins it, then runs ``then``.

    ``then`` runs in the waiting thread (it records the file in the ledger, which the build's
    thread reads), and an error of the work is raised there.
    """

    def __init__(self, work: Callable[[], None], then: Callable[[], None]) -> None:
        import threading

        self._then = then
        self._error: BaseException | None = None
        self._thread = threading.Thread(target=self._run, args=(work,), daemon=True)
        self._thread.start()

    def _run(self, work: Callable[[], None]) -> None:
        try:
            work()
        except BaseException as exc:  # handed to the thread that waits
            self._error = exc

    def join(self) -> None:
        """Block until the work is done (its outcome ignored: a build that failed anyway)."""
        self._thread.join()

    def wait(self) -> None:
        """Block until the work is done; raise what it raised, else run ``then``."""
        self._thread.join()
        if self._error is not None:
            raise self._error
        self._then()


def export_data(
    store: Store, dest: Path, ledger: Ledger | None = None, pending: list[Pending] | None = None
) -> list[str]:
    """Publish the DuckDB file, one Parquet + one CSV per table/view, and their schema.

    The DuckDB file is a compacted copy; the CSV files' column types go to
    :data:`DATAPACKAGE`. With a ``ledger`` (an incremental build, ``dest`` being its
    ``data/``), a table whose rows are unchanged since the previous build keeps its files; a
    view's files are kept while no table changed. With ``pending``, a compacted copy to make
    is made in a thread (DuckDB works without Python's lock: the copy overlaps the pages,
    0.6 s of a one-bundle build) and its :class:`Pending` appended; the caller waits for it
    before anything reads ``data/gmeter.duckdb`` (no page states its size).
    """
    import json

    dest.mkdir(parents=True, exist_ok=True)
    prints = store.fingerprints() if ledger is not None else {}
    whole = key_of("store", sorted(prints.items()))
    if ledger is None or not ledger.reuse("data/gmeter.duckdb", whole):
        from pipeline.site.assets import cache_dir

        src, folder = Path(store.path), cache_dir()  # the build's cache, read in its thread

        def publish() -> None:
            _publish_duckdb(src, dest / "gmeter.duckdb", folder)

        def record(led: Ledger | None = ledger) -> None:
            if led is not None:
                led.adopt(["data/gmeter.duckdb"], whole)

        if pending is None:
            publish()
            record()
        else:
            pending.append(Pending(publish, record))
    names = store.table_names()
    for name in names:
        key = key_of("table", name, prints[name]) if name in prints else whole
        for ext in ("parquet", "csv"):
            rel = f"data/{name}.{ext}"
            if ledger is not None and ledger.reuse(rel, key):
                continue
            store.export_table(name, dest / f"{name}.{ext}", ext)
            if ledger is not None:
                ledger.adopt([rel], key)
    types = {name: store.column_types(name) for name in names}
    # the views read the Parquet files by name: they change only with the tables' columns
    views = key_of("views", COPY_FORMAT, sorted(types.items()))
    if ledger is None or not ledger.reuse(f"data/{VIEWS}", views):
        _publish_views(dest, names, views)
        if ledger is not None:
            ledger.adopt([f"data/{VIEWS}"], views)
    described = datapackage(types)
    text = json.dumps(described, indent=1, sort_keys=True, ensure_ascii=False) + "\n"
    if ledger is not None:
        ledger.text(f"data/{DATAPACKAGE}", text)
    else:
        (dest / DATAPACKAGE).write_text(text, encoding="utf-8")
    return names


CACHE_KEEP_SECONDS = 24 * 3600
"""Compacted copies of other stores are removed once this old: a build never deletes the
copy another build (of another store, at the same time) is about to publish twice."""


VIEWS = "gmeter-views.duckdb"
"""``data/``'s DuckDB file of views over its Parquet files (tens of kilobytes; see
:func:`pipeline.store.views_copy`)."""


def _publish_views(dest: Path, names: list[str], key: str) -> None:
    """Write :data:`VIEWS` into ``dest`` (the folder of the Parquet files), cached by ``key``.

    Cached as the full copy is (see :func:`_publish_duckdb`): DuckDB writes other bytes each
    time, and the same tables must publish the same file.
    """
    from pipeline.store import views_copy

    _from_cache(f"views-{key[:32]}", lambda tmp: views_copy(tmp, dest, names), dest / VIEWS)


def _from_cache(
    key: str, make: Callable[[Path], None], target: Path, cache: Path | None = None
) -> None:
    """Copy the file cached under ``key`` to ``target``, made by ``make(path)`` if missing.

    The first file made for a key stays (one made at the same time by another build is
    dropped, never swapped in), and files of other keys are removed only when stale.
    """
    from pipeline.site.assets import cache_dir

    folder = (cache or cache_dir()) / "duckdb"
    cached = folder / f"{key}.duckdb"
    if not cached.is_file():
        folder.mkdir(parents=True, exist_ok=True)
        _drop_stale(folder, keep=cached)
        tmp = folder / f"{key}.{os.getpid()}.tmp"
        make(tmp)
        try:
            os.link(tmp, cached)  # fails when another build got there first: use its copy
        except FileExistsError:
            pass
        finally:
            tmp.unlink(missing_ok=True)
    os.utime(cached)  # in use: not stale for another build
    shutil.copyfile(cached, target)


def _publish_duckdb(src: Path, target: Path, cache: Path | None = None) -> None:
    """Write a compacted copy of the store to ``target``.

    DuckDB does not write the same bytes twice, so the compacted file is cached by the SHA-256
    of the store (next to the chart cache): building twice from one store publishes identical
    bytes. Builds running at the same time agree too: the first compacted copy of a store
    stays (a later one is dropped, never swapped in), and copies of other stores are removed
    only when stale. Any failure falls back to copying the store as it is.
    """
    from pipeline.store import compact_copy

    try:
        _from_cache(copy_key(src), lambda tmp: compact_copy(src, tmp), target, cache)
    except Exception:  # no cache folder, or a DuckDB without COPY FROM DATABASE
        shutil.copyfile(src, target)


COPY_FORMAT = "light-2"  # light-2: in the v1.1.0 storage format
"""What the published copy holds (see :func:`pipeline.store.compact_copy`); a new value keeps
copies cached by an older gmeter from being published."""


def copy_key(src: Path) -> str:
    """The cache key of the published copy of the store at ``src``."""
    return hashlib.sha256(f"{sha256_file(src)}|{COPY_FORMAT}".encode()).hexdigest()[:32]


def _drop_stale(folder: Path, keep: Path) -> None:
    """Remove compacted copies of other stores not used for :data:`CACHE_KEEP_SECONDS`."""
    now = time.time()
    for old in folder.glob("*.duckdb"):
        try:
            if old != keep and now - old.stat().st_mtime > CACHE_KEEP_SECONDS:
                old.unlink(missing_ok=True)
        except OSError:
            continue


def _published(path: str, data: bytes) -> bytes:
    """A raw bundle file as the site serves it: CSV/TSV cells never evaluate as formulas.

    Every CSV the site publishes, the raw downloads included, neutralises formula cells
    (:func:`pipeline.untrusted.neutralise_csv`); other files are the bundle's bytes.
    """
    low = path.lower()
    if low.endswith(".csv"):
        return neutralise_csv(data)
    if low.endswith(".tsv"):
        return neutralise_csv(data, "\t")
    return data


def write_raw_files(store: Store, site: Site, root: Path, ledger: Ledger | None = None) -> int:
    """Publish the files of every bundle version shown on the site; return how many.

    Addresses are content-addressed, so with a ``ledger`` a file the previous build
    published is taken over without reading it from the store.
    """
    hashes = sorted(
        {e.content_hash for vd in site.versions for st in vd.standings.values() for e in st.entries}
    )
    count = 0
    for start in range(0, len(hashes), BATCH):
        chunk = [h for h in hashes[start : start + BATCH] if re.fullmatch(r"[0-9a-f]{8,128}", h)]
        if not chunk:
            continue
        if ledger is not None:
            paths = store.bundle_file_paths(chunk)
            kept = {(h, p) for h, p in paths if ledger.reuse(raw_path(h, p), "raw")}
            count += len(kept)
            chunk = sorted({h for h, p in paths if (h, p) not in kept})
        else:
            kept = set()
        rows = [(h, path, data) for h in chunk
                for path, data in sorted(store.bundle_files(h).items()) if (h, path) not in kept]
        for h, path, data in rows:
            rel = raw_path(h, path)
            if ledger is not None:
                ledger.write(rel, _published(path, bytes(data)), "raw")
            else:
                target = root / rel
                target.parent.mkdir(parents=True, exist_ok=True)
                target.write_bytes(_published(path, bytes(data)))
            count += 1
    return count


def _entries(
    site: Site, bid: str, st: Standing, stale: dict[tuple[str, str], str]
) -> list[dict[str, Any]]:
    out = []
    for e in st.entries:
        b = site.bundle(bid, e.bundle, e.content_hash)
        out.append(
            {
                "rank": e.rank,
                "group": e.group,
                "bundle": e.bundle,
                "agent": e.agent,
                "system": b.system_name if b else e.bundle,
                "organisation": b.organisation if b else "",
                "submitted": b.submitted.isoformat() if b and b.submitted else None,
                "content_hash": e.content_hash,
                "verified": e.primary.verified,
                "code_version": e.primary.code_version,
                "stale": stale.get((e.bundle, e.agent), ""),
                "metrics": {
                    m: {
                        "value": _num(r.value),
                        "ci_low": _num(r.ci_low),
                        "ci_high": _num(r.ci_high),
                    }
                    for m, r in sorted(e.metrics.items())
                },
            }
        )
    return out


def _version_url(site: Site, v: Version) -> str:
    for vd in site.versions:
        if vd.version == v:
            return vd.prefix
    return ""


def api_documents(site: Site) -> dict[str, Any]:
    """Build the JSON API: ``api/index.json``, one file per benchmark and one per release."""
    from pipeline.site.widgets import stale_reason

    docs: dict[str, Any] = {}
    latest = site.latest
    if latest is None:
        return {"api/index.json": {"versions": [], "benchmarks": []}}
    stale: dict[str, dict[tuple[str, str], str]] = {}
    if not latest.version.is_release:
        for bm in latest.benchmarks:
            stale[bm.id] = {
                (e.bundle, e.agent): stale_reason(site, bm, e)
                for e in latest.standings[bm.id].entries
            }
    docs["api/index.json"] = {
        "latest": latest.version.name,
        "versions": [
            {
                "name": vd.version.name,
                "date": vd.version.date.isoformat(),
                "release": vd.version.is_release,
                "url": vd.prefix or "./",
                "api": f"api/releases/{safe_segment(vd.version.name)}.json"
                if vd.version.is_release
                else None,
            }
            for vd in site.versions
        ],
        "benchmarks": [
            {
                "id": bm.id,
                "title": bm.title,
                "track": bm.track,
                "url": f"benchmarks/{safe_segment(bm.id)}/",
                "api": f"api/benchmarks/{safe_segment(bm.id)}.json",
            }
            for bm in latest.benchmarks
        ],
    }
    for bm in latest.benchmarks:
        t = site.tracks[bm.track]
        hist = []
        for vd in site.versions:
            st = vd.standings.get(bm.id)
            if st is None or not st.entries:
                continue
            hist.append(
                {
                    "version": vd.version.name,
                    "date": vd.version.date.isoformat(),
                    "entries": [
                        {
                            "bundle": e.bundle,
                            "agent": e.agent,
                            "rank": e.rank,
                            "value": _num(e.primary.value),
                        }
                        for e in st.entries
                    ],
                }
            )
        docs[f"api/benchmarks/{safe_segment(bm.id)}.json"] = {
            "id": bm.id,
            "title": bm.title,
            "track": bm.track,
            "version": bm.version,
            "content_hash": bm.content_hash,
            "primary_metric": t.primary,
            "secondary_metrics": list(t.secondary),
            "as_of": latest.version.name,
            "entries": _entries(site, bm.id, latest.standings[bm.id], stale.get(bm.id, {})),
            "history": hist,
        }
    for vd in site.versions:
        if not vd.version.is_release:
            continue
        docs[f"api/releases/{safe_segment(vd.version.name)}.json"] = {
            "name": vd.version.name,
            "date": vd.version.date.isoformat(),
            "notes": vd.version.notes,
            "previous": vd.previous.name if vd.previous else None,
            "benchmarks": {
                bm.id: {
                    "title": bm.title,
                    "track": bm.track,
                    "version": bm.version,
                    "content_hash": bm.content_hash,
                    "primary_metric": site.tracks[bm.track].primary,
                    "entries": _entries(site, bm.id, vd.standings[bm.id], {}),
                    "changes": [
                        {
                            "kind": c.kind,
                            "bundle": c.bundle,
                            "agent": c.agent,
                            "detail": c.detail,
                            "why": c.why,
                        }
                        for c in vd.changes.get(bm.id, [])
                    ],
                }
                for bm in vd.benchmarks
            },
        }
    return docs


def feed(site: Site) -> FeedPage:
    """Build the Atom feed: per version and benchmark, its new entries and corrections."""
    entries = []
    for vd in site.versions:
        for bm in vd.benchmarks:
            changes = [c for c in vd.changes.get(bm.id, []) if c.kind in ("new", "changed")]
            if not changes:
                continue
            new = sum(c.kind == "new" for c in changes)
            fixed = len(changes) - new
            parts = []
            if new:
                parts.append(f"{new} new entr{'y' if new == 1 else 'ies'}")
            if fixed:
                parts.append(f"{fixed} correction{'s' * (fixed != 1)}")
            lines = []
            for c in changes[:20]:
                who = site.system_name(bm.id, c.bundle, "")
                lines.append(
                    f"{'new' if c.kind == 'new' else 'corrected'}: {who}"
                    f"{'' if c.agent in (who, '') else ' · ' + c.agent} — {c.detail}"
                    f"{' (' + c.why + ')' if c.why else ''}"
                )
            if len(changes) > 20:
                lines.append(f"… and {len(changes) - 20} more")
            date = vd.version.date.isoformat()
            entries.append(
                FeedEntry(
                    site.config.entry_id(
                        date, f"{vd.version.name}/{bm.id}",
                        f"{vd.prefix}benchmarks/{safe_segment(bm.id)}/",
                    ),
                    f"{bm.title}: {', '.join(parts)} ({vd.version.label})",
                    f"{date}T00:00:00Z",
                    f"{vd.prefix}benchmarks/{safe_segment(bm.id)}/",
                    "\n".join(lines),
                )
            )
    entries.sort(key=lambda e: (e.updated, e.id), reverse=True)
    entries = entries[:FEED_LIMIT]
    updated = entries[0].updated if entries else f"{site.snapshot.site_date.isoformat()}T00:00:00Z"
    title = "gmeter leaderboards" if site.config.title == "gmeter" else site.config.title
    return FeedPage(title, site.config.feed_id, updated, tuple(entries))


def file_sizes(root: Path, folder: str) -> dict[str, int]:
    """Bytes of each file directly in ``root/folder``, by its site path (``data/x.csv``)."""
    where = root / folder
    if not where.is_dir():
        return {}
    return {f"{folder}/{p.name}": p.stat().st_size for p in sorted(where.iterdir()) if p.is_file()}


def sha256_file(path: Path) -> str:
    """Return the SHA-256 of a file (hex)."""
    h = hashlib.sha256()
    with path.open("rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def manifest(root: Path, *, exclude: str = "data/manifest.json") -> dict[str, Any]:
    """SHA-256 and size of every file of the site (sorted by path)."""
    found = []
    for dirpath, _dirs, names in os.walk(root):
        for name in names:
            full = Path(dirpath) / name
            rel = full.relative_to(root).as_posix()
            if rel != exclude:
                found.append((rel, full))
    files = [
        {"path": rel, "sha256": sha256_file(full), "size": full.stat().st_size}
        for rel, full in sorted(found)
    ]
    return {"algorithm": "sha256", "files": files}
