"""Broken ``vec:`` policies for the error tests."""

from __future__ import annotations

from typing import Any

import numpy as np


class _Fixed:
    def __init__(self, out: Any) -> None:
        self.out = out

    def act(self, observations: np.ndarray) -> Any:
        return self.out(observations)


def make_bad_shape(observation_space: Any, action_space: Any, num_runs: int, settings: Any) -> Any:
    """Returns one action too few."""
    return _Fixed(lambda obs: np.zeros(len(obs) - 1, np.int64))


def make_bad_action(observation_space: Any, action_space: Any, num_runs: int, settings: Any) -> Any:
    """Returns an action outside the action space."""
    return _Fixed(lambda obs: np.full(len(obs), 7, np.int64))
