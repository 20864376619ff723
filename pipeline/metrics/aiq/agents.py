r"""AIQ reference agents in plain Python (spec §4): Random, Freq(ε), Q(λ) (Q(0) = λ 0), HLQ(λ).

Every agent follows the two-method protocol of external agents
(:mod:`pipeline.lab.aiq.external`):
``reset(settings)`` at the start of a run, then ``act(observation, reward) -> action`` once
per cycle (the first call receives the initial percept: reward 0, blank observation). The
compiled twins in :mod:`agents_fast` give identical actions from the same seed.

Shared machinery: the greedy choice :math:`\arg\max_b v_b` breaks exact ties uniformly at
random; ε-greedy draws :math:`u \sim U[0,1)` and, if :math:`u < \varepsilon`, a uniform action
(which may equal the greedy one); the state is the observation
:math:`s = \sum_j o_j n^j`.

Q(λ) (Watkins, accumulating traces), per percept :math:`(o, r)` with previous
:math:`(s, a)` (initially :math:`(0, 0)`):

.. math::

    a^* = \arg\max_b Q(s', b), \quad
    \delta = r + \gamma Q(s', a^*) - Q(s, a), \quad E(s,a) \mathrel{+}= 1, \\
    Q \mathrel{+}= \alpha \delta E, \quad
    E \leftarrow \gamma\lambda E \text{ if } a' = a^* \text{ else } 0.

HLQ(λ) (Hutter & Legg's learning-rate-free TD with traces; :math:`V` starts at 1):

.. math::

    E(s,a) \mathrel{+}= 1,\; V(s,a) \mathrel{+}= 1,\quad
    \beta(x,b) = \frac{E(x,b)}{V(s',a') - \gamma E(s',a')}
                 \cdot \frac{\lambda V(s',a') + [x,b = s',a']}{\lambda V(x,b) + [x,b = s',a']},
    \\
    Q \mathrel{+}= \beta\delta,\quad V \leftarrow \lambda V \ (\text{floor } 10^{-100}),\quad
    E \leftarrow \gamma\lambda E \text{ if } a' = a^* \text{ else } 0.

References
----------
Legg, S. & Veness, J. (2013). An Approximation of the Universal Intelligence Measure, §5.
Watkins, C. (1989). Learning from Delayed Rewards. Hutter, M. & Legg, S. (2008). Temporal
difference updating without a learning rate. NIPS 20.

Notes
-----
* The original encodes a multi-cell observation as ``state = obs[i] * n**i`` *assigned* in a
  loop (``Q_l.py``, ``HLQ_l.py``), so with ``obs_cells > 1`` only the last cell counts. We use
  the intended :math:`\sum_j o_j n^j`; with one observation cell (the paper) both agree.
* γ is always taken as given (``0 <= γ < 1``); the original's "γ = 0 means the environment's
  discount" convention is dropped.
* Softmax selection (HLQ ``sel_mode != 0``) subtracts the maximum before exponentiating instead
  of the original's clipping at ±595; the distribution is the same wherever the original's
  did not overflow.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

from pipeline.metrics.aiq.bf import SplitMix64


def greedy(values: Sequence[float], rng: SplitMix64) -> int:
    """Return an index of the maximum of ``values``, exact ties broken uniformly at random."""
    best = max(values)
    ties = [i for i, v in enumerate(values) if v == best]
    return ties[0] if len(ties) == 1 else ties[rng.below(len(ties))]


def epsilon_greedy(best: int, epsilon: float, n: int, rng: SplitMix64) -> int:
    """With probability ε a uniform action, else ``best``."""
    return rng.below(n) if rng.uniform() < epsilon else best


def encode_observation(observation: Sequence[int], n: int) -> int:
    r"""Return the state index :math:`\sum_j o_j n^j` of an observation."""
    s = 0
    for j, o in enumerate(observation):
        s += o * n**j
    return s


class _Base:
    """What every reference agent reads from the run settings."""

    n: int
    num_states: int
    rng: SplitMix64

    def reset(self, settings: Mapping[str, Any]) -> None:
        """Start a run: ``settings`` has ``num_actions``, ``obs_cells`` and ``seed``."""
        self.n = int(settings["num_actions"])
        self.num_states = self.n ** int(settings["obs_cells"])
        self.rng = SplitMix64(int(settings["seed"]))
        self.start()

    def start(self) -> None:
        """Initialise the learning state (after ``n``, ``rng`` are set)."""


class RandomAgent(_Base):
    """Uniform random actions (AIQ ≈ 0 by construction)."""

    def act(self, observation: Sequence[int], reward: float) -> int:
        """Return a uniform action."""
        return self.rng.below(self.n)


class FreqAgent(_Base):
    """Play the action with the best mean reward so far; explore with probability ε.

    Counts start at 1 and the initial dummy reward 0 is credited to action 0, as in the
    original (spec §4.4). Observations are ignored.
    """

    def __init__(self, epsilon: float = 0.07) -> None:
        self.epsilon = epsilon

    def start(self) -> None:
        """Zero totals, unit counts, previous action 0."""
        self.total = [0.0] * self.n
        self.count = [1.0] * self.n
        self.prev = 0

    def act(self, observation: Sequence[int], reward: float) -> int:
        """Credit ``reward`` to the previous action; choose ε-greedily on mean rewards."""
        self.total[self.prev] += reward
        self.count[self.prev] += 1.0
        best = greedy([t / c for t, c in zip(self.total, self.count, strict=True)], self.rng)
        self.prev = epsilon_greedy(best, self.epsilon, self.n, self.rng)
        return self.prev


class QLambdaAgent(_Base):
    """Watkins Q(λ) with accumulating traces over an (observation × action) table."""

    def __init__(
        self,
        init_q: float = 0.0,
        lam: float = 0.5,
        alpha: float = 0.5,
        epsilon: float = 0.04,
        gamma: float = 0.6,
    ) -> None:
        self.init_q, self.lam, self.alpha, self.epsilon, self.gamma = (
            init_q, lam, alpha, epsilon, gamma,
        )  # fmt: skip

    def start(self) -> None:
        """Tables at init_q / 0; the phantom previous state-action is (0, 0)."""
        self.q = [[self.init_q] * self.n for _ in range(self.num_states)]
        self.e = [[0.0] * self.n for _ in range(self.num_states)]
        self.s = 0
        self.a = 0

    def act(self, observation: Sequence[int], reward: float) -> int:
        """One Q(λ) update, then the ε-greedy action."""
        q, e = self.q, self.e
        sp = encode_observation(observation, self.n)
        astar = greedy(q[sp], self.rng)
        ap = epsilon_greedy(astar, self.epsilon, self.n, self.rng)
        delta = reward + self.gamma * q[sp][astar] - q[self.s][self.a]
        e[self.s][self.a] += 1.0
        ad = self.alpha * delta
        decay = self.gamma * self.lam
        cut = ap != astar
        for qx, ex in zip(q, e, strict=True):
            for b in range(self.n):
                qx[b] += ad * ex[b]
                ex[b] = 0.0 if cut else decay * ex[b]
        self.s, self.a = sp, ap
        return ap


class HLQLambdaAgent(_Base):
    """HLQ(λ): Q(λ) with the learning-rate-free TD step sizes of Hutter & Legg."""

    def __init__(
        self,
        sel_mode: int = 0,
        init_q: float = 0.0,
        lam: float = 0.95,
        epsilon: float = 0.04,
        gamma: float = 0.7,
    ) -> None:
        self.sel_mode, self.init_q, self.lam, self.epsilon, self.gamma = (
            sel_mode, init_q, lam, epsilon, gamma,
        )  # fmt: skip

    def start(self) -> None:
        """Q at init_q, traces 0, visit weights 1; phantom previous state-action (0, 0)."""
        self.q = [[self.init_q] * self.n for _ in range(self.num_states)]
        self.e = [[0.0] * self.n for _ in range(self.num_states)]
        self.v = [[1.0] * self.n for _ in range(self.num_states)]
        self.s = 0
        self.a = 0

    def _softmax(self, row: Sequence[float]) -> int:
        top = max(row)
        weights = [math.exp((x - top) / self.epsilon) for x in row]
        u = self.rng.uniform() * sum(weights)
        acc = 0.0
        for b, w in enumerate(weights):
            acc += w
            if u < acc:
                return b
        return len(row) - 1

    def act(self, observation: Sequence[int], reward: float) -> int:
        """One HL(λ) update, then the ε-greedy (or softmax) action."""
        q, e, v = self.q, self.e, self.v
        lam, gamma = self.lam, self.gamma
        sp = encode_observation(observation, self.n)
        astar = greedy(q[sp], self.rng)
        if self.sel_mode == 0:
            ap = epsilon_greedy(astar, self.epsilon, self.n, self.rng)
        else:
            ap = self._softmax(q[sp])
        delta = reward + gamma * q[sp][astar] - q[self.s][self.a]
        e[self.s][self.a] += 1.0
        v[self.s][self.a] += 1.0
        vsa = v[sp][ap]
        denom = vsa - gamma * e[sp][ap]
        decay = gamma * lam
        cut = ap != astar
        for x in range(self.num_states):
            qx, ex, vx = q[x], e[x], v[x]
            for b in range(self.n):
                ind = 1.0 if (x == sp and b == ap) else 0.0
                beta = ex[b] / denom * (lam * vsa + ind) / (lam * vx[b] + ind)
                vx[b] = lam * vx[b] if vx[b] > 1e-100 else 1e-100
                ex[b] = 0.0 if cut else decay * ex[b]
                qx[b] += beta * delta
        self.s, self.a = sp, ap
        return ap
