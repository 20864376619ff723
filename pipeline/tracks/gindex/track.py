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

This module holds ``TRACK`` and the ``gmeter new`` templates and re-exports the track's
public names from the modules that implement it: :mod:`~pipeline.tracks.gindex.validate`
(settings, bundle layout, readers, validation), :mod:`~pipeline.tracks.gindex.score`
(scoring and charts) and :mod:`~pipeline.tracks.gindex.published` (the published experiments).
"""

from __future__ import annotations

from pipeline.tracks.base import TrackSpec
from pipeline.tracks.gindex.published import (
    MAYA_COMMIT,
    MAYA_DOMAIN_ORDER,
    MAYA_SYSTEMS,
    MAYA_URL,
    PAPER,
    MayaExperiment,
    experiment_g_index,
    experiment_tasks,
    maya_experiment_bundle,
    parse_maya_experiment,
)
from pipeline.tracks.gindex.score import CLUSTER_LIMIT, mean, score
from pipeline.tracks.gindex.validate import (
    COMPUTE,
    COMPUTE_COLUMNS,
    CURRICULUM,
    CURRICULUM_COLUMNS,
    DIVERGENCE_COLUMNS,
    DIVERGENCES,
    PROGRAMS,
    BenchmarkSettings,
    PublishedValue,
    SubmissionSettings,
    domain_order,
    flow_problems,
    read_compute,
    read_flow,
    reference_tasks,
    validate_benchmark,
    validate_bundle,
)

__all__ = [
    "CLUSTER_LIMIT",
    "COMPUTE",
    "COMPUTE_COLUMNS",
    "CURRICULUM",
    "CURRICULUM_COLUMNS",
    "DIVERGENCES",
    "DIVERGENCE_COLUMNS",
    "MAYA_COMMIT",
    "MAYA_DOMAIN_ORDER",
    "MAYA_SYSTEMS",
    "MAYA_URL",
    "PAPER",
    "PROGRAMS",
    "TRACK",
    "BenchmarkSettings",
    "MayaExperiment",
    "PublishedValue",
    "SubmissionSettings",
    "benchmark_template",
    "bundle_template",
    "domain_order",
    "experiment_g_index",
    "experiment_tasks",
    "flow_problems",
    "maya_experiment_bundle",
    "mean",
    "parse_maya_experiment",
    "read_compute",
    "read_flow",
    "reference_tasks",
    "score",
    "validate_benchmark",
    "validate_bundle",
]


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
)
