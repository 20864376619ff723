"""The ``aiq`` track: Legg & Veness's Algorithmic IQ on the BF reference machine.

A benchmark fixes the machine (``[aiq]`` settings) and the program sample
(``reference/programs.csv.gz``, whose strata frequencies are the :math:`p_i`). A bundle is the
output of ``gmeter aiq run``: ``aiq.toml`` (settings, seed, result), ``samples.csv`` (one row
per run) and optionally ``traces/actions.csv.gz`` (the actions of every run).

Scoring recomputes the estimate from ``samples.csv`` with the benchmark's :math:`p_i`
(:func:`pipeline.tracks.aiq.score.estimate_from_rows`; interval from the antithetic pairs) and
replays every traced run: a bundle whose runs all replay is **verified**, one without traces
is **reported**. Charts: AIQ per agent with intervals, AIQ against episode length (paper
Fig. 1) and the program-length distribution sampled vs accepted (paper Fig. 3).
"""

from __future__ import annotations

from pipeline.metrics.aiq.info import METRICS
from pipeline.tracks.aiq.charts import PRESENTATION
from pipeline.tracks.aiq.score import score
from pipeline.tracks.aiq.settings import AIQBenchmarkSettings, AIQSubmissionSettings
from pipeline.tracks.aiq.validate import validate_benchmark, validate_bundle
from pipeline.tracks.base import TrackSpec

PAPER = (
    "S. Legg and J. Veness, An Approximation of the Universal Intelligence Measure, in "
    "Algorithmic Probability and Friends (Solomonoff memorial), LNCS 7070, Springer 2013"
)


def bundle_template() -> dict[str, str]:
    """Return the files ``gmeter new`` writes into a new AIQ bundle (then run gmeter aiq run)."""
    return {
        "submission.toml": (
            "\n[aiq]\n"
            'agent = "TODO: the agent and its parameters"\n'
            'code_url = ""\n'
            "# then: gmeter aiq run --agent SPEC --episode-length 1000 --samples 10000 "
            "--seed S --out <this folder> --traces\n"
        ),
    }


def benchmark_template() -> dict[str, str]:
    """Return the ``[aiq]`` section ``gmeter new`` writes into a new benchmark."""
    return {
        "benchmark.toml": (
            "\n[aiq]\n"
            "num_symbols = 5\nobs_cells = 1\nreverse_output = false\n"
            'simplify = "single-pass"\ndiscount = 1.0\nepisode_lengths = [1000]\n'
            'programs = "reference/programs.csv.gz"\n'
            "# draw it with: gmeter aiq sample --count 100000 --seed 1 --out <folder>/reference\n"
        ),
    }


TRACK = TrackSpec(
    name="aiq",
    title="AIQ",
    paper=PAPER,
    primary_metric="aiq",
    secondary_metrics=(),
    benchmark_settings=AIQBenchmarkSettings,
    submission_settings=AIQSubmissionSettings,
    validate_benchmark=validate_benchmark,
    validate_bundle=validate_bundle,
    score=score,
    bundle_template=bundle_template,
    benchmark_template=benchmark_template,
    metrics=METRICS,
    presentation=PRESENTATION,
    order=3,
)
