"""The test-similarity track (Pereyda & Holder 2020).

What lives here: run tables, the experiment, bundle writers and integrity checks.

The package face exposes ``TRACK`` (the :class:`~pipeline.tracks.base.TrackSpec`); the modules
inside never import it, so the face adds no cycle.
"""

from pipeline.tracks.similarity.track import TRACK

__all__ = ["TRACK"]
