"""Releases: named, dated, immutable snapshots of which benchmark and bundle versions count.

They are recorded in the committed text file ``submissions/releases.toml``::

    [[release]]
    name = "2026.11"
    date = 2026-11-21
    notes = "First public release."
    [release.benchmarks]          # benchmark id -> content hash
    "maya-fbp-16" = "9f1c..."
    [release.bundles]             # "benchmark/bundle" -> content hash
    "maya-fbp-16/gpt2-345m-1" = "2b7e..."

    [release.sources]             # where each version is in git (added in gmeter 0.2)
    "maya-fbp-16" = { commit = "4c1e...", path = "submissions/maya-fbp-16" }
    "maya-fbp-16/gpt2-345m-1" = { commit = "4c1e...", path = "submissions/maya-fbp-16/gpt2-345m-1" }

``gmeter release NAME`` appends an entry made from the store's current versions (ingest first),
recording for every benchmark and bundle version the last commit of its folder when that
commit holds exactly that version (``commit = ""`` when the version was not committed yet).
An entry is never rewritten: a second release with the same name is refused, and ``ingest``
refuses a ``releases.toml`` whose entry differs from what the store already recorded.

Every published number of a release is frozen in a committed file (:mod:`pipeline.store.frozen`)::

    [release.frozen]              # added in gmeter 0.2: the release's numbers, never recomputed
    path = "releases/2026.11.csv"
    sha256 = "5d2e..."

``ingest`` loads those numbers after checking the SHA-256; a changed file is refused, naming
it, and that release is listed as missing while the others publish. Recomputing a frozen
release with later code (``gmeter score``) only records errata.

History survives a fresh clone: ``ingest`` rebuilds every version a release names that the
store lacks from git (:mod:`pipeline.history`: the recorded commit first, then the folder's
history; content hash verified). Entries without ``sources`` (older files) are found the
same way. A version that cannot be recovered is an error naming it.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pipeline.errors import Problem, ReleaseError, ValidationFailed
from pipeline.history import (
    COMMIT,
    Source,
    current_branch,
    file_history,
    find_version,
    last_commit,
    read_version,
    relative_to_repo,
    repo_root,
    safe_path,
)
from pipeline.limits import bad_text, parse_toml
from pipeline.manifest import load_benchmark_manifest, load_submission_manifest
from pipeline.store import CURRENT, Store
from pipeline.store.frozen import FrozenBenchmark, FrozenError, sha256_of
from pipeline.store.frozen import file_name as frozen_file_name
from pipeline.store.frozen import parse as parse_frozen
from pipeline.store.frozen import read as read_frozen
from pipeline.store.frozen import render as render_frozen
from pipeline.toml_writer import toml_string

RELEASE_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,39}$")
HASH = re.compile(r"^[0-9A-Za-z]{1,128}$")
MAX_NOTES = 20_000
"""Longest release note (characters)."""


@dataclass(frozen=True)
class FrozenRef:
    """Where a release's published numbers are: a path relative to ``releases.toml``."""

    path: str
    sha256: str


@dataclass(frozen=True)
class Release:
    """One entry of ``releases.toml``.

    ``sources`` maps ``benchmark`` and ``benchmark/bundle`` keys to where that version is in
    git (empty for entries written before gmeter recorded it). ``uncommitted`` lists the
    versions whose folder had no commit holding them when the release was recorded.
    """

    name: str
    date: dt.date
    notes: str
    benchmarks: dict[str, str]
    bundles: dict[str, str]
    sources: dict[str, Source] = field(default_factory=dict)
    uncommitted: tuple[str, ...] = ()
    frozen: FrozenRef | None = None

    def members(self) -> list[tuple[str, str, str]]:
        """(benchmark, bundle, hash) triples, sorted as tuples (the store's order)."""
        out = []
        for key, chash in self.bundles.items():
            bench, _, bundle = key.partition("/")
            out.append((bench, bundle, chash))
        return sorted(out)


def _sources(where: str, field_name: str, raw: Any,
             problems: list[Problem]) -> dict[str, Source]:
    out: dict[str, Source] = {}
    if raw is None:
        return out
    if not isinstance(raw, dict):
        problems.append(Problem(where, field_name, "must be a table", ""))
        return out
    for key, val in raw.items():
        f = f"{field_name}.{key}"
        if not isinstance(val, dict) or set(val) - {"commit", "path"}:
            problems.append(Problem(where, f, "must be { commit = ..., path = ... }", ""))
            continue
        commit, path = val.get("commit", ""), val.get("path", "")
        if not isinstance(commit, str) or (commit and not COMMIT.match(commit)):
            problems.append(Problem(where, f"{f}.commit", f"{commit!r} is not a commit id",
                                    "give the 40-hex-digit commit, or \"\""))
            continue
        if not isinstance(path, str) or not safe_path(path):
            problems.append(Problem(where, f"{f}.path", f"{path!r} is not a repository path",
                                    "give the folder's path from the repository root"))
            continue
        out[str(key)] = Source(commit, path)
    return out


SHA256 = re.compile(r"^[0-9a-f]{64}$")


def _frozen(where: str, field_name: str, name: str, raw: Any,
            problems: list[Problem]) -> FrozenRef | None:
    if raw is None:
        return None
    fix = "restore the entry `gmeter release` wrote"
    if not isinstance(raw, dict) or set(raw) != {"path", "sha256"}:
        problems.append(Problem(where, field_name, "must be { path = ..., sha256 = ... }", fix))
        return None
    path, sha = raw["path"], raw["sha256"]
    expected = frozen_file_name(name)
    if not isinstance(path, str) or path not in (expected, expected[:-4] + ".parquet"):
        problems.append(Problem(where, f"{field_name}.path", f"{path!r} is not {expected!r}",
                                "a release's frozen file is releases/<name>.csv"))
        return None
    if not isinstance(sha, str) or not SHA256.match(sha):
        problems.append(Problem(where, f"{field_name}.sha256", "is not a SHA-256 (64 hex digits)",
                                fix))
        return None
    return FrozenRef(path, sha)


def read_releases(path: Path) -> list[Release]:
    """Parse ``releases.toml`` (a missing file means no releases).

    Raises
    ------
    ValidationFailed
        Every problem of the file (syntax, names, dates, hashes, sources), at once.
    """
    releases, bad = parse_releases(path)
    if bad:
        raise ValidationFailed([p for _, p in bad])
    return releases


def parse_releases(path: Path) -> tuple[list[Release], list[tuple[str, Problem]]]:
    """Parse ``releases.toml`` entry by entry: the good releases, and (label, problem) per bad one.

    A malformed entry is left out (its label is its name, or ``release[i]`` without one), so
    one bad entry never hides the others; only a file that cannot be read or parsed at all
    raises.

    Raises
    ------
    ValidationFailed
        When the file cannot be read, is not TOML, or ``release`` is not an array of tables.
    """
    if not path.exists():
        return [], []
    where = str(path)
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise ValidationFailed([Problem(where, "-", f"cannot be read ({exc.strerror})",
                                        "check the file's permissions")]) from exc
    data, problems = parse_toml(where, raw)
    if data is None or any(p.severity == "error" for p in problems):
        raise ValidationFailed(problems)
    out: list[Release] = []
    bad: list[tuple[str, Problem]] = []
    seen: set[str] = set()
    entries = data.get("release", [])
    if not isinstance(entries, list):
        raise ValidationFailed([Problem(where, "release", "must be an array of tables",
                                        "write each release as [[release]]")])
    for i, entry in enumerate(entries):
        field_name = f"release[{i}]"
        mine: list[Problem] = []
        name = entry.get("name") if isinstance(entry, dict) else None
        label = name if isinstance(name, str) and RELEASE_NAME.match(name) and \
            name not in seen else field_name  # a second entry of a name never hides the first
        rel = _parse_entry(where, field_name, entry, seen, mine)
        if rel is None or mine:
            bad += [(label, p) for p in mine]
            continue
        out.append(rel)
    return out, bad


def _parse_entry(where: str, field_name: str, entry: Any, seen: set[str],
                 problems: list[Problem]) -> Release | None:
    """One ``[[release]]`` table as a :class:`Release`; its problems appended to ``problems``."""
    if not isinstance(entry, dict):
        problems.append(Problem(where, field_name, "must be a table", "write [[release]]"))
        return None
    name = entry.get("name")
    if not isinstance(name, str) or not RELEASE_NAME.match(name) or name == CURRENT:
        problems.append(Problem(where, f"{field_name}.name", f"{name!r} is not a valid name",
                                "use letters, digits, '.', '_', '-' (not 'current')"))
        return None
    if name in seen:
        problems.append(Problem(where, f"{field_name}.name", f"{name!r} appears twice",
                                "release names are unique: remove the second entry"))
        return None
    seen.add(name)
    date = entry.get("date")
    if not isinstance(date, dt.date) or isinstance(date, dt.datetime):
        problems.append(Problem(where, f"{field_name}.date", "must be a date YYYY-MM-DD",
                                "restore the entry `gmeter release` wrote"))
        return None
    benches = entry.get("benchmarks", {})
    bundles = entry.get("bundles", {})
    if not isinstance(benches, dict) or not isinstance(bundles, dict):
        problems.append(Problem(where, field_name, "benchmarks/bundles must be tables",
                                "restore the entry `gmeter release` wrote"))
        return None
    bad = [k for k, v in [*benches.items(), *bundles.items()]
           if not isinstance(v, str) or not HASH.match(v)]
    bad += [k for k in bundles if k.count("/") != 1]
    if bad:
        problems.append(Problem(where, f"{field_name}.{bad[0]}",
                                "is not a benchmark[/bundle] key with a content hash",
                                "restore the entry `gmeter release` wrote"))
        return None
    notes = entry.get("notes", "")
    sources = _sources(where, f"{field_name}.sources", entry.get("sources"), problems)
    frozen = _frozen(where, f"{field_name}.frozen", name, entry.get("frozen"), problems)
    return Release(name, date, str(notes)[:MAX_NOTES],
                   {str(k): str(v) for k, v in benches.items()},
                   {str(k): str(v) for k, v in bundles.items()}, sources, frozen=frozen)


@dataclass(frozen=True)
class _Missing:
    key: str  # "benchmark" or "benchmark/bundle"
    content_hash: str


def _recover(store: Store, root: Path | None, submissions: str, rel: Release,
             missing: list[_Missing]) -> list[str]:
    """Rebuild ``missing`` versions of ``rel`` from git into the store; return those not found.

    Benchmarks first (a bundle version is stored with its benchmark's version).
    """
    lost: list[str] = []
    now = dt.datetime.now(dt.UTC).replace(tzinfo=None, microsecond=0)
    for m in sorted(missing, key=lambda m: ("/" in m.key, m.key)):
        if root is None:
            lost.append(m.key)
            continue
        src = rel.sources.get(m.key)
        path = src.path if src else f"{submissions}/{m.key}".lstrip("/")
        kind = "bundle" if "/" in m.key else "benchmark"
        found = find_version(root, path, kind, m.content_hash, src.commit if src else "")
        stored = found is not None and _store_version(store, rel, m.key, kind, found.files,
                                                      found.content_hash, found.source, now)
        if not stored:
            lost.append(m.key)
    return lost


def _store_version(store: Store, rel: Release, key: str, kind: str, files: dict[str, bytes],
                   chash: str, src: Source, now: dt.datetime) -> bool:
    """Put one recovered version in the store (not current); ``False`` if it is unusable."""
    if kind == "benchmark":
        manifest, _, _ = load_benchmark_manifest(f"{src.path}/benchmark.toml",
                                                 files.get("benchmark.toml", b""), key)
        if manifest is None or not isinstance(manifest.get("track"), str):
            return False
        created = manifest.get("created")
        with store.transaction():
            store.put_benchmark(
                benchmark_id=key, content_hash=chash, track=str(manifest["track"]),
                title=str(manifest.get("title", key)), version=str(manifest.get("version", "")),
                description=str(manifest.get("description", "")),
                licence=str(manifest.get("licence", "")),
                created=created if isinstance(created, dt.date) else None, manifest=manifest,
                source_path=src.path, git_commit=src.commit, files=files, now=now,
                current=False)
        return True
    bench, _, bundle = key.partition("/")
    bench_hash = rel.benchmarks.get(bench, "")
    track = None
    for b in store.benchmarks(current_only=False):
        if b.id == bench and (b.content_hash == bench_hash or track is None):
            track = b.track
    manifest, _, _ = load_submission_manifest(f"{src.path}/submission.toml",
                                              files.get("submission.toml", b""), track,
                                              today=dt.date.max)
    if manifest is None:
        return False
    with store.transaction():
        store.put_bundle(benchmark=bench, bundle_id=bundle, content_hash=chash,
                         manifest=manifest, source_path=src.path, git_commit=src.commit,
                         files=files, now=now,
                         benchmark_version=store.benchmark_version_of(bench, bench_hash),
                         current=False)
    return True


def _canonical(value: Any) -> str:
    """A TOML value as text that ignores table key order (dates as ISO text)."""
    import json

    return json.dumps(value, sort_keys=True, default=str, ensure_ascii=False)


def _entry_key(entry: Mapping[str, Any]) -> tuple[tuple[str, str], ...]:
    """What of a recorded release never changes: all but its sources (hints) and frozen table."""
    return tuple(sorted((str(k), _canonical(v)) for k, v in entry.items()
                        if k not in ("sources", "frozen")))


def _entries(where: str, data: bytes) -> list[dict[str, Any]]:
    """The ``[[release]]`` tables of one version of ``releases.toml`` that carry a name."""
    from pipeline.limits import parse_toml

    parsed, _ = parse_toml(where, data)
    raw = parsed.get("release", []) if parsed else []
    return [e for e in raw if isinstance(e, dict) and isinstance(e.get("name"), str)] \
        if isinstance(raw, list) else []


@dataclass(frozen=True)
class _Recorded:
    commit: str
    key: tuple[tuple[str, str], ...]
    frozen: tuple[str, str] | None  # (commit, repr of the first [release.frozen])


def rewritten_releases(path: Path, root: Path | None) -> dict[str, tuple[str, str]]:
    """Release name → (commit, what changed) for every release git history recorded otherwise.

    A committed release is immutable: its entry as first committed (name, date, notes,
    benchmark and bundle versions) and its ``[release.frozen]`` table as first committed
    (added once, by ``gmeter release`` or when an older release is frozen) must be what
    ``releases.toml`` says now; a recorded release may not disappear either. This catches a
    frozen file rewritten together with its SHA-256, which the file's own hash cannot. Outside
    git, or for a release not committed yet, there is nothing to compare.
    """
    if root is None:
        return {}
    rel_path = relative_to_repo(root, path)
    if rel_path is None:
        return {}
    first: dict[str, _Recorded] = {}
    for commit, data in file_history(root, rel_path):
        for e in _entries(rel_path, data):
            rec = first.setdefault(e["name"], _Recorded(commit, _entry_key(e), None))
            if rec.frozen is None and e.get("frozen") is not None:
                first[e["name"]] = _Recorded(rec.commit, rec.key, (commit, _canonical(e["frozen"])))
    if not first:
        return {}
    try:
        now: dict[str, dict[str, Any]] = {}
        for e in _entries(str(path), path.read_bytes()):
            now.setdefault(e["name"], e)  # a second entry of a name is refused as malformed
    except OSError:
        return {}
    out: dict[str, tuple[str, str]] = {}
    for name, rec in sorted(first.items()):
        cur = now.get(name)
        if cur is None:
            out[name] = (rec.commit, "was removed from releases.toml")
        elif _entry_key(cur) != rec.key:
            out[name] = (rec.commit, "its entry in releases.toml differs from the one first "
                         f"committed ({rec.commit[:12]})")
        elif rec.frozen is not None and _canonical(cur.get("frozen")) != rec.frozen[1]:
            out[name] = (rec.frozen[0], "its [release.frozen] path or SHA-256 in releases.toml "
                         f"differs from the one first committed ({rec.frozen[0][:12]})")
    return out


def sync_releases(store: Store, path: Path) -> list[Problem]:
    """Record every release of ``releases.toml`` in the store; return the problems met.

    A version a release names that the store lacks is rebuilt from git history (content
    hash verified). A frozen release's numbers are loaded from its frozen file after its
    SHA-256 is checked. A release that cannot be published — a changed (tampered) or missing
    frozen file, or, for a release without one, a version that cannot be recovered — gives
    a ``warning`` naming it, is listed as missing on the site, and never stops the others.

    Raises
    ------
    ReleaseError
        When an entry differs from the release the store recorded (releases are immutable).
    ValidationFailed
        When ``releases.toml`` itself is malformed.
    """
    problems: list[Problem] = []
    missing_releases: list[tuple[str, str]] = []
    stored = {r[0] for r in store.releases()}
    root = repo_root(path.parent) if path.parent.exists() else None
    submissions = (relative_to_repo(root, path.parent) or "") if root else ""
    if submissions == ".":
        submissions = ""
    rewritten = rewritten_releases(path, root)
    releases, malformed = parse_releases(path)
    for label, p in malformed:
        problems.append(Problem(p.file, p.field, f"{p.message} — release {label} is not "
                                "published (listed as missing)", p.fix, "warning"))
        if label not in rewritten and label not in {m[0] for m in missing_releases}:
            missing_releases.append((label, f"its entry in releases.toml is malformed "
                                     f"({p.field}: {p.message})"))
            if label in stored:
                store.drop_release(label)
    for name, (commit, what) in sorted(rewritten.items()):
        problems.append(Problem(
            str(path), f"release {name}", f"{what}: a recorded release never changes — "
            f"release {name} is not published (listed as missing)",
            f"restore it as commit {commit[:12]} has it (`git show {commit[:12]}:"
            f"{relative_to_repo(root, path) if root else path}`)", "warning"))
        missing_releases.append((name, what))
        if name in stored:
            store.drop_release(name)
    frozen_before = ""
    for rel in releases:
        if rel.name in rewritten:
            continue
        if rel.frozen is None and frozen_before:
            # `gmeter release` freezes every release it cuts: an unfrozen entry after a frozen
            # one was written by hand (e.g. a pull request's [[release]]); its numbers would be
            # recomputed by whatever code builds the site.
            what = (f"has no [release.frozen] numbers although the earlier release "
                    f"{frozen_before} has them: it was not cut by `gmeter release`")
            problems.append(Problem(str(path), f"release {rel.name}", f"{what} — release "
                                    f"{rel.name} is not published (listed as missing)",
                                    "remove the entry; a maintainer cuts releases on main with "
                                    "`gmeter release NAME`", "warning"))
            missing_releases.append((rel.name, what))
            if rel.name in stored:
                store.drop_release(rel.name)
            continue
        if rel.frozen is not None:
            frozen_before = rel.name
        if rel.name in stored:
            if sorted(store.release_members(rel.name)) != sorted(rel.members()) or \
                    store.release_benchmarks(rel.name) != rel.benchmarks:
                raise ReleaseError(
                    f"release {rel.name} in {path} differs from the one recorded in the store",
                    hint="releases are immutable: restore the entry and record a new release",
                )
        frozen = None
        if rel.frozen is not None:
            shown = f"{path.parent / rel.frozen.path}"
            try:
                frozen = read_frozen(path.parent / rel.frozen.path, rel.frozen.sha256,
                                     shown=shown)
            except FrozenError as exc:
                p = exc.problem
                problems.append(Problem(p.file, p.field, f"{p.message} — release {rel.name} "
                                        "is not published (listed as missing)", p.fix,
                                        "warning"))
                missing_releases.append((rel.name, f"its frozen file {rel.frozen.path} "
                                         f"{p.message.split(':')[0]}"))
                if rel.name in stored:
                    store.drop_release(rel.name)
                continue
        if rel.name in stored and (frozen is None or store.release_file(rel.name) == (
                rel.frozen.path if rel.frozen else "", rel.frozen.sha256 if rel.frozen else "")):
            continue
        missing = [_Missing(b, h) for b, h in sorted(rel.benchmarks.items())
                   if not store.has_benchmark_version(b, h)]
        missing += [_Missing(f"{b}/{u}", h) for b, u, h in rel.members()
                    if not store.has_bundle_version(b, u, h)]
        lost = _recover(store, root, submissions, rel, missing) if missing else []
        if lost:
            where = "not a git repository" if root is None else "not found in git history"
            listed = ", ".join(f"{k}@{(rel.benchmarks.get(k) or rel.bundles.get(k, ''))[:12]}"
                               for k in lost[:20]) + (" …" if len(lost) > 20 else "")
            if frozen is None:
                problems.append(Problem(
                    str(path), f"release {rel.name}",
                    f"{len(lost)} version(s) cannot be recovered ({where}): {listed}; the "
                    "release is not published (listed as missing), the others are",
                    "restore the full git history (`git fetch --unshallow`), or ingest a store "
                    "that holds those versions", "warning"))
                missing_releases.append((rel.name, f"{len(lost)} version(s) cannot be "
                                         f"recovered ({where})"))
                continue
            problems.append(Problem(
                str(path), f"release {rel.name}",
                f"{len(lost)} version(s) cannot be recovered ({where}): {listed}; its frozen "
                "numbers are published, errata cannot be computed",
                "restore the full git history (`git fetch --unshallow`)", "warning"))
        store.put_release(rel.name, rel.date, rel.notes, "", rel.members(), rel.benchmarks)
        if frozen is not None and rel.frozen is not None:
            load_frozen(store, rel.name, frozen, rel.date)
            store.put_release_file(rel.name, rel.frozen.path, rel.frozen.sha256)
    store.set_missing_releases(missing_releases)
    return problems


def load_frozen(store: Store, name: str, frozen: Mapping[str, FrozenBenchmark],
                date: dt.date) -> None:
    """Replace every stored number of release ``name`` by its frozen numbers."""
    when = dt.datetime(date.year, date.month, date.day)
    for gone in sorted(set(store.scored_benchmarks(name)) - set(frozen)):
        store.delete_scores(name, gone)
    for bench, fb in sorted(frozen.items()):
        store.replace_scores(
            release=name, benchmark=bench, benchmark_hash=fb.benchmark_hash, track=fb.track,
            rows=fb.rows, charts=fb.charts, code_version=fb.code_version, seed=fb.seed,
            options=fb.options, notes=fb.notes, now=when)


def releases_file_for(paths: Sequence[Path]) -> Path:
    """The ``releases.toml`` of the submissions folder that ``paths`` belong to.

    A submissions folder holds it directly; for a benchmark folder it is one level up, for a
    bundle folder two. The first path decides; ``submissions/releases.toml`` otherwise.
    """
    from pipeline.bundles import is_benchmark_dir, is_bundle_dir

    for raw in paths:
        p = Path(raw)
        if p.is_file():
            p = p.parent
        if is_bundle_dir(p):
            return p.parent.parent / "releases.toml"
        if is_benchmark_dir(p):
            return p.parent / "releases.toml"
        if p.is_dir():
            return p / "releases.toml"
    return Path("submissions") / "releases.toml"


def _source_of(root: Path | None, folder: Path, kind: str, chash: str) -> Source | None:
    """The last commit of ``folder`` when it holds exactly the version ``chash``."""
    if root is None:
        return None
    rel = relative_to_repo(root, folder)
    if rel is None or not safe_path(rel):
        return None
    commit = last_commit(root, rel)
    if commit is None:
        return Source("", rel)
    found = read_version(root, commit, rel, kind)
    return Source(commit if found is not None and found.content_hash == chash else "", rel)


def record_release(
    store: Store, path: Path, name: str, *, date: dt.date | None = None, notes: str = ""
) -> Release:
    """Append a release made of the store's current versions to ``releases.toml``.

    Raises
    ------
    ReleaseError
        If the name is invalid or taken, or the store holds nothing to release.
    """
    if not RELEASE_NAME.match(name) or name == CURRENT:
        raise ReleaseError(f"{name!r} is not a valid release name",
                           hint="use letters, digits, '.', '_', '-' (e.g. 2026.11)")
    _on_release_branch(path)
    existing = read_releases(path)
    if any(r.name == name for r in existing):
        raise ReleaseError(f"release {name} already exists in {path}",
                           hint="releases are immutable: choose a new name")
    benches = {b.id: b.content_hash for b in store.benchmarks()}
    bundles = {f"{b.benchmark}/{b.id}": b.content_hash for b in store.bundles()}
    if not benches:
        raise ReleaseError("the store holds no benchmarks", hint="run `gmeter ingest` first")
    if len(notes) > MAX_NOTES:
        raise ReleaseError(f"--notes is {len(notes):,} characters, over {MAX_NOTES:,}",
                           hint="keep release notes short; link to a longer text")
    try:
        notes.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise ReleaseError("--notes is not valid Unicode text",
                           hint="give the notes as UTF-8 text") from exc
    if bad_text(notes):
        raise ReleaseError(f"--notes {bad_text(notes)}",
                           hint="write the notes as plain text (line breaks are fine)")
    date = date or dt.date.today()
    if existing and date < max(r.date for r in existing):
        raise ReleaseError(f"{date} is before the last release",
                           hint="releases are recorded in date order")
    folder = path.parent
    frozen_path = frozen_file_name(name)
    data = _published_numbers(store, CURRENT, f"release {name}")
    sha = _write_frozen(folder / frozen_path, data)
    root = repo_root(folder) if folder.exists() else None
    sources: dict[str, Source] = {}
    for key, chash in sorted(benches.items()):
        src = _source_of(root, folder / key, "benchmark", chash)
        if src is not None:
            sources[key] = src
    for key, chash in sorted(bundles.items()):
        src = _source_of(root, folder / key, "bundle", chash)
        if src is not None:
            sources[key] = src
    lines = ["", "[[release]]", f"name = {toml_string(name)}", f"date = {date.isoformat()}",
             f"notes = {toml_string(notes)}", "[release.benchmarks]"]
    lines += [f"{toml_string(k)} = {toml_string(v)}" for k, v in sorted(benches.items())]
    lines.append("[release.bundles]")
    lines += [f"{toml_string(k)} = {toml_string(v)}" for k, v in sorted(bundles.items())]
    if sources:
        lines.append("[release.sources]")
        lines += [f"{toml_string(k)} = {{ commit = {toml_string(v.commit)}, "
                  f"path = {toml_string(v.path)} }}" for k, v in sorted(sources.items())]
    lines += _frozen_lines(frozen_path, sha)
    text = path.read_text(encoding="utf-8") if path.exists() else (
        "# Releases of this benchmark repository: written by `gmeter release`, never edited.\n")
    new_text = text.rstrip("\n") + "\n" + "\n".join(lines) + "\n"
    tmp = path.with_name(f".{path.name}.tmp")
    try:
        tmp.write_text(new_text, encoding="utf-8")
        tmp.replace(path)
    finally:
        tmp.unlink(missing_ok=True)
    uncommitted = tuple(k for k, v in sorted(sources.items()) if not v.commit)
    rel = Release(name, date, notes, benches, bundles, sources, uncommitted,
                  FrozenRef(frozen_path, sha))
    store.put_release(name, date, notes, "", rel.members(), benches)
    load_frozen(store, name, parse_frozen(data, str(folder / frozen_path)), date)
    store.put_release_file(name, frozen_path, sha)
    return rel


RELEASE_BRANCH = "main"
"""Releases are cut on this branch only (``$GMETER_RELEASE_BRANCH`` names another)."""


def _on_release_branch(path: Path) -> None:
    """Refuse to cut a release in a git work tree that is not on the release branch."""
    import os

    folder = path.parent
    root = repo_root(folder) if folder.exists() else None
    if root is None:
        return  # outside git (a scratch folder): nothing to protect
    want = os.environ.get("GMETER_RELEASE_BRANCH", "").strip() or RELEASE_BRANCH
    branch = current_branch(root)
    if branch != want:
        raise ReleaseError(
            f"releases are cut on {want!r} only; this work tree is on "
            f"{branch or 'a detached HEAD'!r}",
            hint=f"merge into {want} and run `gmeter release` there (a pull request never "
                 "adds a release)")


def _published_numbers(store: Store, release: str, what: str) -> bytes:
    """Score ``release`` with this gmeter and return its numbers as a frozen file's bytes.

    Raises
    ------
    ReleaseError
        When a benchmark fails to score or lacks versions (nothing half-scored is frozen).
    """
    from pipeline.score import score_all

    report = score_all(store, releases=[release], force=release != CURRENT)
    bad = [r for r in report.results if r.status in ("failed", "incomplete")]
    if bad:
        raise ReleaseError(
            f"{what}: {bad[0].benchmark} cannot be scored ({'; '.join(bad[0].notes)[:300]})",
            hint="fix it (`gmeter score -v`) before freezing: a release freezes every number")
    data = render_frozen(store.release_rows(release))
    try:
        parse_frozen(data, f"the frozen file of {what}")  # what is written reads back
    except FrozenError as exc:
        raise ReleaseError(f"{exc.problem.file}: {exc.problem.field}: {exc.problem.message}",
                           hint="report a gmeter bug: a release must read back") from exc
    return data


def _write_frozen(target: Path, data: bytes) -> str:
    """Write a frozen file atomically; return its SHA-256."""
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = target.with_name(f".{target.name}.tmp")
    try:
        tmp.write_bytes(data)
        tmp.replace(target)
    finally:
        tmp.unlink(missing_ok=True)
    return sha256_of(data)


def _frozen_lines(frozen_path: str, sha: str) -> list[str]:
    return ["[release.frozen]", f"path = {toml_string(frozen_path)}",
            f"sha256 = {toml_string(sha)}"]


def freeze_release(store: Store, path: Path, name: str) -> Release:
    """Freeze a release recorded before gmeter froze releases, as this gmeter computes it.

    The release is scored from the exact versions it names, its numbers written to
    ``releases/<name>.csv`` and a ``[release.frozen]`` table added to its entry (the only
    change ever made to a recorded entry: one that has it is refused).

    Raises
    ------
    ReleaseError
        If the release is unknown or already frozen, or cannot be scored.
    """
    _on_release_branch(path)
    existing = {r.name: r for r in read_releases(path)}
    rel = existing.get(name)
    if rel is None:
        raise ReleaseError(f"no release {name!r} in {path}",
                           hint="record it first with `gmeter release NAME`")
    if rel.frozen is not None:
        raise ReleaseError(f"release {name} is already frozen ({rel.frozen.path})",
                           hint="a frozen release never changes; recomputing only adds errata")
    if name not in {r[0] for r in store.releases()}:
        raise ReleaseError(f"release {name} is not in the store",
                           hint="run `gmeter ingest` first")
    data = _published_numbers(store, name, f"release {name}")
    frozen_path = frozen_file_name(name)
    text = path.read_text(encoding="utf-8")
    lines = text.split("\n")
    start = next(i for i, line in enumerate(lines) if line.strip() == f"name = {toml_string(name)}")
    end = next((i for i in range(start + 1, len(lines)) if lines[i].strip() == "[[release]]"),
               len(lines))
    while end > start and not lines[end - 1].strip():
        end -= 1
    sha = _write_frozen(path.parent / frozen_path, data)
    new_text = "\n".join(lines[:end] + _frozen_lines(frozen_path, sha) + lines[end:])
    tmp = path.with_name(f".{path.name}.tmp")
    try:
        tmp.write_text(new_text, encoding="utf-8")
        tmp.replace(path)
    finally:
        tmp.unlink(missing_ok=True)
    load_frozen(store, name, parse_frozen(data, str(path.parent / frozen_path)), rel.date)
    store.put_release_file(name, frozen_path, sha)
    return read_releases(path)[[r.name for r in read_releases(path)].index(name)]
