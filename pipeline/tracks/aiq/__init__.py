"""The AIQ track (Legg & Veness 2013).

What lives here: the engine, program samples, external agents, run logs, replay, verification
and integrity checks.

The package face exposes ``TRACK`` (the :class:`~pipeline.tracks.base.TrackSpec`); the modules
inside never import it, so the face adds no cycle.
"""

from pipeline.tracks.aiq.track import TRACK

__all__ = ["TRACK"]
