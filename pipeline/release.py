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

``gmeter release NAME`` appends an entry made from the store's current versions (ingest first).
An entry is never rewritten: a second release with the same name is refused, and ``ingest``
refuses a ``releases.toml`` whose entry differs from what the store already recorded.
"""

from __future__ import annotations

import datetime as dt
import re
import tomllib
from dataclasses import dataclass
from pathlib import Path

from pipeline.errors import Problem, ReleaseError, ValidationFailed
from pipeline.store import CURRENT, Store
from pipeline.toml_writer import toml_string

RELEASE_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,39}$")


@dataclass(frozen=True)
class Release:
    """One entry of ``releases.toml``."""

    name: str
    date: dt.date
    notes: str
    benchmarks: dict[str, str]
    bundles: dict[str, str]

    def members(self) -> list[tuple[str, str, str]]:
        """(benchmark, bundle, hash) triples, sorted as tuples (the store's order)."""
        out = []
        for key, chash in self.bundles.items():
            bench, _, bundle = key.partition("/")
            out.append((bench, bundle, chash))
        return sorted(out)


def read_releases(path: Path) -> list[Release]:
    """Parse ``releases.toml`` (a missing file means no releases)."""
    if not path.exists():
        return []
    where = str(path)
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise ValidationFailed([Problem(where, "-", f"does not parse ({exc})",
                                        "fix the TOML syntax")]) from exc
    problems: list[Problem] = []
    out: list[Release] = []
    seen: set[str] = set()
    for i, entry in enumerate(data.get("release", [])):
        field = f"release[{i}]"
        name = entry.get("name")
        if not isinstance(name, str) or not RELEASE_NAME.match(name) or name == CURRENT:
            problems.append(Problem(where, f"{field}.name", f"{name!r} is not a valid name",
                                    "use letters, digits, '.', '_', '-' (not 'current')"))
            continue
        if name in seen:
            problems.append(Problem(where, f"{field}.name", f"{name!r} appears twice",
                                    "release names are unique"))
        seen.add(name)
        date = entry.get("date")
        if not isinstance(date, dt.date) or isinstance(date, dt.datetime):
            problems.append(Problem(where, f"{field}.date", "must be a date YYYY-MM-DD", ""))
            continue
        benches = entry.get("benchmarks", {})
        bundles = entry.get("bundles", {})
        if not isinstance(benches, dict) or not isinstance(bundles, dict):
            problems.append(Problem(where, field, "benchmarks/bundles must be tables", ""))
            continue
        out.append(Release(name, date, str(entry.get("notes", "")),
                           {str(k): str(v) for k, v in benches.items()},
                           {str(k): str(v) for k, v in bundles.items()}))
    if problems:
        raise ValidationFailed(problems)
    return out


def sync_releases(store: Store, path: Path) -> list[Problem]:
    """Record every release of ``releases.toml`` in the store; return warnings.

    A release whose versions are not all in the store is skipped with a warning (it can be
    rebuilt after ingesting those versions, e.g. from the git history).
    """
    warnings: list[Problem] = []
    stored = {r[0] for r in store.releases()}
    known = store.known_hashes()
    bench_hashes = {(b.id, b.content_hash) for b in store.benchmarks(current_only=False)}
    for rel in read_releases(path):
        if rel.name in stored:
            if sorted(store.release_members(rel.name)) != sorted(rel.members()) or \
                    store.release_benchmarks(rel.name) != rel.benchmarks:
                raise ReleaseError(
                    f"release {rel.name} in {path} differs from the one recorded in the store",
                    hint="releases are immutable: restore the entry and record a new release",
                )
            continue
        missing = [f"{b}/{u}" for b, u, h in rel.members() if h not in known]
        missing += [b for b, h in rel.benchmarks.items() if (b, h) not in bench_hashes]
        if missing:
            warnings.append(Problem(str(path), f"release {rel.name}",
                                    f"{len(missing)} version(s) not in the store "
                                    f"(e.g. {missing[0]})",
                                    "ingest those versions (from git history) to rebuild it",
                                    severity="warning"))
            continue
        store.put_release(rel.name, rel.date, rel.notes, "", rel.members(), rel.benchmarks)
    return warnings


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
    date = date or dt.date.today()
    if existing and date < max(r.date for r in existing):
        raise ReleaseError(f"{date} is before the last release",
                           hint="releases are recorded in date order")
    lines = ["", "[[release]]", f"name = {toml_string(name)}", f"date = {date.isoformat()}",
             f"notes = {toml_string(notes)}", "[release.benchmarks]"]
    lines += [f"{toml_string(k)} = {toml_string(v)}" for k, v in sorted(benches.items())]
    lines.append("[release.bundles]")
    lines += [f"{toml_string(k)} = {toml_string(v)}" for k, v in sorted(bundles.items())]
    text = path.read_text(encoding="utf-8") if path.exists() else (
        "# Releases of this benchmark repository: written by `gmeter release`, never edited.\n")
    tmp = path.with_suffix(".toml.tmp")
    tmp.write_text(text.rstrip("\n") + "\n" + "\n".join(lines) + "\n", encoding="utf-8")
    tmp.replace(path)
    rel = Release(name, date, notes, benches, bundles)
    store.put_release(name, date, notes, "", rel.members(), benches)
    return rel
