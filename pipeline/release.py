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

History survives a fresh clone: ``ingest`` rebuilds every version a release names that the
store lacks from git (:mod:`pipeline.history`: the recorded commit first, then the folder's
history; content hash verified). Entries without ``sources`` (older files) are found the
same way. A version that cannot be recovered is an error naming it.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pipeline.errors import Problem, ReleaseError, ValidationFailed
from pipeline.history import (
    COMMIT,
    Source,
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
from pipeline.toml_writer import toml_string

RELEASE_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,39}$")
HASH = re.compile(r"^[0-9A-Za-z]{1,128}$")
MAX_NOTES = 20_000
"""Longest release note (characters)."""


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


def read_releases(path: Path) -> list[Release]:
    """Parse ``releases.toml`` (a missing file means no releases).

    Raises
    ------
    ValidationFailed
        Every problem of the file (syntax, names, dates, hashes, sources), at once.
    """
    if not path.exists():
        return []
    where = str(path)
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise ValidationFailed([Problem(where, "-", f"cannot be read ({exc.strerror})",
                                        "check the file's permissions")]) from exc
    data, problems = parse_toml(where, raw)
    if data is None:
        raise ValidationFailed(problems)
    out: list[Release] = []
    seen: set[str] = set()
    entries = data.get("release", [])
    if not isinstance(entries, list):
        raise ValidationFailed([Problem(where, "release", "must be an array of tables",
                                        "write each release as [[release]]")])
    for i, entry in enumerate(entries):
        field_name = f"release[{i}]"
        if not isinstance(entry, dict):
            problems.append(Problem(where, field_name, "must be a table", "write [[release]]"))
            continue
        name = entry.get("name")
        if not isinstance(name, str) or not RELEASE_NAME.match(name) or name == CURRENT:
            problems.append(Problem(where, f"{field_name}.name", f"{name!r} is not a valid name",
                                    "use letters, digits, '.', '_', '-' (not 'current')"))
            continue
        if name in seen:
            problems.append(Problem(where, f"{field_name}.name", f"{name!r} appears twice",
                                    "release names are unique"))
        seen.add(name)
        date = entry.get("date")
        if not isinstance(date, dt.date) or isinstance(date, dt.datetime):
            problems.append(Problem(where, f"{field_name}.date", "must be a date YYYY-MM-DD", ""))
            continue
        benches = entry.get("benchmarks", {})
        bundles = entry.get("bundles", {})
        if not isinstance(benches, dict) or not isinstance(bundles, dict):
            problems.append(Problem(where, field_name, "benchmarks/bundles must be tables", ""))
            continue
        bad = [k for k, v in [*benches.items(), *bundles.items()]
               if not isinstance(v, str) or not HASH.match(v)]
        bad += [k for k in bundles if k.count("/") != 1]
        if bad:
            problems.append(Problem(where, f"{field_name}.{bad[0]}",
                                    "is not a benchmark[/bundle] key with a content hash",
                                    "restore the entry `gmeter release` wrote"))
            continue
        notes = entry.get("notes", "")
        sources = _sources(where, f"{field_name}.sources", entry.get("sources"), problems)
        out.append(Release(name, date, str(notes)[:MAX_NOTES],
                           {str(k): str(v) for k, v in benches.items()},
                           {str(k): str(v) for k, v in bundles.items()}, sources))
    if any(p.severity == "error" for p in problems):
        raise ValidationFailed(problems)
    return out


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


def sync_releases(store: Store, path: Path) -> list[Problem]:
    """Record every release of ``releases.toml`` in the store; return the problems met.

    A version a release names that the store lacks is rebuilt from git history (content
    hash verified). A release with a version that cannot be recovered is not recorded and
    gives an ``error`` naming every such version; the other releases are still recorded.

    Raises
    ------
    ReleaseError
        When an entry differs from the release the store recorded (releases are immutable).
    ValidationFailed
        When ``releases.toml`` itself is malformed.
    """
    problems: list[Problem] = []
    stored = {r[0] for r in store.releases()}
    root = repo_root(path.parent) if path.parent.exists() else None
    submissions = (relative_to_repo(root, path.parent) or "") if root else ""
    if submissions == ".":
        submissions = ""
    for rel in read_releases(path):
        if rel.name in stored:
            if sorted(store.release_members(rel.name)) != sorted(rel.members()) or \
                    store.release_benchmarks(rel.name) != rel.benchmarks:
                raise ReleaseError(
                    f"release {rel.name} in {path} differs from the one recorded in the store",
                    hint="releases are immutable: restore the entry and record a new release",
                )
            continue
        missing = [_Missing(b, h) for b, h in sorted(rel.benchmarks.items())
                   if not store.has_benchmark_version(b, h)]
        missing += [_Missing(f"{b}/{u}", h) for b, u, h in rel.members()
                    if not store.has_bundle_version(b, u, h)]
        lost = _recover(store, root, submissions, rel, missing) if missing else []
        if lost:
            where = "not a git repository" if root is None else "not found in git history"
            problems.append(Problem(
                str(path), f"release {rel.name}",
                f"{len(lost)} version(s) cannot be recovered ({where}): "
                + ", ".join(f"{k}@{(rel.benchmarks.get(k) or rel.bundles.get(k, ''))[:12]}"
                            for k in lost[:20]) + (" …" if len(lost) > 20 else ""),
                "restore the full git history (`git fetch --unshallow`), or ingest a store "
                "that holds those versions; the release is not published until then"))
            continue
        store.put_release(rel.name, rel.date, rel.notes, "", rel.members(), rel.benchmarks)
    return problems


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
    rel = Release(name, date, notes, benches, bundles, sources, uncommitted)
    store.put_release(name, date, notes, "", rel.members(), benches)
    return rel
