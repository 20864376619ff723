"""The batched external-agent protocol (cmdbatch:): identical to cmd:, clear errors, no orphans."""

from __future__ import annotations

import math
import os
import shlex
import sys
from pathlib import Path

import pytest

from pipeline.errors import AgentProtocolError
from pipeline.executor import TaskFailed
from pipeline.lab.aiq.batch import BatchCommandAgent, run_batch
from pipeline.lab.aiq.external import close_external_agents
from pipeline.lab.aiq.runner import run_agent_on_programs
from pipeline.metrics.aiq.bf import BFConfig
from pipeline.metrics.aiq.runs import AIQSettings, RunItem

FIXTURES = Path(__file__).parent / "aiq_fixtures"
# '+[]#' loops until the step limit: that run fails at cycle 1 and leaves the batch
PROGRAMS = [",.#", ",>,<.>.#", "%.,.#", ",+.#", "+[]#", ",[.,]+.#", "%[.%]+.,#", ",,.#"]
SEEDS = [11 + i for i in range(len(PROGRAMS))]
SIGNS = [1, -1] * (len(PROGRAMS) // 2)
SETTINGS = AIQSettings(BFConfig(), 120)


def agent(kind: str, fixture: str, mode: str = "good") -> str:
    return f"{kind}:" + shlex.join([sys.executable, str(FIXTURES / fixture), mode])


@pytest.fixture(autouse=True)
def _cleanup():
    yield
    close_external_agents()


def _runs(spec: str, **kw) -> list[tuple]:
    res = run_agent_on_programs(spec, PROGRAMS, SETTINGS, SEEDS, SIGNS, record=True, **kw)
    return [(r.score if not math.isnan(r.score) else "nan", r.steps, r.cycles, r.failed,
             r.actions) for r in res]  # fmt: skip


def test_batched_equals_step_protocol_and_compiled_reference() -> None:
    compiled = _runs("freq,epsilon=0.07")
    assert any(r[3] for r in compiled)  # a failing run is part of the batch
    assert _runs(agent("cmdbatch", "batch_agent.py")) == compiled
    assert _runs(agent("cmd", "json_agent.py")) == compiled
    # the trivial agent too, and results do not depend on how runs are batched
    step = _runs(agent("cmd", "json_agent.py", "trivial"))
    assert _runs(agent("cmdbatch", "batch_agent.py", "trivial")) == step


def test_batches_do_not_change_results() -> None:
    spec = agent("cmdbatch", "batch_agent.py")
    whole = _runs(spec)
    items = [RunItem(p, s, x) for p, s, x in zip(PROGRAMS, SIGNS, SEEDS, strict=True)]
    bot = BatchCommandAgent(spec[9:])
    try:
        parts = run_batch(items[:3], SETTINGS, bot, record=True)
        parts += run_batch(items[3:], SETTINGS, bot, record=True)
    finally:
        bot.close()
    assert [(r.score if not math.isnan(r.score) else "nan", r.steps, r.cycles, r.failed,
             r.actions) for r in parts] == whole  # fmt: skip


@pytest.mark.parametrize(
    ("mode", "message"),
    [
        ("garbage", "is not JSON"),
        ("crash", "exited"),
        ("bad-action", "not an action in 0..4"),
        ("short", "replied 7 actions for 8 runs"),
    ],
)
def test_protocol_errors_name_agent_batch_run_and_cycle(mode: str, message: str) -> None:
    spec = agent("cmdbatch", "batch_agent.py", mode)
    bot = BatchCommandAgent(spec[9:])
    items = [RunItem(p, s, x) for p, s, x in zip(PROGRAMS, SIGNS, SEEDS, strict=True)]
    bot._start()
    assert bot.proc is not None
    pid = bot.proc.pid
    with pytest.raises(AgentProtocolError, match=message) as info:
        run_batch(items, SETTINGS, bot)
    text = str(info.value)
    assert "agent cmdbatch:" in text and "batch 1" in text and "cycle 1" in text
    if mode == "bad-action":  # the last listed run: run 7, with its program, sign and seed
        assert "run 7 (program ',,.#', sign -1, seed 18)" in text
    if mode == "crash":
        assert "boom" in text  # the stderr tail
    assert bot.proc is None
    with pytest.raises(ProcessLookupError):  # stopped and reaped: no orphan, no zombie
        os.kill(pid, 0)


def test_timeout_is_per_batched_reply_and_reaps_the_agent() -> None:
    bot = BatchCommandAgent(agent("cmdbatch", "batch_agent.py", "sleep")[9:], step_timeout=0.5)
    bot._start()
    assert bot.proc is not None
    pid = bot.proc.pid
    with pytest.raises(AgentProtocolError, match=r"no reply within the 0.5 s step limit"):
        run_batch([RunItem(",.#", 1, 1)], SETTINGS, bot)
    with pytest.raises(ProcessLookupError):
        os.kill(pid, 0)


def test_errors_through_the_executor_and_bad_specs() -> None:
    with pytest.raises(TaskFailed, match="is not JSON"):
        run_agent_on_programs(agent("cmdbatch", "batch_agent.py", "garbage"), PROGRAMS[:2],
                              SETTINGS, SEEDS[:2])  # fmt: skip
    with pytest.raises(TaskFailed, match="cannot start"):
        run_agent_on_programs("cmdbatch:/no/such/program", PROGRAMS[:1], SETTINGS, [1])
    with pytest.raises(ValueError, match="cmdbatch: needs a command"):
        run_agent_on_programs("cmdbatch: ", PROGRAMS[:1], SETTINGS, [1])


def test_cmdbatch_bundle_verifies_with_traces(tmp_path: Path) -> None:
    from aiq_fixtures import small_benchmark

    from pipeline.lab.aiq.run import run_to_bundle, verify_dir

    bench = small_benchmark(tmp_path / "aiq-small", count=2000)
    run, _ = run_to_bundle(agent("cmdbatch", "batch_agent.py"), 100, 80, 5,
                           bench / "batched", traces=True)  # fmt: skip
    log = (bench / "batched" / "aiq.toml").read_text()
    assert 'agent_kind = "batch"' in log and "agent = \"cmdbatch:" in log
    result = verify_dir(bench / "batched")
    assert result.verified and result.replayed == len(run.rows), result.problems
