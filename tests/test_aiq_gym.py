"""AIQ for Gymnasium: gmeter/BF-v0, gmeter/AIQ-v0, the vector env and gym:module:factory agents."""

from __future__ import annotations

import math
import subprocess
import sys
import warnings

import gymnasium
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env

from pipeline.lab.aiq.gym_env import BFEnv, BFVectorEnv, register_envs
from pipeline.lab.aiq.replay import replay_case
from pipeline.lab.aiq.runner import run_agent_on_programs
from pipeline.metrics.aiq.bf import BFConfig
from pipeline.metrics.aiq.runs import AIQSettings

register_envs()
PROGRAM = "%,[>+.<,]-.#"
CASES = [{}, {"obs_cells": 2}, {"obs_cells": 0, "num_symbols": 2}, {"reverse_output": True}]


@pytest.mark.parametrize("machine", CASES)
def test_bf_env_passes_check_env(machine: dict) -> None:
    env = gymnasium.make("gmeter/BF-v0", program=PROGRAM, episode_length=40, **machine)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        check_env(env.unwrapped)


@pytest.mark.parametrize("machine", CASES)
@pytest.mark.parametrize("program", [PROGRAM, ",.#", "+[]#", ",[.,]+.#"])
def test_rewards_equal_replay_cycle_by_cycle(machine: dict, program: str) -> None:
    env = gymnasium.make("gmeter/BF-v0", program=program, episode_length=60, **machine)
    env.reset(seed=7)
    rng = np.random.default_rng(0)
    actions, rewards, observations = [], [], []
    for _ in range(60):
        a = int(rng.integers(env.action_space.n))
        obs, r, terminated, truncated, info = env.step(a)
        actions.append(a)
        rewards.append(r)
        observations.append(np.atleast_1d(obs).tolist())
        if terminated or truncated:
            break
    ref = replay_case({"program": program, "actions": actions, "config": {"seed": 7, **machine}})
    assert rewards == ref["rewards"]  # exact, cycle by cycle
    if machine.get("obs_cells", 1) > 0:
        assert observations == ref["observations"]
    failed = ref["failure"] is not None
    assert terminated == failed and info["failed"] == failed and truncated == (not failed)


def test_sign_and_seeding() -> None:
    plus = BFEnv("%.,.#", episode_length=5)
    minus = BFEnv("%.,.#", episode_length=5, sign=-1)
    plus.reset(seed=3)
    minus.reset(seed=3)
    for a in (0, 4, 1, 2, 3):
        assert plus.step(a)[1] == -minus.step(a)[1]
    with pytest.raises(gymnasium.error.ResetNeeded):
        plus.step(0)
    with pytest.raises(ValueError, match="sign"):
        BFEnv(",.#", sign=2)
    with pytest.raises(ValueError, match="episode_length"):
        BFEnv(",.#", episode_length=0)
    with pytest.raises(ValueError, match="num_symbols"):
        BFEnv(",.#", num_symbols=1)
    with pytest.raises(TypeError, match="unknown BF env settings"):
        BFEnv(",.#", tape=3)


def test_vector_env_equals_single_envs_with_autoreset() -> None:
    programs = [PROGRAM, ",.#", "+[]#", "%.,.#"]
    vec = gymnasium.make_vec("gmeter/BF-v0", num_envs=4, programs=programs, episode_length=7)
    assert isinstance(vec, BFVectorEnv)
    singles = [BFEnv(p, episode_length=7) for p in programs]
    obs, _ = vec.reset(seed=20)
    first = [e.reset(seed=20 + i)[0] for i, e in enumerate(singles)]
    assert obs.tolist() == [int(o) for o in first]
    rng = np.random.default_rng(5)
    for _ in range(7):  # every env ends at or before step 7: compare episode one
        acts = rng.integers(0, 5, 4)
        obs, rew, term, trunc, _ = vec.step(acts)
        for i, e in enumerate(singles):
            if e._done:
                continue
            o, r, te, tr, _ = e.step(int(acts[i]))
            assert (int(o), r, te, tr) == (obs[i], rew[i], term[i], trunc[i])
    assert trunc[0] and term[2]
    obs, rew, term, trunc, _ = vec.step(np.zeros(4, np.int64))  # NEXT_STEP autoreset
    assert rew.tolist() == [0.0] * 4 and obs.tolist() == [2, 2, 2, 2]
    with pytest.raises(ValueError, match=r"not in 0\.\.4"):
        vec.step(np.full(4, 9))


def test_aiq_env_draws_programs_with_strata() -> None:
    env = gymnasium.make("gmeter/AIQ-v0", episode_length=20)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        check_env(env.unwrapped)
    _, info = env.reset(seed=1)
    assert 1 <= info["stratum"] <= 20 and isinstance(info["program"], str)
    _, again = env.reset(seed=1)
    assert again["program_id"] == info["program_id"]
    vec = gymnasium.make_vec("gmeter/AIQ-v0", num_envs=3, episode_length=4)
    _, vinfo = vec.reset(seed=2)
    assert vinfo["stratum"].shape == (3,)


def test_import_gymnasium_alone_registers_the_envs() -> None:
    code = (
        "import gymnasium\n"
        "env = gymnasium.make('gmeter/BF-v0', program=',.#', num_symbols=5, obs_cells=1)\n"
        "print(env.reset(seed=1)[0], env.step(3)[1])\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd="/")
    assert out.returncode == 0, out.stderr + "\n(run `make install`: it writes the startup hook)"
    assert out.stdout.split() == ["2", "50.0"]


SETTINGS = AIQSettings(BFConfig(), 80)
PROGRAMS = [",.#", ",>,<.>.#", "%.,.#", "+[]#"]


def _runs(spec: str) -> list[tuple]:
    res = run_agent_on_programs(spec, PROGRAMS, SETTINGS, [5, 6, 7, 8], [1, -1, 1, -1],
                                record=True)  # fmt: skip
    return [(r.score if not math.isnan(r.score) else "nan", r.steps, r.actions) for r in res]


def test_gym_agent_scores_like_the_reference_agent() -> None:
    assert _runs("gym:tests.aiq_fixtures.gym_freq:make_agent") == _runs("freq,epsilon=0.07")


def test_cleanrl_agent_learns_and_is_deterministic() -> None:
    spec = "gym:tests.aiq_fixtures.cleanrl_qlearning:make_agent,alpha=0.4"
    a = _runs(spec)
    assert a == _runs(spec)
    assert a[0][0] > 50  # ',.#' echoes the action: learnable


def test_bad_gym_specs() -> None:
    from pipeline.executor import TaskFailed
    from pipeline.metrics.aiq.agent_specs import parse_agent

    assert parse_agent("gym:m.x:make,lr=0.1").text == "gym:m.x:make,lr=0.1"
    with pytest.raises(ValueError, match="gym:module:factory"):
        parse_agent("gym:nomodule")
    with pytest.raises(TaskFailed, match="cannot import"):
        _runs("gym:no_such_module_xyz:make")
    with pytest.raises(TaskFailed, match="no callable"):
        _runs("gym:tests.aiq_fixtures.gym_freq:nope")
    with pytest.raises(TaskFailed, match="unknown hyper-parameters"):
        _runs("gym:tests.aiq_fixtures.cleanrl_qlearning:make_agent,beta=1")
