"""The metrics of the generality track: name, direction, label, unit, description.

The track's ``TrackSpec.metrics``; :func:`pipeline.tracks.metric_info` finds them by name.
"""

from __future__ import annotations

from pipeline.metrics.info import MetricInfo

METRICS: tuple[MetricInfo, ...] = (
    MetricInfo("capability", "generality", "higher", "capability Ψ", "difficulty units",
               "Area under the agent characteristic curve (Hernández-Orallo et al. 2021)."),
    MetricInfo("spread", "generality", "lower", "spread S", "difficulty units",
               "Dispersion of the agent characteristic curve, S = sqrt(2M − Ψ²)."),
    MetricInfo("generality", "generality", "higher", "generality Γ", "1/difficulty",
               "Γ = 1/S; infinite for a step curve."),
    MetricInfo("normalised_generality", "generality", "higher", "normalised generality γ", "−1–1",
               "Generality normalised by the range possible at that capability."),
    MetricInfo("expected_difficulty", "generality", "none", "expected difficulty",
               "difficulty units", "M/Ψ: the mean difficulty of the items an agent solves."),
)
