"""The metrics of the AIQ track: name, direction, label, unit, description.

The track's ``TrackSpec.metrics``; :func:`pipeline.tracks.metric_info` finds them by name.
"""

from __future__ import annotations

from pipeline.metrics.info import MetricInfo

METRICS: tuple[MetricInfo, ...] = (
    MetricInfo("aiq", "aiq", "higher", "AIQ", "reward per cycle, −100–100",
               "Algorithmic intelligence quotient: expected average reward over BF "
               "environments (Legg & Veness 2013)."),
)
