"""Finding, reading and hashing benchmark folders and bundles — safely.

Bundles come from strangers. Nothing here executes or imports anything from them. Files are
read without following symbolic links; a link, a special file, a path that leaves the folder,
an oversized file or folder and a non-UTF-8 text file each become a :class:`Problem`, and so
do what git holds but no clone can rebuild: gitlinks (submodules), links git tracks and Git
LFS pointers.

Layout (DESIGN §5)::

    submissions/<benchmark-id>/benchmark.toml
    submissions/<benchmark-id>/reference/...         benchmark-owned data
    submissions/<benchmark-id>/<bundle-id>/submission.toml + track files
"""

from __future__ import annotations

import hashlib
import os
import re
import stat
import subprocess
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

from pipeline.errors import GmeterError, Problem
from pipeline.inputs import BenchmarkInput, BundleInput
from pipeline.limits import MAX_FOLDER_DEPTH, MAX_PATH_BYTES

MAX_FILE_BYTES = 32 * 1024 * 1024
"""Largest single file accepted in a bundle or benchmark folder (32 MiB)."""
MAX_TOTAL_BYTES = 256 * 1024 * 1024
"""Largest bundle or benchmark folder in total (256 MiB)."""
MAX_FILES = 20_000
"""Most files in one bundle or benchmark folder."""
TEXT_SUFFIXES = {".toml", ".csv", ".json", ".jsonl", ".md", ".txt", ".tsv", ".yaml", ".yml"}
RELEASES_DIR = "releases"
"""The submissions folder's frozen release files (``releases/<name>.csv``): not a benchmark."""
BENCHMARK_OWNED_DIRS = {"reference", "docs"}
"""Folders of a benchmark that are not bundles."""
IGNORED_NAMES = {".DS_Store", ".gitkeep", "Thumbs.db"}


def content_hash(files: Mapping[str, bytes]) -> str:
    r"""SHA-256 over a folder's files in a canonical order.

    .. math:: H = \mathrm{SHA256}\big(\Vert_{p \in \mathrm{sorted}(P)}
              p \,\|\, 0 \,\|\, \mathrm{SHA256}(f_p) \,\|\, \text{\n}\big)

    The same files give the same hash wherever the folder is and whatever the file system's
    listing order; renaming a file changes it.
    """
    h = hashlib.sha256()
    for path in sorted(files):
        h.update(path.encode("utf-8") + b"\0" + hashlib.sha256(files[path]).digest() + b"\n")
    return h.hexdigest()


@dataclass
class ReadResult:
    """Files read from one folder and the problems met on the way."""

    files: dict[str, bytes] = field(default_factory=dict)
    problems: list[Problem] = field(default_factory=list)


_PORTABLE = re.compile(r"^[A-Za-z0-9_-][A-Za-z0-9._-]*$")
_DEVICE = re.compile(r"^(con|prn|aux|nul|com[0-9]|lpt[0-9])(\.|$)", re.IGNORECASE)


def _bad_name(name: str) -> str:
    if name in (".", "..") or "/" in name or "\\" in name:
        return "is not a plain file name"
    if any(ord(c) < 32 or ord(c) == 127 for c in name):
        return "contains control characters"
    if len(name.encode("utf-8", "surrogateescape")) > 200:
        return "is longer than 200 bytes"
    try:
        name.encode("utf-8")
    except UnicodeEncodeError:
        return "is not valid UTF-8"
    if not _PORTABLE.match(name):
        return ("uses characters other than letters, digits, '.', '_' and '-' (or starts "
                "with '.')")
    if name.endswith("."):
        return "ends with '.'"
    if _DEVICE.match(name):
        return "is a reserved device name on Windows"
    return ""


LFS_POINTER = (b"version https://git-lfs.github.com/spec/", b"version https://hawser.github.com/spec/")
"""How a Git LFS pointer file starts (git-lfs still reads its pre-1.0 "hawser" form): the data
itself is elsewhere, not in git history."""
_GIT_MODES = {"160000": ("is a git submodule (gitlink): its content is not in this repository, "
                         "so no clone can rebuild the bundle"),
              "120000": "is a symbolic link in git (links may point outside the bundle)"}


def git_special_entries(root: Path, skip_dirs: Iterable[str] = ()) -> list[tuple[str, str]]:
    """(path below ``root``, why) of every gitlink and symbolic link git tracks there.

    Read from git's index (what a commit holds), so a submodule that a checkout shows as an
    empty folder, or a link checked out as a plain file (``core.symlinks=false``), is still
    seen. Outside a git repository: nothing. The index is listed once per repository and
    state of its index file (one ``git`` call for a whole submissions tree, not one per
    folder).
    """
    skip = set(skip_dirs)
    top = _git_top(root)
    stamp = _index_stamp(top) if top is not None else None
    if top is None or stamp is None or os.environ.get("GIT_DIR") or \
            os.environ.get("GIT_WORK_TREE"):
        listed = _special_entries(str(root), None)  # git decides, from ``root`` itself
        prefix = ""
    else:
        listed = _special_entries(str(top), stamp)
        try:
            below = Path(root).resolve().relative_to(top.resolve()).as_posix()
        except ValueError:
            return []
        prefix = "" if below == "." else below + "/"
    out = []
    for rel, why in listed:
        if not rel.startswith(prefix):
            continue
        rel = rel[len(prefix) :]
        if rel.split("/")[0] not in skip:
            out.append((rel, why))
    return out


def _git_top(root: Path) -> Path | None:
    """The nearest folder at or above ``root`` holding ``.git`` (the repository's top)."""
    here = Path(root).resolve()
    for folder in (here, *here.parents):
        if (folder / ".git").exists():
            return folder
    return None


def _index_stamp(top: Path) -> tuple[str, int, int] | None:
    """(index path, mtime, size) of the repository's index file; ``None`` if unknown."""
    dot = top / ".git"
    try:
        if dot.is_dir():
            index = dot / "index"
        else:  # a worktree or submodule: ".git" names the real git folder
            text = dot.read_text(encoding="utf-8", errors="replace").strip()
            if not text.startswith("gitdir:"):
                return None
            gitdir = Path(text[len("gitdir:") :].strip())
            index = (gitdir if gitdir.is_absolute() else top / gitdir) / "index"
        st = index.stat()
    except OSError:
        return None
    return (str(index), st.st_mtime_ns, st.st_size)


@lru_cache(maxsize=16)
def _special_entries(cwd: str, stamp: tuple[str, int, int] | None) -> tuple[tuple[str, str], ...]:
    """Gitlinks and links in git's index below ``cwd`` (cached while the index is unchanged)."""
    try:
        res = subprocess.run(["git", "ls-files", "-s", "-z", "--", "."], cwd=cwd,
                             capture_output=True, timeout=60, check=False)
    except (OSError, subprocess.SubprocessError):
        return ()
    if res.returncode != 0:
        return ()
    out = []
    blobs: dict[str, str] = {}
    for record in res.stdout.split(b"\0"):
        meta, _, name = record.partition(b"\t")
        fields = meta.split(b" ")
        mode = fields[0].decode("ascii", "replace")
        if mode in _GIT_MODES:
            out.append((name.decode("utf-8", "replace"), _GIT_MODES[mode]))
        elif mode.startswith("100") and len(fields) >= 2 and name:
            blobs[name.decode("utf-8", "surrogateescape")] = fields[1].decode("ascii", "replace")
    out += [(path, _CONVERTED) for path in _converted(cwd, blobs)]
    return tuple(sorted(out))


_CONVERSION_ATTRS = ("text", "eol", "crlf", "ident", "filter", "working-tree-encoding")
"""The git attributes that make a checked-out file differ from the blob git stores."""
_CONVERTED = ("is rewritten by git on checkout (a .gitattributes conversion: line ends, $Id$, "
              "encoding or a filter): a clone shows other bytes than git history holds, so the "
              "bundle cannot be rebuilt from history")


def _run_git(cwd: str, *args: str, stdin: bytes) -> bytes | None:
    try:
        res = subprocess.run(["git", *args], cwd=cwd, input=stdin, capture_output=True,
                             timeout=60, check=False)
    except (OSError, subprocess.SubprocessError):
        return None
    return res.stdout if res.returncode == 0 else None


def _converted(cwd: str, blobs: Mapping[str, str]) -> list[str]:
    """Tracked files whose bytes on disk differ from their blob only by a git conversion.

    Only files a conversion attribute applies to are hashed (usually none). A file is
    reported when its raw bytes do not hash to the blob while the bytes git would store
    (after its clean conversion) do: git sees no change, yet the bytes read are not history's.
    A file edited and not yet committed differs both ways and is not reported.
    """
    if not blobs:
        return []
    names = sorted(blobs)
    listed = _run_git(cwd, "check-attr", "-z", "--stdin", *_CONVERSION_ATTRS,
                      stdin=b"".join(n.encode("utf-8", "surrogateescape") + b"\0"
                                     for n in names))
    if not listed:
        return []
    parts = listed.split(b"\0")
    candidates = sorted({parts[i].decode("utf-8", "surrogateescape")
                         for i in range(0, len(parts) - 2, 3)
                         if parts[i + 2] not in (b"unspecified", b"unset")} & set(names))
    present = [n for n in candidates if "\n" not in n and not n.startswith('"')
               and os.path.isfile(os.path.join(cwd, n))
               and not os.path.islink(os.path.join(cwd, n))]
    if not present:
        return []
    paths = b"".join(n.encode("utf-8", "surrogateescape") + b"\n" for n in present)
    raw = _run_git(cwd, "hash-object", "--no-filters", "--stdin-paths", stdin=paths)
    clean = _run_git(cwd, "hash-object", "--stdin-paths", stdin=paths)
    if raw is None or clean is None:
        return []
    out = []
    for name, r, c in zip(present, raw.decode().split(), clean.decode().split(), strict=False):
        if r != blobs[name] and c == blobs[name]:
            out.append(name)
    return out


def read_folder(root: Path, label: str, *, skip_dirs: Iterable[str] = ()) -> ReadResult:
    """Read every regular file below ``root`` into memory, refusing anything unsafe.

    Parameters
    ----------
    root : Path
        The folder.
    label : str
        How the folder is named in messages.
    skip_dirs : iterable of str
        Names of immediate sub-folders not to read (a benchmark's bundles).
    """
    out = ReadResult()
    total = 0
    skip = set(skip_dirs)
    for rel_git, why in git_special_entries(root, skip):
        out.problems.append(Problem(
            f"{label}/{rel_git}", "file type", why,
            "ask a maintainer to drop the .gitattributes rule that applies to it, and commit "
            "the file's own bytes" if why == _CONVERTED else
            "replace it by the files themselves, committed as plain files"))
    folded: dict[str, str] = {}
    stack: list[tuple[Path, str]] = [(root, "")]
    while stack:
        folder, rel = stack.pop()
        if rel.count("/") > MAX_FOLDER_DEPTH:
            out.problems.append(Problem(f"{label}/{rel}".rstrip("/"), "folder",
                                        f"is nested more than {MAX_FOLDER_DEPTH} folders deep",
                                        "flatten the folder structure"))
            continue
        try:
            entries = sorted(os.scandir(folder), key=lambda e: e.name)
        except OSError as exc:
            out.problems.append(Problem(f"{label}/{rel}".rstrip("/"), "file",
                                        f"cannot be read ({exc.strerror})", "check permissions"))
            continue
        if len(entries) > MAX_FILES:
            out.problems.append(Problem(f"{label}/{rel}".rstrip("/"), "folder",
                                        f"holds {len(entries):,} entries, more than {MAX_FILES}",
                                        "make the bundle smaller"))
            return out
        for entry in entries:
            relpath = f"{rel}{entry.name}"
            where = f"{label}/{relpath}"
            if entry.name in IGNORED_NAMES:
                continue
            why = _bad_name(entry.name)
            if not why and len(relpath.encode("utf-8")) > MAX_PATH_BYTES:
                why = f"makes a path longer than {MAX_PATH_BYTES} bytes"
            key = relpath.casefold()
            if not why and key in folded:
                why = (f"differs from {folded[key]!r} only in letter case (the two overwrite "
                       "each other on case-insensitive disks and on the site)")
            if why:
                out.problems.append(Problem(where, "file name", why, "rename it"))
                continue
            folded[key] = relpath
            st = entry.stat(follow_symlinks=False)
            if stat.S_ISLNK(st.st_mode):
                out.problems.append(
                    Problem(where, "file type",
                            "is a symbolic link (links may point outside the bundle)",
                            "replace the link by a copy of the file")
                )
                continue
            if stat.S_ISDIR(st.st_mode):
                if not rel and entry.name in skip:
                    continue
                if entry.name.startswith("."):
                    out.problems.append(Problem(where, "file name", "hidden folder in a bundle",
                                                "remove it"))
                    continue
                stack.append((Path(entry.path), relpath + "/"))
                continue
            if not stat.S_ISREG(st.st_mode):
                out.problems.append(Problem(where, "file type", "is not a regular file",
                                            "remove it"))
                continue
            if st.st_size > MAX_FILE_BYTES:
                out.problems.append(
                    Problem(where, "size", f"is {st.st_size:,} bytes, over the "
                            f"{MAX_FILE_BYTES // 2**20} MiB limit per file",
                            "split or compress the data, or ask the maintainer")
                )
                continue
            total += st.st_size
            if total > MAX_TOTAL_BYTES or len(out.files) >= MAX_FILES:
                out.problems.append(
                    Problem(label, "size", f"folder exceeds {MAX_TOTAL_BYTES // 2**20} MiB or "
                            f"{MAX_FILES} files", "make the bundle smaller")
                )
                return out
            with open(entry.path, "rb") as fh:
                data = fh.read(MAX_FILE_BYTES + 1)
            if data.startswith(LFS_POINTER):
                out.problems.append(
                    Problem(where, "file type", "is a Git LFS pointer, not the data (LFS "
                            "objects are not in git history, so the bundle cannot be rebuilt)",
                            "commit the file itself (no LFS) within the size limits"))
                continue
            if Path(entry.name).suffix.lower() in TEXT_SUFFIXES:
                try:
                    data.decode("utf-8")
                except UnicodeDecodeError as exc:
                    out.problems.append(
                        Problem(where, "encoding", f"is not UTF-8 text (byte {exc.start})",
                                "save the file as UTF-8")
                    )
                    continue
            out.files[relpath] = data
    return out


def read_file_bounded(path: Path, label: str | None = None, *,
                      error: type[GmeterError] | None = None) -> bytes:
    """One benchmark or bundle file read outside :func:`read_folder`, with its limits.

    A regular file (no link, no device), at most :data:`MAX_FILE_BYTES`, checked before it
    is read; not a Git LFS pointer. ``error`` is the exception class raised (default
    :class:`~pipeline.errors.GmeterError`; the lab commands keep their usage errors).

    Raises
    ------
    GmeterError
        Naming the file and what is wrong.
    """
    fail = error or GmeterError
    where = label or display(path)
    try:
        st = path.lstat()
        if not stat.S_ISREG(st.st_mode):
            raise fail(f"{where}: file type: is not a regular file (links are refused)",
                       hint="commit the file itself")
        if st.st_size > MAX_FILE_BYTES:
            raise fail(f"{where}: size: is {st.st_size:,} bytes, over the "
                       f"{MAX_FILE_BYTES // 2**20} MiB limit per file",
                       hint="split or compress the data")
        with path.open("rb") as fh:
            data = fh.read(MAX_FILE_BYTES + 1)
    except GmeterError:
        raise
    except FileNotFoundError:
        raise fail(f"{where}: file is missing", hint="check the path") from None
    except OSError as exc:
        raise fail(f"{where}: cannot be read ({exc.strerror or exc})",
                   hint="check the path and its permissions") from None
    if data.startswith(LFS_POINTER):
        raise fail(f"{where}: file type: is a Git LFS pointer, not the data",
                   hint="commit the file itself (no LFS)")
    return data


def git_commit(path: Path) -> str | None:
    """The last commit touching ``path``, or ``None`` outside git (never raises)."""
    try:
        res = subprocess.run(
            ["git", "log", "-1", "--format=%H", "--", "."],
            cwd=path, capture_output=True, text=True, timeout=20, check=False,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    sha = res.stdout.strip()
    return sha if res.returncode == 0 and len(sha) == 40 else None


@dataclass
class LoadedBundle:
    """A bundle read from disk: its input for the tracks (when readable) and its problems."""

    id: str
    path: Path
    label: str
    input: BundleInput | None
    problems: list[Problem]


@dataclass
class LoadedBenchmark:
    """A benchmark folder read from disk with its bundles."""

    id: str
    path: Path
    label: str
    track: str | None
    input: BenchmarkInput | None
    problems: list[Problem]
    bundles: list[LoadedBundle]
    complete: bool = True
    """Whether every bundle of the folder was loaded (not a selection of them)."""

    @property
    def ok(self) -> bool:
        """Whether the benchmark itself has no error."""
        return not any(p.severity == "error" for p in self.problems)


def is_benchmark_dir(path: Path) -> bool:
    """A folder holding a ``benchmark.toml``."""
    return (path / "benchmark.toml").is_file() and not (path / "benchmark.toml").is_symlink()


def is_bundle_dir(path: Path) -> bool:
    """A folder holding a ``submission.toml``."""
    return (path / "submission.toml").is_file() and not (path / "submission.toml").is_symlink()


def display(path: Path) -> str:
    """A path as shown in messages: relative to the working directory when inside it."""
    try:
        return path.resolve().relative_to(Path.cwd().resolve()).as_posix()
    except ValueError:
        return path.as_posix()


# --------------------------------------------------------------------------- sealed test sets
# A sealed benchmark commits only the SHA-256 of its test references
# (pipeline.tracks.gindex.sealed); at publish time they are given as a folder
# (``--option sealed=DIR`` or GMETER_SEALED, filled from a secret). Tracks never open files,
# so the folder is read here, into memory, and the track checks it against the commitment.
SEALED_ENV = "GMETER_SEALED"
"""Environment variable naming the folder of sealed test sets (one subfolder per benchmark)."""
MAX_SEALED_BYTES = 64 * 1024 * 1024
"""Most bytes read from one sealed set."""


def read_sealed(root: str | Path, benchmark_id: str) -> dict[str, bytes] | str:
    """The files ``<domain>/<task>.json`` of a benchmark's sealed set, or why they cannot be read.

    ``root/<benchmark id>/`` is read when it exists, else ``root`` itself. Links are skipped;
    at most :data:`MAX_SEALED_BYTES` are read.
    """
    base = Path(root)
    folder = base / benchmark_id if (base / benchmark_id).is_dir() else base
    if not folder.is_dir():
        return f"{folder} is not a folder"
    out: dict[str, bytes] = {}
    total = 0
    try:
        for p in sorted(folder.glob("*/*.json")):
            st = p.lstat()
            if not stat.S_ISREG(st.st_mode):
                continue  # links and special files are never read
            total += st.st_size  # counted before reading: an oversized set is never loaded
            if st.st_size > MAX_FILE_BYTES or total > MAX_SEALED_BYTES:
                return f"{folder} holds more than {MAX_SEALED_BYTES} bytes"
            with p.open("rb") as fh:
                data = fh.read(st.st_size + 1)
            if len(data) > st.st_size:
                return f"{p} grew while it was read"
            out[p.relative_to(folder).as_posix()] = data
    except OSError as exc:
        return f"{folder} is unreadable ({exc.strerror or exc})"
    return out
