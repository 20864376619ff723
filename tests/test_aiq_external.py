"""External AIQ agents: module:Class and the JSON-lines protocol (spec issue item 5)."""

from __future__ import annotations

import shlex
import sys
from pathlib import Path

import pytest

from pipeline.errors import AgentProtocolError
from pipeline.executor import TaskFailed
from pipeline.lab.aiq.external import close_external_agents
from pipeline.lab.aiq.runner import run_agent_on_programs
from pipeline.metrics.aiq.bf import BFConfig
from pipeline.metrics.aiq.runs import AIQSettings

FIXTURE = Path(__file__).parent / "aiq_fixtures" / "json_agent.py"
PROGRAMS = [",.#", ",>,<.>.#", "%.,.#", ",+.#"]
SEEDS = [11, 12, 13, 14]
SETTINGS = AIQSettings(BFConfig(), 60)


def cmd(mode: str = "good") -> str:
    return "cmd:" + shlex.join([sys.executable, str(FIXTURE), mode])


@pytest.fixture(autouse=True)
def _cleanup():
    yield
    close_external_agents()


def _scores(agent: str, **kw) -> list:
    res = run_agent_on_programs(agent, PROGRAMS, SETTINGS, SEEDS, [1, -1, 1, -1], record=True, **kw)
    return [(r.score, r.steps, r.actions) for r in res]


def test_python_class_agent_equals_the_compiled_reference() -> None:
    # FreqAgent() defaults to epsilon 0.07: exactly the compiled "freq,epsilon=0.07"
    assert _scores("pipeline.metrics.aiq.agents:FreqAgent") == _scores("freq,epsilon=0.07")


def test_json_lines_agent_equals_the_compiled_reference() -> None:
    assert _scores(cmd()) == _scores("freq,epsilon=0.07")
    assert _scores(cmd("dict")) == _scores("freq,epsilon=0.07")


@pytest.mark.parametrize(
    ("mode", "message"),
    [
        ("garbage", "is not JSON"),
        ("crash", "exited"),
        ("bad-action", "not an action"),
    ],
)
def test_protocol_errors_are_clear(mode: str, message: str) -> None:
    # the executor names the work item and keeps the agent's error as the cause
    with pytest.raises(TaskFailed, match=message) as info:
        run_agent_on_programs(cmd(mode), PROGRAMS[:1], SETTINGS, [1])
    assert isinstance(info.value.original, AgentProtocolError)
    assert "cycle 1" in str(info.value) and "RunItem(program=',.#'" in str(info.value)
    if mode == "crash":
        assert "boom" in str(info.value)  # stderr tail is shown


def test_step_time_limit() -> None:
    from pipeline.lab.aiq.runner import execute_run
    from pipeline.metrics.aiq.runs import RunItem

    with pytest.raises(AgentProtocolError, match="step limit"):
        execute_run(
            RunItem(",.#", 1, 1),
            agent=cmd("sleep"),
            settings=SETTINGS,
            record=False,
            step_timeout=0.5,
        )


def test_bad_python_agents() -> None:
    with pytest.raises(TaskFailed, match="cannot import"):
        run_agent_on_programs("no_such_module_xyz:Agent", PROGRAMS[:1], SETTINGS, [1])
    with pytest.raises(TaskFailed, match="no class"):
        run_agent_on_programs("pipeline.metrics.aiq.agents:Nope", PROGRAMS[:1], SETTINGS, [1])
    with pytest.raises(TaskFailed, match="no method"):
        run_agent_on_programs("pipeline.metrics.aiq.bf:BFConfig", PROGRAMS[:1], SETTINGS, [1])
    with pytest.raises(TaskFailed, match="cannot start"):
        run_agent_on_programs("cmd:/no/such/program", PROGRAMS[:1], SETTINGS, [1])
