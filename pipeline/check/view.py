"""Where ``gmeter check`` gets its two states from: git (``--base``) or named folders.

A :class:`CheckView` answers, per affected benchmark: which bundles are under review, which
are deleted, which benchmark-owned files changed, what the benchmark looked like before
(the merge base, or the work tree without the bundles under review), who owns the existing
bundles the pull request touches, and which entries are stale.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from pipeline.bundles import LoadedBenchmark, is_bundle_dir
from pipeline.check import gitdiff
from pipeline.check.registry import run_pull_request_checks
from pipeline.errors import GmeterError, StoreError
from pipeline.history import last_commit
from pipeline.limits import parse_toml
from pipeline.tracks.review import Finding, Ownership, PullRequestContext

EMAIL = re.compile(r"[A-Za-z0-9._%+-]+@[A-Za-z0-9.-]+\.[A-Za-z]{2,}")


@dataclass(frozen=True)
class StaleEntry:
    """An entry that belongs to another version of its benchmark.

    Attributes
    ----------
    bundle : str
        The bundle.
    version : str
        The benchmark version it belongs to.
    commit : str
        The bundle's last commit (empty for store-based markers).
    why : str
        ``submitted`` (the bundle was last changed under ``version``) or ``scored`` (the
        store's published scores were computed on ``version``).
    """

    bundle: str
    version: str
    commit: str = ""
    why: str = "submitted"


@dataclass
class CheckView:
    """The two states of every affected benchmark, and the git facts about them.

    Attributes
    ----------
    mode : str
        ``git`` (a base ref) or ``paths`` (named folders only).
    submissions : Path
        The submissions folder (absolute).
    root : Path or None
        The git work tree, when there is one.
    changeset : gitdiff.ChangeSet or None
        What the pull request changes (``git`` mode).
    named : dict or None
        Benchmark folder → named bundle ids (``None`` = all), from the command line.
    """

    mode: str
    submissions: Path
    root: Path | None = None
    changeset: gitdiff.ChangeSet | None = None
    named: dict[Path, set[str] | None] | None = None
    _version_at: dict[str, str] = field(default_factory=dict)

    # ----------------------------------------------------------------- identity
    @property
    def base(self) -> str:
        """The base ref given."""
        return self.changeset.base if self.changeset else ""

    @property
    def base_commit(self) -> str:
        """The commit the base ref names."""
        return self.changeset.base_commit if self.changeset else ""

    @property
    def merge_base(self) -> str:
        """The commit compared against."""
        return self.changeset.merge_base if self.changeset else ""

    @property
    def outside(self) -> list[str]:
        """Changed paths outside ``submissions/``."""
        return [f.path for f in self.changeset.outside_files] if self.changeset else []

    def _rel(self) -> str:
        assert self.root is not None
        return self.submissions.relative_to(self.root).as_posix()

    def _named_ids(self) -> dict[str, set[str] | None] | None:
        if self.named is None:
            return None
        return {p.name: ids for p, ids in self.named.items()}

    # ----------------------------------------------------------------- per benchmark
    def benchmarks(self) -> list[str]:
        """Affected benchmark ids, sorted."""
        named = self._named_ids()
        if self.changeset is None:
            return sorted(named or {})
        ids = self.changeset.benchmarks
        return sorted(i for i in ids if named is None or i in named)

    def work_path(self, bench_id: str) -> Path:
        """Return the benchmark's folder in the work tree."""
        if self.named is not None:
            for p in self.named:
                if p.name == bench_id:
                    return p
        return self.submissions / bench_id

    def targets(self, bench_id: str) -> list[str]:
        """Bundles under review: added or changed (git), or named on the command line."""
        named = (self._named_ids() or {}).get(bench_id) if self.named is not None else None
        if self.changeset is None:
            if named is not None:
                return sorted(named)
            path = self.work_path(bench_id)
            return sorted(p.name for p in path.iterdir() if p.is_dir() and is_bundle_dir(p))
        ids = [b.bundle for b in self.changeset.bundles
               if b.benchmark == bench_id and b.kind != "deleted"]
        return sorted(i for i in ids if named is None or i in named)

    def deleted(self, bench_id: str) -> list[str]:
        """Bundles the pull request deletes."""
        if self.changeset is None:
            return []
        return sorted(b.bundle for b in self.changeset.bundles
                      if b.benchmark == bench_id and b.kind == "deleted")

    def benchmark_files(self, bench_id: str) -> list[str]:
        """Benchmark-owned paths the pull request changes."""
        if self.changeset is None:
            return []
        return [f.path for f in self.changeset.benchmark_files.get(bench_id, [])]

    def before(
        self, bench_id: str, after: LoadedBenchmark | None, tmp: Path
    ) -> LoadedBenchmark | None:
        """Return the benchmark before the change (``None`` when it did not exist)."""
        from pipeline.validate import load_benchmark

        if self.changeset is None or self.root is None:
            if after is None:
                return None
            targets = set(self.targets(bench_id))
            return dataclasses.replace(
                after, bundles=[b for b in after.bundles if b.id not in targets])
        rel = f"{self._rel()}/{bench_id}"
        dest = tmp / "base"
        if not gitdiff.extract_tree(self.root, self.merge_base, rel, dest):
            return None
        path = dest / rel
        if not (path / "benchmark.toml").is_file():
            return None
        return load_benchmark(path, today=dt.date.max)

    def ownership(self, bench_id: str) -> list[Ownership]:
        """Existing bundles of ``bench_id`` that the pull request modifies or deletes."""
        cs = self.changeset
        if cs is None or self.root is None:
            return []
        touched = [b for b in cs.bundles if b.benchmark == bench_id and b.kind != "new"]
        if not touched:
            return []
        # Git author names and e-mails are whatever the committer typed: they prove nothing.
        # Ownership is the bundle's recorded ``contact``; the paths decide what is touched.
        out = []
        for b in touched:
            path = f"{self._rel()}/{bench_id}/{b.bundle}"
            contact = _contact(gitdiff.file_at(self.root, cs.merge_base,
                                               f"{path}/submission.toml"))
            owners = {e.lower() for e in EMAIL.findall(contact)}
            now = self.work_path(bench_id) / b.bundle / "submission.toml"
            try:
                after = _contact(now.read_bytes()) if now.is_file() and not now.is_symlink() \
                    else ""
            except OSError:
                after = ""
            out.append(Ownership(b.bundle, b.kind, frozenset(owners), frozenset(), contact,
                                 tuple(f.path for f in b.files), contact_after=after))
        return out

    def stale(self, bench_id: str, version: str, *, exclude: set[str]) -> list[StaleEntry]:
        """Entries whose bundle was last committed under another benchmark version."""
        if self.root is None:
            return []
        try:
            rel = self.work_path(bench_id).resolve().relative_to(self.root).as_posix()
        except ValueError:
            return []
        out: list[StaleEntry] = []
        folder = self.work_path(bench_id)
        for p in sorted(folder.iterdir()):
            if p.name in exclude or not p.is_dir() or not is_bundle_dir(p):
                continue
            commit = last_commit(self.root, f"{rel}/{p.name}")
            if commit is None:
                continue
            if commit not in self._version_at:
                self._version_at[commit] = _version(
                    gitdiff.file_at(self.root, commit, f"{rel}/benchmark.toml"))
            old = self._version_at[commit]
            if old and old != version:
                out.append(StaleEntry(p.name, old, commit))
        return out

    # ----------------------------------------------------------------- whole pull request
    def pr_findings(self) -> list[Finding]:
        """Return findings about the pull request as a whole (``git`` mode only)."""
        cs = self.changeset
        if cs is None or self.root is None:
            return []
        rel = f"{self._rel()}/releases.toml"
        after = self.root / rel
        ctx = PullRequestContext(
            bundle_changes=len(cs.bundles),
            outside=[f.path for f in cs.outside_files],
            root_files=[(f.status, f.path) for f in cs.root_files],
            releases_before=gitdiff.file_at(self.root, cs.merge_base, rel),
            releases_after=after.read_bytes() if after.is_file() else None,
            releases_path=rel,
        )
        return run_pull_request_checks(ctx)

    def store_facts(self, store_path: Path | None, notes: list[str]) -> StoreFacts:
        """Read what an existing store knows: every bundle version, what was last scored."""
        facts = StoreFacts()
        if store_path is None or not Path(store_path).exists():
            return facts
        from pipeline.store import open_store

        try:
            with open_store(Path(store_path), read_only=True) as store:
                for rec in store.bundles(current_only=False):
                    facts.history.setdefault(rec.content_hash, []).append(
                        f"{rec.benchmark}/{rec.id}")
                facts.scored_on = store.scored_on()
        except StoreError as exc:
            notes.append(f"the store {store_path} could not be read ({exc.message}); the "
                         "resubmission check used the base state only")
        return facts


@dataclass
class StoreFacts:
    """Facts from an existing store (empty when there is none).

    Attributes
    ----------
    history : dict
        Content hash → ``benchmark/bundle`` of every bundle version ever ingested.
    scored_on : dict
        Benchmark id → (benchmark content hash, version) its ``current`` scores were computed on.
    """

    history: dict[str, list[str]] = field(default_factory=dict)
    scored_on: dict[str, tuple[str, str]] = field(default_factory=dict)


def _field(data: bytes | None, name: str) -> str:
    """A top-level string of a manifest, read with the bounded parser (``""`` if unreadable)."""
    if not data:
        return ""
    parsed, _ = parse_toml("-", data)
    value = parsed.get(name, "") if parsed else ""
    return value if isinstance(value, str) else ""


def _contact(data: bytes | None) -> str:
    return _field(data, "contact")


def _version(data: bytes | None) -> str:
    return _field(data, "version")


def make_view(
    submissions: Path, base: str | None, named: Mapping[Path, set[str] | None] | None
) -> CheckView:
    """Build the view for ``--base`` (git) or for named folders."""
    subs = Path(submissions).resolve()
    named_d = dict(named) if named is not None else None
    if base is None:
        try:
            root: Path | None = gitdiff.repo_root(subs if subs.exists() else Path.cwd())
        except GmeterError:
            root = None
        return CheckView("paths", subs, root, None, named_d)
    if not subs.is_dir():
        raise GmeterError(f"{submissions}: no submissions folder here",
                          hint="run gmeter check at the top of the benchmark repository, or "
                          "pass --submissions PATH")
    root = gitdiff.repo_root(subs)
    try:
        subs.relative_to(root)
    except ValueError as exc:
        raise GmeterError(f"{submissions} is not inside the git repository {root}") from exc
    cs = gitdiff.changes(root, base, subs.relative_to(root).as_posix())
    return CheckView("git", subs, root, cs, named_d)
