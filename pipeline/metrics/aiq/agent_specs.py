"""Agent specifications: names, parameters and the paper's presets per episode length (spec §4.8).

A spec is written on the command line as ``NAME[,key=value...]`` (or with the original's
positional values, ``q-lambda,0,0.5,0.5,0.04,0.6``):

============  ===============================================  =========================
name          parameters (original order)                       original CLI
============  ===============================================  =========================
random        —                                                 ``Random``
freq          epsilon                                           ``Freq,ε``
q0            init_q, alpha, epsilon, gamma (λ = 0)             ``Q_l,init_Q,0,α,ε,γ``
q-lambda      init_q, lambda, alpha, epsilon, gamma             ``Q_l,init_Q,λ,α,ε,γ``
hlq-lambda    sel_mode, init_q, lambda, epsilon, gamma          ``HLQ_l,sel,init_Q,λ,ε,γ``
mc-aixi       depth, simulations, horizon, epsilon, decay, c,   ``MC_AIXI`` (external binary)
              factored
============  ===============================================  =========================

Parameters not given come from the preset of the paper's episode length nearest (on a log
scale) to the run's; ``module:Class`` names a Python agent class, ``cmd:PROGRAM ARGS`` an
external program speaking JSON lines one percept at a time, ``cmdbatch:PROGRAM ARGS`` one
speaking the batched protocol (many runs per message), ``gym:module:factory[,key=value...]``
a factory of policies acting on Gymnasium observations and ``vec:module:factory[,...]`` a
factory of batched policies acting on every run of a batch at once (see
:mod:`pipeline.lab.aiq.external`, :mod:`pipeline.lab.aiq.gym_env` and
:mod:`pipeline.lab.aiq.vec_agent`). ``gym:`` and ``vec:`` values may be text (e.g.
``checkpoint=runs/ppo.zip``): a value that is not a number is kept as a string.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

REFERENCE_AGENTS = ("random", "freq", "q0", "q-lambda", "hlq-lambda", "mc-aixi")
#: Reference agents with a one-cycle step kernel (:func:`agents_fast.agent_step`), which the
#: merged-lifetime and similarity kernels drive; MC-AIXI has a kernel of its own.
STEP_AGENTS = ("random", "freq", "q0", "q-lambda", "hlq-lambda")
PARAM_NAMES: dict[str, tuple[str, ...]] = {
    "random": (),
    "freq": ("epsilon",),
    "q0": ("init_q", "alpha", "epsilon", "gamma"),
    "q-lambda": ("init_q", "lambda", "alpha", "epsilon", "gamma"),
    "hlq-lambda": ("sel_mode", "init_q", "lambda", "epsilon", "gamma"),
    "mc-aixi": ("depth", "simulations", "horizon", "epsilon", "decay", "c", "factored"),
}
_ALIASES = {
    "freq": "freq",
    "random": "random",
    "q0": "q0",
    "q-0": "q0",
    "q-lambda": "q-lambda",
    "q_l": "q-lambda",
    "qlambda": "q-lambda",
    "hlq-lambda": "hlq-lambda",
    "hlq_l": "hlq-lambda",
    "hlqlambda": "hlq-lambda",
    "mc-aixi": "mc-aixi",
    "mc_aixi": "mc-aixi",
    "mcaixi": "mc-aixi",
}

#: MC-AIXI's parameters at every episode length: the paper's (Legg & Veness, §5: context depth
#: 32, 100 simulations, horizon 3), no ε-exploration, UCB constant √2, factored CTW (JAIR §5.3).
MC_AIXI_DEFAULTS: dict[str, float] = {
    "depth": 32.0,
    "simulations": 100.0,
    "horizon": 3.0,
    "epsilon": 0.0,
    "decay": 1.0,
    "c": math.sqrt(2.0),
    "factored": 1.0,
}
#: Bounds of MC-AIXI's integer parameters (memory and time grow with each).
MC_AIXI_LIMITS = {"depth": (1, 64), "simulations": (1, 100_000), "horizon": (1, 100)}

#: ``Conf Paper Settings.ods`` (BF(5), undiscounted): EL → agent → parameters.
PRESETS: dict[int, dict[str, dict[str, float]]] = {}
for _el, _f, _q0, _ql, _hlq in (
    (1000, 0.07, (0, 0.5, 0.04, 0.6), (0, 0.5, 0.5, 0.04, 0.6), (0, 0, 0.95, 0.04, 0.7)),
    (3000, 0.09, (0, 0.5, 0.03, 0.7), (0, 0.5, 0.5, 0.03, 0.6), (0, 0, 0.99, 0.04, 0.6)),
    (10000, 0.09, (0, 0.5, 0.02, 0.8), (0, 0.5, 0.5, 0.02, 0.8), (0, 0, 0.99, 0.02, 0.7)),
    (30000, 0.07, (0, 0.5, 0.01, 0.9), (0, 0.5, 0.5, 0.01, 0.9), (0, 0, 0.995, 0.01, 0.8)),
    (100000, 0.05, (0, 0.5, 0.005, 0.95), (0, 0.5, 0.5, 0.005, 0.95), (0, 0, 0.995, 0.005, 0.9)),
):
    PRESETS[_el] = {
        "random": {},
        "freq": {"epsilon": _f},
        "q0": dict(zip(PARAM_NAMES["q0"], map(float, _q0), strict=True)),
        "q-lambda": dict(zip(PARAM_NAMES["q-lambda"], map(float, _ql), strict=True)),
        "hlq-lambda": dict(zip(PARAM_NAMES["hlq-lambda"], map(float, _hlq), strict=True)),
        "mc-aixi": dict(MC_AIXI_DEFAULTS),
    }

#: The paper's MC-AIXI at BF(5), undiscounted (Fig. 1; fewer runs than the others, wider
#: intervals: ±1.4, ±0.9, ±1.3, ±1, ±1.1).
PAPER_AIQ_MC_AIXI: dict[int, float] = {1000: 41.0, 3000: 47.7, 10000: 54.1, 30000: 56.0,
                                       100000: 59.6}  # fmt: skip

#: The paper's AIQ at BF(5), undiscounted, 10 000 runs: EL → agent → value (Fig. 1 / settings
#: sheet; spec §4.8). Random is 0 by construction.
PAPER_AIQ: dict[int, dict[str, float]] = {
    el: dict(zip(("freq", "q0", "q-lambda", "hlq-lambda"), values, strict=True))
    for el, values in (
        (1000, (40.2, 41.8, 44.3, 49.1)),
        (3000, (42.6, 46.3, 48.1, 52.2)),
        (10000, (45.2, 50.2, 51.5, 54.7)),
        (30000, (47.3, 52.5, 53.7, 56.1)),
        (100000, (49.1, 54.1, 54.8, 56.3)),
    )
}


def preset_length(episode_length: int) -> int:
    """Return the paper episode length whose preset applies (nearest on a log scale)."""
    return min(PRESETS, key=lambda el: abs(math.log(el) - math.log(max(episode_length, 1))))


@dataclass(frozen=True)
class AgentSpec:
    """A parsed agent.

    Attributes
    ----------
    kind : str
        A reference agent name, ``python`` (``module:Class``), ``command`` (``cmd:...``),
        ``batch`` (``cmdbatch:...``), ``gym`` (``gym:module:factory``) or ``vec``
        (``vec:module:factory``).
    params : tuple of (str, float or str)
        Reference agents: every parameter, presets filled in. Others: extra ``key=value``
        pairs passed to the agent in its settings (``gym``/``vec``: numbers or text).
    target : str
        ``module:Class`` or the command line (empty for reference agents).
    preset : int or None
        The paper episode length whose preset filled the missing parameters.
    """

    kind: str
    params: tuple[tuple[str, float | str], ...] = ()
    target: str = ""
    preset: int | None = None

    @property
    def is_reference(self) -> bool:
        """Whether this is one of the compiled reference agents."""
        return self.kind in REFERENCE_AGENTS

    def param_vector(self) -> list[float]:
        """Return every parameter in :data:`PARAM_NAMES` order (MC-AIXI's kernel vector)."""
        p = {k: float(v) for k, v in self.params}  # reference agents: numbers only
        return [p[k] for k in PARAM_NAMES[self.kind]]

    def param(self, name: str) -> float:
        """Return one numeric parameter by name."""
        return float(dict(self.params)[name])

    @property
    def text(self) -> str:
        """Return the canonical spec string (round-trips through :func:`parse_agent`)."""
        if self.kind == "command":
            return f"cmd:{self.target}"
        if self.kind == "batch":
            return f"cmdbatch:{self.target}"
        head = {"python": self.target, "gym": f"gym:{self.target}",
                "vec": f"vec:{self.target}"}.get(self.kind, self.kind)  # fmt: skip
        values = (f"{k}={v}" if isinstance(v, str) else f"{k}={_num(v)}" for k, v in self.params)
        return ",".join([head, *values])

    def kernel_args(self) -> tuple[int, list[float]]:
        """Return the agent kind code and parameter vector of :func:`agents_fast.run_episode`.

        Only the step agents (:data:`STEP_AGENTS`) have one; MC-AIXI's kernel takes
        :meth:`param_vector`.
        """
        p = {k: float(v) for k, v in self.params}  # step agents have numbers only
        if self.kind == "random":
            return 0, [0.0]
        if self.kind == "freq":
            return 1, [p["epsilon"]]
        if self.kind in ("q0", "q-lambda"):
            lam = p.get("lambda", 0.0)
            return 2, [p["init_q"], lam, p["alpha"], p["epsilon"], p["gamma"]]
        if self.kind == "hlq-lambda":
            return 3, [p["sel_mode"], p["init_q"], p["lambda"], p["epsilon"], p["gamma"]]
        raise ValueError(f"{self.kind} agents have no compiled kernel")


def _num(v: float) -> str:
    """Shortest text of a parameter that parses back to the same float (``%g`` when it does)."""
    short = f"{v:g}"
    return short if float(short) == v else repr(float(v))


def _check(name: str, p: dict[str, float]) -> None:
    def need(cond: bool, msg: str) -> None:
        if not cond:
            raise ValueError(f"{name}: {msg}")

    for k, v in p.items():
        need(math.isfinite(v), f"{k} must be a finite number")
    if "epsilon" in p:
        need(0.0 <= p["epsilon"] <= 1.0 or p.get("sel_mode", 0) != 0, "epsilon must be in [0, 1]")
        need(p["epsilon"] > 0 or p.get("sel_mode", 0) == 0, "softmax needs epsilon > 0")
    if "gamma" in p:
        need(0.0 <= p["gamma"] < 1.0, "gamma must be in [0, 1)")
    if "alpha" in p:
        need(0.0 < p["alpha"] <= 1.0, "alpha must be in (0, 1]")
    if "lambda" in p:
        need(0.0 <= p["lambda"] <= 1.0, "lambda must be in [0, 1]")
    if name == "mc-aixi":
        for key, (low, high) in MC_AIXI_LIMITS.items():
            need(p[key] == int(p[key]) and low <= p[key] <= high,
                 f"{key} must be a whole number in {low}..{high}")  # fmt: skip
        need(0.0 < p["decay"] <= 1.0, "decay must be in (0, 1]")
        need(p["c"] >= 0.0, "c (the UCB constant) must be >= 0")
        need(p["factored"] in (0.0, 1.0), "factored must be 0 (one context tree) or 1 (FAC-CTW)")
    if name == "hlq-lambda":
        need(p["lambda"] > 0.0, "lambda must be > 0 (HL(λ) divides by λ·V)")
        need(p["sel_mode"] in (0.0, 1.0), "sel_mode must be 0 (ε-greedy) or 1 (softmax)")


def parse_agent(text: str, episode_length: int = 1000) -> AgentSpec:
    """Parse an agent spec (see the module docstring).

    Raises
    ------
    ValueError
        Unknown agent, unknown or malformed parameter, value out of range.
    """
    text = text.strip()
    if text.startswith("cmd:"):
        if not text[4:].strip():
            raise ValueError("cmd: needs a command line, e.g. cmd:python my_agent.py")
        return AgentSpec("command", (), text[4:].strip())
    if text.startswith("cmdbatch:"):
        if not text[9:].strip():
            raise ValueError("cmdbatch: needs a command line, e.g. cmdbatch:python my_agent.py")
        return AgentSpec("batch", (), text[9:].strip())
    policy = text[:4] if text[:4] in ("gym:", "vec:") else ""
    if policy:
        text = text[4:]
    head, *rest = [p.strip() for p in text.split(",")]
    extra: list[tuple[str, float | str]] = []
    positional: list[float] = []
    for part in rest:
        if not part:
            continue
        key, eq, val = part.partition("=")
        try:
            number: float | str = float(val if eq else key)
        except ValueError:
            if not (policy and eq and val.strip() and val.strip().isprintable()):
                raise ValueError(f"{text!r}: {part!r} is not key=number or a number") from None
            number = val.strip()  # gym:/vec: settings may be text, e.g. a checkpoint path
        if eq:
            extra.append((key.strip().replace("-", "_"), number))
        else:
            positional.append(float(number))
    if policy:
        mod, _, factory = head.partition(":")
        if positional or not mod or not factory.isidentifier():
            raise ValueError(
                f"{policy}{text!r}: use {policy}module:factory[,key=value...] (a callable "
                "returning a policy; see docs/aiq.md)"
            )
        return AgentSpec(policy[:3], tuple(extra), head)
    name = _ALIASES.get(head.lower())
    if name is None:
        if ":" in head and not positional:
            return AgentSpec("python", tuple(extra), head)
        raise ValueError(
            f"unknown agent {head!r}: use one of {', '.join(REFERENCE_AGENTS)}, "
            "module:Class, cmd:PROGRAM, cmdbatch:PROGRAM, gym:module:factory or "
            "vec:module:factory"
        )
    names = PARAM_NAMES[name]
    el = preset_length(episode_length)
    params = dict(PRESETS[el][name])
    if name == "q0" and len(positional) == 5:  # original order with λ = 0 included
        if positional[1] != 0:
            raise ValueError("q0 has lambda 0; use q-lambda for lambda > 0")
        positional.pop(1)
    if len(positional) > len(names):
        raise ValueError(f"{name} takes at most {len(names)} values ({', '.join(names)})")
    params.update(zip(names, positional, strict=False))
    for key, value in extra:
        if isinstance(value, str):
            raise ValueError(f"{name}: {key}={value!r} is not a number")
        if key == "lambda" and name == "q0":
            if value != 0:
                raise ValueError("q0 has lambda 0; use q-lambda for lambda > 0")
            continue
        if key not in names:
            have = ", ".join(names) or "none"
            raise ValueError(f"{name} has no parameter {key!r} (it has: {have})")
        params[key] = value
    _check(name, params)
    return AgentSpec(name, tuple((k, params[k]) for k in names), "", el)
