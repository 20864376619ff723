"""Settings of the ``gindex`` track: the ``[gindex]`` sections and the bundle's file names.

:class:`BenchmarkSettings` (where the reference programs are, the domain order, the Δ
convention, the contribution form, ρ, the compute unit, the bootstrap, published values),
:class:`SubmissionSettings` (model, claimed priors, declared compute) and the files a bundle
brings (``curriculum.csv``, ``compute.csv``, ``programs/<task>.json`` or ``divergences.csv``).
Validation and scoring read the sections typed (:func:`settings_of`, :func:`submission_of`).
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field

from pipeline.inputs import BenchmarkInput, BundleInput
from pipeline.tracks.settings import StrictSettings

CURRICULUM = "curriculum.csv"
COMPUTE = "compute.csv"
DIVERGENCES = "divergences.csv"
PROGRAMS = "programs/"
CURRICULUM_SAMPLES = "curriculum/"
"""Folder of the curriculum's training samples: ``curriculum/<domain>.jsonl``."""

BOARD_CONVENTION = "paper"
"""The Δ convention of every board θ and of the copy checks (issue 20, item 4b).

The paper's symmetric, strict convention: a node similarity over the union of both nodes'
attributes, so dropping an attribute the reference has *costs* (a stripped copy of a
reference never scores Δ = 0). The companion code's ``reference`` convention, in which a
node with no compared key weighs 1, stays for the domain distances Ω between the benchmark's
own reference programs (``[gindex] convention``), so the paper's published numbers are
reproduced; it never measures a submitted program.
"""


NonNegative = Annotated[float, Field(ge=0, allow_inf_nan=False)]
"""A finite number ≥ 0 (a prior ρ: a negative prior has no meaning)."""
MAX_COMPUTE = 1e30
"""Largest compute accepted in the benchmark's unit (far beyond any training run)."""


class PublishedValue(StrictSettings):
    """A published g-index of one bundle, shown next to gmeter's."""

    bundle: str = Field(description="The bundle id.")
    paper: float | None = Field(None, description="The value in the paper (Table 1).")
    companion: float | None = Field(
        None, description="The value the companion code prints for the published data."
    )


class BenchmarkSettings(StrictSettings):
    """The ``[gindex]`` section of ``benchmark.toml``."""

    domains_dir: str = Field(
        "reference/domains",
        description="Folder of the reference programs: <domains_dir>/<domain>/<task>.json.",
    )
    domain_order: list[str] = Field(
        default_factory=list,
        description="Every task domain once, in the order that symmetrises the domain "
        "distances (the earlier domain of a pair is the one averaged over). Empty: sorted.",
    )
    convention: Literal["reference", "paper"] = Field(
        "reference",
        description="Δ convention of the domain distances Ω between the reference programs: "
        "reference (the companion code's semantics, reproduces its published output) or "
        "paper (the paper's definition). A submitted program's θ is always measured under "
        "the paper convention (BOARD_CONVENTION). See docs/gindex.md.",
    )
    form: Literal["domain", "task"] = Field(
        "domain",
        description="domain: one contribution per task domain, as the companion code; task: "
        "one per test task (paper eqs. 8-9). Reported bundles always use domain.",
    )
    rho: float = Field(
        1e-4,
        ge=0,
        le=1e6,
        description="The priors ρ of every bundle (paper: a "
        "constant, 1e-4 in the companion code). The benchmark owns it.",
    )
    compute_unit: str = Field("PFLOP·s", description="Unit of compute (E = log2 of it).")
    min_experience: float = Field(
        1.0,
        gt=0,
        le=1e6,
        allow_inf_nan=False,
        description="Compute floor: a bundle's ρ + E (E = log2 compute) must be at least this, "
        "so the denominator of eq. 9 stays away from its pole (1: at least about 2 units).",
    )
    tflops_seconds_per_unit: float = Field(
        1000.0, gt=0, description="TFLOPS × seconds in one compute unit (1000 for PFLOP·s)."
    )
    max_nodes: int = Field(2000, ge=1, description="Largest program accepted (nodes).")
    confidence: float = Field(0.95, gt=0.5, lt=1.0, description="Bootstrap interval level.")
    resamples: int = Field(2000, ge=100, description="Bootstrap resamples of the test tasks.")
    published: list[PublishedValue] = Field(
        default_factory=list, description="Published values shown for comparison."
    )
    sealed_sha256: str | None = Field(
        None,
        pattern="^[0-9a-f]{64}$",
        description="Sealed test set: the SHA-256 commitment of the reference programs kept "
        "out of the repository (pipeline.tracks.gindex.sealed.commitment). Scoring reads them "
        "from --option sealed=DIR or GMETER_SEALED at publish time; without them the entries "
        "are left unscored with a note.",
    )
    sealed_tasks: list[str] = Field(
        default_factory=list,
        max_length=100_000,
        description="With sealed_sha256: every sealed test task as domain/task (public, so "
        "bundles can be validated; the programs stay sealed).",
    )


class SubmissionSettings(StrictSettings):
    """The ``[gindex]`` section of ``submission.toml``."""

    model: str = Field("", max_length=200, description="Model identifier (e.g. gpt2-medium).")
    priors: NonNegative | dict[str, NonNegative] | None = Field(
        None,
        description="Priors ρ ≥ 0 claimed by the submitter (one number, or one per "
        "curriculum domain). The benchmark owns ρ (`rho` of benchmark.toml): a bundle that "
        "declares its own is scored with the benchmark's, flagged by `gmeter check` and "
        "marked on the board.",
    )
    compute: float | None = Field(
        None,
        gt=0,
        le=MAX_COMPUTE,
        description="Declared total compute; must equal the compute log's total.",
    )
    average_divergence: float | None = Field(
        None, ge=0, le=1, description="Published overall mean divergence (shown, not scored)."
    )


def settings_of(bench: BenchmarkInput) -> BenchmarkSettings:
    """The benchmark's ``[gindex]`` section as its model (validated by the manifest already)."""
    return BenchmarkSettings.model_validate(dict(bench.settings))


def submission_of(bundle: BundleInput) -> SubmissionSettings:
    """The bundle's ``[gindex]`` section as its model."""
    return SubmissionSettings.model_validate(dict(bundle.settings))
