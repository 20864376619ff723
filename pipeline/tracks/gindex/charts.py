"""How the site shows the g-index track: its notes, methodology, paper and θ-compute chart.

The track's stored chart data (``gindex_published``, ``gindex_theta_compute``) describes
itself (title, axes, bubble size) and is drawn by the site's generic chart; when a scorer
stored no θ-compute chart, the site draws one from the scores (:data:`THETA_COMPUTE`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pipeline.tracks.presentation import Citation, MetricScatter, Presentation

THETA_COMPUTE = MetricScatter(
    key="theta-compute",
    title="θ vs training compute",
    what="after the paper's Figs. 12–13",
    x="compute_log2",
    y="theta_mean",
    size="g_index",
    unless="gindex_theta_compute",
)
"""θ against training compute with the g-index as bubble size, from the board's scores."""


def interval_note(level: str, manifest: Mapping[str, Any]) -> str:
    """The bootstrap percentile interval of the g-index over test tasks."""
    del manifest  # the level is all this note needs
    return (
        f"Intervals: {level} bootstrap percentile interval of the g-index, "
        "resampling test tasks."
    )


METHODOLOGY = (
    "<p>The g-index measures <em>skill-acquisition efficiency</em>: how well a system performs "
    "on test tasks, weighted by how far those tasks are from what it was trained on, per unit of "
    "experience. For each test task <var>t</var> the system's generated program is compared with "
    "the reference program:</p>\n"
    "<div class=\"formula\">\n"
    "<p>θ<sub>t</sub> = 1 − Δ<sub>t</sub>, where Δ is the DAG divergence of the generated and "
    "reference flows (one minus the weight of a maximum-weight clique of their association "
    "graph, normalised by the larger flow).</p>\n"
    "<p>GD<sub>t,c</sub> = exp(10 · Ω<sub>t,c</sub>) — generalisation difficulty from the domain "
    "distance Ω between task <var>t</var> and curriculum domain <var>c</var>;</p>\n"
    "<p>W<sub>c</sub> = 1 / (1 + log<sub>2</sub> n<sub>c</sub>) — the weight of a domain seen "
    "through <var>n<sub>c</sub></var> training samples;</p>\n"
    "<p>E = log<sub>2</sub>(compute) — experience; ρ = 10<sup>−4</sup> — priors;</p>\n"
    "<p>TC<sub>t</sub> = √( exp(12 θ<sub>t</sub>) · Σ<sub>c</sub> GD<sub>t,c</sub> W<sub>c</sub> "
    "/ (ρ + E) );</p>\n"
    "<p><strong>g-index</strong> = mean over the test tasks of TC<sub>t</sub>, rounded to three "
    "decimals.</p>\n"
    "</div>\n"
    "<p>As in the reference implementation (not the paper's printed formula), performance enters "
    "as exp(12 θ) and experience is one global log<sub>2</sub> of the compute. Generalisation "
    "levels L0–L3 classify tasks by their distance from the curriculum.</p>"
)
"""The methodology section of a board of this track and of the about page (HTML)."""

CITATION = Citation(
    bibtex="""@article{venkatasubramanian2021gindex,
  author  = {Venkatasubramanian, G. and Kar, S. and Singh, A. and
             Mishra, S. and Yadav, D. and Chandak, S.},
  title   = {Towards a Measure of General Machine Intelligence},
  journal = {arXiv preprint},
  eprint  = {2109.12075},
  archivePrefix = {arXiv},
  year    = {2021},
  doi     = {10.48550/arXiv.2109.12075},
  url     = {https://arxiv.org/abs/2109.12075}
}""",
    title="Towards a Measure of General Machine Intelligence",
    kind="article",
    year=2021,
    authors=("Venkatasubramanian", "Kar", "Singh", "Mishra", "Yadav", "Chandak"),
    doi="10.48550/arXiv.2109.12075",
)

PRESENTATION = Presentation(
    metric_scatter=THETA_COMPUTE,
    interval_note=interval_note,
    methodology=METHODOLOGY,
    citation=CITATION,
)
"""How the site shows the g-index track."""
