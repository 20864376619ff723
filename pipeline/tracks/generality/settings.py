"""Settings of the ``generality`` track: the ``[generality]`` sections and file names.

:class:`BenchmarkSettings` (how items get a difficulty, the integration pipeline, the
normalisation, bootstrap) with its consistency checks, :class:`SubmissionSettings`, the
metric names and the bundle's file names, and :func:`is_populational`.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any, Literal

from pydantic import Field, model_validator

from pipeline.inputs import BenchmarkInput
from pipeline.tracks.settings import StrictSettings

Transform = Literal["intrinsic", "aref", "rnk", "dref", "opp", "irt"]
POPULATIONAL: frozenset[str] = frozenset({"aref", "rnk", "opp", "irt"})
#: Largest magnitude of a numeric setting (difficulties, limits, ranges): finite and bounded.
BOUND = 1e9
#: The value of a response the agent did not give (``responses.csv``); the board shows it.
MISSING_MARK = "NA"
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
        "`ref_variance`), opp (a crosstable: items are the other agents), irt (2PL/1PL IRT "
        "difficulties estimated from the responses, rescaled to irt_range).",
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
        ge=-BOUND,
        le=BOUND,
        allow_inf_nan=False,
        description="Left integration limit (direct pipeline). Absent: 0 when every "
        "difficulty is >= 0, else the smallest difficulty. Below the data it adds a saturated "
        "block; inside the data the segment up to the next point is dropped.",
    )
    kmax: float | None = Field(
        None,
        ge=-BOUND,
        le=BOUND,
        allow_inf_nan=False,
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
        ge=-BOUND,
        le=BOUND,
        allow_inf_nan=False,
        description="Leave out agents whose mean response (after clipping) is below this, "
        "before any transformation (e.g. 0.35 for near-random classifiers).",
    )
    difficulty_bins: int | None = Field(
        None,
        ge=2,
        le=10000,
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
    irt_model: Literal["1pl", "2pl"] = Field(
        "2pl", description="IRT only: the item response model estimated by marginal ML."
    )
    irt_range: tuple[float, float] | None = Field(
        None,
        description="IRT only: [low, high] onto which the IRT difficulties are rescaled "
        "linearly (the paper's 'same range'). Absent: the range of the items file's "
        "`difficulty` column if it has one, else [0, 1].",
    )
    raw_scale: tuple[float, float] | None = Field(
        None,
        description="The scale [low, high] of every response of this benchmark. intrinsic, "
        "irt and dref (beta): the values lie in it and each becomes (value - low) / "
        "(high - low) in [0, 1] (e.g. [-0.25, 1.0] for a test scored 1 correct, 0 no "
        "answer, -0.25 wrong: the C-test's 'nonbinary' scoring). aref, rnk and dref "
        "(normal): the bounds of the raw scores, used as they are. Absent: [0, 1] for "
        "responses in [0, 1], +-1e9 for raw scores. The benchmark owns it: a bundle cannot "
        "choose its own scale.",
    )
    missing: Literal["worst", "exclude", "zero"] = Field(
        "worst",
        description="What an explicit NA response (not attempted) means. worst (default): "
        "the worst value of the scale (a wrong answer: 0 in [0, 1]; for raw scores the "
        "scale's low end, or below every score of the item when the benchmark declares no "
        "raw_scale), so a missing answer never scores more than a given one. exclude: the "
        "agent's curve uses its answered items only; the board shows each agent's coverage "
        "and leaves unranked an agent below min_coverage. zero: the same as worst for "
        "responses in [0, 1] (kept for older benchmarks). opp takes no NA at all.",
    )
    min_coverage: float = Field(
        1.0,
        gt=0.0,
        le=1.0,
        description="Only with missing = 'exclude': the smallest share of the benchmark's "
        "items an agent must answer to be ranked (its row is shown, its value is not).",
    )
    bootstrap: int = Field(
        200, ge=0, le=10000, description="Bootstrap replicates over items (0: no intervals)."
    )
    confidence: float = Field(
        0.95, gt=0.0, lt=1.0, description="Level of the bootstrap percentile intervals."
    )

    @model_validator(mode="after")
    def _consistent(self) -> BenchmarkSettings:
        for name in ("capability_range", "irt_range"):
            _check_range(name, getattr(self, name))
        if self.kmin is not None and self.kmax is not None and not self.kmax > self.kmin:
            raise ValueError("kmax must be greater than kmin")
        _check_range("raw_scale", self.raw_scale)
        if self.missing == "zero" and self.transform not in ("intrinsic", "irt"):
            raise ValueError("missing = 'zero' needs responses in [0, 1] (intrinsic or irt)")
        if self.min_coverage < 1.0 and self.missing != "exclude":
            raise ValueError("min_coverage applies to missing = 'exclude' only")
        if self.transform == "aref" and not self.reference_agent:
            raise ValueError("transform 'aref' needs reference_agent")
        return self


def _check_range(name: str, rng: tuple[float, float] | None) -> None:
    if rng is None:
        return
    if not all(math.isfinite(v) and abs(v) <= BOUND for v in rng):
        raise ValueError(f"{name} must be finite numbers within ±{BOUND:g}")
    if not rng[1] > rng[0]:
        raise ValueError(f"{name} must be [low, high] with high > low")


#: Rules a bundle may not set: the benchmark owns them (``[generality]`` of benchmark.toml).
BENCHMARK_RULES: frozenset[str] = frozenset(BenchmarkSettings.model_fields)


class SubmissionSettings(StrictSettings):
    """The ``[generality]`` section of ``submission.toml``: free text only (no rule).

    A bundle carries observations; every rule that changes a score (the scale, the missing
    policy, the transformation and its parameters) is the benchmark's. A rule given here is a
    validation error that names the field and says the benchmark owns it.
    """

    notes: str = Field(
        "", max_length=5000, description="How the responses were produced (free text)."
    )

    @model_validator(mode="before")
    @classmethod
    def _no_rules(cls, data: Any) -> Any:
        if isinstance(data, Mapping):
            owned = sorted(k for k in data if k in BENCHMARK_RULES)
            if owned:
                raise ValueError(
                    f"{', '.join(owned)}: the benchmark owns this rule (set it in the "
                    "[generality] section of benchmark.toml, not in submission.toml)"
                )
        return data


def is_populational(settings: Mapping[str, Any]) -> bool:
    """Whether a new bundle changes other agents' scores (ARef, Rnk, Opp)."""
    return str(settings.get("transform", "intrinsic")) in POPULATIONAL


def settings_of(bench: BenchmarkInput) -> BenchmarkSettings:
    """Return the benchmark's settings as a model (defaults filled in)."""
    return BenchmarkSettings.model_validate(dict(bench.settings))
