"""The DuckDB store: the only module that imports duckdb.

Tables (see ``docs/schema.md`` for every column):

``benchmarks`` / ``benchmark_files``
    Each ingested version of a benchmark folder (manifest, content hash) and its files.
``bundles`` / ``bundle_files``
    Each ingested version of a bundle; ``current`` marks the version in ``submissions/`` now;
    old versions stay for history. Files are stored once per content hash.
``releases`` / ``release_bundles``
    Recorded releases and the exact bundle hashes each includes.
``scores``, ``charts``, ``score_runs``
    Computed numbers per release (``current`` = the working state), chart data, run provenance.

Views for analysts: ``leaderboard`` (current primary-metric standings), ``score_history``
(every score in every release) and ``release_changes`` (what changed from one version to the
next). Migrations are ordered, applied in one transaction each and
recorded in ``schema_migrations``.
"""

from __future__ import annotations

import datetime as dt
import json
import math
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import duckdb

from pipeline.errors import StoreError
from pipeline.store.bulk import insert_rows
from pipeline.untrusted import csv_cell

CURRENT = "current"
"""Release name under which the working state of ``submissions/`` is scored."""

MIGRATIONS: tuple[tuple[int, str, str], ...] = (
    (
        1,
        "initial schema",
        """
        create table benchmarks (
            id varchar not null, content_hash varchar not null, track varchar not null,
            title varchar not null, version varchar not null, description varchar,
            licence varchar, created date, manifest json not null, source_path varchar,
            git_commit varchar, ingested_at timestamp not null, current boolean not null,
            primary key (id, content_hash));
        create table benchmark_files (
            content_hash varchar not null, path varchar not null, sha256 varchar not null,
            size bigint not null, content blob not null, primary key (content_hash, path));
        create table bundles (
            benchmark varchar not null, id varchar not null, content_hash varchar not null,
            system_name varchar not null, system_version varchar, organisation varchar,
            url varchar, submitted date, contact varchar, licence varchar,
            manifest json not null, source_path varchar, git_commit varchar,
            ingested_at timestamp not null, current boolean not null,
            primary key (benchmark, id, content_hash));
        create table bundle_files (
            content_hash varchar not null, path varchar not null, sha256 varchar not null,
            size bigint not null, content blob not null, primary key (content_hash, path));
        create table releases (
            name varchar primary key, date date not null, notes varchar,
            code_version varchar, recorded_at timestamp);
        create table release_bundles (
            release varchar not null, benchmark varchar not null, bundle varchar not null,
            content_hash varchar not null, primary key (release, benchmark, bundle));
        create table release_benchmarks (
            release varchar not null, benchmark varchar not null,
            content_hash varchar not null, primary key (release, benchmark));
        create table scores (
            release varchar not null, benchmark varchar not null, bundle varchar not null,
            content_hash varchar not null, agent varchar not null, metric varchar not null,
            value double, ci_low double, ci_high double, rank integer,
            verified boolean not null, code_version varchar not null,
            computed_at timestamp not null, details json,
            primary key (release, benchmark, bundle, agent, metric));
        create table charts (
            release varchar not null, benchmark varchar not null, name varchar not null,
            data json not null, primary key (release, benchmark, name));
        create table score_runs (
            release varchar not null, benchmark varchar not null, benchmark_hash varchar,
            track varchar not null, code_version varchar not null, seed bigint,
            options json, notes json, computed_at timestamp not null,
            primary key (release, benchmark));
        """,
    ),
    (
        2,
        "analyst views",
        """
        create table primary_metrics (track varchar primary key, metric varchar not null);
        create view leaderboard as
        select s.benchmark, b.track, s.rank, s.agent, u.system_name, u.organisation,
               s.bundle, s.metric, s.value, s.ci_low, s.ci_high, s.verified, u.submitted,
               s.content_hash, s.code_version
        from scores s
        join benchmarks b on b.id = s.benchmark and b.current
        join primary_metrics p on p.track = b.track and p.metric = s.metric
        left join bundles u on u.benchmark = s.benchmark and u.id = s.bundle
                            and u.content_hash = s.content_hash
        where s.release = 'current'
        order by s.benchmark, s.rank, s.agent;
        create view score_history as
        select s.release, r.date as release_date, s.benchmark, s.bundle, s.agent, s.metric,
               s.value, s.ci_low, s.ci_high, s.rank, s.verified, s.content_hash,
               s.code_version, s.computed_at
        from scores s left join releases r on r.name = s.release
        order by s.benchmark, s.agent, s.metric, r.date nulls last, s.release;
        """,
    ),
    (
        3,
        "benchmark version of each bundle version",
        # The benchmark version a bundle was submitted under: entries whose bundle predates
        # the benchmark's current version stay marked stale even after rescoring.
        "alter table bundles add column benchmark_version varchar;",
    ),
    (
        4,
        "verification results kept by content",
        # A bundle version is verified once per (context, verifier): every release and every
        # later score that meets the same content reuses the stored result.
        """
        create table verifications (
            content_hash varchar not null, context varchar not null, verifier varchar not null,
            verified boolean not null, result json not null, computed_at timestamp not null,
            primary key (content_hash, context, verifier));
        """,
    ),
    (
        5,
        "frozen releases, errata and releases that cannot be published",
        # A release's published numbers live in a committed file (its SHA-256 in
        # releases.toml); the store keeps which file it loaded, what recomputing it with later
        # code found (errata, never a replacement) and which releases could not be loaded.
        """
        create table release_files (
            release varchar primary key, path varchar not null, sha256 varchar not null);
        create table release_errata (
            release varchar not null, code_version varchar not null, input_key varchar,
            compared integer not null, differ integer not null, examples json,
            computed_at timestamp not null, primary key (release, code_version));
        create table missing_releases (name varchar primary key, reason varchar not null);
        """,
    ),
    (
        6,
        "release_changes view",
        # What changed from one version to the next (releases by date, then the working
        # state): a row per score that is new, removed, changed in value or moved in rank.
        """
        create view release_changes as
        with versions as (
            select name as release, row_number() over (order by date, name) as n
            from releases
            union all
            select 'current', (select count(*) + 1 from releases)
        ),
        steps as (
            select a.release as previous, b.release as release
            from versions a join versions b on b.n = a.n + 1
        ),
        keys as (
            select distinct t.release, t.previous, s.benchmark, s.bundle, s.agent, s.metric
            from steps t join scores s on s.release = t.previous or s.release = t.release
        )
        select k.release, k.previous, k.benchmark, k.bundle, k.agent, k.metric,
               case when o.release is null then 'new'
                    when n.release is null then 'removed'
                    when o.value is distinct from n.value then 'changed'
                    else 'moved' end as change,
               o.value as previous_value, n.value as value,
               o.rank as previous_rank, n.rank as rank,
               o.content_hash as previous_content_hash, n.content_hash as content_hash
        from keys k
        left join scores o on o.release = k.previous and o.benchmark = k.benchmark
             and o.bundle = k.bundle and o.agent = k.agent and o.metric = k.metric
        left join scores n on n.release = k.release and n.benchmark = k.benchmark
             and n.bundle = k.bundle and n.agent = k.agent and n.metric = k.metric
        where o.release is null or n.release is null
           or o.value is distinct from n.value or o.rank is distinct from n.rank
        order by k.benchmark, k.metric, k.agent, k.bundle, k.release;
        """,
    ),
)

SCORE_COLUMNS = (
    ("release", "varchar"), ("benchmark", "varchar"), ("bundle", "varchar"),
    ("content_hash", "varchar"), ("agent", "varchar"), ("metric", "varchar"),
    ("value", "double"), ("ci_low", "double"), ("ci_high", "double"), ("rank", "integer"),
    ("verified", "boolean"), ("code_version", "varchar"), ("computed_at", "timestamp"),
    ("details", "json"),
)  # fmt: skip
"""The columns of ``scores`` in order, with their types (for bulk inserts)."""
FILE_COLUMNS = (("content_hash", "varchar"), ("path", "varchar"), ("sha256", "varchar"),
                ("size", "bigint"), ("content", "blob"))  # fmt: skip
"""The columns of ``bundle_files`` and ``benchmark_files``."""
MEMBER_COLUMNS = (("release", "varchar"), ("benchmark", "varchar"), ("bundle", "varchar"),
                  ("content_hash", "varchar"))  # fmt: skip
"""The columns of ``release_bundles``."""
VERIFICATION_COLUMNS = (("content_hash", "varchar"), ("context", "varchar"),
                        ("verifier", "varchar"), ("verified", "boolean"), ("result", "json"),
                        ("computed_at", "timestamp"))  # fmt: skip
"""The columns of ``verifications``."""


def _clean(value: float | None) -> float | None:
    """DuckDB doubles accept inf and nan; keep them, but turn numpy scalars into floats."""
    if value is None:
        return None
    return float(value)


@dataclass(frozen=True)
class BundleRecord:
    """One stored version of a bundle (a row of ``bundles``)."""

    benchmark: str
    id: str
    content_hash: str
    system_name: str
    submitted: dt.date | None
    manifest: dict[str, Any]
    source_path: str
    git_commit: str | None
    current: bool


@dataclass(frozen=True)
class BenchmarkRecord:
    """One stored version of a benchmark (a row of ``benchmarks``)."""

    id: str
    content_hash: str
    track: str
    title: str
    version: str
    manifest: dict[str, Any]
    source_path: str


class Store:
    """A connection to the gmeter DuckDB file, with typed helpers for every table.

    Use :func:`open_store` rather than the constructor.
    """

    def __init__(self, con: duckdb.DuckDBPyConnection, path: Path, read_only: bool) -> None:
        self.con = con
        self.path = path
        self.read_only = read_only

    # ------------------------------------------------------------------ schema
    def schema_version(self) -> int:
        """The highest applied migration (0 for an empty file)."""
        exists = self.con.execute(
            "select count(*) from information_schema.tables where table_name='schema_migrations'"
        ).fetchall()
        if not exists or not exists[0][0]:
            return 0
        rows = self.con.execute("select coalesce(max(version), 0) from schema_migrations"
                                ).fetchall()
        return int(rows[0][0]) if rows else 0

    def migrate(self) -> list[int]:
        """Apply every pending migration in order; return the versions applied."""
        self.con.execute(
            "create table if not exists schema_migrations (version integer primary key, "
            "name varchar not null, applied_at timestamp not null)"
        )
        have = self.schema_version()
        latest = MIGRATIONS[-1][0]
        if have > latest:
            raise StoreError(
                f"{self.path} has schema version {have}, this gmeter knows up to {latest}",
                hint="upgrade gmeter, or point --db at another file",
            )
        applied = []
        for version, name, sql in MIGRATIONS:
            if version <= have:
                continue
            with self.transaction():
                self.con.execute(sql)
                self.con.execute(
                    "insert into schema_migrations values (?, ?, ?)",
                    [version, name, dt.datetime.now(dt.UTC).replace(tzinfo=None)],
                )
            applied.append(version)
        return applied

    @contextmanager
    def transaction(self) -> Iterator[None]:
        """Run the block in one transaction: everything or nothing is written."""
        self.con.execute("begin transaction")
        try:
            yield
        except BaseException:
            self.con.execute("rollback")
            raise
        self.con.execute("commit")

    def set_primary_metrics(self, mapping: Mapping[str, str]) -> None:
        """Record each track's primary metric (used by the ``leaderboard`` view)."""
        for track, metric in sorted(mapping.items()):
            self.con.execute(
                "insert or replace into primary_metrics values (?, ?)", [track, metric]
            )

    # ------------------------------------------------------------------ benchmarks
    def current_benchmark_hash(self, benchmark_id: str) -> str | None:
        """The content hash of the current version of a benchmark, if ingested."""
        row = self.con.execute(
            "select content_hash from benchmarks where id = ? and current", [benchmark_id]
        ).fetchone()
        return str(row[0]) if row else None

    def put_benchmark(
        self,
        *,
        benchmark_id: str,
        content_hash: str,
        track: str,
        title: str,
        version: str,
        description: str,
        licence: str,
        created: dt.date | None,
        manifest: Mapping[str, Any],
        source_path: str,
        git_commit: str | None,
        files: Mapping[str, bytes],
        now: dt.datetime,
        current: bool = True,
    ) -> None:
        """Insert a benchmark version and make it current (call inside a transaction).

        ``current=False`` adds a historical version (rebuilt from git for a release) without
        touching which version is current.
        """
        if current:
            self.con.execute("update benchmarks set current = false where id = ?",
                             [benchmark_id])
        exists = self.has_benchmark_version(benchmark_id, content_hash)
        if exists and current:
            self.con.execute(
                "update benchmarks set current = true where id = ? and content_hash = ?",
                [benchmark_id, content_hash],
            )
        elif not exists:
            self.con.execute(
                "insert into benchmarks values (?,?,?,?,?,?,?,?,?,?,?,?,?)",
                [
                    benchmark_id, content_hash, track, title, version, description, licence,
                    created, _json(manifest), source_path, git_commit, now, current,
                ],
            )
        self._put_files("benchmark_files", content_hash, files)

    def has_benchmark_version(self, benchmark_id: str, content_hash: str) -> bool:
        """Whether this version of the benchmark is stored."""
        row = self.con.execute(
            "select count(*) from benchmarks where id = ? and content_hash = ?",
            [benchmark_id, content_hash],
        ).fetchone()
        return bool(row and row[0])

    def has_bundle_version(self, benchmark: str, bundle_id: str, content_hash: str) -> bool:
        """Whether this version of the bundle is stored (under this benchmark and id)."""
        row = self.con.execute(
            "select count(*) from bundles where benchmark = ? and id = ? and content_hash = ?",
            [benchmark, bundle_id, content_hash],
        ).fetchone()
        return bool(row and row[0])

    def benchmark_version_of(self, benchmark_id: str, content_hash: str) -> str | None:
        """The ``version`` field of a stored benchmark version."""
        row = self.con.execute(
            "select version from benchmarks where id = ? and content_hash = ?",
            [benchmark_id, content_hash],
        ).fetchone()
        return str(row[0]) if row else None

    def benchmarks(self, *, current_only: bool = True) -> list[BenchmarkRecord]:
        """Stored benchmarks, sorted by id."""
        where = "where current" if current_only else ""
        rows = self.con.execute(
            "select id, content_hash, track, title, version, manifest, source_path "
            f"from benchmarks {where} order by id, ingested_at"
        ).fetchall()
        return [
            BenchmarkRecord(r[0], r[1], r[2], r[3], r[4], json.loads(r[5]), r[6] or "")
            for r in rows
        ]

    def benchmark_record(self, benchmark_id: str, content_hash: str) -> BenchmarkRecord:
        """One stored benchmark version."""
        r = self.con.execute(
            "select id, content_hash, track, title, version, manifest, source_path "
            "from benchmarks where id = ? and content_hash = ?",
            [benchmark_id, content_hash],
        ).fetchone()
        if r is None:
            raise StoreError(f"benchmark {benchmark_id}@{content_hash[:12]} is not in the store")
        return BenchmarkRecord(r[0], r[1], r[2], r[3], r[4], json.loads(r[5]), r[6] or "")

    def benchmark_files(self, content_hash: str) -> dict[str, bytes]:
        """The files of one benchmark version."""
        return self._files("benchmark_files", content_hash)

    # ------------------------------------------------------------------ bundles
    def current_bundle_hash(self, benchmark: str, bundle: str) -> str | None:
        """The content hash of the current version of a bundle, if ingested."""
        row = self.con.execute(
            "select content_hash from bundles where benchmark = ? and id = ? and current",
            [benchmark, bundle],
        ).fetchone()
        return str(row[0]) if row else None

    def known_hashes(self) -> dict[str, tuple[str, str]]:
        """Every stored bundle content hash → (benchmark, bundle id)."""
        rows = self.con.execute(
            "select content_hash, benchmark, id from bundles order by ingested_at"
        ).fetchall()
        return {r[0]: (r[1], r[2]) for r in rows}

    def put_bundle(
        self,
        *,
        benchmark: str,
        bundle_id: str,
        content_hash: str,
        manifest: Mapping[str, Any],
        source_path: str,
        git_commit: str | None,
        files: Mapping[str, bytes],
        now: dt.datetime,
        benchmark_version: str | None = None,
        current: bool = True,
    ) -> None:
        """Insert a bundle version and make it the current one (call inside a transaction).

        ``benchmark_version`` is the benchmark's version when this bundle version was first
        ingested; re-ingesting the same content keeps the original one. ``current=False``
        adds a historical version (rebuilt from git for a release) and changes nothing else.
        """
        system = manifest.get("system", {})
        if not isinstance(system, Mapping):
            system = {}
        if current:
            self.con.execute(
                "update bundles set current = false where benchmark = ? and id = ?",
                [benchmark, bundle_id],
            )
        exists = self.has_bundle_version(benchmark, bundle_id, content_hash)
        if exists and current:
            self.con.execute(
                "update bundles set current = true "
                "where benchmark = ? and id = ? and content_hash = ?",
                [benchmark, bundle_id, content_hash],
            )
        elif not exists:
            submitted = manifest.get("submitted")
            self.con.execute(
                "insert into bundles values (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
                [
                    benchmark, bundle_id, content_hash, str(system.get("name", bundle_id)),
                    _text(system.get("version")), _text(system.get("organisation")),
                    _text(system.get("url")),
                    submitted if isinstance(submitted, dt.date) else None,
                    _text(manifest.get("contact")), _text(manifest.get("licence")),
                    _json(manifest), source_path, git_commit, now, current, benchmark_version,
                ],
            )
        self._put_files("bundle_files", content_hash, files)

    def retire_missing_bundles(self, benchmark: str, present: Sequence[str]) -> list[str]:
        """Mark bundles no longer in ``submissions/`` as not current; return their ids."""
        rows = self.con.execute(
            "select id from bundles where benchmark = ? and current order by id", [benchmark]
        ).fetchall()
        gone = [r[0] for r in rows if r[0] not in set(present)]
        for bundle_id in gone:
            self.con.execute(
                "update bundles set current = false where benchmark = ? and id = ?",
                [benchmark, bundle_id],
            )
        return gone

    def bundles(
        self, benchmark: str | None = None, *, current_only: bool = True
    ) -> list[BundleRecord]:
        """Stored bundle versions, sorted by (benchmark, id, ingestion time)."""
        clauses, params = [], []
        if current_only:
            clauses.append("current")
        if benchmark is not None:
            clauses.append("benchmark = ?")
            params.append(benchmark)
        where = ("where " + " and ".join(clauses)) if clauses else ""
        rows = self.con.execute(
            "select benchmark, id, content_hash, system_name, submitted, manifest, "
            f"source_path, git_commit, current from bundles {where} "
            "order by benchmark, id, ingested_at",
            params,
        ).fetchall()
        return [
            BundleRecord(r[0], r[1], r[2], r[3], r[4], json.loads(r[5]), r[6] or "", r[7], r[8])
            for r in rows
        ]

    def bundle_record(self, benchmark: str, bundle_id: str, content_hash: str) -> BundleRecord:
        """One stored bundle version."""
        for rec in self.bundles(benchmark, current_only=False):
            if rec.id == bundle_id and rec.content_hash == content_hash:
                return rec
        raise StoreError(f"bundle {benchmark}/{bundle_id}@{content_hash[:12]} is not in the store")

    def bundle_file_paths(self, hashes: Sequence[str]) -> list[tuple[str, str]]:
        """(content hash, path) of every file of these bundle versions, without the bytes."""
        rows = self.con.execute(
            "select content_hash, path from bundle_files where list_contains(?, content_hash) "
            "order by content_hash, path", [sorted(set(hashes))]).fetchall()  # fmt: skip
        return [(r[0], r[1]) for r in rows]

    def bundle_files(self, content_hash: str) -> dict[str, bytes]:
        """The files of one bundle version."""
        return self._files("bundle_files", content_hash)

    # ------------------------------------------------------------------ releases
    def put_release(
        self,
        name: str,
        date: dt.date,
        notes: str,
        code_version: str,
        members: Sequence[tuple[str, str, str]],
        benchmarks: Mapping[str, str],
    ) -> None:
        """Record a release: its bundle (benchmark, bundle, hash) members and benchmark hashes."""
        with self.transaction():
            for table in ("releases",):
                self.con.execute(f"delete from {table} where name = ?", [name])
            for table in ("release_bundles", "release_benchmarks"):
                self.con.execute(f"delete from {table} where release = ?", [name])
            for bench_id, bench_hash in sorted(benchmarks.items()):
                self.con.execute(
                    "insert into release_benchmarks values (?,?,?)", [name, bench_id, bench_hash]
                )
            self.con.execute(
                "insert into releases values (?,?,?,?,?)",
                [name, date, notes, code_version, dt.datetime(date.year, date.month, date.day)],
            )
            insert_rows(self.con, "release_bundles", MEMBER_COLUMNS,
                        [[name, *member] for member in sorted(members)])  # fmt: skip

    def releases(self) -> list[tuple[str, dt.date, str]]:
        """Recorded releases as (name, date, notes), oldest first."""
        rows = self.con.execute("select name, date, notes from releases order by date, name")
        return [(r[0], r[1], r[2] or "") for r in rows.fetchall()]

    def release_benchmarks(self, name: str) -> dict[str, str]:
        """Benchmark id → content hash of every benchmark in a release."""
        rows = self.con.execute(
            "select benchmark, content_hash from release_benchmarks where release = ? "
            "order by benchmark",
            [name],
        ).fetchall()
        return {r[0]: r[1] for r in rows}

    def release_members(self, name: str) -> list[tuple[str, str, str]]:
        """(benchmark, bundle, content hash) of every bundle in a release."""
        rows = self.con.execute(
            "select benchmark, bundle, content_hash from release_bundles where release = ? "
            "order by benchmark, bundle",
            [name],
        ).fetchall()
        return [(r[0], r[1], r[2]) for r in rows]

    def drop_release(self, name: str) -> None:
        """Forget a release and every number stored for it (it could not be loaded)."""
        with self.transaction():
            self.con.execute("delete from releases where name = ?", [name])
            for table in ("release_bundles", "release_benchmarks", "scores", "charts",
                          "score_runs", "release_files", "release_errata"):
                self.con.execute(f"delete from {table} where release = ?", [name])

    def release_file(self, name: str) -> tuple[str, str] | None:
        """(path, SHA-256) of the frozen file a release was loaded from, if it was frozen."""
        row = self.con.execute(
            "select path, sha256 from release_files where release = ?", [name]).fetchone()
        return (str(row[0]), str(row[1])) if row else None

    def put_release_file(self, name: str, path: str, sha256: str) -> None:
        """Record that ``name``'s numbers were loaded from the frozen file ``path``."""
        with self.transaction():
            self.con.execute("delete from release_files where release = ?", [name])
            self.con.execute("insert into release_files values (?,?,?)", [name, path, sha256])

    def release_rows(self, name: str) -> dict[str, list[dict[str, Any]]]:
        """Every stored number of a release: ``scores``, ``charts`` and ``runs`` rows as dicts.

        JSON columns are decoded; rows are sorted (the frozen file's order).
        """
        out: dict[str, list[dict[str, Any]]] = {}
        for key, sql, decode in (
            ("scores", "select benchmark, bundle, content_hash, agent, metric, value, ci_low, "
             "ci_high, rank, verified, code_version, details from scores where release = ? "
             "order by benchmark, metric, bundle, agent", "details"),
            ("charts", "select benchmark, name, data from charts where release = ? "
             "order by benchmark, name", "data"),
            ("runs", "select benchmark, benchmark_hash, track, code_version, seed, options, "
             "notes from score_runs where release = ? order by benchmark", "notes"),
        ):
            cur = self.con.execute(sql, [name])
            cols = [d[0] for d in cur.description]
            rows = []
            for r in cur.fetchall():
                d = dict(zip(cols, r, strict=True))
                for col in (decode, "options"):
                    if col in d and isinstance(d[col], str):
                        d[col] = json.loads(d[col])
                rows.append(d)
            out[key] = rows
        return out

    def put_erratum(self, release: str, code_version: str, input_key: str, compared: int,
                    differ: int, examples: Sequence[str], now: dt.datetime) -> None:
        """Keep what recomputing a frozen release with ``code_version`` found."""
        with self.transaction():
            self.con.execute("delete from release_errata where release = ? and code_version = ?",
                             [release, code_version])
            self.con.execute("insert into release_errata values (?,?,?,?,?,?,?)",
                             [release, code_version, input_key, compared, differ,
                              _json(list(examples)), now])

    def erratum_key(self, release: str, code_version: str) -> str | None:
        """The input key of the kept erratum of (release, code version), if any."""
        row = self.con.execute(
            "select input_key from release_errata where release = ? and code_version = ?",
            [release, code_version]).fetchone()
        return str(row[0]) if row and row[0] is not None else None

    def set_missing_releases(self, missing: Sequence[tuple[str, str]]) -> None:
        """Replace the list of releases that could not be published, with the reason."""
        with self.transaction():
            self.con.execute("delete from missing_releases")
            for name, reason in sorted(set(missing)):
                self.con.execute("insert into missing_releases values (?,?)", [name, reason])

    # ------------------------------------------------------------------ scores
    def replace_scores(
        self,
        *,
        release: str,
        benchmark: str,
        benchmark_hash: str,
        track: str,
        rows: Sequence[Mapping[str, Any]],
        charts: Mapping[str, Any],
        code_version: str,
        seed: int,
        options: Mapping[str, Any],
        notes: Sequence[str],
        now: dt.datetime,
    ) -> None:
        """Replace every score, chart and run record of (release, benchmark) atomically."""
        with self.transaction():
            for table in ("scores", "charts", "score_runs"):
                self.con.execute(
                    f"delete from {table} where release = ? and benchmark = ?",
                    [release, benchmark],
                )
            params = [
                [
                    release, benchmark, r["bundle"], r["content_hash"], r["agent"], r["metric"],
                    _clean(r["value"]), _clean(r.get("ci_low")), _clean(r.get("ci_high")),
                    r.get("rank"), bool(r.get("verified", False)), code_version, now,
                    _json(r["details"]) if r.get("details") is not None else None,
                ]
                for r in rows
            ]
            insert_rows(self.con, "scores", SCORE_COLUMNS, params)
            for name, data in sorted(charts.items()):
                self.con.execute(
                    "insert into charts values (?,?,?,?)", [release, benchmark, name, _json(data)]
                )
            self.con.execute(
                "insert into score_runs values (?,?,?,?,?,?,?,?,?)",
                [
                    release, benchmark, benchmark_hash, track, code_version, seed,
                    _json(options), _json(list(notes)), now,
                ],
            )

    def delete_scores(self, release: str, benchmark: str) -> None:
        """Remove the scores of a benchmark that no longer exists in a release."""
        with self.transaction():
            for table in ("scores", "charts", "score_runs"):
                self.con.execute(
                    f"delete from {table} where release = ? and benchmark = ?",
                    [release, benchmark],
                )

    def score_input_key(self, release: str, benchmark: str) -> str | None:
        """The input key recorded with the last score run of (release, benchmark)."""
        row = self.con.execute(
            "select json_extract_string(options, '$.input_key') from score_runs "
            "where release = ? and benchmark = ?",
            [release, benchmark],
        ).fetchone()
        return str(row[0]) if row and row[0] is not None else None

    def release_scored_with(self, benchmark: str, key: str, *, exclude: str) -> str | None:
        """A release (not ``exclude``) whose last score of ``benchmark`` had input key ``key``."""
        row = self.con.execute(
            "select release from score_runs where benchmark = ? and release <> ? "
            "and json_extract_string(options, '$.input_key') = ? "
            # a frozen release's numbers are what it published, maybe by older code: never
            # a source for another release's scores
            "and release not in (select release from release_files) "
            "order by release limit 1",
            [benchmark, exclude, key],
        ).fetchone()
        return str(row[0]) if row else None

    def copy_scores(self, source: str, release: str, benchmark: str) -> int:
        """Make (release, benchmark)'s scores, charts and run record a copy of ``source``'s.

        For inputs identical to the other release's (same input key): the copy keeps the
        source's ``computed_at``, when those numbers were computed. Returns the rows copied.
        """
        with self.transaction():
            for table in ("scores", "charts", "score_runs"):
                self.con.execute(
                    f"delete from {table} where release = ? and benchmark = ?",
                    [release, benchmark],
                )
                self.con.execute(
                    f"insert into {table} select * replace (?::varchar as release) "
                    f"from {table} where release = ? and benchmark = ?",
                    [release, source, benchmark],
                )
            row = self.con.execute(
                "select count(*) from scores where release = ? and benchmark = ?",
                [release, benchmark],
            ).fetchone()
        return int(row[0]) if row else 0

    def scored_benchmarks(self, release: str) -> list[str]:
        """Benchmarks that have a score run in ``release``."""
        rows = self.con.execute(
            "select benchmark from score_runs where release = ? order by benchmark", [release]
        ).fetchall()
        return [r[0] for r in rows]

    def current_scores(self, benchmark: str) -> list[dict[str, Any]]:
        """A benchmark's ``current`` score rows as dicts (the columns ``score`` writes).

        ``details`` is decoded from JSON; rows are ordered by metric, bundle and agent.
        """
        cur = self.con.execute(
            "select bundle, content_hash, agent, metric, value, ci_low, ci_high, rank, "
            "verified, code_version, details from scores "
            "where release = 'current' and benchmark = ? "
            "order by metric, bundle, agent", [benchmark])
        cols = [d[0] for d in cur.description]
        out = []
        for r in cur.fetchall():
            d = dict(zip(cols, r, strict=True))
            d["details"] = json.loads(d["details"]) if d["details"] else None
            out.append(d)
        return out

    def scored_on(self) -> dict[str, tuple[str, str]]:
        """Benchmark → (benchmark hash, benchmark version) of its last ``current`` score run."""
        rows = self.con.execute(
            "select r.benchmark, r.benchmark_hash, b.version from score_runs r "
            "left join benchmarks b on b.id = r.benchmark "
            "and b.content_hash = r.benchmark_hash where r.release = 'current' "
            "order by r.benchmark").fetchall()
        return {r[0]: (str(r[1] or ""), str(r[2] or "")) for r in rows}

    # ------------------------------------------------------------------ verifications
    def verifications(
        self, verifier: str, keys: Sequence[tuple[str, str]]
    ) -> dict[tuple[str, str], dict[str, Any]]:
        """Stored results of ``verifier`` for (content hash, context) pairs; missing keys absent.

        One query for any number of keys (a benchmark of thousands of bundles asks once).
        """
        wanted = sorted(set(keys))
        if not wanted:
            return {}
        rows = self.con.execute(
            "select content_hash, context, result from verifications "
            "where verifier = ? and list_contains(?, content_hash) order by content_hash",
            [verifier, sorted({k[0] for k in wanted})],
        ).fetchall()
        want = set(wanted)
        return {(r[0], r[1]): json.loads(r[2]) for r in rows if (r[0], r[1]) in want}

    def verified_results(self, verifier: str) -> dict[tuple[str, str], Any]:
        """Every (content hash, context) that ``verifier`` found verified → its result."""
        rows = self.con.execute(
            "select content_hash, context, result from verifications "
            "where verifier = ? and verified",
            [verifier],
        ).fetchall()
        return {(r[0], r[1]): json.loads(r[2]) for r in rows}

    def put_verifications(
        self,
        verifier: str,
        results: Mapping[tuple[str, str], tuple[bool, Mapping[str, Any]]],
        now: dt.datetime,
    ) -> None:
        """Keep (content hash, context) → (verified, result) of ``verifier``, replacing old ones."""
        if not results:
            return
        keys = sorted(results)
        with self.transaction():
            self.con.execute(
                "delete from verifications where verifier = ? "
                "and list_contains(?, content_hash || ' ' || context)",
                [verifier, [f"{h} {c}" for h, c in keys]],  # content hashes have no space
            )
            insert_rows(self.con, "verifications", VERIFICATION_COLUMNS, [
                [h, c, verifier, bool(results[(h, c)][0]), _json(results[(h, c)][1]), now]
                for h, c in keys
            ])  # fmt: skip

    # ------------------------------------------------------------------ queries and export
    def query(self, sql: str) -> tuple[list[str], list[tuple[Any, ...]]]:
        """Run SQL and return (column names, rows)."""
        try:
            cur = self.con.execute(sql)
        except duckdb.Error as exc:
            raise StoreError(f"query failed: {exc}", hint="check the SQL (docs/schema.md)") from exc
        if cur.description is None:
            return [], []
        cols = [d[0] for d in cur.description]
        return cols, cur.fetchall()

    def fingerprints(self) -> dict[str, str]:
        """Table → a fingerprint of its rows (row count and the sum of DuckDB's row hashes).

        Equal fingerprints mean equal contents, whatever the physical layout (a rewritten row,
        a checkpoint); one pass over each table, blobs included. The build compares them
        with the previous build's to export only the tables that changed.
        """
        names = [r[0] for r in self.con.execute(
            "select table_name from information_schema.tables where table_schema = 'main' "
            "and table_type = 'BASE TABLE' order by table_name").fetchall()]  # fmt: skip
        out = {}
        for name in names:
            row = self.con.execute(
                f'select count(*), coalesce(sum(hash(t)::hugeint), 0)::varchar from "{name}" t'
            ).fetchone()
            out[name] = f"{row[0]}:{row[1]}" if row else ""
        return out

    def table_names(self) -> list[str]:
        """Tables and views in the main schema, sorted."""
        rows = self.con.execute(
            "select table_name from information_schema.tables "
            "where table_schema = 'main' order by table_name"
        ).fetchall()
        return [r[0] for r in rows]

    def column_types(self, name: str) -> list[tuple[str, str]]:
        """The exported columns of a table or view with their DuckDB types, in order.

        Blob columns (file contents) are left out, as in :meth:`export_table`.
        """
        if name not in self.table_names():
            raise StoreError(f"no table {name!r}")
        rows = self.con.execute(
            "select column_name, data_type from information_schema.columns "
            "where table_name = ? order by ordinal_position",
            [name],
        ).fetchall()
        return [(str(c), str(t)) for c, t in rows if t != "BLOB"]

    def export_table(self, name: str, path: Path, fmt: str) -> None:
        """Write one table or view to ``path`` as ``parquet`` or ``csv``, in a stable order."""
        # File contents (blobs) stay out of the exports: they are in the DuckDB file and
        # published one by one under files/, so a third copy would only double the site.
        typed = self.column_types(name)
        cols = [c for c, _ in typed]
        types = dict(typed)
        order = ", ".join(f'"{c}"' for c in cols if types.get(c) not in ("BLOB", "JSON"))
        select = ", ".join(f'"{c}"' for c in cols)
        target = str(path).replace("'", "''")
        query = f'select {select} from "{name}" order by {order or "1"}'
        if fmt == "parquet":
            self.con.execute(f"copy ({query}) to '{target}' (format parquet, compression zstd)")
            return
        # CSV is written here, not by DuckDB: every text cell (bundle text included) goes
        # through csv_cell, so no cell of a published CSV is a spreadsheet formula.
        import csv

        cur = self.con.execute(query)
        convert = [_csv_converter(types.get(c, "")) for c in cols]
        with open(path, "w", encoding="utf-8", newline="") as fh:
            w = csv.writer(fh, lineterminator="\n")
            w.writerow([csv_cell(c) for c in cols])
            while batch := cur.fetchmany(10_000):
                w.writerows([[v if f is None else f(v) for f, v in zip(convert, row, strict=True)]
                             for row in batch])  # fmt: skip

    def close(self) -> None:
        """Close the connection (checkpointing the file)."""
        self.con.close()

    # ------------------------------------------------------------------ internals
    def _put_files(self, table: str, content_hash: str, files: Mapping[str, bytes]) -> None:
        import hashlib

        row = self.con.execute(
            f"select count(*) from {table} where content_hash = ?", [content_hash]
        ).fetchone()
        if row and row[0]:
            return  # content-addressed: the same hash means the same files
        params = [
            [content_hash, path, hashlib.sha256(data).hexdigest(), len(data), data]
            for path, data in sorted(files.items())
        ]
        insert_rows(self.con, table, FILE_COLUMNS, params)

    def _files(self, table: str, content_hash: str) -> dict[str, bytes]:
        rows = self.con.execute(
            f"select path, content from {table} where content_hash = ? order by path",
            [content_hash],
        ).fetchall()
        return {r[0]: bytes(r[1]) for r in rows}


_CSV_NUMBERS = frozenset({"TINYINT", "SMALLINT", "INTEGER", "BIGINT", "HUGEINT", "UTINYINT",
                          "USMALLINT", "UINTEGER", "UBIGINT", "FLOAT", "DOUBLE"})  # fmt: skip
"""Column types DuckDB returns as Python ``int``/``float`` (or ``None``, which CSV writes empty)."""


def _csv_converter(column_type: str) -> Callable[[Any], Any] | None:
    """What :func:`_csv_value` does to a column's cells, chosen once per column.

    ``None`` for numbers (the cell as it is: a tenth of the time of a per-cell type test on
    the large tables); text is neutralised; any other type goes through :func:`_csv_value`.
    """
    if column_type in _CSV_NUMBERS:
        return None
    if column_type == "VARCHAR":
        return csv_cell
    return _csv_value


def _csv_value(value: Any) -> Any:
    """A store value as a CSV cell: numbers as DuckDB writes them, text neutralised."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return value
    if isinstance(value, dt.datetime | dt.date):
        return value.isoformat(sep=" ") if isinstance(value, dt.datetime) else value.isoformat()
    return csv_cell(value)


def _text(value: Any) -> str | None:
    """A manifest value for a VARCHAR column (``None`` stays ``None``)."""
    return None if value is None else str(value)


def _json(value: Any) -> str:
    """Deterministic JSON for the store (sorted keys; dates as ISO; inf/nan as null)."""

    def default(o: Any) -> Any:
        if isinstance(o, dt.date | dt.datetime):
            return o.isoformat()
        if hasattr(o, "tolist"):
            return o.tolist()
        raise TypeError(f"not JSON serialisable: {type(o).__name__}")

    def scrub(o: Any) -> Any:
        if isinstance(o, float) and not math.isfinite(o):
            return None if math.isnan(o) else ("inf" if o > 0 else "-inf")
        if isinstance(o, dict):
            return {str(k): scrub(v) for k, v in o.items()}
        if isinstance(o, list | tuple):
            return [scrub(v) for v in o]
        return o

    return json.dumps(scrub(value), sort_keys=True, default=default, separators=(",", ":"))


SANDBOX: dict[str, Any] = {
    "enable_external_access": False,
    "autoinstall_known_extensions": False,
    "autoload_known_extensions": False,
    "temp_directory": "",
    "lock_configuration": True,
}
"""DuckDB settings of ``gmeter query``'s connection: no file but the store, no extension,
no spilling to disk, and none of these can be changed back by the SQL (locked)."""


def query_store(path: Path, sql: str) -> tuple[list[str], list[tuple[Any, ...]]]:
    """Run an analyst's SQL on a sandboxed, read-only connection to the store.

    The connection is opened read-only with :data:`SANDBOX`: ``COPY``, ``EXPORT``,
    ``ATTACH``, ``read_csv``/``read_text``, ``INSTALL``/``LOAD`` and ``SET``/``PRAGMA`` of
    settings all fail, so the query can read the store and nothing else and can write
    nothing. Columns holding time-zone-aware values are returned as ISO text (no ``pytz``).

    Raises
    ------
    StoreError
        The store is missing or not a gmeter store, or the query fails (DuckDB's message).
    """
    path = Path(path)
    if not path.is_file():
        raise StoreError(f"no store at {path}", hint="run `gmeter ingest` first or pass --db PATH")
    try:
        con = duckdb.connect(str(path), read_only=True, config=SANDBOX)
    except duckdb.Error as exc:
        raise StoreError(f"cannot open the store {path}: {_one_line(exc)}",
                         hint="is it a gmeter store? Otherwise pass --db with another file"
                         ) from exc
    try:
        if Store(con, path, True).schema_version() == 0:
            raise StoreError(f"{path} is not a gmeter store", hint="run `gmeter ingest` first")
        try:
            rel = con.sql(sql)
            if rel is None:
                return [], []
            cols = list(rel.columns)
            exprs = [f"CAST(#{i} AS VARCHAR)" if "TIME ZONE" in str(t).upper() else f"#{i}"
                     for i, t in enumerate(rel.types, start=1)]
            if any(e.startswith("CAST") for e in exprs):
                rel = rel.project(", ".join(exprs))
            return cols, rel.fetchall()
        except duckdb.Error as exc:
            raise StoreError(f"query failed: {_one_line(exc)}",
                             hint="the query may read the store only (docs/schema.md)") from exc
    finally:
        con.close()


def _one_line(exc: BaseException) -> str:
    """An error message on one line, at most 500 characters."""
    text = " ".join(str(exc).split())
    return text if len(text) <= 500 else text[:497] + "..."


@contextmanager
def open_store(path: Path, *, read_only: bool = False, create: bool = True) -> Iterator[Store]:
    """Open (and migrate) the store at ``path``.

    Parameters
    ----------
    path : Path
        The DuckDB file. Its folder is created when writing.
    read_only : bool
        Open without write access (``gmeter query``, ``gmeter build``).
    create : bool
        Whether a missing file may be created (never in read-only mode).
    """
    path = Path(path)
    if read_only or not create:
        if not path.exists():
            raise StoreError(
                f"no store at {path}", hint="run `gmeter ingest` first or pass --db PATH"
            )
    else:
        path.parent.mkdir(parents=True, exist_ok=True)
    try:
        con = duckdb.connect(str(path), read_only=read_only)
    except duckdb.Error as exc:
        raise StoreError(
            f"cannot open the store {path}: {_one_line(exc)}",
            hint="is another gmeter writing to it? Otherwise pass --db with another file",
        ) from exc
    store = Store(con, path, read_only)
    try:
        if not read_only:
            store.migrate()
        elif store.schema_version() == 0:
            raise StoreError(f"{path} is not a gmeter store", hint="run `gmeter ingest` first")
        yield store
    except duckdb.Error as exc:
        # A full disk, a read-only folder, a file damaged underneath: one clear line. The
        # transaction of the bundle being written was rolled back; earlier ones are kept.
        raise StoreError(f"the store {path} failed: {_one_line(exc)}",
                         hint="check free disk space and that the folder is writable") from exc
    finally:
        try:
            store.close()
        except duckdb.Error:
            pass  # closing after a failure: the error above is the one to report


PUBLISHED_BLOCK_SIZE = 16384
"""Block size of the published copy: DuckDB's default (256 KiB) would spend a whole block on
each small table and column, several times the data itself."""
PUBLISHED_STORAGE = "v1.1.0"
"""The DuckDB storage format of the published ``data/gmeter.duckdb``: DuckDB 1.1 reads it."""


def compact_copy(src: Path, dest: Path) -> None:
    """Write a compact copy of the store at ``src`` to the new file ``dest`` (for publishing).

    ``COPY FROM DATABASE`` rewrites every table and view into a fresh file, so blocks freed by
    earlier deletes (re-scoring, retired bundles) are not shipped. File contents (the BLOB
    columns of ``bundle_files`` and ``benchmark_files``) are left out: the site publishes
    each file under ``files/`` and their SHA-256 and size stay in the tables. The copy is
    written twice (once to drop those columns, once into small blocks, since dropping a
    column does not shrink a file), so the published file is a few times its Parquet
    exports instead of a hundred (28 MB → 3.5 MB on this repository). It is written in the
    storage format of :data:`PUBLISHED_STORAGE` so that the oldest DuckDB gmeter declares
    (``duckdb>=1.1``) opens it, whichever newer DuckDB wrote it.
    """
    dest = Path(dest)
    dest.unlink(missing_ok=True)
    middle = dest.with_name(dest.name + ".full")
    middle.unlink(missing_ok=True)
    try:
        con = duckdb.connect()
        try:
            con.execute("attach ? as gmeter_mid", [str(middle)])
            con.execute("attach ? as gmeter_src (read_only)", [str(src)])
            con.execute("copy from database gmeter_src to gmeter_mid")
            con.execute("detach gmeter_src")
            blobs = con.execute(
                "select table_name, column_name from information_schema.columns "
                "where table_catalog = 'gmeter_mid' and data_type = 'BLOB' order by 1, 2"
            ).fetchall()
            for table, col in blobs:
                con.execute(f'alter table gmeter_mid.main."{table}" drop column "{col}"')
            con.execute(
                f"attach ? as gmeter_out (block_size {PUBLISHED_BLOCK_SIZE}, "
                f"storage_version '{PUBLISHED_STORAGE}')",
                [str(dest)],
            )
            con.execute("copy from database gmeter_mid to gmeter_out")
            con.execute("checkpoint gmeter_out")
            con.execute("detach gmeter_out")
            con.execute("detach gmeter_mid")
        finally:
            con.close()
    except duckdb.Error as exc:
        dest.unlink(missing_ok=True)
        raise StoreError(f"cannot write a compact copy of {src} to {dest}: {exc}") from exc
    finally:
        middle.unlink(missing_ok=True)
        Path(str(middle) + ".wal").unlink(missing_ok=True)


def views_copy(dest: Path, folder: Path, names: Sequence[str]) -> None:
    """Write a DuckDB file of views over the published Parquet files to the new file ``dest``.

    One view per table and view, ``select * from read_parquet('<name>.parquet')``, with the
    path relative so that the file works wherever ``data/`` is downloaded to: DuckDB run in
    that folder (or after ``set file_search_path``) reads the Parquet files beside it. The
    whole store in tens of kilobytes; a full copy stores long JSON text (chart data, score
    details) uncompressed and weighs ten times the Parquet. ``folder`` holds the Parquet
    files while the views are made (DuckDB reads each once to check it). Written in the
    storage format of :data:`PUBLISHED_STORAGE`, like the full copy.
    """
    dest = Path(dest)
    dest.unlink(missing_ok=True)
    where = str(folder).replace("'", "''")
    try:
        con = duckdb.connect()
        try:
            con.execute(f"set file_search_path = '{where}'")
            con.execute(
                f"attach ? as gmeter_views (block_size {PUBLISHED_BLOCK_SIZE}, "
                f"storage_version '{PUBLISHED_STORAGE}')",
                [str(dest)],
            )
            for name in names:
                view = name.replace('"', '""')
                parquet = f"{name}.parquet".replace("'", "''")
                con.execute(
                    f'create view gmeter_views.main."{view}" as '
                    f"select * from read_parquet('{parquet}')"
                )
            con.execute("checkpoint gmeter_views")
            con.execute("detach gmeter_views")
        finally:
            con.close()
    except duckdb.Error as exc:
        dest.unlink(missing_ok=True)
        raise StoreError(f"cannot write the views file {dest}: {exc}") from exc
