"""Settings of the ``similarity`` track: the ``[similarity]`` sections.

:class:`BenchmarkSettings` (the suite of tests, accepted merges, the convention of eq. 3, the
interval level, an optional published-values file, the experiment that made the bundles) and
:class:`SubmissionSettings` (the baseline agent, the experiment's settings, or the publication
transcribed by a *reported* bundle). Validation and scoring read the sections typed
(:func:`settings_of`, :func:`submission_of`).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any, Literal

from pydantic import Field, field_validator, model_validator

from pipeline.inputs import BenchmarkInput, BundleInput
from pipeline.tracks.settings import StrictSettings

TEST_ID = r"^[A-Za-z0-9][A-Za-z0-9._()+-]{0,63}$"


Merge = Literal["sampling", "stitching"]


def _all_merges() -> list[Merge]:
    return ["sampling", "stitching"]


_Strict = StrictSettings


class DeclaredTest(_Strict):
    """One test (problem, dataset, environment family) of a similarity benchmark."""

    id: str = Field(pattern=TEST_ID, description="Name used in runs.csv (test_a, test_b).")
    title: str = Field("", max_length=200, description="Human name shown on the site.")
    description: str = Field("", max_length=5000, description="What the test is.")


class BenchmarkSettings(_Strict):
    """The ``[similarity]`` section of ``benchmark.toml``."""

    tests: list[DeclaredTest] = Field(
        min_length=2, description="The suite: every test a bundle may name, in display order."
    )
    merges: list[Merge] = Field(
        default_factory=_all_merges,
        min_length=1,
        description="Merge methods accepted in runs.csv: sampling (set-wise) or stitching "
        "(element-wise).",
    )
    convention: Literal["paper", "mixture"] = Field(
        "paper",
        description="paper: eq. 3 as published (p only labels the merge); mixture: the scale "
        "re-centred on p·V_A + (1−p)·V_B (equal to eq. 3 at p = 0.5). See docs/similarity.md.",
    )
    confidence: float = Field(
        0.95,
        gt=0.5,
        lt=1.0,
        description="Level of the intervals (Fieller per pair, bootstrap for the diversity).",
    )
    scale: tuple[float, float] = Field(
        (0.0, 1.0),
        description="[low, high]: the domain of every performance V (v_a, v_b, v_ab) in "
        "runs.csv (the paper's normalised performance: [0, 1]). A value outside it is refused "
        "by validation and never scored.",
    )
    published: str = Field(
        "",
        description="Optional path (under reference/) of a CSV of published similarities "
        "(test_a,test_b,similarity[,merge,p,note]) shown next to the bundles for comparison.",
    )
    experiment: dict[str, Any] | None = Field(
        None,
        description="Settings of the `gmeter similarity run` experiment whose bundles this "
        "benchmark holds (see docs/similarity.md); enough to rerun it.",
    )

    @field_validator("scale")
    @classmethod
    def _scale(cls, scale: tuple[float, float]) -> tuple[float, float]:
        low, high = scale
        if not (math.isfinite(low) and math.isfinite(high) and high > low):
            raise ValueError("scale must be [low, high] with finite low < high")
        if max(abs(low), abs(high)) > 1e9:
            raise ValueError("scale must lie within ±1e9")
        return scale

    @field_validator("tests")
    @classmethod
    def _unique_ids(cls, tests: list[DeclaredTest]) -> list[DeclaredTest]:
        ids = [t.id for t in tests]
        dup = sorted({i for i in ids if ids.count(i) > 1})
        if dup:
            raise ValueError(f"test ids must be unique; repeated: {', '.join(dup)}")
        return tests


#: Rules a bundle may not set: the benchmark owns them (``[similarity]`` of benchmark.toml).
BENCHMARK_RULES: frozenset[str] = frozenset(BenchmarkSettings.model_fields) - {"experiment"}


class SubmissionSettings(_Strict):
    """The ``[similarity]`` section of ``submission.toml``.

    Observations only: the baseline, the experiment that produced the runs, or the publication
    a *reported* bundle transcribes (and its printed precision). The scale, merges, convention
    and confidence are the benchmark's (a bundle giving one is refused, naming the field).
    """

    baseline: str = Field(
        "", max_length=2000, description="The baseline agent π and how it was trained/run."
    )
    experiment: dict[str, Any] | None = Field(
        None,
        description="When produced by `gmeter similarity run`: every setting of the run "
        "(tests, agent, episode length, programs, seeds), enough to reproduce runs.csv.",
    )
    reported: str = Field(
        "",
        max_length=500,
        description="Set when runs.csv transcribes published numbers rather than runs (e.g. "
        "'Pereyda & Holder 2020, Tables 1 and 2'): every score row says so and cannot be "
        "recomputed.",
    )
    digits: int | None = Field(
        None,
        ge=1,
        le=12,
        description="Only with `reported`: the number of decimals the publication gives S to; "
        "each S recomputed by eq. 3 is rounded to it (the transcribed V_AB reproduce the "
        "published S only up to rounding).",
    )

    @model_validator(mode="before")
    @classmethod
    def _no_rules(cls, data: Any) -> Any:
        if isinstance(data, Mapping):
            owned = sorted(k for k in data if k in BENCHMARK_RULES)
            if owned:
                raise ValueError(
                    f"{', '.join(owned)}: the benchmark owns this rule (set it in the "
                    "[similarity] section of benchmark.toml, not in submission.toml)"
                )
        return data

    @model_validator(mode="after")
    def _digits_need_reported(self) -> SubmissionSettings:
        if self.digits is not None and not self.reported:
            raise ValueError("digits applies to reported numbers only: set reported too")
        return self


def declared_tests(s: BenchmarkSettings) -> list[str]:
    """The ids of the benchmark's tests, in display order."""
    return [t.id for t in s.tests]


def settings_of(bench: BenchmarkInput) -> BenchmarkSettings:
    """The benchmark's ``[similarity]`` section as its model (validated by the manifest already)."""
    return BenchmarkSettings.model_validate(dict(bench.settings))


def submission_of(bundle: BundleInput) -> SubmissionSettings:
    """The bundle's ``[similarity]`` section as its model."""
    return SubmissionSettings.model_validate(dict(bundle.settings))
