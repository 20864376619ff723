"""What a pull request changes under ``submissions/``, read from git.

``gmeter check --base REF`` compares the work tree with the merge base of ``REF`` and ``HEAD``
(what ``git diff REF...`` shows, plus uncommitted edits and untracked files, so a submitter
sees the same report before committing as CI after pushing). Paths are sorted into:

* **bundle** changes — ``submissions/<benchmark>/<bundle>/...``: the bundle is ``new``
  (absent at the merge base), ``modified`` or ``deleted``;
* **benchmark** changes — ``benchmark.toml``, ``reference/``, ``docs/`` or any other file that
  belongs to the benchmark rather than to a bundle;
* **root** changes — files directly in ``submissions/`` (``releases.toml``);
* **outside** changes — anything not under ``submissions/`` (code, docs, workflows).

git is always run with an argument list (never through a shell) and a timeout; every failure
becomes a :class:`~pipeline.errors.GmeterError` that says what to do.
"""

from __future__ import annotations

import io
import subprocess
import tarfile
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any, NamedTuple

from pipeline.bundles import BENCHMARK_OWNED_DIRS, RELEASES_DIR
from pipeline.errors import GmeterError

GIT_TIMEOUT = 120
"""Seconds before a git command is abandoned."""


def _git(
    root: Path, *args: str, check: bool = True, binary: bool = False
) -> subprocess.CompletedProcess[Any]:
    """Run ``git -C root args...``; raise :class:`GmeterError` when git is missing or fails."""
    try:
        res = subprocess.run(
            ["git", "-C", str(root), *args],
            capture_output=True, timeout=GIT_TIMEOUT, check=False, text=not binary,
        )
    except FileNotFoundError as exc:
        raise GmeterError("git is not installed", hint="install git, or give bundle paths "
                          "instead of --base") from exc
    except subprocess.TimeoutExpired as exc:
        raise GmeterError(f"git {' '.join(args[:2])} took longer than {GIT_TIMEOUT} s",
                          hint="check the repository (is it on a slow network drive?)") from exc
    if check and res.returncode != 0:
        err = res.stderr if isinstance(res.stderr, str) else res.stderr.decode("utf-8", "replace")
        raise GmeterError(f"git {' '.join(args[:2])} failed: {err.strip()[:500]}",
                          hint="run the command by hand to see why")
    return res


def repo_root(path: Path) -> Path:
    """Return the top folder of the git work tree holding ``path``.

    Raises
    ------
    GmeterError
        When ``path`` is not inside a git work tree.
    """
    res = _git(path, "rev-parse", "--show-toplevel", check=False)
    if res.returncode != 0:
        raise GmeterError(f"{path} is not inside a git repository",
                          hint="run gmeter check in a clone, or give bundle paths instead of "
                          "--base")
    return Path(res.stdout.strip()).resolve()


def resolve_commit(root: Path, ref: str) -> str:
    """Return the commit SHA ``ref`` names.

    Raises
    ------
    GmeterError
        When the ref does not exist (e.g. ``origin/main`` in a shallow CI checkout).
    """
    if not ref or ref.startswith("-"):
        raise GmeterError(f"{ref!r} is not a git ref", hint="give a branch, tag or commit")
    res = _git(root, "rev-parse", "--verify", "--quiet", "--end-of-options", f"{ref}^{{commit}}",
               check=False)
    sha = res.stdout.strip()
    if res.returncode != 0 or not sha:
        raise GmeterError(
            f"base ref {ref!r} was not found in {root}",
            hint="fetch it first (`git fetch origin main`), name it as the remote has it "
            "(origin/main), or in GitHub Actions check out with `fetch-depth: 0`",
        )
    return sha


def merge_base(root: Path, base_commit: str) -> str:
    """Return the best common ancestor of ``base_commit`` and ``HEAD``.

    Raises
    ------
    GmeterError
        When there is none (unrelated histories, or a shallow clone cut it off).
    """
    res = _git(root, "merge-base", base_commit, "HEAD", check=False)
    sha = res.stdout.strip()
    if res.returncode != 0 or not sha:
        raise GmeterError(
            f"HEAD and {base_commit[:12]} have no common ancestor",
            hint="fetch the full history (`git fetch --unshallow`, or `fetch-depth: 0` in "
            "GitHub Actions) and branch from the base",
        )
    return sha


@dataclass(frozen=True)
class FileChange:
    """One changed path (relative to the repository root, POSIX).

    ``status`` is git's letter: ``A`` added (untracked files too), ``M`` modified, ``D``
    deleted, ``T`` type changed (e.g. a file became a symbolic link).
    """

    status: str
    path: str


@dataclass(frozen=True)
class BundleChange:
    """What happened to one bundle: ``new``, ``modified`` or ``deleted``, and its files."""

    benchmark: str
    bundle: str
    kind: str
    files: tuple[FileChange, ...]


@dataclass
class ChangeSet:
    """Every change between the merge base and the work tree, sorted by kind.

    Attributes
    ----------
    base : str
        The ref given (``origin/main``).
    base_commit, merge_base : str
        What it resolves to, and the common ancestor compared against.
    submissions : str
        The submissions folder relative to the repository root (``submissions``).
    files : list of FileChange
        Every changed path.
    bundles : list of BundleChange
        Changed bundles, sorted by (benchmark, bundle).
    benchmark_files : dict
        Benchmark id → changed benchmark-owned files.
    root_files, outside_files : list of FileChange
        Changes directly in ``submissions/`` and outside it.
    """

    base: str
    base_commit: str
    merge_base: str
    submissions: str
    files: list[FileChange] = field(default_factory=list)
    bundles: list[BundleChange] = field(default_factory=list)
    benchmark_files: dict[str, list[FileChange]] = field(default_factory=dict)
    root_files: list[FileChange] = field(default_factory=list)
    outside_files: list[FileChange] = field(default_factory=list)

    @property
    def benchmarks(self) -> list[str]:
        """Benchmarks touched by a bundle change or a change of their own files."""
        return sorted({b.benchmark for b in self.bundles} | set(self.benchmark_files))


def _parse_name_status(out: str) -> list[FileChange]:
    r"""Parse ``git diff --name-status -z --no-renames`` output (``S\\0path\\0`` pairs)."""
    parts = [p for p in out.split("\0") if p != ""]
    changes = []
    for status, path in zip(parts[0::2], parts[1::2], strict=False):
        changes.append(FileChange(status[:1], path))
    return changes


class Classified(NamedTuple):
    """Changed paths sorted by who owns them (:func:`classify`).

    Attributes
    ----------
    bundles : list of BundleChange
        Per bundle folder: new, modified or deleted, with its changed files.
    benchmark : dict
        Benchmark id → changed benchmark-owned files (``benchmark.toml``, ``reference/`` …).
    root : list of FileChange
        Changed files directly in the submissions folder (``releases.toml``).
    outside : list of FileChange
        Changed files outside the submissions folder.
    """

    bundles: list[BundleChange]
    benchmark: dict[str, list[FileChange]]
    root: list[FileChange]
    outside: list[FileChange]


def classify(
    files: Sequence[FileChange], submissions: str, existed_at_base: set[tuple[str, str]],
    exists_now: set[tuple[str, str]],
) -> Classified:
    """Sort changed paths into bundle, benchmark, root and outside changes (pure).

    Parameters
    ----------
    files : sequence of FileChange
        The changed paths.
    submissions : str
        The submissions folder relative to the repository root.
    existed_at_base, exists_now : set of (benchmark, bundle)
        Bundle folders (with a ``submission.toml``) at the merge base and in the work tree;
        a bundle absent at the base is ``new``, one absent now is ``deleted``.
    """
    prefix = PurePosixPath(submissions)
    per_bundle: dict[tuple[str, str], list[FileChange]] = {}
    bench: dict[str, list[FileChange]] = {}
    root: list[FileChange] = []
    outside: list[FileChange] = []
    for fc in sorted(files, key=lambda f: f.path):
        p = PurePosixPath(fc.path)
        try:
            rel = p.relative_to(prefix) if str(prefix) != "." else p
        except ValueError:
            outside.append(fc)
            continue
        parts = rel.parts
        if len(parts) == 1 or parts[0] == RELEASES_DIR:
            root.append(fc)  # releases.toml and the frozen release files
        elif len(parts) == 2 or parts[1] in BENCHMARK_OWNED_DIRS:
            bench.setdefault(parts[0], []).append(fc)
        else:
            per_bundle.setdefault((parts[0], parts[1]), []).append(fc)
    bundles = []
    for (b, u), fcs in sorted(per_bundle.items()):
        if (b, u) not in exists_now and (b, u) not in existed_at_base:
            # A folder without submission.toml at either end: not a bundle; the benchmark's.
            bench.setdefault(b, []).extend(fcs)
            continue
        kind = ("deleted" if (b, u) not in exists_now
                else "new" if (b, u) not in existed_at_base else "modified")
        bundles.append(BundleChange(b, u, kind, tuple(fcs)))
    return Classified(bundles, bench, root, outside)


def bundles_at(root: Path, commit: str, submissions: str) -> set[tuple[str, str]]:
    """(benchmark, bundle) of every ``submission.toml`` two levels below ``submissions``."""
    res = _git(root, "ls-tree", "-r", "-z", "--name-only", commit, "--", submissions,
               check=False)
    if res.returncode != 0:
        return set()
    return _bundle_keys(res.stdout.split("\0"), submissions)


def _bundle_keys(paths: Sequence[str], submissions: str) -> set[tuple[str, str]]:
    prefix = PurePosixPath(submissions)
    out: set[tuple[str, str]] = set()
    for raw in paths:
        if not raw:
            continue
        p = PurePosixPath(raw)
        try:
            parts = p.relative_to(prefix).parts if str(prefix) != "." else p.parts
        except ValueError:
            continue
        if len(parts) == 3 and parts[2] == "submission.toml" and \
                parts[1] not in BENCHMARK_OWNED_DIRS:
            out.add((parts[0], parts[1]))
    return out


def bundles_now(root: Path, submissions: str) -> set[tuple[str, str]]:
    """(benchmark, bundle) of every bundle folder in the work tree."""
    base = root / submissions
    out: set[tuple[str, str]] = set()
    if not base.is_dir():
        return out
    for bench in base.iterdir():
        if not bench.is_dir() or bench.is_symlink():
            continue
        for b in bench.iterdir():
            if b.is_dir() and b.name not in BENCHMARK_OWNED_DIRS and \
                    (b / "submission.toml").is_file():
                out.add((bench.name, b.name))
    return out


def changes(root: Path, base: str, submissions: str = "submissions") -> ChangeSet:
    """Everything that differs between ``merge-base(base, HEAD)`` and the work tree.

    Tracked changes come from ``git diff --name-status --no-renames <merge-base>`` (a rename
    is a deletion plus an addition, so moving another submitter's bundle is seen as deleting
    it); untracked files that are not ignored are added.

    Raises
    ------
    GmeterError
        When ``root`` is not a repository, the base ref is unknown or unrelated to HEAD.
    """
    root = repo_root(root)
    base_commit = resolve_commit(root, base)
    mb = merge_base(root, base_commit)
    diff = _git(root, "-c", "core.quotepath=off", "diff", "--name-status", "-z", "--no-renames",
                mb, "--")
    files = _parse_name_status(diff.stdout)
    untracked = _git(root, "ls-files", "--others", "--exclude-standard", "-z")
    seen = {f.path for f in files}
    files += [FileChange("A", p) for p in untracked.stdout.split("\0") if p and p not in seen]
    bundles, bench, rootf, outside = classify(
        files, submissions, bundles_at(root, mb, submissions), bundles_now(root, submissions)
    )
    return ChangeSet(base, base_commit, mb, submissions, sorted(files, key=lambda f: f.path),
                     bundles, bench, rootf, outside)


def extract_tree(root: Path, commit: str, path: str, dest: Path) -> bool:
    """Write ``path`` as it was at ``commit`` below ``dest`` (same relative layout).

    Uses ``git archive`` and extracts with tarfile's ``data`` filter, which refuses absolute
    paths, ``..`` and links leaving ``dest``. Returns ``False`` when ``path`` did not exist.
    """
    res = _git(root, "archive", "--format=tar", commit, "--", path, check=False, binary=True)
    if res.returncode != 0:
        return False
    with tarfile.open(fileobj=io.BytesIO(res.stdout), mode="r:") as tar:
        tar.extractall(dest, filter="data")
    return True


def file_at(root: Path, commit: str, path: str) -> bytes | None:
    """Return the content of ``path`` at ``commit``, or ``None`` when it did not exist."""
    res = _git(root, "show", f"{commit}:{path}", check=False, binary=True)
    return bytes(res.stdout) if res.returncode == 0 else None


def authors(root: Path, revs: Sequence[str], path: str | None = None) -> set[str]:
    """Lower-cased author e-mails of the commits ``revs`` selects (touching ``path``)."""
    args = ["log", "--format=%ae", *revs]
    if path is not None:
        args += ["--", path]
    res = _git(root, *args, check=False)
    return {line.strip().lower() for line in res.stdout.splitlines() if line.strip()}


def config_email(root: Path) -> str:
    """Return the local ``user.email`` (lower case), or ``""``."""
    res = _git(root, "config", "user.email", check=False)
    return res.stdout.strip().lower() if res.returncode == 0 else ""
