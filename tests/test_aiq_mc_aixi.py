"""MC-AIXI reference agent: CTW by its definition, exact revert, ρUCT, spec, plain == compiled."""

from __future__ import annotations

import math
import random
from fractions import Fraction

import pytest

from pipeline.lab.aiq.runner import execute_run, run_agent_on_programs
from pipeline.metrics.aiq.agent_specs import parse_agent
from pipeline.metrics.aiq.bf import BFConfig
from pipeline.metrics.aiq.mc_aixi import (
    ContextTreeModel,
    MCAIXIAgent,
    check_percept_width,
    reward_symbol,
    symbol_bits,
)
from pipeline.metrics.aiq.runs import AIQSettings, RunItem

PROGRAMS = [",.#", ",+.#", ",>,<[->+<]>.#", "%.,.#", ",[-].#", ",>%.<.#", ".,#", "+[]#"]


# --------------------------------------------------------------------------- CTW by definition
def _kt(bits: list[int]) -> Fraction:
    """Krichevsky–Trofimov probability of a bit sequence (sequential product)."""
    p = Fraction(1)
    counts = [0, 0]
    for b in bits:
        p *= Fraction(2 * counts[b] + 1, 2 * (counts[0] + counts[1] + 1))
        counts[b] += 1
    return p


def _weighted(events: list[tuple[tuple[int, ...], int]], depth: int, suffix: tuple[int, ...]):
    """P_w of the context ``suffix`` over (context, bit) events, straight from the definition."""
    mine = [(c, b) for c, b in events if c[: len(suffix)] == suffix]
    kt = _kt([b for _, b in mine])
    if len(suffix) == depth:
        return kt
    kids = _weighted(mine, depth, (*suffix, 0)) * _weighted(mine, depth, (*suffix, 1))
    return kt / 2 + kids / 2


def _events(history: list[int], flags: list[bool], depth: int, which=None):
    """(context, bit) of every predicted bit; the context reads the history backwards."""
    out = []
    k = 0
    for t, (bit, predicted) in enumerate(zip(history, flags, strict=True)):
        if not predicted:
            continue
        if which is None or which(k):
            out.append((tuple(history[t - d] for d in range(1, depth + 1)), bit))
        k += 1
    return out


@pytest.mark.parametrize("factored", [False, True])
@pytest.mark.parametrize("depth", [0, 1, 3])
def test_ctw_predictions_match_the_definition(depth: int, factored: bool) -> None:
    rng = random.Random(depth * 10 + factored)
    pbits = 3
    model = ContextTreeModel(depth, pbits, factored)
    history = [0] * depth
    flags = [False] * depth
    for _cycle in range(12):
        for i in range(pbits):  # percept bits, learnt
            which = (lambda k, i=i: k % pbits == i) if factored else None
            events = _events(history, flags, depth, which)
            ctx = tuple(history[-d] for d in range(1, depth + 1))
            before = _weighted(events, depth, ())
            after = _weighted([*events, (ctx, 1)], depth, ())
            assert model.prob_one() == pytest.approx(float(after / before), rel=1e-12)
            bit = rng.randrange(2) if rng.random() < 0.5 else 1
            model.update(bit)
            history.append(bit)
            flags.append(True)
        action = [rng.randrange(2), rng.randrange(2)]  # conditioned on, never predicted
        model.append_action(action)
        history += action
        flags += [False, False]


def test_kt_estimator_by_hand() -> None:
    model = ContextTreeModel(0, 1, False)  # depth 0: the root is a plain KT estimator
    assert model.prob_one() == 0.5
    for bit in (1, 1, 0):
        model.update(bit)
    assert model.prob_one() == (2 + 0.5) / (3 + 1)


def _dump(node, out: list, depth: int = 0) -> list:
    out.append((depth, tuple(node.counts), node.beta))
    for kid in node.kids:
        if kid is None:
            out.append((depth + 1, None))
        else:
            _dump(kid, out, depth + 1)
    return out


def test_revert_restores_the_model_exactly() -> None:
    rng = random.Random(5)
    model = ContextTreeModel(6, 4, True)
    for _ in range(40):
        model.update(rng.randrange(2))
    state = ([_dump(r, []) for r in model.roots], list(model.history), model.position)
    mark = model.start_simulation()
    for _ in range(25):
        model.append_action([rng.randrange(2)])
        model.update(rng.randrange(2))
    assert [_dump(r, []) for r in model.roots] != state[0]
    model.revert(mark)
    assert ([_dump(r, []) for r in model.roots], model.history, model.position) == state


# --------------------------------------------------------------------------- encoding
def test_interface_encoding() -> None:
    assert [symbol_bits(n) for n in (2, 3, 4, 5, 8, 9)] == [1, 2, 2, 3, 3, 4]
    # the original's wrapper: round((r + 100) / 200 * (n - 1)); both signs of every BF(5) reward
    assert [reward_symbol(r, 5) for r in (-100.0, -50.0, 0.0, -0.0, 50.0, 100.0)] == [
        0, 1, 2, 2, 3, 4,
    ]  # fmt: skip
    assert [reward_symbol(100 * (c - 4.5) / 4.5, 10) for c in range(10)] == list(range(10))
    check_percept_width(5, 1)
    with pytest.raises(ValueError, match="bits"):
        check_percept_width(100, 8)  # 9 symbols x 7 bits = 63 > 62


# --------------------------------------------------------------------------- agent behaviour
def _agent(**kw) -> MCAIXIAgent:
    agent = MCAIXIAgent(**kw)
    agent.reset({"num_actions": 5, "obs_cells": 1, "seed": 3})
    return agent


def test_search_leaves_the_model_untouched_and_visits_every_action() -> None:
    agent = _agent(depth=4, simulations=30, horizon=2)
    agent.act((2,), 0.0)
    before = ([_dump(r, []) for r in agent.model.roots], list(agent.model.history))
    agent.search()
    assert ([_dump(r, []) for r in agent.model.roots], agent.model.history) == before


def test_epsilon_explores_without_searching() -> None:
    agent = _agent(depth=2, simulations=1000, horizon=5, epsilon=1.0, decay=0.5)
    agent.search = None  # type: ignore[assignment]  # would fail if called
    agent.act((2,), 0.0)
    assert agent.epsilon == 0.5


@pytest.mark.parametrize("sign", [1, -1])
def test_planning_finds_the_best_action_of_a_copy_environment(sign: int) -> None:
    # ",.#": the reward cell is the action, so +1 wants action 4 and -1 wants action 0
    res = execute_run(RunItem(",.#", sign, 11), agent="mc-aixi,depth=8,simulations=25,horizon=1",
                      settings=AIQSettings(BFConfig(), 300), record=True)  # fmt: skip
    best = "4" if sign > 0 else "0"
    assert res.actions[-50:].count(best) >= 45 and res.score > 60


# --------------------------------------------------------------------------- spec
def test_spec_defaults_overrides_and_round_trip() -> None:
    spec = parse_agent("mc-aixi")
    assert spec.is_reference and spec.kind == "mc-aixi"
    p = dict(spec.params)
    assert (p["depth"], p["simulations"], p["horizon"], p["factored"]) == (32, 100, 3, 1)
    assert p["c"] == math.sqrt(2)
    assert parse_agent(spec.text) == spec  # √2 survives the canonical text
    assert dict(parse_agent("MC_AIXI,depth=8,simulations=25").params)["depth"] == 8
    assert parse_agent("mc-aixi,16,50,4").param("horizon") == 4  # positional, paper order
    assert len(spec.param_vector()) == 7
    with pytest.raises(ValueError):
        spec.kernel_args()  # no step kernel: the merged and similarity kernels refuse it
    for bad in (
        "mc-aixi,depth=0",
        "mc-aixi,depth=2.5",
        "mc-aixi,depth=65",
        "mc-aixi,simulations=0",
        "mc-aixi,horizon=0",
        "mc-aixi,factored=2",
        "mc-aixi,decay=0",
        "mc-aixi,c=-1",
        "mc-aixi,epsilon=1.5",
        "mc-aixi,lambda=0.5",
    ):
        with pytest.raises(ValueError):
            parse_agent(bad)


# --------------------------------------------------------------------------- plain == compiled
@pytest.mark.parametrize(
    "agent",
    [
        "mc-aixi,depth=4,simulations=12,horizon=2",
        "mc-aixi,depth=3,simulations=9,horizon=3,factored=0",
        "mc-aixi,depth=6,simulations=5,horizon=1,epsilon=0.3,decay=0.9,c=0",
        "mc-aixi,depth=1,simulations=1,horizon=4",
    ],
)
def test_plain_and_compiled_agents_agree(agent: str) -> None:
    configs = ({}, {"num_symbols": 3, "obs_cells": 2, "reverse_output": True},
               {"num_symbols": 2})  # fmt: skip
    for cfg in configs:
        st = AIQSettings(BFConfig(**cfg), 40)
        for i, prog in enumerate(PROGRAMS):
            for sign in (1, -1):
                item = RunItem(prog, sign, 2000 + i)
                a = execute_run(item, agent=agent, settings=st, record=True)
                b = execute_run(item, agent=agent, settings=st, record=True, plain=True)
                assert a.actions == b.actions and a[1:4] == b[1:4], (cfg, prog, sign)
                assert a.score == b.score or (math.isnan(a.score) and math.isnan(b.score))


def test_runs_are_seeded_and_replay() -> None:
    import numpy as np

    from pipeline.metrics.aiq.bf_fast import program_arrays, replay_score_kernel, seed64
    from pipeline.metrics.aiq.runs import decode_actions

    st = AIQSettings(BFConfig(), 60)
    agent = "mc-aixi,depth=5,simulations=10,horizon=2"
    progs = [",>%.<.#", "%.,.#", ",.#"]
    seeds = [41, 42, 43]
    first = run_agent_on_programs(agent, progs, st, seeds, [1, -1, 1], record=True)
    again = run_agent_on_programs(agent, progs, st, seeds, [1, -1, 1], record=True)
    other = run_agent_on_programs(agent, progs, st, [51, 52, 53], [1, -1, 1], record=True)
    assert [r.actions for r in first] == [r.actions for r in again]
    assert [r.actions for r in first] != [r.actions for r in other]
    c = st.machine
    for prog, seed, sign, res in zip(progs, seeds, [1, -1, 1], first, strict=True):
        ops, jump = program_arrays(prog)
        acts = np.asarray(decode_actions(res.actions, 5), np.int8)
        score, steps, cycles, failed = replay_score_kernel(
            ops, jump, acts, 5, 1, False, c.work_tape_len, c.input_tape_len, c.max_steps,
            seed64(seed), float(sign), 1.0,
        )  # fmt: skip
        assert (float(score), int(steps), int(cycles), bool(failed)) == (
            res.score, res.steps, res.cycles, res.failed,
        )  # fmt: skip


def test_step_kernel_experiments_refuse_mc_aixi() -> None:
    from pipeline.errors import UsageError
    from pipeline.lab.similarity.experiment import ExperimentSettings

    assert ExperimentSettings(agent="hlq-lambda").spec().kind == "hlq-lambda"
    with pytest.raises(UsageError, match="mc-aixi"):
        ExperimentSettings(agent="mc-aixi").spec()
