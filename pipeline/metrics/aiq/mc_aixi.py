r"""MC-AIXI (Veness et al. 2011) as an AIQ reference agent: action-conditional CTW + ρUCT.

This is the plain-Python statement of the agent; :mod:`pipeline.metrics.aiq.mc_aixi_fast` is its
compiled twin (same random stream, same floating-point operations in the same order, hence the
same actions; checked in ``tests/test_aiq_mc_aixi.py``).

**Interface bits.** With :math:`n` symbols, every action, observation cell and reward symbol
takes :math:`k = \lceil \log_2 n \rceil` bits, least significant first. A percept is the
observation cells followed by the reward symbol (:math:`l_X = (c+1)k` bits for :math:`c`
cells); the reward symbol of a perceived reward :math:`\sigma r \in [-100, 100]` is
:math:`\tilde r = \lfloor (\sigma r + 100)/200 \cdot (n-1) + \tfrac12 \rfloor`, the encoding of
the original AIQ's MC-AIXI wrapper (for BF(5): symbols 0…4 for rewards −100…100). The history
:math:`h` is the bit string of all percepts and actions so far, preceded by :math:`D` zero bits.

**Model: action-conditional context tree weighting** (Willems, Shtarkov & Tjalkens 1995;
Veness et al. 2011, §5). A context tree of depth :math:`D` predicts each percept bit from the
:math:`D` bits before it (actions included: the agent models percepts *given* its actions, so
action bits enter the history but are never predicted). Every node :math:`s` of the path of the
current context keeps the counts :math:`a_s, b_s` of zeros and ones seen in that context and
the Krichevsky–Trofimov estimate

.. math::

    P_{kt}(x \mid s) = \frac{c_{s,x} + \tfrac12}{a_s + b_s + 1}, \qquad
    P_{kt}(s) = \prod_{\text{bits } x \text{ seen in } s} P_{kt}(x \mid s \text{ before } x)

(:math:`c_{s,x}` the count of :math:`x`),

and the weighted (mixture) probability

.. math::

    P_w(s) = \begin{cases}
        P_{kt}(s) & \text{depth}(s) = D \\
        \tfrac12 P_{kt}(s) + \tfrac12 P_w(s0)\,P_w(s1) & \text{otherwise}
    \end{cases}

(a missing child has :math:`P_w = 1`). The root's :math:`P_w` is the Bayesian mixture over
all prediction suffix trees of depth :math:`\le D` (prior :math:`2^{-\Gamma_D(M)}`), and the
prediction of the next bit is

.. math::

    \xi(x \mid h) = \frac{P_w^{\text{root}}(hx)}{P_w^{\text{root}}(h)}.

It is computed without logarithms from the ratio
:math:`\beta_s = P_{kt}(s) / (P_w(s0) P_w(s1))` kept at every inner node (Willems, Shtarkov &
Tjalkens's implementation of CTW): along the path of the context, from depth :math:`D` up,

.. math::

    P_w(x \mid s) = \begin{cases}
        P_{kt}(x \mid s) & \text{depth}(s) = D \\
        \bigl(\beta_s P_{kt}(x \mid s) + P_w(x \mid s')\bigr) \cdot \dfrac{1}{\beta_s + 1}
        & \text{otherwise}
    \end{cases},
    \qquad
    \beta_s \leftarrow \beta_s \frac{P_{kt}(x \mid s)}{P_w(x \mid s')}

with :math:`s'` the child on the path, and :math:`\xi(x \mid h) = P_w(x \mid \text{root})`. A
new node has counts 0 and :math:`\beta = 1`.

With ``factored=1`` (the paper's FAC-CTW, §5.3) there is one such tree per percept bit
position :math:`i = 1 … l_X`, tree :math:`i` predicting bit :math:`i` of every percept; with
``factored=0`` one tree predicts every percept bit.

**Planning: ρUCT** (§4). Each cycle, a fresh search tree of decision and chance nodes is grown
by :math:`N` simulations to horizon :math:`H` (``Sample``, Algorithm 3): at a chance node a
percept is sampled from :math:`\xi` bit by bit (the model is updated as if it had been seen);
at a decision node never visited, a rollout plays :math:`m` uniformly random actions against
the model; otherwise an action is chosen by

.. math::

    a_{UCB}(h) = \begin{cases}
        \text{uniform over } \{a : T(ha) = 0\} & \text{if not empty} \\
        \arg\max_a \frac{\hat V(ha)}{m(\beta - \alpha)}
            + C\sqrt{\frac{\log T(h)}{T(ha)}} & \text{otherwise}
    \end{cases}

with :math:`m` the remaining horizon, rewards in :math:`[\alpha, \beta] = [0, n-1]` (reward
symbols), :math:`T` visit counts and :math:`\hat V` the running mean of the sampled returns,
:math:`\hat V(h) \leftarrow (R + T(h)\hat V(h))/(T(h) + 1)`. After each simulation the model
is restored. The agent plays :math:`\arg\max_a \hat V(ha)` over the root's visited actions.
With probability :math:`\varepsilon_t = \varepsilon\,\gamma^t` (``epsilon``, ``decay``) it plays
a uniformly random action instead, without searching.

Departures from the paper and its code
--------------------------------------
* **Revert is exact.** The model is restored after each simulation from saved values (and
  nodes created by the simulation are removed) instead of undoing the KT updates
  arithmetically, so no rounding drift accumulates over millions of simulations and the plain
  and compiled agents stay bit-identical.
* **β is clamped** to :math:`[10^{-250}, 10^{250}]` (:data:`BETA_MIN`, :data:`BETA_MAX`). The
  predictions then differ from exact CTW by less than :math:`10^{-250}`, but a context whose
  evidence has swung by more than about 575 nats can swing back sooner than exact CTW would.
  Exact arithmetic in the log domain costs three transcendental calls per node and bit (about
  4× slower).
* **Zero padding.** The history starts with :math:`D` zero bits, so every percept bit has a full
  context; the paper's definitions assume the history is at least :math:`D` bits long.
* **Counted search.** :math:`N` is a number of simulations per cycle, never a time budget, so a
  run is a function of its seed. A fresh search tree is built every cycle (no subtree reuse).
* **Random choices** (unvisited actions, exact ties, rollouts, exploration, percept sampling)
  all come from the run's agent stream (SplitMix64), making runs replayable and giving common
  random numbers across agents.
* **Out-of-alphabet rewards.** A reward code :math:`\ge n` sampled from an untrained model
  (possible when :math:`n` is not a power of two) counts as the largest reward :math:`n-1`.
* **The first percept** (reward 0, blank observation) is learnt like any other.
* The original AIQ drives an external MC-AIXI binary over pipes (spec §4.7, not public); this
  agent is our own implementation of the JAIR description, not a port of that code.

References
----------
Veness, J., Ng, K. S., Hutter, M., Uther, W. & Silver, D. (2011). A Monte-Carlo AIXI
Approximation. *Journal of Artificial Intelligence Research* 40, 95–142.
Willems, F., Shtarkov, Y. & Tjalkens, T. (1995). The context-tree weighting method: basic
properties. *IEEE Trans. Inf. Theory* 41(3), 653–664.
Kocsis, L. & Szepesvári, C. (2006). Bandit based Monte-Carlo planning. ECML.
Legg, S. & Veness, J. (2013). An Approximation of the Universal Intelligence Measure, §5.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

from pipeline.metrics.aiq.bf import SplitMix64

#: Bounds of the ratio β (see the module docstring).
BETA_MAX = 1e250
BETA_MIN = 1e-250
#: Percepts wider than this many bits cannot be keyed by one integer (and would not be learnt).
MAX_PERCEPT_BITS = 62


def symbol_bits(n: int) -> int:
    r"""Bits per symbol, :math:`\lceil \log_2 n \rceil` (at least 1)."""
    return max(1, (n - 1).bit_length())


def reward_symbol(reward: float, n: int) -> int:
    r"""The reward symbol :math:`\lfloor (r + 100)/200 \cdot (n-1) + \tfrac12 \rfloor`."""
    return math.floor((reward + 100.0) / 200.0 * (n - 1) + 0.5)


def check_percept_width(n: int, obs_cells: int) -> None:
    """Raise ValueError when a percept would not fit in :data:`MAX_PERCEPT_BITS` bits."""
    width = (obs_cells + 1) * symbol_bits(n)
    if width > MAX_PERCEPT_BITS:
        raise ValueError(
            f"mc-aixi: a percept of {obs_cells} observation cell(s) and a reward over {n} "
            f"symbols takes {width} bits; at most {MAX_PERCEPT_BITS} are supported"
        )


class _CTNode:
    """One context: counts of zeros and ones, the ratio β = P_kt / (P_w(s0) P_w(s1)), children."""

    __slots__ = ("beta", "counts", "kids")

    def __init__(self) -> None:
        self.counts = [0, 0]
        self.beta = 1.0
        self.kids: list[_CTNode | None] = [None, None]


def clamp_beta(beta: float) -> float:
    """Keep β in [:data:`BETA_MIN`, :data:`BETA_MAX`] (no overflow, no underflow to 0)."""
    return BETA_MAX if beta > BETA_MAX else (BETA_MIN if beta < BETA_MIN else beta)


class ContextTreeModel:
    """Action-conditional (optionally factored) CTW over a bit history, with exact revert."""

    def __init__(self, depth: int, percept_bits: int, factored: bool) -> None:
        self.depth = depth
        self.percept_bits = percept_bits
        self.roots = [_CTNode() for _ in range(percept_bits if factored else 1)]
        self.history: list[int] = [0] * depth
        self.position = 0  # index of the next percept bit (which tree predicts it)
        self.undo: list[tuple[Any, ...]] | None = None

    def _root(self) -> _CTNode:
        return self.roots[self.position if len(self.roots) > 1 else 0]

    def _path(self) -> list[_CTNode | None]:
        """Nodes of the current context, root first (None where the tree has no node yet)."""
        node: _CTNode | None = self._root()
        path = [node]
        h = self.history
        for d in range(1, self.depth + 1):
            node = None if node is None else node.kids[h[-d]]
            path.append(node)
        return path

    def _conditionals(
        self, path: Sequence[_CTNode | None], bit: int
    ) -> tuple[list[float], list[float]]:
        """Per depth: the KT estimate of ``bit`` and the weighted conditional P_w(bit | s)."""
        kts = [0.0] * (self.depth + 1)
        ps = [0.0] * (self.depth + 1)
        below = 0.0
        for d in range(self.depth, -1, -1):
            node = path[d]
            counts = node.counts if node is not None else (0, 0)
            kt = (counts[bit] + 0.5) / (counts[0] + counts[1] + 1)
            if d == self.depth:
                p = kt
            else:
                beta = node.beta if node is not None else 1.0
                p = (beta * kt + below) * (1.0 / (beta + 1.0))
            kts[d] = kt
            ps[d] = p
            below = p
        return kts, ps

    def prob_one(self) -> float:
        r"""Return :math:`\xi(1 \mid h)` for the next percept bit."""
        return self._conditionals(self._path(), 1)[1][0]

    def update(self, bit: int) -> None:
        """Learn one percept bit (and append it to the history)."""
        path = self._path()
        kts, ps = self._conditionals(path, bit)
        node = self._root()
        h = self.history
        for d in range(self.depth + 1):
            if d > 0:
                parent = node
                branch = h[-d]
                kid = parent.kids[branch]
                if kid is None:
                    kid = _CTNode()
                    parent.kids[branch] = kid
                    if self.undo is not None:
                        self.undo.append(("new", parent, branch))
                node = kid
            if self.undo is not None:
                self.undo.append(("set", node, node.beta, bit))
            if d < self.depth:
                node.beta = clamp_beta(node.beta * kts[d] / ps[d + 1])
            node.counts[bit] += 1
        self.history.append(bit)
        self.position = (self.position + 1) % self.percept_bits

    def append_action(self, bits: Sequence[int]) -> None:
        """Add action bits to the history (actions are conditioned on, never predicted)."""
        self.history.extend(bits)

    def start_simulation(self) -> tuple[int, int]:
        """Begin recording changes; return the mark :meth:`revert` restores."""
        self.undo = []
        return len(self.history), self.position

    def revert(self, mark: tuple[int, int]) -> None:
        """Restore the model exactly as it was at ``mark`` (saved values, not arithmetic)."""
        assert self.undo is not None
        for entry in reversed(self.undo):
            if entry[0] == "set":
                _, node, beta, bit = entry
                node.counts[bit] -= 1
                node.beta = beta
            else:
                _, parent, branch = entry
                parent.kids[branch] = None
        self.undo = None
        del self.history[mark[0] :]
        self.position = mark[1]


def greedy(values: Sequence[float], rng: SplitMix64) -> int:
    """Index of the maximum; exact ties broken uniformly at random (one draw only on a tie)."""
    best = max(values)
    ties = [i for i, v in enumerate(values) if v == best]
    return ties[0] if len(ties) == 1 else ties[rng.below(len(ties))]


class _SearchNode:
    __slots__ = ("kids", "mean", "visits")

    def __init__(self) -> None:
        self.visits = 0
        self.mean = 0.0
        self.kids: dict[int, _SearchNode] = {}


class MCAIXIAgent:
    """MC-AIXI-CTW with the ``reset``/``act`` protocol of the other reference agents."""

    def __init__(
        self,
        depth: int = 32,
        simulations: int = 100,
        horizon: int = 3,
        epsilon: float = 0.0,
        decay: float = 1.0,
        c: float = math.sqrt(2.0),
        factored: int = 1,
    ) -> None:
        self.depth, self.simulations, self.horizon = depth, simulations, horizon
        self.epsilon0, self.decay, self.c, self.factored = epsilon, decay, c, factored

    def reset(self, settings: Mapping[str, Any]) -> None:
        """Start a run: ``settings`` has ``num_actions``, ``obs_cells`` and ``seed``."""
        self.n = int(settings["num_actions"])
        self.cells = int(settings["obs_cells"])
        self.k = symbol_bits(self.n)
        self.pbits = (self.cells + 1) * self.k
        check_percept_width(self.n, self.cells)
        self.rng = SplitMix64(int(settings["seed"]))
        self.model = ContextTreeModel(self.depth, self.pbits, bool(self.factored))
        self.epsilon = self.epsilon0

    def _bits(self, value: int) -> list[int]:
        return [(value >> i) & 1 for i in range(self.k)]

    def _reward_of(self, code: int) -> int:
        """Reward symbol of a percept code (the last k bits), clamped to the alphabet."""
        return min((code >> (self.cells * self.k)) & ((1 << self.k) - 1), self.n - 1)

    def _sample_percept(self) -> int:
        """Draw a percept from the model bit by bit, learning it; return its code."""
        code = 0
        for i in range(self.pbits):
            p1 = self.model.prob_one()
            bit = 1 if self.rng.uniform() < p1 else 0
            self.model.update(bit)
            code |= bit << i
        return code

    def _rollout(self, m: int) -> float:
        total = 0.0
        for _ in range(m):
            self.model.append_action(self._bits(self.rng.below(self.n)))
            total += self._reward_of(self._sample_percept())
        return total

    def _select(self, node: _SearchNode, m: int) -> int:
        unvisited = [a for a in range(self.n) if a not in node.kids or node.kids[a].visits == 0]
        if unvisited:
            return unvisited[self.rng.below(len(unvisited))] if len(unvisited) > 1 else unvisited[0]
        scale = m * (self.n - 1)
        log_t = math.log(node.visits)
        scores = [
            node.kids[a].mean / scale + self.c * math.sqrt(log_t / node.kids[a].visits)
            for a in range(self.n)
        ]
        return greedy(scores, self.rng)

    def _sample(self, node: _SearchNode, m: int, chance: bool) -> float:
        """JAIR Algorithm 3: one simulation from ``node`` with ``m`` cycles to go."""
        if m == 0:
            return 0.0
        if chance:
            code = self._sample_percept()
            kid = node.kids.get(code)
            if kid is None:
                kid = node.kids[code] = _SearchNode()
            reward = self._reward_of(code) + self._sample(kid, m - 1, False)
        elif node.visits == 0:
            reward = self._rollout(m)
        else:
            a = self._select(node, m)
            self.model.append_action(self._bits(a))
            kid = node.kids.get(a)
            if kid is None:
                kid = node.kids[a] = _SearchNode()
            reward = self._sample(kid, m, True)
        node.mean = (reward + node.visits * node.mean) / (node.visits + 1)
        node.visits += 1
        return reward

    def search(self) -> int:
        """ρUCT: ``simulations`` samples from a fresh root; the best visited action."""
        root = _SearchNode()
        for _ in range(self.simulations):
            mark = self.model.start_simulation()
            self._sample(root, self.horizon, False)
            self.model.revert(mark)
        values = [
            root.kids[a].mean if a in root.kids and root.kids[a].visits > 0 else -math.inf
            for a in range(self.n)
        ]
        if max(values) == -math.inf:
            return self.rng.below(self.n)
        return greedy(values, self.rng)

    def act(self, observation: Sequence[int], reward: float) -> int:
        """Learn the percept, then explore (probability ε_t) or search; return the action."""
        symbols = [*observation, reward_symbol(reward, self.n)]
        for s in symbols:
            for bit in self._bits(s):
                self.model.update(bit)
        if self.rng.uniform() < self.epsilon:
            a = self.rng.below(self.n)
        else:
            a = self.search()
        self.epsilon *= self.decay
        self.model.append_action(self._bits(a))
        return a
