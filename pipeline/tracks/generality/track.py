"""The ``generality`` track: capability, spread and generality of agent characteristic curves.

Hernández-Orallo et al. (2021). A benchmark declares its items (``reference/items.csv``) and
how difficulty is obtained (``[generality] transform``: intrinsic, ARef, Rnk, DRef or Opp);
a bundle brings ``responses.csv`` (long: ``agent,item,value``) for one or more agents and,
optionally, ``agents.csv`` (``agent,date``) for the temporal chart.

Scoring always recomputes the whole benchmark from all its bundles: with ARef, Rnk and Opp the
difficulties come from the population, so a new bundle changes everyone's numbers
(:func:`is_populational`). Per agent it stores ``capability`` (primary, with a bootstrap
interval), ``spread`` (with interval), ``generality``, ``normalised_generality`` and
``expected_difficulty``. The numbers are computed by gmeter from the raw responses, so rows
are *verified*.

See ``docs/generality.md`` for the formulas and conventions.

This module holds ``TRACK`` and the ``gmeter new`` templates; the track's other roles are
:mod:`~pipeline.tracks.generality.settings` (settings, names),
:mod:`~pipeline.tracks.generality.data` (reading, validation),
:mod:`~pipeline.tracks.generality.score` (scoring) and
:mod:`~pipeline.tracks.generality.integrity`. The folder loader of
``gmeter generality --benchmark`` is the use case :func:`pipeline.validate.benchmark_inputs`.
"""

from __future__ import annotations

from pipeline.metrics.generality.info import METRICS
from pipeline.tracks.base import TrackSpec
from pipeline.tracks.generality.charts import PRESENTATION
from pipeline.tracks.generality.score import score
from pipeline.tracks.generality.settings import (
    BenchmarkSettings,
    SubmissionSettings,
    is_populational,
)
from pipeline.tracks.generality.validate import validate_benchmark, validate_bundle


def bundle_template() -> dict[str, str]:
    """Return the files ``gmeter new`` writes into a new generality bundle."""
    return {
        "submission.toml": '\n[generality]\nnotes = "TODO: how the responses were produced"\n',
        "responses.csv": "agent,item,value\nTODO: agent name,TODO: item,1\n",
    }


def benchmark_template() -> dict[str, str]:
    """Return the ``[generality]`` section and items file of a new benchmark."""
    return {
        "benchmark.toml": (
            "\n[generality]\n"
            'transform = "intrinsic"   # intrinsic | aref | rnk | dref | opp\n'
            'normalisation = "paper"   # or "grid" (the reference code)\n'
            "# capability_range = [0.0, 1.0]\n"
        ),
        "reference/items.csv": "item,difficulty\nTODO: item,0.5\n",
    }


TRACK = TrackSpec(
    name="generality",
    title="Generality",
    paper="J. Hernández-Orallo, B. S. Loe, L. Cheke, F. Martínez-Plumed, S. Ó hÉigeartaigh, "
    "General intelligence disentangled via a generality metric for natural and artificial "
    "intelligence, Scientific Reports 11, 22822 (2021)",
    primary_metric="capability",
    secondary_metrics=("spread", "generality", "normalised_generality", "expected_difficulty"),
    benchmark_settings=BenchmarkSettings,
    submission_settings=SubmissionSettings,
    validate_benchmark=validate_benchmark,
    validate_bundle=validate_bundle,
    score=score,
    populational=True,
    bundle_template=bundle_template,
    benchmark_template=benchmark_template,
    metrics=METRICS,
    presentation=PRESENTATION,
    order=2,
    is_populational=is_populational,
)
