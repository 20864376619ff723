r"""One AIQ run, and many: an agent interacting with a BF program for an episode.

.. math::

    V = \frac{1}{L}\sum_{i=1}^{L} \sigma r_i
    \quad\text{(undiscounted)},\qquad
    V = \frac{\sum_{i=1}^{L} d^{\,i-1}\sigma r_i}{(1-d^{L+1})/(1-d)}\quad\text{(discount } d<1)

with :math:`r_i \in [-100, 100]` the reward of cycle :math:`i`, :math:`\sigma = \pm 1` the
antithetic sign (the agent perceives :math:`\sigma r_i` too) and :math:`L` the episode length.
The agent acts first on the initial percept (reward 0, blank observation) and perceives
:math:`L` times; the reward of the last cycle is scored but never perceived. A cycle that reaches
the step limit fails the whole run (score NaN).

Each run has one 64-bit ``seed``: the machine's ``%`` stream is ``SplitMix64(seed)`` and the
agent's is ``SplitMix64(agent_seed(seed))``. Seeds of an AIQ test are derived per (program, sign)
from the root seed (:func:`run_seed`), which gives common random numbers across agents and
results independent of the number of workers.

References
----------
Legg, S. & Veness, J. (2013). An Approximation of the Universal Intelligence Measure, §4.

Notes
-----
The original normalises a discounted score by :math:`(1-d^{L+1})/(1-d)` (L+1, not L); we keep
it. Every run gets a fresh agent and machine, as in the original.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, NamedTuple

from pipeline.metrics.aiq.agent_specs import AgentSpec
from pipeline.metrics.aiq.bf import BFConfig, BFMachine, SplitMix64

#: One character per action for alphabets up to 62 symbols (traces).
ACTION_DIGITS = "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"


@dataclass(frozen=True)
class AIQSettings:
    """What defines a test besides the agent: the machine, the episode length and the discount."""

    machine: BFConfig = field(default_factory=BFConfig)
    episode_length: int = 1000
    discount: float = 1.0

    def __post_init__(self) -> None:
        if self.episode_length < 1:
            raise ValueError("episode_length must be >= 1")
        if not 0.0 < self.discount <= 1.0:
            raise ValueError("discount must be in (0, 1]")


class RunResult(NamedTuple):
    """The outcome of one run.

    ``score`` is NaN and ``failed`` True when a cycle reached the step limit (``cycles`` is then
    the failing cycle, 1-based). ``steps`` counts BF instructions over the run. ``actions`` is
    the trace (:func:`encode_actions`) when recorded, else ``""``.
    """

    score: float
    steps: int
    cycles: int
    failed: bool
    actions: str = ""


def run_seed(root: int, program_id: int, sign: int) -> int:
    """Return the seed of the run of program ``program_id`` with sign ``sign`` (±1)."""
    from pipeline.metrics.seeds import derive_seed

    return derive_seed(root, program_id, 0 if sign > 0 else 1)


def agent_seed(seed: int) -> int:
    """Return the agent's stream seed for a run seed (a SplitMix64 hash, not ``seed`` itself)."""
    return SplitMix64(seed ^ 0x5DEECE66D1F2A3B4).next()


def encode_actions(actions: Sequence[int], num_symbols: int) -> str:
    """Encode a trace: one character per action (``0-9a-zA-Z``) for n ≤ 62, else ``.``-joined."""
    if num_symbols <= len(ACTION_DIGITS):
        return "".join(ACTION_DIGITS[a] for a in actions)
    return ".".join(map(str, actions))


def decode_actions(text: str, num_symbols: int) -> list[int]:
    """Invert :func:`encode_actions`; raise ValueError on a symbol outside the alphabet."""
    if num_symbols <= len(ACTION_DIGITS):
        out = [ACTION_DIGITS.find(ch) for ch in text]
        bad = next((i for i, a in enumerate(out) if not 0 <= a < num_symbols), None)
        if bad is not None:
            raise ValueError(f"action {text[bad]!r} at position {bad} is not in the alphabet")
        return out
    values = [int(x) for x in text.split(".")] if text else []
    if any(not 0 <= a < num_symbols for a in values):
        raise ValueError(f"an action is not in 0..{num_symbols - 1}")
    return values


def run_episode_py(
    program: str,
    settings: AIQSettings,
    agent: Any,
    sign: int,
    seed: int,
    *,
    record: bool = False,
    params: Mapping[str, float | str] | None = None,
    machine_cls: Any = BFMachine,
) -> RunResult:
    """Run an agent object (``reset``/``act`` protocol) on ``program`` in plain Python.

    This is the reference for :func:`agents_fast.run_episode` and the path of external agents.
    """
    c = settings.machine
    machine = machine_cls(program, c, seed)
    reward, obs = machine.reset()
    agent.reset(
        {
            "num_actions": c.num_symbols,
            "num_symbols": c.num_symbols,
            "num_obs": c.num_obs,
            "obs_cells": c.obs_cells,
            "episode_length": settings.episode_length,
            "discount": settings.discount,
            "seed": agent_seed(seed),
            "params": dict(params or {}),
        }
    )
    total = 0.0
    disc = 1.0
    steps_total = 0
    acts: list[int] = []
    rflip = float(sign)
    for i in range(settings.episode_length):
        a = agent.act(obs, rflip * reward)
        if isinstance(a, bool) or not isinstance(a, int) or not 0 <= a < c.num_symbols:
            raise ValueError(f"agent returned {a!r}, not an action in 0..{c.num_symbols - 1}")
        if record:
            acts.append(a)
        cyc = machine.act(a)
        if isinstance(cyc, tuple):  # FastMachine: (reward, observation, steps)
            reward, obs, steps = cyc
        else:
            reward, obs, steps = cyc.reward, cyc.observation, cyc.steps
        steps_total += steps
        if steps >= c.max_steps:
            return RunResult(
                float("nan"), steps_total, i + 1, True, encode_actions(acts, c.num_symbols)
            )
        total += disc * rflip * reward
        disc *= settings.discount
    L = settings.episode_length
    d = settings.discount
    score = total / L if d == 1.0 else total / ((1.0 - d ** (L + 1)) / (1.0 - d))
    return RunResult(score, steps_total, L, False, encode_actions(acts, c.num_symbols))


def run_reference_fast(
    spec: AgentSpec, program: str, settings: AIQSettings, sign: int, seed: int, record: bool
) -> RunResult:
    """Run a reference agent with the compiled kernel."""
    import numpy as np

    from pipeline.metrics.aiq.agents_fast import run_episode
    from pipeline.metrics.aiq.bf_fast import program_arrays, seed64

    ops, jump = program_arrays(program)
    c = settings.machine
    if spec.kind == "mc-aixi":
        from pipeline.metrics.aiq.mc_aixi import check_percept_width
        from pipeline.metrics.aiq.mc_aixi_fast import run_episode_mc_aixi

        check_percept_width(c.num_symbols, c.obs_cells)
        score, steps, cycles, failed, actions = run_episode_mc_aixi(
            ops, jump, c.num_symbols, c.obs_cells, c.reverse_output, c.work_tape_len,
            c.input_tape_len, c.max_steps, np.asarray(spec.param_vector(), np.float64),
            settings.episode_length, float(sign), settings.discount, seed64(seed),
            seed64(agent_seed(seed)), record,
        )  # fmt: skip
    else:
        kind, params = spec.kernel_args()
        score, steps, cycles, failed, actions = run_episode(
            ops, jump, c.num_symbols, c.obs_cells, c.reverse_output, c.work_tape_len,
            c.input_tape_len, c.max_steps, kind, np.asarray(params, np.float64),
            settings.episode_length, float(sign), settings.discount, seed64(seed),
            seed64(agent_seed(seed)), record,
        )  # fmt: skip
    trace = encode_actions(actions.tolist(), c.num_symbols) if record else ""
    return RunResult(float(score), int(steps), int(cycles), bool(failed), trace)


def reference_agent(spec: AgentSpec) -> Any:
    """Return a plain-Python instance of a reference agent (the compiled kernel's twin)."""
    from pipeline.metrics.aiq import agents

    p = {k: float(v) for k, v in spec.params}  # reference agents have numbers only
    if spec.kind == "random":
        return agents.RandomAgent()
    if spec.kind == "freq":
        return agents.FreqAgent(p["epsilon"])
    if spec.kind in ("q0", "q-lambda"):
        return agents.QLambdaAgent(
            p["init_q"], p.get("lambda", 0.0), p["alpha"], p["epsilon"], p["gamma"]
        )
    if spec.kind == "hlq-lambda":
        return agents.HLQLambdaAgent(
            int(p["sel_mode"]), p["init_q"], p["lambda"], p["epsilon"], p["gamma"]
        )
    if spec.kind == "mc-aixi":
        from pipeline.metrics.aiq.mc_aixi import MCAIXIAgent

        return MCAIXIAgent(int(p["depth"]), int(p["simulations"]), int(p["horizon"]),
                           p["epsilon"], p["decay"], p["c"], int(p["factored"]))  # fmt: skip
    raise ValueError(f"{spec.kind} is not a reference agent")


class RunItem(NamedTuple):
    """One unit of work: a program, a sign and the run's seed."""

    program: str
    sign: int
    seed: int
