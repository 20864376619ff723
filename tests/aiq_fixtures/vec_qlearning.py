"""One deterministic policy written twice: per run (``gym:``) and batched (``vec:``).

Greedy tabular Q-learning with an optimistic start (ties to the lowest action): no random
draws, so both forms must give identical actions, rewards and scores run by run.

* ``gym:tests.aiq_fixtures.vec_qlearning:make_agent`` — one run, one observation per call;
* ``vec:tests.aiq_fixtures.vec_qlearning:make_batch`` — every run of a batch per call.

Settings (``,key=value``): ``alpha`` 0.5, ``gamma`` 0.5, ``init_q`` 100.
"""

from __future__ import annotations

from typing import Any

import numpy as np


def _args(settings: dict[str, Any]) -> tuple[float, float, float]:
    p = {"alpha": 0.5, "gamma": 0.5, "init_q": 100.0, **settings.get("params", {})}
    return float(p["alpha"]), float(p["gamma"]), float(p["init_q"])


def _sizes(space: Any) -> tuple[int, ...]:
    """Cells of a Discrete (one) or MultiDiscrete (several) observation space."""
    nvec = getattr(space, "nvec", None)
    return tuple(int(v) for v in (nvec if nvec is not None else [space.n]))


class GreedyQ:
    """Per run: ``act(observation)``, ``update(s, a, r, s')``."""

    def __init__(self, sizes: tuple[int, ...], n_actions: int, settings: dict[str, Any]) -> None:
        self.alpha, self.gamma, init = _args(settings)
        self.sizes = sizes
        self.q = np.full((int(np.prod(sizes)), n_actions), init)

    def _row(self, observation: Any) -> int:
        return int(np.ravel_multi_index(tuple(np.atleast_1d(observation)), self.sizes))

    def act(self, observation: Any) -> int:
        """The greedy action (lowest index on ties)."""
        return int(np.argmax(self.q[self._row(observation)]))

    def update(self, observation: Any, action: int, reward: float, next_observation: Any) -> None:
        """One Q-learning backup."""
        s, s2 = self._row(observation), self._row(next_observation)
        target = reward + self.gamma * self.q[s2].max()
        self.q[s, action] += self.alpha * (target - self.q[s, action])


class BatchGreedyQ:
    """All runs at once: one table per run, the same backups as :class:`GreedyQ`."""

    def __init__(
        self, sizes: tuple[int, ...], n_actions: int, num_runs: int, settings: dict[str, Any]
    ) -> None:
        self.alpha, self.gamma, init = _args(settings)
        self.sizes = sizes
        self.q = np.full((num_runs, int(np.prod(sizes)), n_actions), init)
        self.rows = np.arange(num_runs)

    def _rows(self, observations: np.ndarray) -> np.ndarray:
        cells = observations.reshape(len(observations), -1).T  # (cells, runs)
        return np.ravel_multi_index(tuple(cells), self.sizes)

    def act(self, observations: np.ndarray) -> np.ndarray:
        """Greedy actions of every run."""
        return np.argmax(self.q[self.rows, self._rows(observations)], axis=1)

    def update(
        self,
        observations: np.ndarray,
        actions: np.ndarray,
        rewards: np.ndarray,
        next_observations: np.ndarray,
        active: np.ndarray,
    ) -> None:
        """The backups of the runs still going."""
        r = self.rows[active]
        s = self._rows(observations)[active]
        s2 = self._rows(next_observations)[active]
        a = actions[active]
        target = rewards[active] + self.gamma * self.q[r, s2].max(axis=1)
        self.q[r, s, a] += self.alpha * (target - self.q[r, s, a])


def make_agent(observation_space: Any, action_space: Any, settings: dict[str, Any]) -> GreedyQ:
    """The ``gym:`` factory (one policy per run)."""
    return GreedyQ(_sizes(observation_space), int(action_space.n), settings)


def make_batch(
    observation_space: Any, action_space: Any, num_runs: int, settings: dict[str, Any]
) -> BatchGreedyQ:
    """The ``vec:`` factory (one policy per batch of runs)."""
    return BatchGreedyQ(_sizes(observation_space), int(action_space.n), num_runs, settings)
