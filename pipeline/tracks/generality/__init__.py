"""The generality track (Hernández-Orallo et al. 2021).

What lives here: settings, response data, scoring, charts data, tables and integrity checks.

The package face exposes ``TRACK`` (the :class:`~pipeline.tracks.base.TrackSpec`); the modules
inside never import it, so the face adds no cycle.
"""

from pipeline.tracks.generality.track import TRACK

__all__ = ["TRACK"]
