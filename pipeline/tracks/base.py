"""The contract between the generic pipeline and one track (one paper's measure).

The generic code (bundles, validate, ingest, score, build, the site) knows nothing of any
paper. A track package ``pipeline/tracks/<name>/`` exposes one module-level :class:`TrackSpec`
called ``TRACK`` that says how to check a benchmark and a bundle of that track, how to score
them, which metrics they yield and how the site shows them.

Everything a track sees is already in memory (:class:`~pipeline.inputs.FileSet`): tracks never
open files, never touch the store and never execute anything from a bundle. Scoring is a pure
function of the benchmark, its bundles and a :class:`ScoreContext` (seed, executor, options), so
``gmeter score`` and ``gmeter check`` give byte-identical numbers on the same inputs.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

from pipeline.errors import Problem
from pipeline.inputs import BenchmarkInput, BundleInput
from pipeline.metrics.info import MetricInfo
from pipeline.tracks.presentation import Presentation

if TYPE_CHECKING:
    from pipeline.executor.base import Executor


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


class VerificationMemo(Protocol):
    """Verification results kept between score runs, by (bundle content hash, context).

    ``verifier`` names the check and its version; ``context`` is what the result depends on
    besides the bundle's files (e.g. a digest of the benchmark's program sample). A result
    recalled must be the one the track would compute again: scores never depend on the memo.
    """

    def recall(
        self, verifier: str, keys: Sequence[tuple[str, str]]
    ) -> Mapping[tuple[str, str], Mapping[str, Any]]:
        """The kept results for these keys (missing keys absent)."""
        ...

    def keep(
        self, verifier: str, results: Mapping[tuple[str, str], tuple[bool, Mapping[str, Any]]]
    ) -> None:
        """Keep (verified, JSON-ready result) per key."""
        ...


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
    verifications : VerificationMemo or None
        Where verification results of earlier runs are kept (the store, for ``gmeter score``);
        ``None`` verifies everything afresh.
    """

    seed: int = 20211
    executor: Executor | None = None
    options: dict[str, Any] = field(default_factory=dict)
    progress: Callable[[str, int, int], None] | None = None
    verifications: VerificationMemo | None = None


@dataclass
class TrackResult:
    """What a track's scorer returns for one benchmark.

    Attributes
    ----------
    rows : list[ScoreRow]
        Every metric of every agent of every bundle scored.
    charts : dict[str, Any]
        JSON-ready chart data keyed by chart name (drawn through the track's presentation).
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
        The track's name: its package's name and the ``track`` of its benchmarks.
    title : str
        Human name.
    paper : str
        The reference shown on the site.
    primary_metric : str
        The metric the leaderboard ranks by (see :attr:`metrics`).
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
        True when one bundle *may* change everyone's scores (difficulty from the population).
    is_populational : Callable or None
        ``(settings) -> bool``: whether a benchmark with these ``[<track>]`` settings is
        populational (a track like generality decides per benchmark); ``None`` means
        :attr:`populational`. Ask :meth:`populational_for`, never this field.
    bundle_template : Callable or None
        ``() -> dict[path, text]``: the track files (and a commented ``[<track>]`` section
        under the key ``"submission.toml"``) that ``gmeter new`` writes into a new bundle.
    benchmark_template : Callable or None
        ``() -> dict[path, text]``: likewise for a new benchmark folder.
    metrics : tuple[MetricInfo, ...]
        Every metric the track emits: direction, label, unit, description (the paper's
        ``metrics/<name>/info.py``; :func:`pipeline.tracks.metric_info` looks them up).
    presentation : Presentation
        How the site shows the track: chart requests, interval note, methodology, citation
        (the track's ``charts.py``; see :mod:`pipeline.tracks.presentation`).
    order : int
        Where the track is listed among the tracks (hints, the manifest schema's choices):
        ascending, ties by name.
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
    metrics: tuple[MetricInfo, ...] = ()
    presentation: Presentation = field(default_factory=Presentation)
    order: int = 100
    is_populational: Callable[[Mapping[str, Any]], bool] | None = None

    def populational_for(self, settings: Mapping[str, Any]) -> bool:
        """Whether one new bundle changes other entries' scores on this benchmark."""
        if self.is_populational is not None:
            return bool(self.is_populational(settings))
        return bool(self.populational)
