"""The registry of tracks and of their metrics: every package under ``pipeline/tracks/``.

A track is a package here exposing ``TRACK`` (a :class:`~pipeline.tracks.base.TrackSpec`);
nothing lists the tracks by name, so a new paper is a folder under ``tracks/`` (and its maths
under ``metrics/``) and nothing else.

Packages are found without importing them, and a track's module is imported only when it is
asked for, so that ``gmeter --help`` and validation of one track never pay for the numerical
libraries of another. Only the ordered list of every track (:func:`track_names`) and the
metric lookup (:func:`metric_info`) import them all.
"""

from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Mapping
from functools import lru_cache

from pipeline.errors import GmeterError
from pipeline.metrics.info import MetricInfo, unlisted
from pipeline.tracks.base import TrackSpec


# Cached per search path: the site looks metrics up thousands of times, and a test that puts
# a track of its own on ``__path__`` gets a fresh listing.
@lru_cache(maxsize=8)
def _found(path: tuple[str, ...]) -> frozenset[str]:
    return frozenset(m.name for m in pkgutil.iter_modules(list(path)) if m.ispkg)


def _packages() -> frozenset[str]:
    """Names of the track packages, found on this package's path (nothing is imported)."""
    return _found(tuple(__path__))


def _load(name: str) -> TrackSpec:
    module = importlib.import_module(f"{__name__}.{name}")
    spec: TrackSpec = module.TRACK
    return spec


@lru_cache(maxsize=8)
def _ordered(path: tuple[str, ...]) -> tuple[str, ...]:
    specs = [_load(name) for name in _found(path)]
    return tuple(s.name for s in sorted(specs, key=lambda s: (s.order, s.name)))


def track_names() -> tuple[str, ...]:
    """Every track, in the order tracks are listed (``TrackSpec.order``, then name)."""
    return _ordered(tuple(__path__))


def get_track(name: str) -> TrackSpec:
    """Return the :class:`TrackSpec` of track ``name`` (importing that track only).

    Raises
    ------
    GmeterError
        If ``name`` is not a known track.
    """
    if name not in _packages():
        raise GmeterError(
            f"unknown track {name!r}", hint=f"use one of {', '.join(track_names())}"
        )
    return _load(name)


@lru_cache(maxsize=8)
def _metrics(path: tuple[str, ...]) -> Mapping[str, MetricInfo]:
    return {m.name: m for t in _ordered(path) for m in _load(t).metrics}


def all_metrics() -> Mapping[str, MetricInfo]:
    """Every metric of every track by name, tracks in :func:`track_names` order."""
    return _metrics(tuple(__path__))


def metric_info(name: str, track: str = "") -> MetricInfo:
    """Return the registry entry of ``name``, or a neutral default for unknown metrics."""
    found = all_metrics().get(name)
    return found if found is not None else unlisted(name, track)


def sort_key_sign(name: str) -> int:
    """+1 when higher is better, −1 when lower is better (0 for descriptive metrics)."""
    d = metric_info(name).direction
    return {"higher": 1, "lower": -1}.get(d, 0)
