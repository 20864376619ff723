r"""Batched Python policies (``--agent vec:module:factory``): every run of a batch in one call.

A ``gym:`` policy acts for one run and one observation at a time, so a network policy spends
its time in per-call overhead. A ``vec:`` factory is called once per batch of runs::

    policy = factory(observation_space, action_space, num_runs, settings)
    actions = policy.act(observations)          # (num_runs,) ints, one call per cycle
    policy.update(observations, actions, rewards, next_observations, active)   # optional

``observations`` holds every run of the batch: shape ``(num_runs,)`` for one observation cell
(and for none: zeros), ``(num_runs, cells)`` for several; ``rewards`` the rewards each run
perceived (:math:`\sigma r`); ``active`` which runs are still going (a run that reaches the
machine's step limit stops; its rows keep their last values and its actions are ignored).
``settings`` has the machine and test settings, ``num_runs``, ``seeds`` (one agent seed per
run, the same as a ``gym:`` policy's ``seed`` for that run) and ``params`` (the spec's
``,key=value`` values: numbers, or text such as a checkpoint path).

The calls are those a ``gym:`` policy gets, run by run: ``update`` of cycle i (i ≥ 2) with the
transition of cycle i − 1, then ``act``. A policy that treats each row as the ``gym:`` policy
treats its run gets identical actions, rewards and scores through ``gym:`` and ``vec:``. The
machines of the batch step together in one compiled call
(:func:`pipeline.lab.aiq.batch.run_batch`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from pipeline.errors import AgentProtocolError
from pipeline.metrics.aiq.bf import BFConfig
from pipeline.metrics.aiq.runs import RunItem


class VecPolicyAgent:
    """Adapter: a ``vec:module:factory`` policy under the batched run loop."""

    def __init__(self, target: str, params: Mapping[str, Any] | None = None) -> None:
        from pipeline.lab.aiq.external import import_agent_module

        module_name, _, name = target.partition(":")
        factory = getattr(import_agent_module(module_name), name, None)
        if not callable(factory):
            raise AgentProtocolError(
                f"vec:{target}: {module_name!r} has no callable {name!r}",
                hint="point vec:module:factory at a function or class returning a policy",
            )
        self.target = target
        self.factory = factory
        self.params = dict(params or {})
        self.policy: Any = None
        self.update: Any = None
        self.cycle = 0
        self.config = BFConfig()
        self.obs: np.ndarray = np.zeros(0, np.int64)
        self.prev: tuple[np.ndarray, np.ndarray] | None = None
        self.items: Sequence[RunItem] = ()

    def close(self) -> None:
        """Nothing to stop (the policy lives in this process)."""

    def _fail(self, what: str) -> AgentProtocolError:
        return AgentProtocolError(
            f"agent vec:{self.target}, cycle {self.cycle}: {what}",
            hint="act(observations) must return one whole number in 0..action_space.n - 1 per "
            "run (an array of shape (num_runs,)); see docs/aiq.md",
        )

    def start_batch(self, items: Sequence[RunItem], runs: list[dict[str, Any]]) -> None:
        """A fresh policy for a batch of runs (``runs``: the per-run settings of run_batch)."""
        from pipeline.lab.aiq.gym_env import action_space, observation_space

        first = runs[0]
        self.config = BFConfig(num_symbols=int(first["num_symbols"]),
                               obs_cells=int(first["obs_cells"]))  # fmt: skip
        obs_space = observation_space(self.config)
        act_space = action_space(self.config)
        seeds = [int(r["seed"]) for r in runs]
        obs_space.seed(seeds[0])
        act_space.seed(seeds[0] ^ 1)
        settings = {k: v for k, v in first.items() if k not in ("run", "seed")}
        settings.update(num_runs=len(runs), seeds=seeds, params=dict(self.params))
        self.policy = self.factory(obs_space, act_space, len(runs), settings)
        if not callable(getattr(self.policy, "act", None)):
            raise AgentProtocolError(
                f"vec:{self.target} returned {type(self.policy).__name__}, which has no act()",
                hint="the factory must return a policy with act(observations) -> actions",
            )
        self.update = getattr(self.policy, "update", None)
        self.items = items
        n = len(runs)
        shape = (n, self.config.obs_cells) if self.config.obs_cells > 1 else (n,)
        self.obs = np.zeros(shape, np.int64)
        self.prev = None
        self.cycle = 0

    def exchange(
        self, runs: np.ndarray, observations: np.ndarray, rewards: np.ndarray, n: int
    ) -> np.ndarray:
        """One cycle: ``update`` with the last transition, then ``act`` on every run."""
        self.cycle += 1
        size = self.obs.shape[0]
        obs = self.obs.copy()
        if self.config.obs_cells == 1:
            obs[runs] = observations[:, 0]
        elif self.config.obs_cells > 1:
            obs[runs] = observations
        active = np.zeros(size, bool)
        active[runs] = True
        if self.prev is not None and self.update is not None:
            perceived = np.zeros(size)
            perceived[runs] = rewards
            self.update(self.prev[0], self.prev[1], perceived, obs, active)
        acts = np.asarray(self.policy.act(obs))
        if acts.shape != (size,) or not np.issubdtype(acts.dtype, np.integer):
            raise self._fail(
                f"act returned {acts.dtype} of shape {acts.shape}, not {size} whole numbers"
            )
        acts = acts.astype(np.int64, copy=False)
        bad = np.flatnonzero(active & ((acts < 0) | (acts >= n)))
        if bad.size:
            k = int(bad[0])
            it = self.items[k] if k < len(self.items) else None
            where = f" (program {it.program!r}, sign {it.sign:+d})" if it else ""
            raise self._fail(f"action {int(acts[k])} of run {k}{where} is not in 0..{n - 1}")
        self.obs = obs
        self.prev = (obs, acts)
        return acts[runs]
