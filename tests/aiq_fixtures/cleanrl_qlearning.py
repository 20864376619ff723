"""Tabular Q-learning for Gymnasium, in the style of CleanRL's single-file agents.

A complete agent a newcomer can copy: it learns online through the Gymnasium interface and
knows nothing of gmeter. Two ways to use it:

* score it on AIQ: ``gmeter aiq run --agent gym:tests.aiq_fixtures.cleanrl_qlearning:make_agent
  --episode-length 1000 --samples 1000 --seed 1 --traces --out submissions/aiq-bf5/<name>``
  (``make_agent`` is the factory gmeter calls once per run);
* train it on any environment with ``Discrete`` observations and actions, e.g.
  ``python tests/aiq_fixtures/cleanrl_qlearning.py --program ',.#' --steps 5000``.

Why tabular: the maintained RL libraries on PyPI (stable-baselines3, tianshou, mushroom-rl,
pfrl) all need PyTorch, a multi-hundred-megabyte, GPU-oriented dependency (stable-baselines3's
dry-run install here also pulls CUDA wheels and downgrades gymnasium to 0.29); a BF(5)
environment has 5 observations × 5 actions, which a table covers exactly.

Algorithm (Watkins's Q-learning, ε-greedy with linear decay, optimistic start):

.. math::

    Q(s,a) \\leftarrow Q(s,a) + \\alpha\\,(r + \\gamma \\max_b Q(s',b) - Q(s,a))

Hyper-parameters (``,key=value`` after the spec): ``alpha`` 0.5, ``gamma`` 0.6,
``epsilon_start`` 0.3, ``epsilon_end`` 0.02, ``decay_fraction`` 0.3 (of the episode),
``init_q`` 0.
"""

from __future__ import annotations

import argparse
from dataclasses import dataclass
from typing import Any

import numpy as np


@dataclass
class Args:
    """Hyper-parameters (CleanRL keeps them in one dataclass)."""

    alpha: float = 0.5
    gamma: float = 0.6
    epsilon_start: float = 0.3
    epsilon_end: float = 0.02
    decay_fraction: float = 0.3
    init_q: float = 0.0
    total_steps: int = 1000


def _index(observation: Any, sizes: np.ndarray) -> int:
    """Flatten a Discrete (int) or MultiDiscrete (array) observation into a table row."""
    cells = np.atleast_1d(np.asarray(observation, np.int64))
    index = 0
    for cell, size in zip(cells[::-1], sizes[::-1], strict=True):
        index = index * int(size) + int(cell)
    return index


class QLearningPolicy:
    """ε-greedy tabular Q-learning: ``act(observation)``, ``update(s, a, r, s')``."""

    def __init__(self, observation_space: Any, action_space: Any, args: Args, seed: int) -> None:
        nvec = getattr(observation_space, "nvec", None)
        self.sizes = np.atleast_1d(np.asarray(nvec if nvec is not None else observation_space.n))
        self.n_actions = int(action_space.n)
        self.q = np.full((int(np.prod(self.sizes)), self.n_actions), args.init_q)
        self.args = args
        self.rng = np.random.default_rng(seed)
        self.t = 0

    def epsilon(self) -> float:
        """Linearly decayed exploration rate."""
        a = self.args
        span = max(1.0, a.decay_fraction * a.total_steps)
        decayed = a.epsilon_start + (a.epsilon_end - a.epsilon_start) * self.t / span
        return max(a.epsilon_end, decayed)

    def act(self, observation: Any) -> int:
        """ε-greedy action (ties broken at random)."""
        self.t += 1
        if self.rng.random() < self.epsilon():
            return int(self.rng.integers(self.n_actions))
        row = self.q[_index(observation, self.sizes)]
        best = np.flatnonzero(row == row.max())
        return int(best[0] if best.size == 1 else self.rng.choice(best))

    def update(self, observation: Any, action: int, reward: float, next_observation: Any) -> None:
        """One Q-learning backup (the episode never terminates inside an AIQ run)."""
        s, s2 = _index(observation, self.sizes), _index(next_observation, self.sizes)
        target = reward + self.args.gamma * self.q[s2].max()
        self.q[s, action] += self.args.alpha * (target - self.q[s, action])


def make_agent(observation_space: Any, action_space: Any, settings: dict[str, Any]) -> Any:
    """The factory gmeter calls per run: settings has ``seed``, ``episode_length``, ``params``."""
    params = dict(settings.get("params", {}))
    fields = Args.__dataclass_fields__
    unknown = sorted(set(params) - set(fields))
    if unknown:
        raise ValueError(f"unknown hyper-parameters {unknown}; known: {', '.join(fields)}")
    args = Args(**{k: float(v) for k, v in params.items()})
    args.total_steps = int(settings.get("episode_length", args.total_steps))
    return QLearningPolicy(observation_space, action_space, args, int(settings["seed"]))


def main() -> None:
    """Train on one BF program through gymnasium.make and print the mean reward."""
    import gymnasium

    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--program", default=",.#")
    p.add_argument("--steps", type=int, default=1000)
    p.add_argument("--seed", type=int, default=1)
    a = p.parse_args()
    env = gymnasium.make("gmeter/BF-v0", program=a.program, episode_length=a.steps)
    policy = make_agent(env.observation_space, env.action_space,
                        {"seed": a.seed, "episode_length": a.steps, "params": {}})  # fmt: skip
    obs, _ = env.reset(seed=a.seed)
    total = 0.0
    done = False
    while not done:
        action = policy.act(obs)
        nxt, reward, terminated, truncated, _ = env.step(action)
        policy.update(obs, action, float(reward), nxt)
        total += float(reward)
        obs, done = nxt, terminated or truncated
    print(f"mean reward {total / a.steps:.2f} over {a.steps} cycles")


if __name__ == "__main__":
    main()
