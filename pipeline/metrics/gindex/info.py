"""The metrics of the g-index track: name, direction, label, unit, description.

The track's ``TrackSpec.metrics``; :func:`pipeline.tracks.metric_info` finds them by name.
"""

from __future__ import annotations

from pipeline.metrics.info import MetricInfo

METRICS: tuple[MetricInfo, ...] = (
    MetricInfo("g_index", "gindex", "higher", "g-index", "index",
               "Skill-acquisition efficiency: task contributions averaged over test tasks "
               "(Venkatasubramanian et al. 2021, eq. 9)."),
    MetricInfo("theta_mean", "gindex", "higher", "mean θ", "0–1",
               "Mean performance θ = 1 − Δ over the test tasks."),
    MetricInfo("omega_mean", "gindex", "none", "mean Ω", "0–1",
               "Mean generalisation difficulty: distance of test tasks from the curriculum."),
    MetricInfo("compute_log2", "gindex", "lower", "E = log2 compute", "log2 PFLOP·s",
               "Experience: log2 of the training compute."),
)
