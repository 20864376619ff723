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

import csv
import datetime as dt
import hashlib
import io
import math
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

from pipeline.errors import Problem
from pipeline.inputs import BenchmarkInput, BundleInput, FileSet

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
        Lower-cased e-mails in the bundle's recorded ``contact`` at the base.
    pr_authors : frozenset of str
        Unused: git author identities are whatever a committer types, so they never decide
        ownership (kept empty for compatibility).
    contact : str
        The bundle's ``contact`` at the base: its recorded owner (shown in messages).
    files : tuple of str
        The changed paths inside the bundle.
    contact_after : str
        Its ``contact`` in the pull request (``""`` when deleted or unreadable).
    """

    bundle: str
    kind: str
    owners: frozenset[str]
    pr_authors: frozenset[str]
    contact: str
    files: tuple[str, ...]
    contact_after: str = ""

    @property
    def owner_changed(self) -> bool:
        """Whether the pull request rewrites the bundle's recorded owner (its contact)."""
        return self.kind != "deleted" and self.contact_after.strip() != self.contact.strip()


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
"""Every check registered so far (filled by :func:`integrity_check` on import)."""


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


# --------------------------------------------------------------------------- tolerant readers
# Integrity checks run after validation, but a bundle with validation errors is still looked at
# (a submitter should see every finding at once), so these readers never raise: what they
# cannot read they skip.

MANIFEST = "submission.toml"


def sha(data: bytes) -> str:
    """Return the SHA-256 hex digest."""
    return hashlib.sha256(data).hexdigest()


def data_files(bundle: BundleInput) -> dict[str, bytes]:
    """Return the bundle's files without its manifest (the results proper)."""
    return {p: d for p, d in bundle.files.files.items() if p != MANIFEST}


def read_csv(fs: FileSet, path: str) -> tuple[list[str], list[dict[str, str]]]:
    """Return (header, rows) of a CSV file; empty when it is missing or unreadable."""
    if path not in fs.files:
        return [], []
    try:
        text = fs.files[path].decode("utf-8").lstrip("\ufeff")
        reader = csv.reader(io.StringIO(text, newline=""))
        header = [h.strip() for h in next(reader)]
        rows = []
        for raw in reader:
            if len(raw) != len(header):
                continue
            rows.append({h: c.strip() for h, c in zip(header, raw, strict=True)})
        return header, rows
    except (UnicodeDecodeError, StopIteration, csv.Error):
        return [], []


def to_float(s: Any) -> float | None:
    """Return a finite float, or ``None``."""
    try:
        v = float(s)
    except (TypeError, ValueError):
        return None
    return v if math.isfinite(v) else None


def to_date(s: Any) -> dt.date | None:
    """Return a date from ``YYYY-MM-DD`` (or a date object), or ``None``."""
    if isinstance(s, dt.date) and not isinstance(s, dt.datetime):
        return s
    if isinstance(s, dt.datetime):
        return s.date()
    try:
        return dt.date.fromisoformat(str(s).strip()[:10])
    except ValueError:
        return None


def read_json(fs: FileSet, path: str) -> Any:
    """Return the parsed JSON, or ``None``."""
    from pipeline.limits import loads_bounded

    try:
        return loads_bounded(fs.files[path].decode("utf-8"))
    except (KeyError, UnicodeDecodeError, ValueError):
        return None


def read_toml(fs: FileSet, path: str) -> dict[str, Any] | None:
    """Return the parsed TOML, or ``None``."""
    from pipeline.bundles import MAX_FILE_BYTES
    from pipeline.limits import MAX_CELL_INT, parse_toml

    if path not in fs.files:
        return None
    parsed, _ = parse_toml(fs.where(path), bytes(fs.files[path]), max_int=MAX_CELL_INT,
                           max_bytes=MAX_FILE_BYTES)
    return parsed


def flat(mapping: Mapping[str, Any], prefix: str = "") -> dict[str, Any]:
    """Flatten ``{"a": {"b": 1}}`` to ``{"a.b": 1}`` (lists are kept as values)."""
    out: dict[str, Any] = {}
    for k, v in mapping.items():
        key = f"{prefix}{k}"
        if isinstance(v, Mapping):
            out.update(flat(v, key + "."))
        else:
            out[key] = v
    return out


def plural(n: int, word: str) -> str:
    """Return ``1 file`` / ``3 files``."""
    return f"{n} {word}{'' if n == 1 else 's'}"


def listing(items: list[str], limit: int = 5) -> str:
    """Join items as ``a, b, c`` or ``a, b, c, d, e and 7 more``."""
    items = list(items)
    if len(items) <= limit:
        return ", ".join(items)
    return ", ".join(items[:limit]) + f" and {len(items) - limit} more"


_EMAIL = re.compile(r"[A-Za-z0-9._%+-]+@[A-Za-z0-9.-]+\.[A-Za-z]{2,}")


def same_submitter(a: BundleInput, b: BundleInput) -> bool:
    """Whether two bundles are *proven* to come from the same submitter: never, today.

    ``contact`` is text the submitter types: a copier can write the victim's (issue 20), so
    equal contacts prove nothing and no self-declared field softens a finding. A copy is an
    error whatever the contacts say; reusing one's own results is for a maintainer to
    confirm (the finding's resolution says how). Kept as the one place a real proof of
    identity (e.g. a signed key) would go.
    """
    del a, b
    return False


def agent_names(bundle: BundleInput) -> list[str]:
    """The agent names a bundle puts on a board: every value of a CSV column ``agent``.

    Track-independent on purpose: whichever track reads the file, a name that reaches the
    board gets the rules of a system name (:func:`pipeline.limits.bad_name`, look-alikes).
    """
    out: set[str] = set()
    for path in sorted(bundle.files.files):
        if not path.lower().endswith(".csv"):
            continue
        header, rows = read_csv(bundle.files, path)
        if "agent" in header:
            out.update(r["agent"] for r in rows if r.get("agent"))
    out.update(log_agent_names(bundle.files))
    return sorted(out)


LOGGED_AGENT = "aiq.toml"
"""A run log naming its agent (``agent = "<kind>,<parameters>"``, written by `gmeter aiq run`).

The spec and its kind (the part before the first comma) name the board's chart series, so
they are display names like the ``agent`` column of a CSV (issue 20, item 6).
"""


def log_agent_names(fs: FileSet) -> list[str]:
    """The agent spec of the bundle's run log and its kind; none when absent or unreadable."""
    from pipeline.limits import parse_toml

    if not fs.has(LOGGED_AGENT):
        return []
    log, _ = parse_toml(fs.where(LOGGED_AGENT), fs.files[LOGGED_AGENT])
    spec = log.get("agent") if isinstance(log, Mapping) else None
    if not isinstance(spec, str) or not spec.strip():
        return []
    kind = spec.split(",", 1)[0].strip()
    return sorted({spec, kind} - {""})
