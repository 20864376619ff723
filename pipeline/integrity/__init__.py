"""Integrity checks of a pull request's bundles: what validation cannot see on its own.

Validation (:mod:`pipeline.validate`) asks whether a bundle is well formed. The integrity checks
ask whether it is *honest and new*: a resubmission of published files, programs copied from the
benchmark's answers or from another submitter, an implausible compute log, a forged AIQ
reward, a response matrix that cannot be real, a pull request that edits someone else's bundle.
Each check is registered here with its name, its track (``None`` = every track), a title and a
one-paragraph description; ``docs/submitting.md`` lists every registered check (a test keeps
the two in step). A check returns :class:`Finding` objects, each with a severity, the file and
field concerned, what was found and how to resolve it.

Severity: ``error`` fails ``gmeter check`` (exit 1; a maintainer may still merge after review),
``warning`` is shown but passes, ``info`` is context for the reviewer.
"""

from __future__ import annotations

import datetime as dt
import importlib
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

from pipeline.errors import Problem
from pipeline.tracks.base import BenchmarkInput, BundleInput

SEVERITIES = ("error", "warning", "info")
_ORDER = {s: i for i, s in enumerate(SEVERITIES)}


@dataclass(frozen=True)
class Finding:
    """One integrity finding, precise enough for a submitter to act on.

    Attributes
    ----------
    severity : str
        ``error``, ``warning`` or ``info``.
    check : str
        The registered check that found it (``resubmission``, ``aiq-replay`` …).
    file : str
        The file (or folder) concerned, as shown in messages.
    field : str
        The manifest field, CSV column, task or agent concerned, or ``-``.
    message : str
        What was found.
    resolution : str
        How to resolve it.
    """

    severity: str
    check: str
    file: str
    field: str
    message: str
    resolution: str

    def sort_key(self) -> tuple[int, str, str, str, str]:
        """Errors first, then by file, field, check and message (a stable order)."""
        return (_ORDER.get(self.severity, 9), self.file, self.field, self.check, self.message)

    def as_problem(self) -> Problem:
        """Return the finding as a :class:`~pipeline.errors.Problem` (``info`` → ``warning``)."""
        sev = "error" if self.severity == "error" else "warning"
        return Problem(self.file, self.field, f"[{self.check}] {self.message}", self.resolution,
                       severity=sev)

    def as_dict(self) -> dict[str, str]:
        """Return the finding as a JSON-ready mapping."""
        return asdict(self)


@dataclass(frozen=True)
class Ownership:
    """Git facts about an existing bundle that a pull request modifies or deletes.

    Attributes
    ----------
    bundle : str
        The bundle id.
    kind : str
        ``modified`` or ``deleted``.
    owners : frozenset of str
        Lower-cased e-mails of the commits that made the bundle before the pull request,
        plus any e-mail in its ``contact`` field.
    pr_authors : frozenset of str
        Lower-cased author e-mails of the pull request's commits.
    contact : str
        The bundle's ``contact`` at the base (shown in messages).
    files : tuple of str
        The changed paths inside the bundle.
    """

    bundle: str
    kind: str
    owners: frozenset[str]
    pr_authors: frozenset[str]
    contact: str
    files: tuple[str, ...]

    @property
    def by_owner(self) -> bool:
        """Whether an author of the pull request also made the bundle."""
        return bool(self.owners & self.pr_authors)


@dataclass
class IntegrityContext:
    """Everything a benchmark-level check may look at (all in memory, nothing executed).

    Attributes
    ----------
    benchmark : BenchmarkInput
        The benchmark as it is in the work tree.
    targets : list of BundleInput
        The bundles under review (new or changed by the pull request, or named on the
        command line).
    peers : list of BundleInput
        The benchmark's other bundles in the work tree (published entries).
    known_hashes : mapping
        Content hash → ``benchmark/bundle`` labels of every bundle version already published
        (the base state, plus the store's history when one is available).
    today : date
        The date "the future" starts after.
    benchmark_changed : list of str
        Benchmark-owned paths the pull request changes.
    base_benchmark : BenchmarkInput or None
        The benchmark at the base, when it existed and changed.
    ownership : list of Ownership
        Existing bundles of this benchmark the pull request modifies or deletes.
    scores : list of dict
        The score rows recomputed for the benchmark with the bundles under review (the
        columns ``gmeter score`` stores, ``details`` included); empty when scoring failed.
    options : dict
        Knobs for the checks (thresholds), mostly for tests.
    """

    benchmark: BenchmarkInput
    targets: list[BundleInput]
    peers: list[BundleInput] = field(default_factory=list)
    known_hashes: Mapping[str, Sequence[str]] = field(default_factory=dict)
    today: dt.date = field(default_factory=dt.date.today)
    benchmark_changed: list[str] = field(default_factory=list)
    base_benchmark: BenchmarkInput | None = None
    ownership: list[Ownership] = field(default_factory=list)
    scores: list[dict[str, Any]] = field(default_factory=list)
    options: dict[str, Any] = field(default_factory=dict)

    def where(self, bundle: BundleInput, path: str = "") -> str:
        """Display path of a bundle file (or of the bundle folder)."""
        return bundle.files.where(path) if path else bundle.files.label

    @property
    def created(self) -> dt.date | None:
        """The benchmark's ``created`` date."""
        c = self.benchmark.manifest.get("created")
        return c if isinstance(c, dt.date) and not isinstance(c, dt.datetime) else None


@dataclass
class PullRequestContext:
    """What a pull-request-level check may look at.

    Attributes
    ----------
    bundle_changes : int
        How many bundles the pull request adds, changes or deletes.
    outside : list of str
        Changed paths outside ``submissions/``.
    root_files : list of (status, path)
        Changed files directly in ``submissions/``.
    releases_before, releases_after : bytes or None
        ``submissions/releases.toml`` at the base and now.
    """

    bundle_changes: int
    outside: list[str] = field(default_factory=list)
    root_files: list[tuple[str, str]] = field(default_factory=list)
    releases_before: bytes | None = None
    releases_after: bytes | None = None
    releases_path: str = "submissions/releases.toml"


BenchmarkCheck = Callable[[IntegrityContext], Iterable[Finding]]
PullRequestCheck = Callable[[PullRequestContext], Iterable[Finding]]


@dataclass(frozen=True)
class CheckSpec:
    """One registered check.

    ``scope`` is ``benchmark`` (run once per affected benchmark with an
    :class:`IntegrityContext`) or ``pull-request`` (once, with a :class:`PullRequestContext`).
    """

    name: str
    track: str | None
    scope: str
    title: str
    description: str
    fn: Callable[[Any], Iterable[Finding]]


_REGISTRY: dict[str, CheckSpec] = {}
MODULES = ("generic", "gindex", "aiq", "generality", "similarity")
"""Modules of this package that register checks (imported on first use)."""


def integrity_check(
    name: str, *, title: str, description: str, track: str | None = None,
    scope: str = "benchmark",
) -> Callable[[Callable[[Any], Iterable[Finding]]], Callable[[Any], Iterable[Finding]]]:
    """Register a check function under ``name`` (decorator)."""

    def wrap(fn: Callable[[Any], Iterable[Finding]]) -> Callable[[Any], Iterable[Finding]]:
        if name in _REGISTRY and _REGISTRY[name].fn is not fn:
            raise ValueError(f"integrity check {name!r} registered twice")
        _REGISTRY[name] = CheckSpec(name, track, scope, title, description, fn)
        return fn

    return wrap


def all_checks() -> list[CheckSpec]:
    """Every registered check, generic ones first, then by track and name."""
    for mod in MODULES:
        importlib.import_module(f"pipeline.integrity.{mod}")
    return sorted(_REGISTRY.values(), key=lambda c: (c.track or "", c.scope, c.name))


def _safe(spec: CheckSpec, ctx: Any, where: str) -> list[Finding]:
    try:
        return list(spec.fn(ctx))
    except Exception as exc:
        return [Finding("warning", spec.name, where, "-",
                        f"the {spec.name} check could not run on this input "
                        f"({type(exc).__name__}: {exc})",
                        "fix the validation problems first; if there are none, report a "
                        "gmeter bug with this message")]


def run_benchmark_checks(ctx: IntegrityContext) -> list[Finding]:
    """Run every check that applies to ``ctx.benchmark``'s track; return sorted findings."""
    out: list[Finding] = []
    for spec in all_checks():
        if spec.scope != "benchmark" or spec.track not in (None, ctx.benchmark.track):
            continue
        out += _safe(spec, ctx, ctx.benchmark.files.label)
    return sorted(set(out), key=Finding.sort_key)


def run_pull_request_checks(ctx: PullRequestContext) -> list[Finding]:
    """Run the pull-request-level checks; return sorted findings."""
    out: list[Finding] = []
    for spec in all_checks():
        if spec.scope == "pull-request":
            out += _safe(spec, ctx, "pull request")
    return sorted(set(out), key=Finding.sort_key)
