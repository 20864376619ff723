"""The ``similarity`` track: relative similarity of benchmark problems (Pereyda & Holder 2020).

A benchmark declares its **tests**; a bundle brings ``runs.csv``: a baseline agent's scores on
pairs of tests and on their merges (see :mod:`pipeline.tracks.similarity.runs`). Scoring gives, per
bundle and configuration (agent, merge, p):

* one row per pair, ``agent = "<first>|<second>"`` (tests in **name** order, so the key is
  stable across releases even if the easier test changes), metrics ``similarity`` (primary,
  eq. 3, with a Fieller interval over seeds) and ``dissimilarity`` (``1 - S``);
* one row ``agent = "suite"`` with ``diversity`` (mean pairwise dissimilarity, bootstrap
  interval over seeds).

A bundle with several configurations suffixes each row's agent with `` [agent, merge, p=…]``.
Charts: ``similarity_heatmap`` (the paper's Table 2 / Fig. 5) and ``similarity_map`` (the
classical-MDS map of the tests, as the paper's Fig. 4). Numbers come from the submitter's
scores, so rows are *reported* (not verified).
"""

from __future__ import annotations

from pipeline.metrics.similarity.info import METRICS
from pipeline.tracks.base import TrackSpec
from pipeline.tracks.similarity.charts import PRESENTATION
from pipeline.tracks.similarity.score import score
from pipeline.tracks.similarity.settings import BenchmarkSettings, SubmissionSettings
from pipeline.tracks.similarity.validate import validate_benchmark, validate_bundle


def bundle_template() -> dict[str, str]:
    """Return the files ``gmeter new`` writes into a new similarity bundle."""
    return {
        "submission.toml": (
            "\n[similarity]\n"
            'baseline = "TODO: the baseline agent and how it was trained and scored"\n'
        ),
        "runs.csv": "test_a,test_b,p,merge,agent,v_a,v_b,v_ab,seed\n"
        "TODO: first test,TODO: second test,0.5,sampling,TODO: agent,0,0,0,1\n",
    }


def benchmark_template() -> dict[str, str]:
    """Return the ``[similarity]`` section ``gmeter new`` writes into a new benchmark."""
    return {
        "benchmark.toml": (
            "\n[similarity]\n"
            "# the suite: every test a bundle may name in runs.csv\n"
            "tests = [\n"
            '  { id = "TODO: first test", title = "" },\n'
            '  { id = "TODO: second test", title = "" },\n'
            "]\n"
            'convention = "paper"  # or "mixture"; see docs/similarity.md\n'
        ),
    }


TRACK = TrackSpec(
    name="similarity",
    title="Test similarity",
    paper="C. Pereyda and L. Holder, Measuring the Relative Similarity and Difficulty Between "
    "AI Benchmark Problems, AAAI 2020 Workshop on Evaluating Evaluation of AI Systems",
    primary_metric="similarity",
    secondary_metrics=("dissimilarity", "diversity"),
    benchmark_settings=BenchmarkSettings,
    submission_settings=SubmissionSettings,
    validate_benchmark=validate_benchmark,
    validate_bundle=validate_bundle,
    score=score,
    bundle_template=bundle_template,
    benchmark_template=benchmark_template,
    metrics=METRICS,
    presentation=PRESENTATION,
    order=4,
)
