"""The registry of tracks: one module per paper, each exposing ``TRACK`` (a TrackSpec).

Modules are imported lazily so that ``gmeter --help`` and validation of one track never pay
for the numerical libraries of another.
"""

from __future__ import annotations

import importlib

from pipeline.errors import GmeterError
from pipeline.tracks.base import TrackSpec

TRACK_NAMES: tuple[str, ...] = ("gindex", "generality", "aiq", "similarity")


def get_track(name: str) -> TrackSpec:
    """Return the :class:`TrackSpec` of track ``name``.

    Raises
    ------
    GmeterError
        If ``name`` is not a known track.
    """
    if name not in TRACK_NAMES:
        raise GmeterError(
            f"unknown track {name!r}", hint=f"use one of {', '.join(TRACK_NAMES)}"
        )
    module = importlib.import_module(f"pipeline.tracks.{name}")
    spec: TrackSpec = module.TRACK
    return spec
