"""The g-index track (Venkatasubramanian et al. 2021).

What lives here: settings, validation, scoring, charts data and integrity checks. The published
experiments are imported by :mod:`pipeline.lab.gindex`.

The package face exposes ``TRACK`` (the :class:`~pipeline.tracks.base.TrackSpec`); the modules
inside never import it, so the face adds no cycle.
"""

from pipeline.tracks.gindex.track import TRACK

__all__ = ["TRACK"]
