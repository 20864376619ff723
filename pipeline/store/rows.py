"""The site's snapshot as typed rows: everything the static site shows, as plain data.

:func:`pipeline.store.snapshot.read_snapshot` fills these frozen dataclasses from the store in
one go; the site (:mod:`pipeline.site`) builds every page as a pure function of them, so page
building is tested without a database. They live in the store, below the site that reads them:
the store never imports the site.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class BenchmarkRow:
    """One stored version of a benchmark."""

    id: str
    content_hash: str
    track: str
    title: str
    version: str
    description: str
    licence: str
    created: dt.date | None
    manifest: Mapping[str, Any]
    source_path: str
    git_commit: str
    current: bool


@dataclass(frozen=True)
class FileRow:
    """One file of a bundle version (content is read only when it is published)."""

    path: str
    sha256: str
    size: int


@dataclass(frozen=True)
class BundleRow:
    """One stored version of a bundle."""

    benchmark: str
    id: str
    content_hash: str
    system_name: str
    system_version: str
    organisation: str
    url: str
    submitted: dt.date | None
    licence: str
    description: str
    source_path: str
    git_commit: str
    current: bool
    files: tuple[FileRow, ...] = ()
    benchmark_version: str = ""


@dataclass(frozen=True)
class ReleaseRow:
    """A recorded release."""

    name: str
    date: dt.date
    notes: str
    code_version: str


@dataclass(frozen=True)
class ScoreRecord:
    """One row of ``scores``."""

    release: str
    benchmark: str
    bundle: str
    content_hash: str
    agent: str
    metric: str
    value: float | None
    ci_low: float | None
    ci_high: float | None
    rank: int | None
    verified: bool
    code_version: str
    display: Any = None
    """The track's ``details.display`` (``{"value", "label", "note"}``): the value a board
    shows by the track's documented convention instead of ``value`` (e.g. a step curve's
    spread 0 for a float artefact); ``value`` stays the computed number (tooltip, downloads)."""
    marks: tuple[str, ...] = ()
    """The track's ``details.marks``: facts a reader must see beside the number (``own-priors``:
    the bundle declared its own g-index priors; it is ranked with the benchmark's)."""
    training: Any = None
    """The track's ``details.training``: how a trained agent was made, as its bundle declares
    it (AIQ: the ``[training]`` table of aiq.toml: seed, steps, checkpoint and its SHA-256,
    library versions); shown on the entry's system page. Untrusted bundle text."""


@dataclass(frozen=True)
class ChartRecord:
    """One row of ``charts``: the chart data a track's scorer produced."""

    release: str
    benchmark: str
    name: str
    data: Any


@dataclass(frozen=True)
class RunRecord:
    """One row of ``score_runs``."""

    release: str
    benchmark: str
    benchmark_hash: str
    track: str
    code_version: str
    notes: tuple[str, ...]


@dataclass(frozen=True)
class ErratumRow:
    """What recomputing a frozen release with a later gmeter found (never a replacement)."""

    release: str
    code_version: str
    compared: int
    differ: int

    def text(self) -> str:
        """The line a release's page shows."""
        if self.differ == 0:
            return f"recomputed with {self.code_version}: all {self.compared} values agree"
        one = "value differs" if self.differ == 1 else "values differ"
        return (f"recomputed with {self.code_version}: {self.differ} {one} (of "
                f"{self.compared}); the release shows the numbers it published")


@dataclass(frozen=True)
class MissingRelease:
    """A release of releases.toml that could not be published, and why."""

    name: str
    reason: str


@dataclass(frozen=True)
class Snapshot:
    """Everything the site is built from, read from the store in one go (sorted)."""

    benchmarks: tuple[BenchmarkRow, ...]
    bundles: tuple[BundleRow, ...]
    releases: tuple[ReleaseRow, ...]
    scores: tuple[ScoreRecord, ...]
    charts: tuple[ChartRecord, ...]
    runs: tuple[RunRecord, ...]
    primary_metrics: Mapping[str, str] = field(default_factory=dict)
    site_date: dt.date = dt.date(1970, 1, 1)
    generator: str = "gmeter"
    errata: tuple[ErratumRow, ...] = ()
    missing_releases: tuple[MissingRelease, ...] = ()
