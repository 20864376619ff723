r"""AIQ for Gymnasium: BF programs as environments, the AIQ test as an environment, a vector env.

The only module that imports :mod:`gymnasium`. Environment ids (registered by
:func:`register_envs`)::

    gymnasium.make("gmeter/BF-v0", program=",.#", num_symbols=5, obs_cells=1,
                   episode_length=1000)                # one BF program
    gymnasium.make("gmeter/AIQ-v0", benchmark="submissions/aiq-bf5")   # a program per reset
    gymnasium.make_vec("gmeter/BF-v0", num_envs=64, programs=[...])    # one compiled call/step

**Spaces.** The action space is ``Discrete(num_symbols)``; the observation space is
``Discrete(num_symbols)`` for one observation cell (the paper's BF(5)), ``MultiDiscrete`` of
``obs_cells`` cells otherwise (``Discrete(1)``, always 0, with no cell).

**Dynamics.** ``reset(seed=s)`` blanks every tape and seeds the ``%`` stream with ``s``
(exactly ``gmeter aiq replay --seed s``; without a seed, one is drawn from the env's
generator). The first observation is the blank one. ``step(a)`` runs one interaction cycle of
the reference machine and returns its reward :math:`\sigma \cdot 100(c-m)/m` (``sign``
:math:`\sigma = \pm 1`, default +1 — so the rewards equal ``gmeter aiq replay`` cycle by
cycle), ``terminated`` when the cycle reached the step limit (the AIQ run fails there;
``info["failed"]`` is True) and ``truncated`` after ``episode_length`` cycles. ``info`` holds
``steps`` (instructions of the cycle) and ``cycle``; AIQ-v0 adds ``program_id``, ``program``
and ``stratum``.

**Learning within a run.** AIQ runs every program with both reward signs (antithetic
pairs), so a policy that does not change during a run scores about 0 whatever it does: only an
agent that learns *within* the run from the rewards it perceives scores above 0. With
``observe_last=True`` the observation is a ``Dict`` of ``observation`` (as above),
``last_action`` (``Discrete(n + 1)``; ``n`` before the first action) and ``last_reward``
(``Box(-1, 1, (1,))``: the perceived reward of the last cycle divided by 100), the minimum a
recurrent policy needs to learn in-lifetime.

**Training and scored programs apart.** ``gmeter/AIQ-v0`` with ``split="train"`` (the
default) draws programs from the benchmark's own sampler and machine with fresh seeds, leaving
out every program of the scored sample: training never sees the programs the score is
computed on. ``split="test"`` draws from the scored sample itself (for evaluation only).

**Render modes.** Only ``"ansi"``; any other raises :class:`RenderModeError`, a
``TypeError`` (and ``ValueError``) so that Stable-Baselines3's ``make_vec_env``, which first
tries ``render_mode="rgb_array"`` and falls back on ``TypeError``, works unchanged.

**Vector env.** :class:`BFVectorEnv` steps all its machines with one call of the compiled
kernel (:class:`~pipeline.metrics.aiq.bf_fast.MachineBank`); sub-environments that finish are
reset on the next step (Gymnasium's ``NEXT_STEP`` autoreset: that step returns the reset
observation with reward 0).

**Scoring a Gymnasium agent** (``--agent gym:module:factory``): ``factory(observation_space,
action_space, settings)`` returns a policy with ``act(observation) -> action`` and,
optionally, ``update(observation, action, reward, next_observation)`` called after every
cycle whose reward the agent perceives. A fresh policy is made per run (``settings`` holds the
run's ``seed`` for the policy's own randomness and the spec's ``params``); the run is scored as
every AIQ run (:class:`GymPolicyAgent`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import gymnasium
import numpy as np
from gymnasium import spaces
from gymnasium.vector import AutoresetMode, VectorEnv

from pipeline.errors import AgentProtocolError
from pipeline.metrics.aiq.bf import BFConfig

#: Environment id → (single entry point, vector entry point).
ENV_IDS: dict[str, tuple[str, str]] = {
    "gmeter/BF-v0": (f"{__name__}:BFEnv", f"{__name__}:BFVectorEnv"),
    "gmeter/AIQ-v0": (f"{__name__}:AIQEnv", f"{__name__}:AIQVectorEnv"),
}
_MACHINE_KEYS = ("num_symbols", "obs_cells", "reverse_output", "work_tape_len",
                 "input_tape_len", "max_steps")  # fmt: skip
_SEED_MASK = (1 << 64) - 1


def register_envs() -> None:
    """Register ``gmeter/BF-v0`` and ``gmeter/AIQ-v0`` (idempotent; the entry-point target)."""
    from gymnasium.envs.registration import register, registry

    for env_id, (entry, vector_entry) in ENV_IDS.items():
        if env_id not in registry:
            register(id=env_id, entry_point=entry, vector_entry_point=vector_entry)


register_envs()


def observation_space(config: BFConfig) -> spaces.Space[Any]:
    """``Discrete(n)`` for one observation cell, ``MultiDiscrete([n]*k)`` for k > 1 cells."""
    if config.obs_cells == 0:
        return spaces.Discrete(1)
    if config.obs_cells == 1:
        return spaces.Discrete(config.num_symbols)
    return spaces.MultiDiscrete([config.num_symbols] * config.obs_cells)


def action_space(config: BFConfig) -> spaces.Discrete:
    """``Discrete(num_symbols)``: an action is a symbol."""
    return spaces.Discrete(config.num_symbols)


def to_gym_observation(config: BFConfig, cells: Sequence[int]) -> Any:
    """Observation cells → a member of :func:`observation_space`."""
    if config.obs_cells == 0:
        return np.int64(0)
    if config.obs_cells == 1:
        return np.int64(cells[0])
    return np.asarray(cells, np.int64)


def _config(kwargs: Mapping[str, Any]) -> BFConfig:
    try:
        return BFConfig(**{k: kwargs[k] for k in _MACHINE_KEYS if k in kwargs})
    except (TypeError, ValueError) as exc:
        raise ValueError(f"gmeter BF env: {exc}") from exc


def _check_common(episode_length: int, sign: int) -> None:
    if (
        isinstance(episode_length, bool)
        or not isinstance(episode_length, int)
        or not (1 <= episode_length <= 10_000_000)
    ):
        raise ValueError("episode_length must be a whole number in 1..10000000")
    if sign not in (1, -1):
        raise ValueError("sign must be 1 or -1 (the antithetic sign)")


class RenderModeError(TypeError, ValueError):
    """An unsupported ``render_mode`` (a ``TypeError`` for SB3's fallback, a ``ValueError`` too)."""


SPLITS = ("train", "test")


def last_space(config: BFConfig) -> spaces.Dict:
    """The ``observe_last`` observation space (see the module docstring)."""
    return spaces.Dict(
        {
            "observation": observation_space(config),
            "last_action": spaces.Discrete(config.num_symbols + 1),
            "last_reward": spaces.Box(-1.0, 1.0, (1,), np.float32),
        }
    )


def with_last(obs: Any, last_action: Any, last_reward: Any) -> dict[str, Any]:
    """An ``observe_last`` observation (``last_reward`` already divided by 100)."""
    return {
        "observation": obs,
        "last_action": last_action,
        "last_reward": np.asarray(last_reward, np.float32).reshape((*np.shape(last_action), 1)),
    }


class BFEnv(gymnasium.Env[Any, np.int64]):
    r"""One BF program as a Gymnasium environment (see the module docstring).

    Parameters
    ----------
    program : str
        The BF program (``< > + - , . [ ] % #``).
    num_symbols, obs_cells, reverse_output, work_tape_len, input_tape_len, max_steps
        The machine (:class:`~pipeline.metrics.aiq.bf.BFConfig`; defaults BF(5)).
    episode_length : int
        Cycles before ``truncated`` (1000).
    sign : int
        Antithetic sign :math:`\sigma` multiplying every reward (+1).
    render_mode : str, optional
        ``"ansi"``: :meth:`render` returns the last cycle as text.
    observe_last : bool
        Observe the previous action and perceived reward too (a ``Dict`` observation).
    """

    metadata = {"render_modes": ["ansi"], "render_fps": 30}  # noqa: RUF012 (gymnasium API)

    def __init__(
        self,
        program: str,
        episode_length: int = 1000,
        sign: int = 1,
        render_mode: str | None = None,
        observe_last: bool = False,
        **machine: Any,
    ) -> None:
        from pipeline.metrics.aiq.bf import compile_program

        unknown = sorted(set(machine) - set(_MACHINE_KEYS))
        if unknown:
            raise TypeError(f"unknown BF env settings {unknown}; known: {', '.join(_MACHINE_KEYS)}")
        if not isinstance(program, str):
            raise TypeError("program must be a string of BF instructions")
        self.config = _config(machine)
        _check_common(episode_length, sign)
        self.program = compile_program(program)
        self.episode_length = episode_length
        self.sign = sign
        self.observe_last = bool(observe_last)
        self.observation_space = (
            last_space(self.config) if self.observe_last else observation_space(self.config)
        )
        self.action_space = spaces.Discrete(self.config.num_symbols)
        if render_mode is not None and render_mode not in self.metadata["render_modes"]:
            raise RenderModeError(
                f"render_mode {render_mode!r} is not supported; use one of "
                f"{self.metadata['render_modes']} or None"
            )
        self.render_mode = render_mode
        self._machine: Any = None
        self._cycle = 0
        self._done = True
        self._last = ""

    def _new_machine(self, program: Any, seed: int) -> None:
        from pipeline.metrics.aiq.bf_fast import FastMachine

        self._machine = FastMachine(program, self.config, seed)
        self.machine_seed = seed

    def _draw_seed(self, seed: int | None) -> int:
        if seed is not None:
            return int(seed) & _SEED_MASK
        return int(self.np_random.integers(0, 2**63))

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[Any, dict[str, Any]]:
        """Blank tapes; the ``%`` stream seeded with ``seed`` (drawn when None)."""
        super().reset(seed=seed)
        self._new_machine(self.program, self._draw_seed(seed))
        return self._first_observation(), self._info(0)

    def _first_observation(self) -> Any:
        self._cycle = 0
        self._done = False
        self._last = ""
        cells = (self.config.blank,) * self.config.obs_cells
        return self._observation(cells, self.config.num_symbols, 0.0)

    def _observation(self, cells: Sequence[int], action: int, reward: float) -> Any:
        obs = to_gym_observation(self.config, cells)
        if not self.observe_last:
            return obs
        return with_last(obs, np.int64(action), reward / 100.0)

    def _info(self, steps: int) -> dict[str, Any]:
        return {"steps": steps, "cycle": self._cycle, "failed": False,
                "seed": self.machine_seed}  # fmt: skip

    def step(self, action: Any) -> tuple[Any, float, bool, bool, dict[str, Any]]:
        """One interaction cycle: (observation, σ·reward, terminated, truncated, info)."""
        if self._machine is None or self._done:
            raise gymnasium.error.ResetNeeded("call reset() before step() (the episode ended)")
        if not self.action_space.contains(action):
            raise ValueError(f"action {action!r} is not in 0..{self.config.num_symbols - 1}")
        reward, cells, steps = self._machine.act(int(action))
        self._cycle += 1
        failed = steps >= self.config.max_steps
        truncated = not failed and self._cycle >= self.episode_length
        self._done = failed or truncated
        info = self._info(steps)
        info["failed"] = failed
        self._last = f"cycle {self._cycle}: action {int(action)} reward {reward:g} obs {cells}"
        perceived = float(self.sign * reward)
        return (self._observation(cells, int(action), perceived), perceived, failed, truncated,
                info)  # fmt: skip

    def render(self) -> str | None:  # type: ignore[override]
        """The last cycle as text (``render_mode="ansi"``)."""
        return self._last if self.render_mode == "ansi" else None


# --------------------------------------------------------------------------- the AIQ test
_SAMPLES: dict[str, Any] = {}


def _default_benchmark() -> Path:
    here = Path("submissions") / "aiq-bf5"
    if (here / "benchmark.toml").is_file():
        return here
    return Path(__file__).resolve().parents[3] / "submissions" / "aiq-bf5"


def load_sample(benchmark: str | Path | None) -> Any:
    """Return the benchmark (its program sample and machine), cached per folder."""
    from pipeline.lab.aiq.benchmark import load_benchmark

    path = Path(benchmark) if benchmark is not None else _default_benchmark()
    key = str(path.resolve())
    if key not in _SAMPLES:
        _SAMPLES[key] = load_benchmark(path)
    return _SAMPLES[key]


class TrainingStream:
    """Programs from a benchmark's sampler with fresh seeds, none of its scored sample.

    Blocks of :data:`BLOCK` accepted programs are drawn by the benchmark's own sampler
    (machine, simplification) with seeds from ``rng``; programs that are in the scored sample
    are dropped, so training and scoring never share a program.
    """

    BLOCK = 64

    def __init__(self, bench: Any) -> None:
        self.bench = bench
        self.scored = frozenset(bench.sample.programs)
        self.pool: list[tuple[str, int]] = []
        self.drawn = 0
        self.dropped = 0

    def next(self, rng: np.random.Generator) -> tuple[str, int]:
        """The next training program and its stratum."""
        from pipeline.metrics.aiq.sampler_fast import sample_block_fast

        while not self.pool:
            block = sample_block_fast(int(rng.integers(0, 2**63)), self.BLOCK,
                                      self.bench.config,
                                      iterated=bool(self.bench.sample.iterated))  # fmt: skip
            for prog, stratum in zip(block.programs, block.strata, strict=True):
                self.drawn += 1
                if prog in self.scored:
                    self.dropped += 1
                else:
                    self.pool.append((prog, stratum))
            self.pool.reverse()  # pop() then yields the block's order
        return self.pool.pop()


def _check_split(split: str) -> None:
    if split not in SPLITS:
        raise ValueError(
            f"split must be 'train' (programs apart from the scored sample, the default) or "
            f"'test' (the scored sample), not {split!r}"
        )


class AIQEnv(BFEnv):
    """The AIQ test as an environment: each ``reset`` draws a program.

    ``split="train"`` (default): a program from the benchmark's sampler that is not in the
    scored sample (:class:`TrainingStream`); ``split="test"``: a program drawn uniformly from
    the scored sample, so stratum :math:`i` comes up with the sample's frequency :math:`p_i`
    (the estimator's weights). ``info`` names the program, its stratum, the split and (test)
    its id in the sample. The machine is the benchmark's; ``sign`` may be ``0`` for a random
    antithetic sign per episode.
    """

    def __init__(
        self,
        benchmark: str | Path | None = None,
        episode_length: int = 1000,
        sign: int = 1,
        render_mode: str | None = None,
        split: str = "train",
        observe_last: bool = False,
    ) -> None:
        _check_split(split)
        self.bench = load_sample(benchmark)
        machine = {k: getattr(self.bench.config, k) for k in _MACHINE_KEYS}
        self.random_sign = sign == 0
        super().__init__(self.bench.sample.programs[0], episode_length, sign or 1, render_mode,
                         observe_last, **machine)  # fmt: skip
        self.split = split
        self.stream = TrainingStream(self.bench) if split == "train" else None
        self.program_id = 0
        self.program_text = self.bench.sample.programs[0]
        self.stratum = self.bench.sample.strata[0]

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[Any, dict[str, Any]]:
        """Draw a program (and a sign if ``sign=0``), then reset the machine."""
        from pipeline.metrics.aiq.bf import compile_program

        gymnasium.Env.reset(self, seed=seed)
        if self.stream is not None:
            if seed is not None:
                self.stream.pool.clear()  # a seeded reset is reproducible: draw anew
            self.program_text, self.stratum = self.stream.next(self.np_random)
            self.program_id = -1
        else:
            progs = self.bench.sample.programs
            self.program_id = int(self.np_random.integers(0, len(progs)))
            self.program_text = progs[self.program_id]
            self.stratum = self.bench.sample.strata[self.program_id]
        if self.random_sign:
            self.sign = 1 if self.np_random.integers(0, 2) else -1
        self._new_machine(compile_program(self.program_text),
                          int(self.np_random.integers(0, 2**63)))  # fmt: skip
        return self._first_observation(), self._info(0)

    def _info(self, steps: int) -> dict[str, Any]:
        info = super()._info(steps)
        info.update(program_id=self.program_id, program=self.program_text,
                    stratum=self.stratum, sign=self.sign, split=self.split)  # fmt: skip
        return info


# --------------------------------------------------------------------------- vector env
class BFVectorEnv(VectorEnv[Any, Any, Any]):
    """Many BF machines stepped by one compiled call per step.

    Parameters
    ----------
    num_envs : int
        Number of machines.
    program : str, optional
        One program for every machine; or ``programs``, one per machine.
    episode_length, sign, observe_last, machine settings
        As for :class:`BFEnv`.
    """

    metadata = {  # noqa: RUF012 (gymnasium API)
        "autoreset_mode": AutoresetMode.NEXT_STEP,
        "render_modes": [],
    }

    def __init__(
        self,
        num_envs: int = 1,
        program: str | None = None,
        programs: Sequence[str] | None = None,
        episode_length: int = 1000,
        sign: int = 1,
        observe_last: bool = False,
        **machine: Any,
    ) -> None:
        from pipeline.metrics.aiq.bf import compile_program

        machine.pop("max_episode_steps", None)
        unknown = sorted(set(machine) - set(_MACHINE_KEYS))
        if unknown:
            raise TypeError(f"unknown BF env settings {unknown}; known: {', '.join(_MACHINE_KEYS)}")
        if programs is None:
            if program is None:
                raise TypeError("give program= (every env) or programs= (one per env)")
            programs = [program] * num_envs
        if len(programs) != num_envs or num_envs < 1:
            raise ValueError(f"programs has {len(programs)} entries for num_envs={num_envs}")
        self.config = _config(machine)
        _check_common(episode_length, sign)
        self.num_envs = num_envs
        self.episode_length = episode_length
        self.signs = np.full(num_envs, float(sign))
        self.programs = [compile_program(p) for p in programs]
        self.observe_last = bool(observe_last)
        self.single_observation_space = (
            last_space(self.config) if self.observe_last else observation_space(self.config)
        )
        self.single_action_space = spaces.Discrete(self.config.num_symbols)
        self.observation_space = gymnasium.vector.utils.batch_space(
            self.single_observation_space, num_envs
        )
        self.action_space = gymnasium.vector.utils.batch_space(self.single_action_space, num_envs)
        self._bank: Any = None
        self._rows = np.arange(num_envs, dtype=np.int64)
        self._cycle = np.zeros(num_envs, np.int64)
        self._needs_reset = np.zeros(num_envs, bool)

    def _seeds(self, seed: int | Sequence[int] | None) -> list[int]:
        if seed is None:
            return [int(x) for x in self.np_random.integers(0, 2**63, self.num_envs)]
        if isinstance(seed, int):
            return [(seed + i) & _SEED_MASK for i in range(self.num_envs)]
        if len(seed) != self.num_envs:
            raise ValueError(f"{len(seed)} seeds for {self.num_envs} envs")
        return [int(s) & _SEED_MASK for s in seed]

    def _observe(self, rows: np.ndarray) -> Any:
        cells = self._bank.observations(rows)
        if self.config.obs_cells == 0:
            return np.zeros(rows.shape[0], np.int64)
        if self.config.obs_cells == 1:
            return cells[:, 0].copy()
        return cells

    def _pick(self, rows: Sequence[int]) -> None:
        """Choose the programs of ``rows`` before a reset (AIQ draws new ones)."""

    def reset(
        self, *, seed: int | Sequence[int] | None = None, options: dict[str, Any] | None = None
    ) -> tuple[Any, dict[str, Any]]:
        """Reset every machine; ``seed`` (int: ``seed + i`` for env i, or a list) seeds ``%``."""
        from pipeline.metrics.aiq.bf_fast import MachineBank

        if seed is not None:
            self._np_random, self._np_random_seed = gymnasium.utils.seeding.np_random(
                seed if isinstance(seed, int) else int(seed[0])
            )
            stream = getattr(self, "stream", None)
            if stream is not None:
                stream.pool.clear()
        seeds = self._seeds(seed)
        self._pick(range(self.num_envs))
        self._bank = MachineBank(self.programs, self.config, seeds)
        self._cycle[:] = 0
        self._needs_reset[:] = False
        obs = self._last(
            self._observe(self._rows),
            np.full(self.num_envs, self.config.num_symbols, np.int64),
            np.zeros(self.num_envs),
        )
        return obs, self._infos(self._rows, np.zeros(self.num_envs, np.int64))

    def _last(self, obs: Any, actions: np.ndarray, rewards: np.ndarray) -> Any:
        """Add the previous action and perceived reward (``observe_last``)."""
        if not self.observe_last:
            return obs
        return with_last(obs, actions, rewards / 100.0)

    def _infos(self, rows: np.ndarray, steps: np.ndarray) -> dict[str, Any]:
        return {"steps": steps, "cycle": self._cycle.copy()}

    def _restart(self, rows: list[int]) -> None:
        """New programs (AIQ) and blank machines for ``rows``."""
        self._pick(rows)
        for i in rows:
            self._bank.set_program(i, self.programs[i])
        self._bank.reset_rows(rows, self._seeds(None)[: len(rows)])
        self._cycle[rows] = 0
        self._needs_reset[rows] = False

    def reset_finished(self, rows: Sequence[int]) -> Any:
        """Reset ``rows`` now (same-step autoreset, as SB3 expects); their first observations.

        For adapters: after :meth:`step` reported ``rows`` terminated or truncated, this
        starts their next episodes at once instead of on the next step.
        """
        picked = [int(i) for i in rows]
        self._restart(picked)
        idx = np.asarray(picked, np.int64)
        n = len(picked)
        return self._last(
            self._observe(idx), np.full(n, self.config.num_symbols, np.int64), np.zeros(n)
        )

    def step(self, actions: Any) -> tuple[Any, np.ndarray, np.ndarray, np.ndarray, dict[str, Any]]:
        """One cycle of every machine (finished ones are reset instead: NEXT_STEP autoreset)."""
        if self._bank is None:
            raise gymnasium.error.ResetNeeded("call reset() before step()")
        acts = np.asarray(actions).astype(np.int64, copy=False).reshape(self.num_envs)
        skip = self._needs_reset.copy()  # _restart clears the flags; this step skips them
        if skip.any():
            self._restart(self._rows[skip].tolist())
        rewards, cells, term, trunc, steps, bad = self._bank.step_all(
            acts, skip, self.signs, self._cycle, self.episode_length
        )
        if bad >= 0:
            raise ValueError(
                f"action {acts[bad]} of env {bad} is not in 0..{self.config.num_symbols - 1}"
            )
        self._needs_reset = term | trunc
        if self.config.obs_cells == 1:
            obs = cells[:, 0]
        elif self.config.obs_cells == 0:
            obs = np.zeros(self.num_envs, np.int64)
        else:
            obs = cells
        if self.observe_last:  # a reset sub-environment has no previous action yet
            last = np.where(skip, self.config.num_symbols, acts)
            obs = self._last(obs, last, np.where(skip, 0.0, rewards))
        return obs, rewards, term, trunc, self._infos(self._rows, steps)


class AIQVectorEnv(BFVectorEnv):
    """The AIQ test, vectorised: every (auto)reset draws a program (``split`` as for AIQEnv)."""

    def __init__(
        self,
        num_envs: int = 1,
        benchmark: str | Path | None = None,
        episode_length: int = 1000,
        sign: int = 1,
        split: str = "train",
        observe_last: bool = False,
        **kwargs: Any,
    ) -> None:
        kwargs.pop("max_episode_steps", None)
        if kwargs:
            raise TypeError(f"unknown AIQ env settings {sorted(kwargs)}")
        _check_split(split)
        self.bench = load_sample(benchmark)
        machine = {k: getattr(self.bench.config, k) for k in _MACHINE_KEYS}
        first = self.bench.sample.programs[0]
        self.random_sign = sign == 0  # a random antithetic sign per episode, as AIQEnv
        super().__init__(num_envs, programs=[first] * num_envs, episode_length=episode_length,
                         sign=sign or 1, observe_last=observe_last, **machine)  # fmt: skip
        self.split = split
        self.stream = TrainingStream(self.bench) if split == "train" else None
        self.program_ids = np.zeros(num_envs, np.int64)
        self.strata = np.zeros(num_envs, np.int64)
        self.program_texts = [first] * num_envs

    def _pick(self, rows: Sequence[int]) -> None:
        from pipeline.metrics.aiq.bf import compile_program

        progs = self.bench.sample.programs
        for i in rows:
            if self.stream is not None:
                text, stratum = self.stream.next(self.np_random)
                self.program_ids[i] = -1
            else:
                pid = int(self.np_random.integers(0, len(progs)))
                text, stratum = progs[pid], self.bench.sample.strata[pid]
                self.program_ids[i] = pid
            self.program_texts[i] = text
            self.strata[i] = stratum
            self.programs[i] = compile_program(text)
            if self.random_sign:
                self.signs[i] = 1.0 if self.np_random.integers(0, 2) else -1.0

    def _infos(self, rows: np.ndarray, steps: np.ndarray) -> dict[str, Any]:
        info = super()._infos(rows, steps)
        info["program_id"] = self.program_ids.copy()
        info["stratum"] = self.strata.copy()
        info["sign"] = self.signs.astype(np.int64)
        return info


def make_vector(env_id: str, num_envs: int, **kwargs: Any) -> BFVectorEnv:
    """The compiled vector env of ``gmeter/BF-v0`` or ``gmeter/AIQ-v0`` (for adapters)."""
    if env_id not in ENV_IDS:
        raise ValueError(f"unknown environment {env_id!r}; use one of {', '.join(ENV_IDS)}")
    cls = BFVectorEnv if env_id == "gmeter/BF-v0" else AIQVectorEnv
    return cls(num_envs=num_envs, **kwargs)


# --------------------------------------------------------------------------- gym: agents
class GymPolicyAgent:
    r"""Adapter: a ``gym:module:factory`` policy under the AIQ run protocol (``reset``/``act``).

    Per run: ``policy = factory(observation_space, action_space, settings)``; then per cycle
    ``update(prev_observation, prev_action, reward, observation)`` (when the policy has it and
    a previous action exists) and ``act(observation)``. The reward is the one the AIQ agent
    perceives (:math:`\sigma r`); the last cycle's reward is scored but never perceived, as
    for every AIQ agent.
    """

    def __init__(self, target: str, params: Mapping[str, float | str] | None = None) -> None:
        from pipeline.lab.aiq.external import import_agent_module

        module_name, _, name = target.partition(":")
        factory = getattr(import_agent_module(module_name), name, None)
        if not callable(factory):
            raise AgentProtocolError(
                f"gym:{target}: {module_name!r} has no callable {name!r}",
                hint="point gym:module:factory at a function or class returning a policy",
            )
        self.target = target
        self.factory = factory
        self.params = dict(params or {})
        self.policy: Any = None
        self.config = BFConfig()
        self.prev: tuple[Any, int] | None = None
        self.cycle = 0

    def reset(self, settings: Mapping[str, Any]) -> None:
        """A fresh policy for a new run."""
        cfg = BFConfig(num_symbols=int(settings["num_symbols"]),
                       obs_cells=int(settings["obs_cells"]))  # fmt: skip
        self.config = cfg
        obs_space = observation_space(cfg)
        act_space = spaces.Discrete(cfg.num_symbols)
        seed = int(settings["seed"])
        obs_space.seed(seed)
        act_space.seed(seed ^ 1)
        self.policy = self.factory(obs_space, act_space, dict(settings))
        if not callable(getattr(self.policy, "act", None)):
            raise AgentProtocolError(
                f"gym:{self.target} returned {type(self.policy).__name__}, which has no act()",
                hint="the factory must return a policy with act(observation) -> action",
            )
        self.update = getattr(self.policy, "update", None)
        self.prev = None
        self.cycle = 0

    def act(self, observation: Sequence[int], reward: float) -> int:
        """Feed the last transition to ``update``, then ask ``act`` for the next action."""
        obs = to_gym_observation(self.config, observation)
        if self.prev is not None and self.update is not None:
            self.update(self.prev[0], self.prev[1], reward, obs)
        a = self.policy.act(obs)
        self.cycle += 1
        n = self.config.num_symbols
        if isinstance(a, np.ndarray) and a.shape == ():
            a = a.item()
        if isinstance(a, np.integer):
            a = int(a)
        if isinstance(a, bool) or not isinstance(a, int) or not 0 <= a < n:
            raise AgentProtocolError(
                f"agent gym:{self.target} returned {a!r} at cycle {self.cycle}, not an action "
                f"in 0..{n - 1}",
                hint="return a whole number between 0 and action_space.n - 1",
            )
        self.prev = (obs, a)
        return a
