"""The test-similarity track (Pereyda & Holder 2020).

What lives here: settings, run tables, validation, scoring, chart data and integrity checks.
The experiments of ``gmeter similarity run`` are :mod:`pipeline.lab.similarity`.

The package face exposes ``TRACK`` (the :class:`~pipeline.tracks.base.TrackSpec`); the modules
inside never import it, so the face adds no cycle.
"""

from pipeline.tracks.similarity.track import TRACK

__all__ = ["TRACK"]
