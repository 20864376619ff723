"""Settings of the ``generality`` track: the ``[generality]`` sections and file names.

:class:`BenchmarkSettings` (how items get a difficulty, the integration pipeline, the
normalisation, bootstrap) with its consistency checks, :class:`SubmissionSettings`, the
metric names and the bundle's file names, and :func:`is_populational`. Re-exported by
:mod:`pipeline.tracks.generality.track`.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any, Literal

from pydantic import Field, model_validator

from pipeline.tracks.base import BenchmarkInput
from pipeline.tracks.settings import StrictSettings

Transform = Literal["intrinsic", "aref", "rnk", "dref", "opp"]
POPULATIONAL: frozenset[str] = frozenset({"aref", "rnk", "opp"})
METRICS = ("capability", "spread", "generality", "normalised_generality", "expected_difficulty")
RESPONSES = "responses.csv"
AGENTS = "agents.csv"


class BenchmarkSettings(StrictSettings):
    """The ``[generality]`` section of ``benchmark.toml``."""

    transform: Transform = Field(
        "intrinsic",
        description="How items get a difficulty: intrinsic (reference/items.csv column "
        "`difficulty`), aref (a reference agent), rnk (rank percentiles on `columns` grid "
        "points), dref (a reference distribution per item: columns `ref_mean`, "
        "`ref_variance`), opp (a crosstable: items are the other agents).",
    )
    items_file: str = Field(
        "reference/items.csv",
        description="CSV with a column `item` listing every item (plus `difficulty`, `group`, "
        "`ref_mean`, `ref_variance` as the transform needs). Optional for aref/rnk/opp.",
    )
    pipeline: Literal["direct", "padded"] = Field(
        "direct",
        description="direct: the curves as given between kmin and kmax; padded: the reference "
        "code's full study (saturated and zero pads at quantile-based limits).",
    )
    kmin: float | None = Field(
        None,
        description="Left integration limit (direct pipeline). Absent: 0 when every "
        "difficulty is >= 0, else the smallest difficulty. Below the data it adds a saturated "
        "block; inside the data the segment up to the next point is dropped.",
    )
    kmax: float | None = Field(
        None,
        description="Right integration limit (direct pipeline); only a value below the largest "
        "difficulty has an effect (truncation). Absent: no truncation.",
    )
    normalisation: Literal["paper", "grid"] = Field(
        "paper",
        description="Normalised generality: paper (IRSS closed form per agent) or grid (the "
        "reference code's 100-point capability grid, which the published figures use).",
    )
    capability_range: tuple[float, float] | None = Field(
        None,
        description="[low, high] capability range q for normalised generality. Absent: [0, 1] "
        "for aref/rnk/dref, [0, n] for opp, [min, max] item difficulty for intrinsic.",
    )
    epsilon: float | None = Field(
        None,
        ge=0.0,
        lt=1.0,
        description="Intrinsic only: binarise responses as [value >= 1 - epsilon]. Absent: "
        "graded responses in [0, 1] are used as they are.",
    )
    clip_negative: bool = Field(
        False,
        description="Intrinsic only: responses may be below 0 and are clipped to 0 (e.g. "
        "average rewards in [-1, 1]).",
    )
    min_mean_response: float | None = Field(
        None,
        description="Leave out agents whose mean response (after clipping) is below this, "
        "before any transformation (e.g. 0.35 for near-random classifiers).",
    )
    difficulty_bins: int | None = Field(
        None,
        ge=2,
        description="Intrinsic only: replace difficulties by the reference's BinDifficulties "
        "labels with this many bins (its labelling quirk kept).",
    )
    reference_agent: str | None = Field(
        None, description="ARef: the agent whose scores are the reference."
    )
    aref_convention: Literal["greater_butequalhalf", "greater_or_equal", "greater"] = Field(
        "greater_butequalhalf",
        description="ARef tie rule: 1 above / 0.5 equal / 0 below the reference "
        "(greater_butequalhalf), or >= (greater_or_equal), or > (greater).",
    )
    columns: int = Field(
        100, ge=2, le=10000, description="Rnk/DRef: grid points c per item (100 in the paper)."
    )
    group_items: bool = Field(
        False,
        description="Rnk: average each agent's scores over the items of one `group` (items file) "
        "first, as R's rowMeans, and rank the group means.",
    )
    distribution: Literal["beta", "normal"] = Field(
        "beta",
        description="DRef reference distribution; normal passes ref_variance as the standard "
        "deviation, as the reference code does.",
    )
    bootstrap: int = Field(
        200, ge=0, le=10000, description="Bootstrap replicates over items (0: no intervals)."
    )
    confidence: float = Field(
        0.95, gt=0.0, lt=1.0, description="Level of the bootstrap percentile intervals."
    )

    @model_validator(mode="after")
    def _consistent(self) -> BenchmarkSettings:
        rng = self.capability_range
        if rng is not None and not (math.isfinite(rng[0]) and math.isfinite(rng[1])):
            raise ValueError("capability_range must be finite")
        if rng is not None and not rng[1] > rng[0]:
            raise ValueError("capability_range must be [low, high] with high > low")
        if self.transform == "aref" and not self.reference_agent:
            raise ValueError("transform 'aref' needs reference_agent")
        return self


class SubmissionSettings(StrictSettings):
    """The ``[generality]`` section of ``submission.toml`` (no facts are required)."""

    notes: str = Field(
        "", max_length=5000, description="How the responses were produced (free text)."
    )


def is_populational(settings: Mapping[str, Any]) -> bool:
    """Whether a new bundle changes other agents' scores (ARef, Rnk, Opp)."""
    return str(settings.get("transform", "intrinsic")) in POPULATIONAL


def settings_of(bench: BenchmarkInput) -> BenchmarkSettings:
    """Return the benchmark's settings as a model (defaults filled in)."""
    return BenchmarkSettings.model_validate(dict(bench.settings))
