"""Benchmark and bundle versions read back from git history, content hash verified.

A release names exact versions (content hashes). The publish workflow builds from a fresh
clone, whose store starts empty: every version a release names that is no longer in
``submissions/`` must be rebuilt from the repository's history, or the release vanishes. This
module reads a folder *as it was at a commit* straight from git's object database
(``git ls-tree`` + ``git cat-file --batch``: nothing is checked out, nothing is written), with
the same rules as :func:`pipeline.bundles.read_folder` (ignored names, a benchmark's bundle
folders left out, size limits), so the content hash is computed exactly as at ingest.

git is always run with an argument list (never a shell), a timeout, and only commit ids that
match ``[0-9a-f]{40}`` and repository-relative paths without ``..``; nothing here raises on a
hostile or damaged repository: a version that cannot be read is simply not found.
"""

from __future__ import annotations

import re
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from pipeline.bundles import (
    BENCHMARK_OWNED_DIRS,
    IGNORED_NAMES,
    MAX_FILE_BYTES,
    MAX_FILES,
    MAX_TOTAL_BYTES,
    content_hash,
)

GIT_TIMEOUT = 120
"""Seconds before one git command is abandoned."""
MAX_COMMITS = 2000
"""Most commits searched for one version (newest first)."""
COMMIT = re.compile(r"^[0-9a-f]{40}$")


@dataclass(frozen=True)
class Source:
    """Where a version lives in git: a commit and the folder's path from the repository root."""

    commit: str
    path: str


@dataclass(frozen=True)
class Version:
    """A folder read from git: its source, files and content hash."""

    source: Source
    files: dict[str, bytes]
    content_hash: str


def _git(root: Path, *args: str, stdin: bytes | None = None) -> bytes | None:
    """Run git; return stdout, or ``None`` when git is missing, fails or times out."""
    try:
        res = subprocess.run(["git", "-C", str(root), *args], input=stdin, capture_output=True,
                             timeout=GIT_TIMEOUT, check=False)
    except (OSError, subprocess.SubprocessError):
        return None
    return res.stdout if res.returncode == 0 else None


def current_branch(root: Path) -> str | None:
    """The branch checked out in ``root`` (``None`` for a detached HEAD or outside git)."""
    out = _git(root, "symbolic-ref", "--short", "-q", "HEAD")
    return out.decode("utf-8", "replace").strip() if out else None


def repo_root(path: Path) -> Path | None:
    """The top folder of the git work tree holding ``path`` (``None`` outside git)."""
    folder = path if path.is_dir() else path.parent
    out = _git(folder, "rev-parse", "--show-toplevel")
    if not out:
        return None
    return Path(out.decode("utf-8", "replace").strip()).resolve()


def safe_path(path: str) -> bool:
    """A repository-relative POSIX path without ``..``, not absolute, not an option."""
    p = PurePosixPath(path)
    return bool(path) and not p.is_absolute() and ".." not in p.parts and \
        not path.startswith("-") and not any(ord(c) < 32 for c in path)


def relative_to_repo(root: Path, folder: Path) -> str | None:
    """``folder`` as a repository-relative POSIX path (``None`` when outside ``root``)."""
    try:
        return folder.resolve().relative_to(root).as_posix()
    except ValueError:
        return None


def _listing(root: Path, commit: str, path: str) -> list[tuple[str, str, str]] | None:
    """(mode, blob id, path below ``path``) of every entry at ``commit`` (``None``: absent)."""
    out = _git(root, "ls-tree", "-r", "-z", "--full-tree", commit, "--", path)
    if out is None:
        return None
    prefix = path.rstrip("/") + "/"
    entries = []
    for rec in out.split(b"\0"):
        if not rec:
            continue
        meta, _, name = rec.partition(b"\t")
        parts = meta.split()
        if len(parts) != 3:
            return None
        full = name.decode("utf-8", "surrogateescape")
        if not full.startswith(prefix):
            continue
        entries.append((parts[0].decode(), parts[2].decode(), full[len(prefix):]))
    return entries or None


def _wanted(rel: str, kind: str) -> bool:
    """Whether ``read_folder`` would have read ``rel`` for a folder of ``kind``."""
    parts = rel.split("/")
    if any(p in IGNORED_NAMES for p in parts):
        return False
    if kind == "benchmark" and len(parts) > 1 and parts[0] not in BENCHMARK_OWNED_DIRS:
        return False  # a bundle (or another folder) inside the benchmark
    return True


def _blobs(root: Path, ids: list[str]) -> dict[str, bytes] | None:
    """Contents of blob ``ids`` through one ``git cat-file --batch``."""
    out = _git(root, "cat-file", "--batch", stdin=("\n".join(ids) + "\n").encode())
    if out is None:
        return None
    blobs: dict[str, bytes] = {}
    pos = 0
    for _ in ids:
        end = out.find(b"\n", pos)
        if end < 0:
            return None
        head = out[pos:end].split()
        if len(head) != 3 or head[1] != b"blob":
            return None
        size = int(head[2])
        blobs[head[0].decode()] = out[end + 1:end + 1 + size]
        pos = end + 1 + size + 1
    return blobs


def read_version(root: Path, commit: str, path: str, kind: str) -> Version | None:
    """The folder ``path`` (``kind`` ``benchmark`` or ``bundle``) as it was at ``commit``.

    Returns ``None`` when the commit or folder does not exist, or the folder could not have
    been ingested (a symbolic link, a submodule, a file or folder over the size limits).
    """
    if not COMMIT.match(commit) or not safe_path(path):
        return None
    listing = _listing(root, commit, path)
    if listing is None:
        return None
    return _version(root, commit, path, kind, listing)


def _version(root: Path, commit: str, path: str, kind: str,
             listing: list[tuple[str, str, str]]) -> Version | None:
    chosen = [(blob, rel) for mode, blob, rel in listing if _wanted(rel, kind)]
    if any(mode not in ("100644", "100755") for mode, _, rel in listing if _wanted(rel, kind)):
        return None
    if len(chosen) > MAX_FILES:
        return None
    blobs = _blobs(root, sorted({b for b, _ in chosen}))
    if blobs is None:
        return None
    files = {rel: blobs[blob] for blob, rel in chosen}
    if any(len(v) > MAX_FILE_BYTES for v in files.values()) or \
            sum(len(v) for v in files.values()) > MAX_TOTAL_BYTES:
        return None
    return Version(Source(commit, path), files, content_hash(files))


def _commits(root: Path, path: str) -> Iterator[str]:
    """Commits of ``HEAD``'s history that touched ``path``, newest first."""
    out = _git(root, "log", f"--max-count={MAX_COMMITS}", "--format=%H", "HEAD", "--", path)
    for line in (out or b"").decode().split():
        if COMMIT.match(line):
            yield line


def last_commit(root: Path, path: str) -> str | None:
    """The last commit of ``HEAD`` that touched ``path`` (``None``: never committed)."""
    if not safe_path(path):
        return None
    out = _git(root, "log", "-1", "--format=%H", "HEAD", "--", path)
    sha = (out or b"").decode().strip()
    return sha if COMMIT.match(sha) else None


def find_version(root: Path, path: str, kind: str, wanted_hash: str,
                 hint: str = "") -> Version | None:
    """Find the version of ``path`` whose content hash is ``wanted_hash`` in git history.

    The ``hint`` commit (from ``releases.toml``) is tried first; then every commit of
    ``HEAD`` that touched ``path``, newest first (a release recorded before its commits
    were known, or an entry written by an older gmeter). Each distinct tree is hashed once.
    """
    if not safe_path(path):
        return None
    if hint:
        found = read_version(root, hint, path, kind)
        if found is not None and found.content_hash == wanted_hash:
            return found
    seen: set[tuple[tuple[str, str, str], ...]] = set()
    for commit in _commits(root, path):
        listing = _listing(root, commit, path)
        if listing is None:
            continue
        key = tuple(e for e in listing if _wanted(e[2], kind))
        if key in seen:
            continue
        seen.add(key)
        found = _version(root, commit, path, kind, listing)
        if found is not None and found.content_hash == wanted_hash:
            return found
    return None


def file_history(root: Path, path: str) -> list[tuple[str, bytes]]:
    """(commit, content) of every committed version of the file ``path``, oldest first.

    At most :data:`MAX_COMMITS` versions (the newest); empty outside git or when the file was
    never committed. Read through one ``git cat-file --batch``.
    """
    if not safe_path(path):
        return []
    commits = list(_commits(root, path))[::-1]
    if not commits:
        return []
    out = _git(root, "cat-file", "--batch",
               stdin="".join(f"{c}:{path}\n" for c in commits).encode())
    if out is None:
        return []
    versions: list[tuple[str, bytes]] = []
    pos = 0
    for commit in commits:
        end = out.find(b"\n", pos)
        if end < 0:
            break
        head = out[pos:end].split()
        if len(head) == 3 and head[1] == b"blob":
            size = int(head[2])
            versions.append((commit, out[end + 1:end + 1 + size]))
            pos = end + 1 + size + 1
        else:  # "<name> missing": the file was deleted by that commit
            pos = end + 1
    return versions
