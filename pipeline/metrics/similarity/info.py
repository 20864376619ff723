"""The metrics of the test-similarity track: name, direction, label, unit, description.

The track's ``TrackSpec.metrics``; :func:`pipeline.tracks.metric_info` finds them by name.
"""

from __future__ import annotations

from pipeline.metrics.info import MetricInfo

METRICS: tuple[MetricInfo, ...] = (
    MetricInfo("similarity", "similarity", "none", "similarity S", "−1–1",
               "S(A, B, p, π) of Pereyda & Holder 2020, eq. 3."),
    MetricInfo("dissimilarity", "similarity", "none", "dissimilarity 1 − S", "0–2",
               "1 − S(A, B, p, π)."),
    MetricInfo("diversity", "similarity", "higher", "suite diversity", "0–2",
               "Mean pairwise dissimilarity of the suite's tests."),
)
