"""The ``gindex`` track: the g-index of Venkatasubramanian et al. (2021).

A benchmark holds the reference programs of its test tasks, one folder per task domain
(``reference/domains/<domain>/<task>.json``, each ``{"flow": [...]}`` or a bare node list),
and declares the domain order used to symmetrise the domain distances (``[gindex]
domain_order``). A bundle brings

* ``curriculum.csv`` — ``domain,num_samples``: the training data per curriculum domain;
* ``compute.csv`` — rows of ``tflops,seconds`` (or ``compute`` in the benchmark's unit),
  optionally with a ``domain`` column;
* either ``programs/<task>.json`` — the program the system generated for each test task:
  θ is computed against the reference program (**verified**) —
* or ``divergences.csv`` — ``domain,divergence[,num_samples,perfects]``: mean Δ per task
  domain, as the published experiments give it (**reported**).

Scores: ``g_index`` (primary, with a bootstrap interval over test tasks), ``theta_mean``,
``omega_mean`` and ``compute_log2``. See docs/gindex.md.

This module holds ``TRACK`` and the ``gmeter new`` templates; the track's other roles are
:mod:`~pipeline.tracks.gindex.settings`, :mod:`~pipeline.tracks.gindex.validate` (bundle
layout, readers, validation), :mod:`~pipeline.tracks.gindex.score` (scoring and charts) and
:mod:`~pipeline.tracks.gindex.integrity`. The published experiments are imported by
:mod:`pipeline.lab.gindex.published`.
"""

from __future__ import annotations

from pipeline.metrics.gindex.info import METRICS
from pipeline.tracks.base import TrackSpec
from pipeline.tracks.gindex.charts import PRESENTATION
from pipeline.tracks.gindex.score import score
from pipeline.tracks.gindex.settings import (
    COMPUTE,
    CURRICULUM,
    PROGRAMS,
    BenchmarkSettings,
    SubmissionSettings,
)
from pipeline.tracks.gindex.validate import validate_benchmark, validate_bundle


def bundle_template() -> dict[str, str]:
    """Files ``gmeter new`` writes into a new gindex bundle."""
    return {
        "submission.toml": '\n[gindex]\nmodel = "TODO: model identifier"\n'
        "# priors = 1e-4          # optional ρ\n",
        CURRICULUM: "domain,num_samples\nTODO: domain,100\n",
        COMPUTE: "tflops,seconds\n0,0\n",
        f"{PROGRAMS}README.txt": "Put the generated program of each test task here as "
        "<task>.json (the benchmark's reference/domains/<domain>/<task>.json names), then "
        "delete this file.\n",
    }


def benchmark_template() -> dict[str, str]:
    """The ``[gindex]`` section ``gmeter new`` writes into a new benchmark."""
    return {
        "benchmark.toml": '\n[gindex]\nconvention = "reference"\nform = "domain"\n'
        "# every domain folder of reference/domains, in the order that symmetrises Ω\n"
        'domain_order = ["TODO: first domain"]\n',
    }


TRACK = TrackSpec(
    name="gindex",
    title="g-index",
    paper="G. Venkatasubramanian et al., Towards a Measure of General Machine Intelligence, "
    "arXiv:2109.12075 (2021)",
    primary_metric="g_index",
    secondary_metrics=("theta_mean", "omega_mean", "compute_log2"),
    benchmark_settings=BenchmarkSettings,
    submission_settings=SubmissionSettings,
    validate_benchmark=validate_benchmark,
    validate_bundle=validate_bundle,
    score=score,
    bundle_template=bundle_template,
    benchmark_template=benchmark_template,
    metrics=METRICS,
    presentation=PRESENTATION,
    order=1,
)
