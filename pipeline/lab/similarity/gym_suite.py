"""The Gymnasium side of the similarity experiments (the only module that imports gymnasium).

Two things live here:

* the **active suite** of ``gmeter similarity run --experiment gym`` (Pereyda & Holder 2020,
  Sect. "OpenAI Gym", Fig. 5): Gymnasium's built-in environments as tests, a merged test that
  draws each training episode from A with probability ``p``, one padded observation vector for
  both environments, and a tabular Q-learning baseline with a fixed step budget; and the
  **stitching** merge of two environments side by side (:func:`run_stitched_env_test`, the
  paper's Fig. 2 contrast carried over to active tests);
* the **passive CartPole** data set of the classification suite (``cartpole-passive``): states of
  CartPole labelled with the action of a fixed balancing controller (the paper's Table 3 turns
  CartPole into a classification test the same way, with images instead of state vectors).

Baseline agent (documented in ``docs/similarity.md``)
-----------------------------------------------------
Every observation becomes a feature vector in ``[0, 1]``: a ``Box`` coordinate is clipped to a
documented range and scaled, a ``Discrete`` observation is one-hot. A merged test pads the
shorter vector with zeros to the longer one. Each feature is cut into ``bins`` equal bins and
the tuple of bins is the state of a tabular Q-learner (``alpha``, ``gamma``; epsilon-greedy, with
epsilon falling linearly from 1 to ``epsilon_end`` over the first ``explore`` share of the
budget; unseen states start at Q = 0). The agent has ``max(n_A, n_B)`` actions; in an
environment with fewer actions, action ``a`` is taken as ``a mod n`` (the paper truncated or
padded the output space). After ``steps`` training steps the greedy policy is scored on
``eval_episodes`` episodes: ``V`` is the mean episode return normalised to ``[0, 1]`` by the
environment's documented bounds (:data:`ENVS`). Everything random (environment resets, the
exploration, the episode schedule, greedy tie-breaks) comes from seeds derived from the run's
keys, so a run is a pure function of its settings.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray

from pipeline.metrics.similarity.merge import normalise_return, split_episodes

PI = math.pi


@dataclass(frozen=True)
class EnvTest:
    """One Gymnasium environment as a similarity test.

    Attributes
    ----------
    id : str
        The test id (``--tests``, ``runs.csv``).
    title, description : str
        Shown on the board.
    gym_ids : tuple of str
        Registered ids to try, first found wins (versions differ between Gymnasium releases).
    kwargs : tuple of (str, object)
        Keyword arguments of ``gymnasium.make``.
    max_steps : int
        Episode cap (``max_episode_steps``).
    low, high : float
        Normalisation bounds of the episode return (:func:`normalise_return`): ``low`` is what
        an agent that achieves nothing gets, ``high`` a good solution's return.
    box : tuple of (low, high) or None
        Clipping ranges of a ``Box`` observation's coordinates; ``None`` for ``Discrete``.
    """

    id: str
    title: str
    description: str
    gym_ids: tuple[str, ...]
    kwargs: tuple[tuple[str, Any], ...]
    max_steps: int
    low: float
    high: float
    box: tuple[tuple[float, float], ...] | None = None


_CARTPOLE_BOX = ((-2.4, 2.4), (-3.0, 3.0), (-0.21, 0.21), (-3.5, 3.5))
ENVS: dict[str, EnvTest] = {
    e.id: e
    for e in (
        EnvTest("CartPole-v0", "CartPole-v0", "Balance a pole on a cart; +1 per step, 200 steps "
                "at most. V = return / 200.", ("CartPole-v0",), (), 200, 0.0, 200.0,
                _CARTPOLE_BOX),
        EnvTest("CartPole-v1", "CartPole-v1", "Balance a pole on a cart; +1 per step, 500 steps "
                "at most. V = return / 500.", ("CartPole-v1",), (), 500, 0.0, 500.0,
                _CARTPOLE_BOX),
        EnvTest("MountainCar-v0", "MountainCar-v0", "Drive an under-powered car up a hill; −1 per "
                "step, 200 steps at most. V maps −200 (never reached) … −100 (a good "
                "solution) to 0 … 1.", ("MountainCar-v0",), (), 200, -200.0, -100.0,
                ((-1.2, 0.6), (-0.07, 0.07))),
        EnvTest("Acrobot-v1", "Acrobot-v1", "Swing a two-link arm above a line; −1 per step, 500 "
                "steps at most. V maps −500 … −80 to 0 … 1.", ("Acrobot-v1",), (), 500,
                -500.0, -80.0, ((-1.0, 1.0),) * 4 + ((-4 * PI, 4 * PI), (-9 * PI, 9 * PI))),
        EnvTest("FrozenLake-v1", "FrozenLake 4×4", "Cross a slippery frozen lake (4×4 map); reward "
                "1 at the goal, 100 steps at most. V = success rate.", ("FrozenLake-v1",),
                (("map_name", "4x4"),), 100, 0.0, 1.0),
        EnvTest("FrozenLake8x8", "FrozenLake 8×8", "FrozenLake-v1 with the 8×8 map, 200 steps at "
                "most. V = success rate.", ("FrozenLake-v1",), (("map_name", "8x8"),), 200,
                0.0, 1.0),
        EnvTest("Taxi", "Taxi", "Pick up and drop off a passenger on a 5×5 grid; −1 per step, "
                "+20 on delivery, −10 for an illegal move, 200 steps at most. V maps −200 … 8 "
                "(about the optimal mean) to 0 … 1.", ("Taxi-v3", "Taxi-v4"), (), 200, -200.0,
                8.0),
        EnvTest("CliffWalking", "CliffWalking", "Walk along a cliff to the goal; −1 per step, −100 "
                "and back to the start for a fall, 200 steps at most (our cap). V maps −200 … "
                "−13 (the shortest path) to 0 … 1.", ("CliffWalking-v0", "CliffWalking-v1"),
                (), 200, -200.0, -13.0),
    )
}  # fmt: skip
"""The suite, in display order (the issue's list; Roulette and NChain left Gymnasium)."""

ALIASES = {
    "FrozenLake8x8-v1": "FrozenLake8x8",
    "Taxi-v3": "Taxi",
    "Taxi-v4": "Taxi",
    "CliffWalking-v0": "CliffWalking",
    "CliffWalking-v1": "CliffWalking",
}
"""Other names a user may give for a test (registered Gymnasium ids)."""


def canonical_env(name: str) -> str:
    """Return the test id of ``name`` (an id of :data:`ENVS` or an alias); ``name`` if unknown."""
    return ALIASES.get(name, name)


def gym_version() -> str:
    """Return the installed Gymnasium version (recorded in the bundle)."""
    import gymnasium

    return str(gymnasium.__version__)


def resolve(test: EnvTest) -> str:
    """Return the first of ``test.gym_ids`` registered in the installed Gymnasium."""
    from gymnasium.envs.registration import registry

    for gid in test.gym_ids:
        if gid in registry:
            return gid
    raise LookupError(f"none of {', '.join(test.gym_ids)} is registered in this Gymnasium")


class _Env:
    """One environment, its feature encoder and its seeded resets."""

    def __init__(self, test: EnvTest, seed: int) -> None:
        import warnings

        import gymnasium as gym

        self.test = test
        with warnings.catch_warnings():  # CartPole-v0 is "out of date": it is a test here
            warnings.simplefilter("ignore", DeprecationWarning)
            self.env = gym.make(
                resolve(test), max_episode_steps=test.max_steps, **dict(test.kwargs)
            )
        self.n_actions = int(self.env.action_space.n)  # type: ignore[attr-defined]
        if test.box is None:
            self.width = int(self.env.observation_space.n)  # type: ignore[attr-defined]
            self._lo = self._span = None
        else:
            self.width = len(test.box)
            self._lo = np.array([b[0] for b in test.box])
            self._span = np.array([b[1] - b[0] for b in test.box])
        self._seed: int | None = seed

    def features(self, obs: Any) -> NDArray[np.float64]:
        if self._lo is None or self._span is None:
            f = np.zeros(self.width)
            f[int(obs)] = 1.0
            return f
        return np.clip((np.asarray(obs, dtype=np.float64) - self._lo) / self._span, 0.0, 1.0)

    def reset(self) -> Any:
        obs, _ = self.env.reset(seed=self._seed)  # seeded once, then the env's own stream
        self._seed = None
        return obs

    def close(self) -> None:
        self.env.close()


@dataclass(frozen=True)
class AgentSettings:
    """The tabular Q-learning baseline (see the module docstring)."""

    steps: int = 30_000
    eval_episodes: int = 30
    bins: int = 6
    alpha: float = 0.5
    gamma: float = 0.99
    epsilon_end: float = 0.05
    explore: float = 0.5


class _QAgent:
    def __init__(self, s: AgentSettings, width: int, n_actions: int, rng: np.random.Generator):
        self.s, self.width, self.n, self.rng = s, width, n_actions, rng
        self.q: dict[bytes, NDArray[np.float64]] = {}

    def key(self, f: NDArray[np.float64]) -> bytes:
        padded = np.zeros(self.width)
        padded[: len(f)] = f
        return np.minimum((padded * self.s.bins).astype(np.uint8), self.s.bins - 1).tobytes()

    def values(self, k: bytes) -> NDArray[np.float64]:
        v = self.q.get(k)
        if v is None:
            v = self.q[k] = np.zeros(self.n)
        return v

    def act(self, k: bytes, epsilon: float) -> int:
        if epsilon > 0.0 and self.rng.random() < epsilon:
            return int(self.rng.integers(self.n))
        v = self.values(k)
        best = np.flatnonzero(v == v.max())
        return int(best[0] if len(best) == 1 else best[self.rng.integers(len(best))])

    def learn(self, k: bytes, a: int, r: float, k2: bytes, terminated: bool) -> None:
        r"""One tabular Q(0) update, the same for every run type.

        :math:`Q(k,a) \mathrel{+}= \alpha\,(r + \gamma \max_b Q(k',b) - Q(k,a))`, with no
        bootstrap from a terminal state.
        """
        q = self.values(k)
        target = r + (0.0 if terminated else self.s.gamma * self.values(k2).max())
        q[a] += self.s.alpha * (target - q[a])


def _linear_epsilon(s: AgentSettings, budget: list[int]) -> Callable[[], float]:
    """Return the exploration schedule: 1 down to ``s.epsilon_end``, linearly.

    The fall takes the first ``s.explore`` share of the step budget; the steps used are read
    from the steps left in ``budget[0]`` (shared by the sampling and the stitching runs).
    """
    horizon = max(1.0, s.explore * s.steps)

    def epsilon() -> float:
        used = s.steps - budget[0]
        return max(s.epsilon_end, 1.0 - (1.0 - s.epsilon_end) * used / horizon)

    return epsilon


def _episode(
    env: _Env, agent: _QAgent, *, epsilon: Callable[[], float] | None, budget: list[int]
) -> float:
    """Run one episode (learning when ``epsilon`` is given); return its undiscounted return."""
    obs = env.reset()
    k = agent.key(env.features(obs))
    total = 0.0
    while True:
        if epsilon is not None and budget[0] <= 0:
            return total
        a = agent.act(k, epsilon() if epsilon is not None else 0.0)
        obs, r, terminated, truncated, _ = env.env.step(a % env.n_actions)
        total += float(r)
        k2 = agent.key(env.features(obs))
        if epsilon is not None:
            budget[0] -= 1
            agent.learn(k, a, float(r), k2, terminated)
        k = k2
        if terminated or truncated:
            return total


def run_env_test(
    tests: tuple[str, ...], p: float, s: AgentSettings, seeds: dict[str, int]
) -> float:
    """Train the baseline on one test (one env) or a merged test (two) and return its ``V``.

    Parameters
    ----------
    tests : tuple of str
        ``(A,)`` or ``(A, B)``.
    p : float
        Proportion of A's episodes in a merge (ignored for one test).
    s : AgentSettings
        The agent and the budget.
    seeds : dict
        ``{"agent": …, "schedule": …, "<test>": …}``: the agent's stream, the episode schedule
        and each environment's reset seed (shared between a test alone and its merges: common
        random numbers).

    Returns
    -------
    float
        Mean normalised return of the greedy policy over ``s.eval_episodes`` episodes (for a
        merge, ``round(p n)`` on A and the rest on B, each normalised by its own bounds).
    """
    envs = [_Env(ENVS[t], seeds[t]) for t in tests]
    try:
        width = max(e.width for e in envs)
        n_actions = max(e.n_actions for e in envs)
        agent = _QAgent(s, width, n_actions, np.random.default_rng(seeds["agent"]))
        schedule = np.random.default_rng(seeds["schedule"])
        budget = [s.steps]
        epsilon = _linear_epsilon(s, budget)
        while budget[0] > 0:
            env = envs[0] if len(envs) == 1 or schedule.random() < p else envs[1]
            _episode(env, agent, epsilon=epsilon, budget=budget)
        counts = (s.eval_episodes,) if len(envs) == 1 else split_episodes(s.eval_episodes, p)
        scores = []
        for env, n in zip(envs, counts, strict=True):
            for _ in range(n):
                ret = _episode(env, agent, epsilon=None, budget=budget)
                scores.append(normalise_return(ret, env.test.low, env.test.high))
        return float(np.mean(scores))
    finally:
        for e in envs:
            e.close()


# --------------------------------------------------------------------------- stitching
def env_shape(test_id: str) -> tuple[int, int]:
    """``(feature width, number of actions)`` of a test (one-hot width for ``Discrete``)."""
    env = _Env(ENVS[test_id], 0)
    try:
        return env.width, env.n_actions
    finally:
        env.close()


def _stitched_episode(
    envs: tuple[_Env, _Env],
    ctrl: int,
    agent: _QAgent,
    half: int,
    noise: np.random.Generator,
    *,
    epsilon: Callable[[], float] | None,
    budget: list[int],
) -> float:
    """One episode of a stitched pair, controlled by ``envs[ctrl]``; return its return.

    The agent sees both environments side by side (each half ``half`` features wide, zero
    padded) and is not told which one its action drives; the other one is a distractor that
    moves by uniformly random actions (reset when it ends). Reward and the episode's end are the
    controlled environment's.
    """
    obs = [e.reset() for e in envs]

    def key() -> bytes:
        f = np.zeros(2 * half)
        for i, e in enumerate(envs):
            g = e.features(obs[i])
            f[i * half : i * half + len(g)] = g
        return agent.key(f)

    k = key()
    total = 0.0
    other = 1 - ctrl
    while True:
        if epsilon is not None and budget[0] <= 0:
            return total
        a = agent.act(k, epsilon() if epsilon is not None else 0.0)
        c, d = envs[ctrl], envs[other]
        obs[ctrl], r, terminated, truncated, _ = c.env.step(a % c.n_actions)
        obs[other], _, d_term, d_trunc, _ = d.env.step(int(noise.integers(d.n_actions)))
        if d_term or d_trunc:
            obs[other] = d.reset()
        total += float(r)
        k2 = key()
        if epsilon is not None:
            budget[0] -= 1
            agent.learn(k, a, float(r), k2, terminated)
        k = k2
        if terminated or truncated:
            return total


def run_stitched_env_test(
    pair: tuple[str, str], part: str, p: float, s: AgentSettings, seeds: dict[str, int]
) -> float:
    r"""``V`` of one part of the **stitching** merge of two environments (Fig. 2's contrast).

    The paper's stitching puts an image of A beside an image of B; here the observations of two
    environments run side by side (:func:`_stitched_episode`). Each training episode is driven by
    the left environment with probability ``p`` and by the right one otherwise; the agent is
    not told which. ``part`` ``AB`` stitches A (left) with B (right); ``AA`` (``BB``) stitches A
    (B) with an independent copy of itself (reset seed ``seeds["mate"]``), the references
    ``V_A = V_AA``, ``V_B = V_BB``. All three use the pair's common half width and action count,
    so they share one input layout. Evaluation: ``round(p n)`` greedy episodes driven by the
    left environment and the rest by the right, each return normalised by the driving
    environment's bounds.
    """
    a, b = pair
    left, right = {"AA": (a, a), "BB": (b, b), "AB": (a, b)}[part]
    (w_a, n_a), (w_b, n_b) = env_shape(a), env_shape(b)
    half = max(w_a, w_b)
    envs = (_Env(ENVS[left], seeds[left]),
            _Env(ENVS[right], seeds["mate"] if right == left else seeds[right]))  # fmt: skip
    try:
        agent = _QAgent(s, 2 * half, max(n_a, n_b), np.random.default_rng(seeds["agent"]))
        schedule = np.random.default_rng(seeds["schedule"])
        noise = np.random.default_rng(seeds["noise"])
        budget = [s.steps]
        epsilon = _linear_epsilon(s, budget)
        while budget[0] > 0:
            ctrl = 0 if schedule.random() < p else 1
            _stitched_episode(envs, ctrl, agent, half, noise, epsilon=epsilon, budget=budget)
        scores = []
        for ctrl, n in enumerate(split_episodes(s.eval_episodes, p)):
            for _ in range(n):
                ret = _stitched_episode(envs, ctrl, agent, half, noise, epsilon=None,
                                        budget=budget)  # fmt: skip
                scores.append(normalise_return(ret, envs[ctrl].test.low, envs[ctrl].test.high))
        return float(np.mean(scores))
    finally:
        for e in envs:
            e.close()


# --------------------------------------------------------------------------- passive CartPole
def balancing_action(obs: NDArray[np.float64]) -> int:
    """The fixed controller that labels ``cartpole-passive``: push right iff ``θ + ω/2 > 0``.

    ``θ`` is the pole angle and ``ω`` its angular velocity (CartPole's third and fourth state
    coordinates). This proportional-derivative rule balances the pole for the whole of
    CartPole-v1's 500 steps from most starts; its action is the label of each state.
    """
    return int(obs[2] + 0.5 * obs[3] > 0.0)


def cartpole_passive(
    n: int, seed: int, explore: float = 0.2
) -> tuple[NDArray[np.float64], NDArray[np.int64]]:
    """Return ``n`` CartPole states and the controller's action in each (the passive test).

    States are visited by the controller with a share ``explore`` of random actions (so the
    data cover states the controller itself would avoid); episodes restart at termination.
    Deterministic for a seed.
    """
    import gymnasium as gym

    if n < 1:
        raise ValueError("n must be >= 1")
    env = gym.make("CartPole-v1")
    rng = np.random.default_rng(seed)
    x = np.empty((n, 4))
    y = np.empty(n, dtype=np.int64)
    obs, _ = env.reset(seed=int(rng.integers(2**31)))
    try:
        for i in range(n):
            x[i] = obs
            y[i] = balancing_action(obs)
            a = int(rng.integers(2)) if rng.random() < explore else int(y[i])
            obs, _, terminated, truncated, _ = env.step(a)
            if terminated or truncated:
                obs, _ = env.reset()
    finally:
        env.close()
    return x, y


PIXELS_SHAPE = (12, 24)
"""Rows × columns of a ``cartpole-pixels`` image (the paper scaled 400×600 frames to 32×32)."""


def render_cartpole(
    obs: NDArray[np.float64], shape: tuple[int, int] = PIXELS_SHAPE
) -> NDArray[np.float64]:
    r"""A coarse grey image of one CartPole state: what a single camera frame shows.

    The cart is a 2-row block whose centre column is the cart position ``x`` mapped from
    ``[−2.4, 2.4]`` (the track) to the image width; the pole is a segment of ``0.75 ×`` the
    image height from the cart's top at angle ``θ`` (positive: leaning right), drawn by
    bilinear splatting of points along it, so a tilt smaller than a pixel still changes
    intensities (as the paper's downscaling averaged pixels). Velocities ``ẋ`` and ``ω`` are
    **not** in one frame — the point of the test: the label (``θ + ω/2 > 0``) needs ``ω``.

    Returns
    -------
    numpy.ndarray
        ``shape`` pixels in ``[0, 1]``, flattened row by row.
    """
    rows, cols = shape
    img = np.zeros(shape)
    cx = (float(obs[0]) + 2.4) / 4.8 * (cols - 1)
    base_r = rows - 3.0  # top of the cart
    for r in (rows - 2, rows - 1):
        for c in range(int(np.floor(cx - 1.5)), int(np.ceil(cx + 1.5)) + 1):
            if 0 <= c < cols:
                img[r, c] = max(img[r, c], 1.0 - max(0.0, abs(c - cx) - 1.0))
    length = 0.75 * rows
    theta = float(obs[2])
    for t in np.linspace(0.0, 1.0, 4 * rows):
        pr = base_r - t * length * np.cos(theta)
        pc = cx + t * length * np.sin(theta)
        r0, c0 = int(np.floor(pr)), int(np.floor(pc))
        fr, fc = pr - r0, pc - c0
        for dr, dc, w in ((0, 0, (1 - fr) * (1 - fc)), (0, 1, (1 - fr) * fc),
                          (1, 0, fr * (1 - fc)), (1, 1, fr * fc)):  # fmt: skip
            rr, cc = r0 + dr, c0 + dc
            if 0 <= rr < rows and 0 <= cc < cols:
                img[rr, cc] += 0.5 * w
    return np.clip(img, 0.0, 1.0).reshape(-1)


def cartpole_pixels(n: int, seed: int) -> tuple[NDArray[np.float64], NDArray[np.int64]]:
    """``cartpole-passive``'s states drawn as coarse images (:func:`render_cartpole`), same labels.

    Closer to the paper's passive CartPole (images of the cart, the ideal action as the label)
    than the state vector: one frame hides the velocities the controller's action depends on.
    """
    x, y = cartpole_passive(n, seed)
    return np.stack([render_cartpole(s) for s in x]), y
