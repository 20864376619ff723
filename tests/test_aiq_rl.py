"""AIQ for RL libraries: vec: agents, run weights, training split, observe_last, render modes."""

from __future__ import annotations

import csv
import math
import tomllib
import warnings
from pathlib import Path

import gymnasium
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env

from pipeline.executor import TaskFailed
from pipeline.lab.aiq.benchmark import load_benchmark
from pipeline.lab.aiq.gym_env import AIQEnv, BFEnv, BFVectorEnv, RenderModeError, register_envs
from pipeline.lab.aiq.run import run_to_bundle
from pipeline.lab.aiq.runner import run_agent_on_programs
from pipeline.metrics.aiq.agent_specs import parse_agent
from pipeline.metrics.aiq.runs import AIQSettings

register_envs()
ROOT = Path(__file__).resolve().parents[1]
BENCH = ROOT / "submissions/aiq-bf5"
GYM = "gym:tests.aiq_fixtures.vec_qlearning:make_agent"
VEC = "vec:tests.aiq_fixtures.vec_qlearning:make_batch"


def _results(spec: str, programs: list[str], settings: AIQSettings) -> list[tuple]:
    n = len(programs)
    res = run_agent_on_programs(spec, programs, settings, list(range(100, 100 + n)),
                                [1 if k % 3 else -1 for k in range(n)], record=True)  # fmt: skip
    return [("nan" if math.isnan(r.score) else r.score, r.steps, r.cycles, r.actions) for r in res]


@pytest.mark.parametrize("machine", [{}, {"obs_cells": 2}, {"obs_cells": 0}])
def test_vec_and_gym_forms_of_one_policy_give_identical_runs(machine):
    from pipeline.metrics.aiq.bf import BFConfig

    bench = load_benchmark(BENCH)
    programs = [*bench.sample.programs[:40], "+[]#", ",[.,]+.#"]  # the last two: step limit
    settings = AIQSettings(BFConfig(**machine), 120, 1.0)
    gym, vec = _results(GYM, programs, settings), _results(VEC, programs, settings)
    assert gym == vec
    assert any(g[0] == "nan" for g in gym)  # runs stopped at the step limit took part


@pytest.mark.parametrize("method", ["stratified", "mc-antithetic", "mc"])
def test_weighted_mean_of_samples_equals_the_bundle_aiq(tmp_path, method):
    run, _ = run_to_bundle("freq", 100, 120, 3, tmp_path / "b", benchmark=BENCH, method=method)
    with (tmp_path / "b/samples.csv").open(encoding="utf-8") as fh:
        rows = list(csv.DictReader(fh))
    w = np.array([float(r["weight"]) for r in rows])
    r = np.array([float(r["reward"]) if r["reward"] else 0.0 for r in rows])
    assert (w >= 0).all() and w.sum() == pytest.approx(1.0, abs=1e-12)
    logged = tomllib.loads((tmp_path / "b/aiq.toml").read_text())["result"]["aiq"]
    assert (w * r).sum() / w.sum() == pytest.approx(logged, abs=1e-10)
    assert logged == run.estimate.value


def test_a_tampered_weight_is_a_validation_problem(tmp_path):
    import shutil

    from pipeline.validate import load_benchmark

    bench_dir = tmp_path / "aiq-bf5"
    bench_dir.mkdir()
    shutil.copy(BENCH / "benchmark.toml", bench_dir)
    shutil.copytree(BENCH / "reference", bench_dir / "reference")
    out = bench_dir / "freq-test"
    run_to_bundle("freq", 100, 80, 3, out, benchmark=bench_dir)

    def problems() -> list:
        loaded = load_benchmark(bench_dir.resolve())
        return [p for b in loaded.bundles for p in b.problems if "weight" in p.field]

    assert problems() == []
    lines = (out / "samples.csv").read_text().splitlines()
    cells = lines[1].split(",")
    cells[-1] = "0.5"
    (out / "samples.csv").write_text("\n".join([lines[0], ",".join(cells), *lines[2:]]) + "\n")
    assert problems()


def test_sixty_resets_of_aiq_v0_never_draw_a_scored_program():
    env = gymnasium.make("gmeter/AIQ-v0", episode_length=5)
    scored = set(load_benchmark(BENCH).sample.programs)
    seen = []
    for k in range(60):
        _, info = env.reset(seed=k if k % 7 == 0 else None)
        assert info["split"] == "train" and info["program_id"] == -1
        seen.append(info["program"])
    assert not scored & set(seen)
    assert len(set(seen)) > 30  # a stream, not one program
    test = gymnasium.make("gmeter/AIQ-v0", episode_length=5, split="test")
    for k in range(20):
        _, info = test.reset(seed=k)
        assert info["program"] in scored
    with pytest.raises(ValueError, match="split"):
        AIQEnv(split="validation")


def test_observe_last_gives_a_composite_observation():
    env = gymnasium.make("gmeter/BF-v0", program=",.#", episode_length=30, observe_last=True)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        check_env(env.unwrapped)
    obs, _ = env.reset(seed=1)
    assert isinstance(env.observation_space, gymnasium.spaces.Dict)
    assert set(obs) == {"observation", "last_action", "last_reward"}
    assert obs["last_action"] == 5 and obs["last_reward"][0] == 0.0  # nothing yet
    for a in (3, 1, 4):
        obs, r, *_ = env.step(a)
        assert env.observation_space.contains(obs)
        assert obs["last_action"] == a and obs["last_reward"][0] == pytest.approx(r / 100)
    aiq = gymnasium.make("gmeter/AIQ-v0", observe_last=True, episode_length=10)
    assert aiq.observation_space.contains(aiq.reset(seed=2)[0])
    vec = BFVectorEnv(4, program=",.#", episode_length=3, observe_last=True)
    obs, _ = vec.reset(seed=0)
    assert vec.observation_space.contains(obs)
    for t in range(4):  # through an autoreset
        acts = np.array([t % 5] * 4)
        obs, r, *_ = vec.step(acts)
        assert vec.observation_space.contains(obs)
    assert (obs["last_action"] == 5).all()  # the step after the end resets: no action yet


def test_unsupported_render_mode_is_a_type_error_as_sb3_expects():
    with warnings.catch_warnings(), pytest.raises(TypeError):
        warnings.simplefilter("ignore")  # gymnasium warns first that the mode is not listed
        gymnasium.make("gmeter/BF-v0", program=",.#", render_mode="rgb_array")
    with pytest.raises(ValueError):  # and still a ValueError for older callers
        BFEnv(",.#", render_mode="human")
    assert issubclass(RenderModeError, TypeError)
    env = gymnasium.make("gmeter/BF-v0", program=",.#", render_mode="ansi")
    env.reset(seed=0)
    env.step(1)
    assert "reward" in env.render()


def test_policy_settings_may_be_text_for_gym_and_vec_only():
    spec = parse_agent("vec:pkg.mod:make,checkpoint=runs/ppo 1.zip,lr=0.1")
    assert spec.kind == "vec" and dict(spec.params) == {"checkpoint": "runs/ppo 1.zip", "lr": 0.1}
    assert parse_agent(spec.text) == spec
    assert dict(parse_agent("gym:m:f,path=a/b.pt").params) == {"path": "a/b.pt"}
    with pytest.raises(ValueError, match="not key=number"):
        parse_agent("freq,epsilon=high")
    with pytest.raises(ValueError, match="vec:module:factory"):
        parse_agent("vec:nomodule")


def test_vec_policy_errors_name_the_agent_and_cycle():
    settings = AIQSettings(episode_length=10)
    for target, msg in [("make_bad_shape", "shape"), ("make_bad_action", "not in 0..4")]:
        with pytest.raises(TaskFailed, match=msg):
            run_agent_on_programs(f"vec:tests.aiq_fixtures.vec_bad:{target}", [",.#"] * 3,
                                  settings, [1, 2, 3])  # fmt: skip


def test_training_metadata_is_recorded_and_checked(tmp_path):
    from pipeline.tracks.aiq.settings import check_log

    ckpt = tmp_path / "policy.bin"
    ckpt.write_bytes(b"weights")
    spec = f"{VEC},checkpoint={ckpt},train_seed=7,train_steps=200000"
    run_to_bundle(spec, 50, 40, 1, tmp_path / "b", benchmark=BENCH)
    log = tomllib.loads((tmp_path / "b/aiq.toml").read_text())
    t = log["training"]
    assert t["seed"] == 7 and t["steps"] == 200000 and t["checkpoint"] == "policy.bin"
    assert t["checkpoint_setting"] == "checkpoint"
    import hashlib

    assert t["checkpoint_sha256"] == hashlib.sha256(b"weights").hexdigest()
    assert "gymnasium" in t["libraries"] and "numpy" in t["libraries"]
    assert check_log(log, "aiq.toml") == []
    log["training"]["gpu"] = "yes"
    assert [p.field for p in check_log(log, "aiq.toml")] == ["training.gpu"]


def test_sb3_adapter_resets_in_the_same_step_with_terminal_observations():
    from pipeline.lab.aiq.gym_env import make_vector
    from pipeline.lab.aiq.sb3 import SameStepAutoreset

    env = SameStepAutoreset(make_vector("gmeter/BF-v0", 3, program=",.#", episode_length=4,
                                        observe_last=True))  # fmt: skip
    env.seed(5)
    obs = env.reset()
    assert obs["observation"].shape == (3,)
    for t in range(1, 9):
        env.step_async(np.array([1, 2, 3]))
        obs, rewards, dones, infos = env.step_wait()
        assert rewards.shape == (3,) and dones.dtype == bool
        if t % 4 == 0:  # every 4th step ends the episode and starts the next one at once
            assert dones.all()
            assert all(i["TimeLimit.truncated"] and "terminal_observation" in i for i in infos)
            assert (obs["last_action"] == 5).all()  # the new episode's first observation
            assert infos[0]["terminal_observation"]["last_action"] == 1
            assert infos[2]["episode"]["l"] == 4
        else:
            assert not dones.any() and (obs["last_action"] == [1, 2, 3]).all()
    aiq = SameStepAutoreset(make_vector("gmeter/AIQ-v0", 2, episode_length=3))
    aiq.reset()
    for _ in range(7):
        aiq.step_async(np.array([0, 1]))
        aiq.step_wait()
    assert aiq.get_attr("split") == ["train", "train"]


def test_sb3_vec_env_with_stable_baselines3():
    pytest.importorskip("stable_baselines3")
    from stable_baselines3.common.env_checker import check_env as sb3_check  # noqa: F401
    from stable_baselines3.common.vec_env import VecEnv

    from pipeline.lab.aiq.sb3 import sb3_vec_env

    env = sb3_vec_env("gmeter/AIQ-v0", num_envs=4, episode_length=20, observe_last=True)
    assert isinstance(env, VecEnv)
    env.seed(1)
    assert env.observation_space.contains({k: v[0] for k, v in env.reset().items()})
    _, rewards, _, infos = env.step(np.zeros(4, np.int64))
    assert rewards.shape == (4,) and len(infos) == 4
