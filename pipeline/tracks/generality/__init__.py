"""The generality track (Hernández-Orallo et al. 2021).

What lives here: settings, response data, validation, scoring, charts data and integrity
checks. Response files on disk and the per-agent tables are :mod:`pipeline.lab.generality`.

The package face exposes ``TRACK`` (the :class:`~pipeline.tracks.base.TrackSpec`); the modules
inside never import it, so the face adds no cycle.
"""

from pipeline.tracks.generality.track import TRACK

__all__ = ["TRACK"]
