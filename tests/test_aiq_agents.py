"""AIQ reference agents (spec §4): specs and presets, hand-checked updates, plain == compiled."""

from __future__ import annotations

import math

import pytest

from pipeline.lab.aiq.runner import execute_run, run_agent_on_programs
from pipeline.metrics.aiq.agent_specs import PRESETS, parse_agent, preset_length
from pipeline.metrics.aiq.agents import (
    FreqAgent,
    HLQLambdaAgent,
    QLambdaAgent,
    encode_observation,
    greedy,
)
from pipeline.metrics.aiq.bf import BFConfig, SplitMix64
from pipeline.metrics.aiq.runs import (
    AIQSettings,
    RunItem,
    decode_actions,
    encode_actions,
)

PROGRAMS = [",.#", ",+.#", ",>,<[->+<]>.#", "%.,.#", ",[-].#", ",>%.<.#", "+[]#"]


def settings(L: int = 200, **kw) -> AIQSettings:
    return AIQSettings(BFConfig(**kw), L)


def test_presets_and_parsing() -> None:
    q = parse_agent("q-lambda")
    assert q.kind == "q-lambda" and q.preset == 1000
    assert dict(q.params) == {
        "init_q": 0,
        "lambda": 0.5,
        "alpha": 0.5,
        "epsilon": 0.04,
        "gamma": 0.6,
    }
    assert dict(parse_agent("hlq-lambda", 10_000).params)["lambda"] == 0.99
    assert dict(parse_agent("freq", 100_000).params) == {"epsilon": 0.05}
    assert parse_agent("q0").kernel_args() == (2, [0.0, 0.0, 0.5, 0.04, 0.6])
    # original positional order (Q_l,init_Q,λ,α,ε,γ) and key overrides
    assert parse_agent("Q_l,0,0.5,0.5,0.04,0.6") == parse_agent("q-lambda", 1000)
    assert parse_agent("q0,0,0,0.5,0.04,0.6") == parse_agent("q0")
    assert dict(parse_agent("freq,epsilon=0.2").params) == {"epsilon": 0.2}
    assert parse_agent(parse_agent("hlq-lambda,lambda=0.9").text) == parse_agent(
        "hlq-lambda,lambda=0.9"
    )
    assert (
        preset_length(1) == 1000 and preset_length(5000) == 3000 and preset_length(20000) == 30000
    )
    assert set(PRESETS) == {1000, 3000, 10000, 30000, 100000}
    assert parse_agent("mypkg.agents:Smart,depth=3").kind == "python"
    assert parse_agent("cmd:python agent.py --x 1").target == "python agent.py --x 1"
    for bad in (
        "nope",
        "freq,epsilon=2",
        "q-lambda,gamma=1",
        "hlq-lambda,lambda=0",
        "freq,x=1",
        "q0,lambda=0.3",
        "freq,abc",
        "cmd:",
    ):
        with pytest.raises(ValueError):
            parse_agent(bad)


def test_greedy_tie_break_is_uniform() -> None:
    rng = SplitMix64(1)
    counts = [0, 0, 0]
    for _ in range(3000):
        counts[greedy([1.0, 1.0, 1.0], rng)] += 1
    assert min(counts) > 900
    assert greedy([0.0, 2.0, 1.0], rng) == 1


def test_observation_encoding_uses_every_cell() -> None:
    # the original assigned obs[i] * n**i in the loop (only the last cell counted); we sum
    assert encode_observation([1, 2], 5) == 1 + 2 * 5
    assert encode_observation([], 5) == 0


def _reset(agent, n: int = 5, obs: int = 1, seed: int = 0) -> None:
    agent.reset({"num_actions": n, "obs_cells": obs, "seed": seed})


def test_freq_credits_previous_action() -> None:
    agent = FreqAgent(epsilon=0.0)
    _reset(agent)
    a0 = agent.act((2,), 0.0)  # dummy reward credited to action 0: all means 0 -> tie
    assert agent.count == [2.0, 1, 1, 1, 1] and agent.total == [0.0] * 5
    agent.act((2,), 100.0)  # credited to a0
    assert agent.total[a0] == 100.0
    assert agent.act((2,), 0.0) == a0  # a0 now has the best mean


def test_q_lambda_update_by_hand() -> None:
    # one state (obs_cells 0), 2 actions, α = 0.5, γ = 0.5, λ = 1, ε = 0, init 0.
    agent = QLambdaAgent(init_q=0.0, lam=1.0, alpha=0.5, epsilon=0.0, gamma=0.5)
    _reset(agent, n=2, obs=0)
    a = agent.act((), 0.0)  # δ = 0: nothing moves; E[0,0] = 1 then decays to γλ = 0.5
    assert agent.q == [[0.0, 0.0]]
    # greedy a' = a*: traces decay, E[0,0] = γλ·1 = 0.5
    assert agent.e == [[0.5, 0.0]] and a in (0, 1)
    agent2 = QLambdaAgent(init_q=0.0, lam=1.0, alpha=0.5, epsilon=0.0, gamma=0.5)
    _reset(agent2, n=2, obs=0)
    agent2.act((), 10.0)
    # δ = 10 + 0.5·0 − Q[0,0] = 10; E[0,0] = 1 ⇒ Q[0,0] = 0.5·10·1 = 5
    assert agent2.q[0][0] == 5.0


def test_hlq_first_update_by_hand() -> None:
    # one state, 2 actions, λ = 0.5, γ = 0.5, ε = 0. Percept reward 10 at the start.
    agent = HLQLambdaAgent(sel_mode=0, init_q=0.0, lam=0.5, epsilon=0.0, gamma=0.5)
    _reset(agent, n=2, obs=0)
    a = agent.act((), 10.0)
    # E[0,0] = 1, V[0,0] = 2; δ = 10. With a' = a (greedy on a tie):
    # (x,b) = (0,0): if a' = 0: β = 1/(V[0,0] − γE[0,0]) · (λ·2 + 1)/(λ·2 + 1) = 1/1.5
    #                if a' = 1: β = 1/(V[0,1] − 0) · (λ·1)/(λ·2) = 1/1 · 0.5/1 = 0.5
    expected = 10 / 1.5 if a == 0 else 0.5 * 10
    assert agent.q[0][0] == pytest.approx(expected)
    assert agent.v[0] == [1.0, 0.5]  # V decays by λ: [2, 1] -> [1, 0.5]


@pytest.mark.parametrize(
    "agent",
    [
        "random",
        "freq",
        "q0",
        "q-lambda",
        "hlq-lambda",
        "hlq-lambda,sel_mode=1,epsilon=20",
        "q-lambda,init_q=50,epsilon=0.3",
    ],
)
def test_plain_and_compiled_agents_agree(agent: str) -> None:
    for cfg in ({}, {"num_symbols": 3, "obs_cells": 2, "reverse_output": True}):
        st = settings(150, **cfg)
        for i, prog in enumerate(PROGRAMS):
            for sign in (1, -1):
                item = RunItem(prog, sign, 1000 + i)
                a = execute_run(item, agent=agent, settings=st, record=True)
                b = execute_run(item, agent=agent, settings=st, record=True, plain=True)
                assert a.actions == b.actions and a[1:4] == b[1:4]
                assert a.score == b.score or (math.isnan(a.score) and math.isnan(b.score))


def test_discounted_score_normaliser() -> None:
    # `+.#`-style constant reward 50 every cycle: discounted sum / ((1-d^(L+1))/(1-d))
    st = AIQSettings(BFConfig(), 10, discount=0.9)
    res = execute_run(RunItem("+.#", 1, 0), agent="random", settings=st, record=False)
    # cycle k (1-based) writes the cell after k increments from blank 2: 3,4,0,1,2,3,...
    rewards = [50.0 * (((2 + k) % 5) - 2) for k in range(1, 11)]
    total = sum(0.9**i * r for i, r in enumerate(rewards))
    assert res.score == pytest.approx(total / ((1 - 0.9**11) / (1 - 0.9)))


def test_failure_and_trace_codec() -> None:
    res = execute_run(RunItem("+[]#", 1, 0), agent="freq", settings=settings(50), record=True)
    assert res.failed and math.isnan(res.score) and res.cycles == 1 and res.steps == 1000
    assert decode_actions(encode_actions([0, 4, 3], 5), 5) == [0, 4, 3]
    assert decode_actions(encode_actions([70, 1], 100), 100) == [70, 1]
    with pytest.raises(ValueError):
        decode_actions("07", 5)


def test_antithetic_random_is_symmetric_and_api() -> None:
    progs = [",.#"] * 4
    res = run_agent_on_programs("random", progs, settings(100), [1, 1, 2, 2], [1, -1, 1, -1])
    # same seed, opposite sign: a random agent ignores rewards, so the runs mirror exactly
    assert res[0].score == -res[1].score and res[2].score == -res[3].score
    assert res[0].actions == ""
    with pytest.raises(ValueError):
        run_agent_on_programs("random", progs, settings(10), [1])
