"""The BF reference machine (spec §2): hand-derived cycles, quirks, and plain == compiled."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pipeline.metrics.aiq.bf import (
    BFConfig,
    BFMachine,
    BFProgramError,
    SplitMix64,
    compile_program,
    random_program,
    replay,
    simplify_program,
)
from pipeline.metrics.aiq.bf_fast import FastMachine, replay_fast

BF5 = BFConfig()


def run(program: str, actions: list[int], config: BFConfig = BF5, seed: int = 0) -> dict:
    out = replay(program, actions, config, seed).to_json()
    assert replay_fast(program, actions, config, seed).to_json() == out
    return out


def test_blank_and_rewards() -> None:
    # blank = (n-1)//2; reward = 100 (c - m) / m with m = (n-1)/2
    assert [BFConfig(num_symbols=n).blank for n in (2, 3, 5, 10)] == [0, 1, 2, 4]
    assert [BF5.reward_of(c) for c in range(5)] == [-100.0, -50.0, 0.0, 50.0, 100.0]
    two = BFConfig(num_symbols=2)
    assert two.reward_of(two.blank) == -100.0  # even n: the blank scores below zero
    ten = BFConfig(num_symbols=10)
    assert ten.reward_of(ten.blank) == 100 * (4 - 4.5) / 4.5


def test_halts_as_soon_as_output_is_full() -> None:
    # `+.+.+#`: cycle 1 -> c=3, out0=3, c=4, out1=4, tape full: the last `+` never runs.
    # cycle 2 starts from c=4: + -> 0 (wrap), out0=0, + -> 1, out1=1.
    out = run("+.+.+#", [0, 0])
    assert out["outputs"] == [[3, 4], [0, 1]]
    assert out["rewards"] == [50.0, -100.0]
    assert out["observations"] == [[4], [1]]
    assert out["steps"] == [4, 4]
    assert out["failure"] is None


def test_stale_output_cells_persist() -> None:
    # `,[.]#` with action 4: , [ . ] . -> full after 5 steps. With action 2 (blank) the loop is
    # skipped: , [ # = 3 steps, nothing written, the tape still shows [4, 4] (reward 100).
    out = run(",[.]#", [4, 2])
    assert out["outputs"] == [[4, 4], [4, 4]]
    assert out["rewards"] == [100.0, 100.0]
    assert out["steps"] == [5, 3]
    # ,.# writes only the reward cell; the observation cell keeps its initial blank
    assert run(",.#", [1, 3])["observations"] == [[2], [2]]


def test_loops_test_against_blank() -> None:
    # `,[-].#`, action 0: , [ then (- ])x3 takes 0 -> 4 -> 3 -> 2 (blank) . # = 10 steps
    out = run(",[-].#", [0, 2])
    assert out["steps"] == [10, 4]  # action 2 = blank: , [ (skip) . #
    assert out["rewards"] == [0.0, 0.0]


def test_step_limit_is_a_failure_when_reached() -> None:
    # `+[]#`: + [ then `]` forever: 1000 steps -> failure at cycle 0, the run stops there
    out = run("+[]#", [1, 1, 1])
    assert out["steps"] == [1000]
    assert out["failure"] == {"cycle": 0}
    # `,.#` needs exactly 3 steps: with max_steps = 3 reaching the limit is a failure
    assert run(",.#", [1, 1], BFConfig(max_steps=3))["failure"] == {"cycle": 0}
    assert run(",.#", [1, 1], BFConfig(max_steps=4))["failure"] is None


def test_failure_in_a_later_cycle() -> None:
    # `,[]#`: loops forever only when the action is not blank
    out = run(",[]#", [2, 2, 0, 2], BFConfig(max_steps=50))
    assert out["steps"] == [3, 3, 50]
    assert out["failure"] == {"cycle": 2}
    assert len(out["rewards"]) == 3


def test_input_history_and_readable_cells() -> None:
    # `,>,<.>.#` outputs the current and the previous action (blank before the first)
    out = run(",>,<.>.#", [0, 1, 3])
    assert out["outputs"] == [[0, 2], [1, 0], [3, 1]]
    # input_tape_len = 2: only cell 0 is readable, the second `,` gives the blank
    out = run(",>,<.>.#", [0, 1], BFConfig(input_tape_len=2))
    assert out["outputs"] == [[0, 2], [1, 2]]
    # the 25-cell default reads 24 cells: 25 reads of `,>` give the blank on the 25th
    prog = ",>" * 25 + "<.#"
    out = run(prog, list(range(5)) * 6, BFConfig(obs_cells=0))
    assert out["outputs"][-1] == [2]


def test_work_tape_left_edge_quirk() -> None:
    # tape of 3: 0 -> -1 -> -2 -> -3 (cell 0) -> -4 < -3 -> 0: four `<` end on cell 0.
    # cycle 1: cell 0 = 3 (reward 50); cycle 2 again cell 0: 4 (reward 100).
    out = run("<<<<+.#", [0, 0], BFConfig(work_tape_len=3))
    assert out["rewards"] == [50.0, 100.0]
    # `>` wraps from L-1 to 0
    out = run(">>>+.#", [0, 0], BFConfig(work_tape_len=3))
    assert out["rewards"] == [50.0, 100.0]
    # from -1 (cell 2), `>` goes to 0 (cell 0)
    out = run("<+>.#", [0], BFConfig(work_tape_len=3))
    assert out["outputs"] == [[2, 2]]


def test_reverse_output_and_obs_cells() -> None:
    cfg = BFConfig(obs_cells=2, reverse_output=True)
    out = run(",.+.+.#", [0], cfg)
    assert out["outputs"] == [[0, 1, 2]]
    assert out["rewards"] == [0.0]  # last cell, blank 2
    assert out["observations"] == [[0, 1]]
    out = run(",.#", [4], BFConfig(obs_cells=0))
    assert out["outputs"] == [[4]] and out["observations"] == [[]] and out["steps"] == [2]


def test_random_symbol_is_seeded() -> None:
    a = run("%.#", [0] * 50, seed=3)
    assert a == run("%.#", [0] * 50, seed=3)
    assert a != run("%.#", [0] * 50, seed=4)
    assert set(a["outputs"][i][0] for i in range(50)) == set(range(5))


def test_bad_programs_and_actions() -> None:
    for bad in ("[", "]", "[]]", "ab#"):
        with pytest.raises(BFProgramError):
            compile_program(bad)
    with pytest.raises(ValueError, match=r"not in 0\.\.4"):
        BFMachine(",.#", BF5).act(5)
    with pytest.raises(ValueError):
        BFConfig(num_symbols=1)


def test_program_without_halt_ends_the_cycle_at_no_cost() -> None:
    assert run(",.", [1])["steps"] == [2]


def test_simplify_single_pass_vs_iterated() -> None:
    assert simplify_program("++--") == "+-"
    assert simplify_program("[+-]") == ""
    assert simplify_program("[[]]") == "[]"
    assert simplify_program("<>+-[]#") == "#"
    assert simplify_program("-+>") == ">"
    assert simplify_program("++--", iterated=True) == ""
    assert simplify_program("[[]]", iterated=True) == ""
    assert simplify_program("+<>-.#", iterated=True) == ".#"
    assert simplify_program("+<>-.#") == "+-.#"


def test_random_programs_are_balanced_and_end_with_one_halt() -> None:
    rng = SplitMix64(1)
    for _ in range(500):
        raw, prog = random_program(rng)
        assert raw.endswith("#") and raw.count("#") == 1
        assert prog.endswith("#") and prog.count("#") == 1
        compile_program(raw)
        compile_program(prog)
        assert simplify_program(raw) == prog


def test_splitmix_known_values() -> None:
    # SplitMix64 reference output for seed 123 (same in the compiled kernels)
    r = SplitMix64(123)
    assert [r.next() for _ in range(2)] == [13032462758197477675, 18015028434894305148]


def test_fast_machine_matches_stepwise() -> None:
    rng = SplitMix64(99)
    for _ in range(50):
        _, prog = random_program(rng)
        a, b = BFMachine(prog, BF5, 5), FastMachine(prog, BF5, 5)
        assert a.reset() == b.reset()
        for k in range(30):
            x, y = a.act(k % 5), b.act(k % 5)
            assert (x.reward, x.observation, x.steps) == y


programs = st.text(alphabet="<>+-,.%#", max_size=12).flatmap(
    lambda s: st.integers(0, len(s)).map(lambda i: s[:i] + "[" + s[i:] + "]#")
) | st.text(alphabet="<>+-,.%#", max_size=15)


@settings(max_examples=150, deadline=None)
@given(
    program=programs,
    n=st.sampled_from([2, 3, 4, 5, 10]),
    obs=st.integers(0, 2),
    rev=st.booleans(),
    tape=st.sampled_from([1, 2, 3, 5, 100_000]),
    inp=st.sampled_from([1, 2, 3, 25]),
    max_steps=st.sampled_from([1, 3, 20, 1000]),
    seed=st.integers(0, 2**64 - 1),
    data=st.data(),
)
def test_plain_and_compiled_agree(program, n, obs, rev, tape, inp, max_steps, seed, data) -> None:
    cfg = BFConfig(n, obs, rev, tape, inp, max_steps)
    actions = data.draw(st.lists(st.integers(0, n - 1), max_size=40))
    assert replay(program, actions, cfg, seed) == replay_fast(program, actions, cfg, seed)


def test_sampled_programs_agree_over_long_runs() -> None:
    rng = SplitMix64(2024)
    for i in range(200):
        _, prog = random_program(rng)
        acts = [(i * 7 + k * k) % 5 for k in range(300)]
        assert replay(prog, acts, BF5, i) == replay_fast(prog, acts, BF5, i)


# --------------------------------------------------------------------------- CLI
def _cli(args: list[str], stdin: str | None = None):
    from typer.testing import CliRunner

    from cli.app import app

    return CliRunner().invoke(app, args, input=stdin)


def test_cli_replay_json() -> None:
    res = _cli(["aiq", "replay", ",..+#", "--actions", "1,3,4", "--json"])
    assert res.exit_code == 0, res.output
    assert json.loads(res.stdout) == {
        "rewards": [-50.0, 50.0, 100.0],
        "observations": [[1], [3], [4]],
        "outputs": [[1, 1], [3, 3], [4, 4]],
        "steps": [3, 3, 3],
        "failure": None,
    }


def test_cli_replay_options() -> None:
    res = _cli(
        [
            "aiq",
            "replay",
            "<<<<+.#",
            "--actions",
            "0,0",
            "--work-tape",
            "3",
            "--symbols",
            "5",
            "--obs-cells",
            "0",
            "--max-steps",
            "50",
            "--input-tape",
            "4",
            "--json",
        ]
    )
    assert res.exit_code == 0, res.output
    assert json.loads(res.stdout)["rewards"] == [50.0, 100.0]
    res = _cli(["aiq", "replay", ",.+.#", "--actions", "0", "--reverse-output", "--json"])
    assert json.loads(res.stdout)["rewards"] == [-50.0]
    res = _cli(["aiq", "replay", ",.#", "--actions", "1"])
    assert res.exit_code == 0 and "cycle" in res.stdout


def test_cli_replay_batch(tmp_path) -> None:
    cases = [
        {
            "id": "a",
            "program": ",.#",
            "actions": [1, 2],
            "config": {
                "num_symbols": 5,
                "obs_cells": 1,
                "reverse_output": False,
                "work_tape_len": 100000,
                "input_tape_len": 25,
                "max_steps": 1000,
            },
        },
        {"id": 7, "program": "+[]#", "actions": [0, 0], "config": {"max_steps": 7}},
        {"id": "n2", "program": ",.#", "actions": [0, 1], "config": {"num_symbols": 2}},
    ]
    f = tmp_path / "cases.jsonl"
    f.write_text("\n".join(json.dumps(c) for c in cases) + "\n")
    res = _cli(["aiq", "replay", "--batch", str(f)])
    assert res.exit_code == 0, res.output
    lines = [json.loads(x) for x in res.stdout.splitlines()]
    assert [x["id"] for x in lines] == ["a", 7, "n2"]
    assert lines[0]["rewards"] == [-50.0, 0.0]
    assert lines[1] == {
        "id": 7,
        "rewards": [0.0],
        "observations": [[2]],
        "outputs": [[2, 2]],
        "steps": [7],
        "failure": {"cycle": 0},
    }
    assert lines[2]["rewards"] == [-100.0, 100.0]


def test_cli_replay_errors(tmp_path) -> None:
    res = _cli(["aiq", "replay", "[", "--actions", "1"])
    assert res.exit_code != 0
    f = tmp_path / "bad.jsonl"
    f.write_text('{"id": 1, "program": "]", "actions": [0]}\nnot json\n')
    res = _cli(["aiq", "replay", "--batch", str(f)])
    lines = [json.loads(x) for x in res.stdout.splitlines()]
    assert "error" in lines[0] and "error" in lines[1]
