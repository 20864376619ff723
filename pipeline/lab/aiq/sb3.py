"""Stable-Baselines3 adapter for gmeter's compiled vector environments.

Stable-Baselines3 trains on its own ``VecEnv`` interface: ``reset() -> obs``,
``step_async(actions)`` / ``step_wait() -> (obs, rewards, dones, infos)`` with the environment
reset *in the same step* as it finishes (the final observation goes to
``infos[i]["terminal_observation"]``, a time limit to ``infos[i]["TimeLimit.truncated"]``).
Gymnasium's vector API, which :class:`~pipeline.lab.aiq.gym_env.BFVectorEnv` follows, resets
on the *next* step instead. :func:`sb3_vec_env` bridges the two, so a PPO or RecurrentPPO
learns from many BF machines stepped by one compiled call per step (SB3's ``DummyVecEnv``
steps Python environments one by one)::

    from stable_baselines3 import PPO
    from pipeline.lab.aiq.sb3 import sb3_vec_env

    env = sb3_vec_env("gmeter/AIQ-v0", num_envs=64, observe_last=True)   # split="train"
    PPO("MultiInputPolicy", env, n_steps=256).learn(1_000_000)

Stable-Baselines3 is not a dependency of gmeter: it is imported when :func:`sb3_vec_env` is
called. The bridging logic (:class:`SameStepAutoreset`) does not need it.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np


def _rows_of(obs: Any, rows: np.ndarray) -> Any:
    if isinstance(obs, dict):
        return {k: v[rows] for k, v in obs.items()}
    return obs[rows]


def _put(obs: Any, rows: np.ndarray, new: Any) -> None:
    if isinstance(obs, dict):
        for k in obs:
            obs[k][rows] = new[k]
    else:
        obs[rows] = new


def _one(obs: Any, i: int) -> Any:
    if isinstance(obs, dict):
        return {k: np.copy(v[i]) for k, v in obs.items()}
    return np.copy(obs[i])


class SameStepAutoreset:
    """SB3's ``VecEnv`` behaviour over a gmeter vector env (no SB3 import needed).

    Parameters
    ----------
    venv : BFVectorEnv or AIQVectorEnv
        The compiled vector environment.
    """

    def __init__(self, venv: Any) -> None:
        self.venv = venv
        self.num_envs = int(venv.num_envs)
        self.observation_space = venv.single_observation_space
        self.action_space = venv.single_action_space
        self._actions: np.ndarray | None = None
        self._seed: int | None = None
        self._returns = np.zeros(self.num_envs)
        self._lengths = np.zeros(self.num_envs, np.int64)

    def seed(self, seed: int | None = None) -> Sequence[int | None]:
        """Seed the next :meth:`reset` (env i gets ``seed + i``)."""
        self._seed = seed
        return [None if seed is None else seed + i for i in range(self.num_envs)]

    def reset(self) -> Any:
        """Reset every environment; the batched first observations."""
        obs, _ = self.venv.reset(seed=self._seed)
        self._seed = None
        self._returns[:] = 0.0
        self._lengths[:] = 0
        return obs

    def step_async(self, actions: np.ndarray) -> None:
        """Remember the actions (the step happens in :meth:`step_wait`)."""
        self._actions = np.asarray(actions)

    def step_wait(self) -> tuple[Any, np.ndarray, np.ndarray, list[dict[str, Any]]]:
        """One step of every environment; finished ones are reset at once (SB3 semantics)."""
        if self._actions is None:
            raise RuntimeError("step_async must come before step_wait")
        obs, rewards, term, trunc, _ = self.venv.step(self._actions)
        self._actions = None
        done = np.asarray(term) | np.asarray(trunc)
        self._returns += rewards
        self._lengths += 1
        infos: list[dict[str, Any]] = [{} for _ in range(self.num_envs)]
        rows = np.flatnonzero(done)
        if rows.size:
            for i in rows.tolist():
                infos[i]["terminal_observation"] = _one(obs, i)
                infos[i]["TimeLimit.truncated"] = bool(trunc[i] and not term[i])
                infos[i]["episode"] = {"r": float(self._returns[i]), "l": int(self._lengths[i])}
            _put(obs, rows, _rows_of(self.venv.reset_finished(rows.tolist()), np.arange(rows.size)))
            self._returns[rows] = 0.0
            self._lengths[rows] = 0
        return obs, np.asarray(rewards, np.float32), done, infos

    def close(self) -> None:
        """Close the vector env."""
        self.venv.close()

    def _indices(self, indices: int | Iterable[int] | None) -> list[int]:
        if indices is None:
            return list(range(self.num_envs))
        if isinstance(indices, int):
            return [indices]
        return list(indices)

    def get_attr(self, attr_name: str, indices: Any = None) -> list[Any]:
        """The vector env's attribute, once per index (the machines share one object)."""
        return [getattr(self.venv, attr_name) for _ in self._indices(indices)]

    def set_attr(self, attr_name: str, value: Any, indices: Any = None) -> None:
        """Set an attribute of the vector env."""
        setattr(self.venv, attr_name, value)

    def env_method(self, method_name: str, *args: Any, indices: Any = None, **kw: Any) -> list:
        """Call a method of the vector env once per index."""
        return [getattr(self.venv, method_name)(*args, **kw) for _ in self._indices(indices)]

    def env_is_wrapped(self, wrapper_class: type, indices: Any = None) -> list[bool]:
        """No sub-environment is wrapped (the machines are not Gymnasium envs)."""
        return [False for _ in self._indices(indices)]


def sb3_vec_env(env_id: str = "gmeter/AIQ-v0", num_envs: int = 8, **kwargs: Any) -> Any:
    """A Stable-Baselines3 ``VecEnv`` over ``gymnasium.make_vec(env_id, num_envs, ...)``.

    ``kwargs`` go to the environment (``benchmark``, ``episode_length``, ``split``,
    ``observe_last``, ``program``/``programs`` for ``gmeter/BF-v0``, ...).

    Raises
    ------
    ImportError
        Stable-Baselines3 is not installed.
    """
    from stable_baselines3.common.vec_env import VecEnv

    from pipeline.lab.aiq.gym_env import make_vector

    class GmeterVecEnv(SameStepAutoreset, VecEnv):  # type: ignore[misc]
        def __init__(self, venv: Any) -> None:
            SameStepAutoreset.__init__(self, venv)
            VecEnv.__init__(self, self.num_envs, self.observation_space, self.action_space)

        def reset(self) -> Any:
            seeds = getattr(self, "_seeds", None)  # SB3 >= 2: seed() stores per-env seeds
            if seeds and seeds[0] is not None:
                self._seed = int(seeds[0])
            obs = SameStepAutoreset.reset(self)
            if hasattr(self, "_reset_seeds"):
                self._reset_seeds()
            return obs

        def seed(self, seed: int | None = None) -> Sequence[int | None]:
            return SameStepAutoreset.seed(self, seed)

    return GmeterVecEnv(make_vector(env_id, num_envs, **kwargs))
