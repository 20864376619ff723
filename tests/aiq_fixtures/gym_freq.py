"""A ``gym:`` factory wrapping the reference Freq agent: scores must equal compiled ``freq``.

``make_agent(observation_space, action_space, settings)`` returns a policy with
``act(observation)`` and ``update(observation, action, reward, next_observation)``; the reward
``update`` receives is the one the next ``act`` of the two-method protocol would see.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from pipeline.metrics.aiq.agents import FreqAgent


class FreqPolicy:
    """Freq(ε) behind the Gymnasium policy interface."""

    def __init__(self, settings: dict[str, Any]) -> None:
        self.agent = FreqAgent(0.07)
        self.agent.reset(settings)
        self.reward = 0.0

    def update(self, observation: Any, action: int, reward: float, next_observation: Any) -> None:
        """Remember the reward for the next act (Freq learns inside act)."""
        self.reward = reward

    def act(self, observation: Any) -> int:
        """The reference agent's action."""
        cells = tuple(int(x) for x in np.atleast_1d(observation))
        return self.agent.act(cells, self.reward)


def make_agent(observation_space: Any, action_space: Any, settings: dict[str, Any]) -> FreqPolicy:
    """The factory (one fresh policy per run)."""
    return FreqPolicy(settings)
