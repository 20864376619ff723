"""What the registry of metrics says of one metric: name, direction, label, unit, description.

It drives ranking (``higher`` or ``lower`` is better), column labels on the site and the
family of invariance tests. Each paper lists its own metrics in ``metrics/<paper>/info.py``
(its track's ``TrackSpec.metrics``); :func:`pipeline.tracks.metric_info` finds one by name
across every track. A metric a track emits that is missing there still works (it is shown
with its raw name and ranked higher-is-better, :func:`unlisted`) but a test flags it, so none
is forgotten.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class MetricInfo:
    """How one metric is read.

    Attributes
    ----------
    name : str
        The snake_case name stored in ``scores.metric``.
    track : str
        The track that emits it.
    direction : str
        ``higher`` or ``lower`` (is better), or ``none`` for descriptive numbers.
    label : str
        Column heading.
    unit : str
        Unit or range, shown in axis labels.
    description : str
        One sentence for the site's methodology section.
    """

    name: str
    track: str
    direction: str
    label: str
    unit: str
    description: str


def unlisted(name: str, track: str = "") -> MetricInfo:
    """The neutral entry of a metric no track lists: its raw name, higher is better."""
    return MetricInfo(name, track, "higher", name.replace("_", " "), "", "")
