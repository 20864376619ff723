"""The AIQ track (Legg & Veness 2013).

What lives here: settings, the program sample's and the run log's files, validation, scoring,
replay verification and integrity checks. What ``gmeter aiq`` runs and writes is
:mod:`pipeline.lab.aiq`.

The package face exposes ``TRACK`` (the :class:`~pipeline.tracks.base.TrackSpec`); the modules
inside never import it, so the face adds no cycle.
"""

from pipeline.tracks.aiq.track import TRACK

__all__ = ["TRACK"]
