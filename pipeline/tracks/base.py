"""The contract between the generic pipeline and one track (gindex, generality, aiq, similarity).

The generic code (bundles, validate, ingest, score, build) knows nothing of any paper. A track
package ``pipeline/tracks/<name>/`` exposes one module-level :class:`TrackSpec` called ``TRACK``
that says how to check a benchmark and a bundle of that track and how to score them.

Everything a track sees is already in memory (:class:`FileSet`): tracks never open files, never
touch the store and never execute anything from a bundle. Scoring is a pure function of the
benchmark, its bundles and a :class:`ScoreContext` (seed, executor, options), so ``gmeter score``
and ``gmeter check`` give byte-identical numbers on the same inputs.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from pipeline.errors import Problem

if TYPE_CHECKING:
    from pipeline.executor.base import Executor


@dataclass(frozen=True)
class FileSet:
    """The files of a benchmark folder or a bundle, read into memory.

    Attributes
    ----------
    label : str
        Where the files came from, as shown in messages (``submissions/ale-ranks/deepmind``).
    files : Mapping[str, bytes]
        Relative POSIX path → content. Nested bundles are not included in a benchmark's set.
    """

    label: str
    files: Mapping[str, bytes]

    def where(self, path: str) -> str:
        """The display path of ``path`` (label + relative path)."""
        return f"{self.label}/{path}" if self.label else path

    def has(self, path: str) -> bool:
        """Whether ``path`` is in the set."""
        return path in self.files

    def under(self, prefix: str) -> list[str]:
        """Sorted paths below the folder ``prefix`` (no trailing slash needed)."""
        pre = prefix.rstrip("/") + "/"
        return sorted(p for p in self.files if p.startswith(pre))

    def text(self, path: str) -> str:
        """The file decoded as UTF-8 (validation has already rejected other encodings)."""
        return self.files[path].decode("utf-8")

    def json(self, path: str) -> Any:
        """The file parsed as JSON (validation has already rejected JSON that does not parse).

        Bounded like validation (:func:`pipeline.limits.loads_bounded`): a file too deep to
        parse raises ``ValueError``, never ``RecursionError``.
        """
        from pipeline.limits import loads_bounded

        return loads_bounded(self.text(path))

    def csv_rows(self, path: str) -> list[dict[str, str]]:
        """The rows of a CSV file with a header line, as dicts of strings."""
        return list(csv.DictReader(io.StringIO(self.text(path), newline="")))


@dataclass(frozen=True)
class BenchmarkInput:
    """A benchmark as the tracks see it.

    Attributes
    ----------
    id, track, version : str
        From ``benchmark.toml``.
    manifest : Mapping[str, Any]
        The whole parsed ``benchmark.toml``.
    settings : Mapping[str, Any]
        The track section (``[gindex]`` etc.) after validation by the track's settings model,
        defaults filled in.
    files : FileSet
        ``benchmark.toml`` and everything under the benchmark folder that is not a bundle
        (``reference/...``).
    content_hash : str
        SHA-256 over ``files`` (see :func:`pipeline.bundles.content_hash`).
    """

    id: str
    track: str
    version: str
    manifest: Mapping[str, Any]
    settings: Mapping[str, Any]
    files: FileSet
    content_hash: str = ""


@dataclass(frozen=True)
class BundleInput:
    """One submission bundle as the tracks see it.

    Attributes
    ----------
    id : str
        The bundle's folder name, unique within its benchmark.
    benchmark : str
        The benchmark id.
    manifest : Mapping[str, Any]
        The whole parsed ``submission.toml``.
    settings : Mapping[str, Any]
        Its track section (``[gindex]`` …) after validation, defaults filled in.
    files : FileSet
        Every file of the bundle, ``submission.toml`` included.
    content_hash : str
        SHA-256 over ``files``.
    """

    id: str
    benchmark: str
    manifest: Mapping[str, Any]
    settings: Mapping[str, Any]
    files: FileSet
    content_hash: str = ""

    @property
    def system(self) -> str:
        """The system's display name from ``[system].name``."""
        return str(self.manifest.get("system", {}).get("name", self.id))


@dataclass(frozen=True)
class ScoreRow:
    """One number for one agent of one bundle.

    ``agent`` is the system's name for single-system bundles; a generality response matrix
    holds many agents. ``value`` may be ``inf`` (a step curve's generality) or ``nan``
    (undefined, with ``details["why"]``); the store keeps both.
    """

    bundle: str
    agent: str
    metric: str
    value: float
    ci_low: float | None = None
    ci_high: float | None = None
    verified: bool = False
    details: Mapping[str, Any] | None = None


@dataclass
class ScoreContext:
    """What a scorer may use besides its inputs.

    Attributes
    ----------
    seed : int
        Root seed; derive per-item seeds from it (``numpy.random.SeedSequence``), never per worker.
    executor : Executor or None
        Where parallel work runs (:class:`pipeline.executor.base.Executor`); ``None`` means
        in-process. Pure metrics receive its bound ``map``, never the executor itself.
    options : dict
        Overrides from the command line (e.g. ``{"convention": "paper"}``).
    progress : Callable[[str, int, int], None] | None
        ``progress(task, done, total)`` for long work.
    """

    seed: int = 20211
    executor: Executor | None = None
    options: dict[str, Any] = field(default_factory=dict)
    progress: Callable[[str, int, int], None] | None = None


@dataclass
class TrackResult:
    """What a track's scorer returns for one benchmark.

    Attributes
    ----------
    rows : list[ScoreRow]
        Every metric of every agent of every bundle scored.
    charts : dict[str, Any]
        JSON-ready chart data keyed by chart name (read by :mod:`pipeline.site.charts`).
    notes : list[str]
        Human-readable remarks (conventions used, skipped bundles and why).
    """

    rows: list[ScoreRow] = field(default_factory=list)
    charts: dict[str, Any] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class TrackSpec:
    """A track's entry in the registry.

    Attributes
    ----------
    name : str
        ``gindex``, ``generality``, ``aiq`` or ``similarity``.
    title : str
        Human name.
    paper : str
        The reference shown on the site.
    primary_metric : str
        The metric the leaderboard ranks by (see :mod:`pipeline.metrics.registry`).
    secondary_metrics : tuple[str, ...]
        Shown as extra columns.
    benchmark_settings : type
        Pydantic model of the ``[<track>]`` section of ``benchmark.toml``.
    submission_settings : type
        Pydantic model of the ``[<track>]`` section of ``submission.toml``.
    validate_benchmark : Callable
        ``(BenchmarkInput) -> list[Problem]``: checks of the benchmark's reference files.
    validate_bundle : Callable
        ``(BundleInput, BenchmarkInput) -> list[Problem]``: layout, columns, values.
    score : Callable
        ``(BenchmarkInput, Sequence[BundleInput], ScoreContext) -> TrackResult``.
    populational : bool
        True when one bundle changes everyone's scores (difficulty from the population).
    bundle_template : Callable or None
        ``() -> dict[path, text]``: the track files (and a commented ``[<track>]`` section
        under the key ``"submission.toml"``) that ``gmeter new`` writes into a new bundle.
    benchmark_template : Callable or None
        ``() -> dict[path, text]``: likewise for a new benchmark folder.
    """

    name: str
    title: str
    paper: str
    primary_metric: str
    secondary_metrics: tuple[str, ...]
    benchmark_settings: type
    submission_settings: type
    validate_benchmark: Callable[[BenchmarkInput], list[Problem]]
    validate_bundle: Callable[[BundleInput, BenchmarkInput], list[Problem]]
    score: Callable[[BenchmarkInput, Sequence[BundleInput], ScoreContext], TrackResult]
    populational: bool = False
    bundle_template: Callable[[], dict[str, str]] | None = None
    benchmark_template: Callable[[], dict[str, str]] | None = None
