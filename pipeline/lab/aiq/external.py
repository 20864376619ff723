"""External AIQ agents: a Python class (``module:Class``) or any program speaking JSON lines.

**Python protocol.** ``module:Class`` names a class with a no-argument constructor and two
methods; a fresh instance is made for every run::

    class MyAgent:
        def reset(self, settings: dict) -> None: ...        # start of a run
        def act(self, observation: tuple[int, ...], reward: float) -> int: ...

``settings`` holds ``num_actions``, ``num_symbols``, ``num_obs``, ``obs_cells``,
``episode_length``, ``discount``, ``seed`` (for the agent's own randomness) and ``params``
(the ``,key=value`` pairs of the spec). ``act`` is called ``episode_length`` times; the first
call gets the initial percept (reward 0, blank observation); it returns an action in
``0 … num_actions-1``.

**JSON-lines protocol** (``cmd:PROGRAM ARGS``). gmeter starts the program once per worker and
writes one JSON object per line to its stdin; the program answers each percept with one line
on stdout::

    → {"type": "start", "num_actions": 5, ..., "seed": 123, "params": {}}   (no reply)
    → {"type": "percept", "observation": [2], "reward": 0.0}
    ← 3                      (or {"action": 3})
    ...                      (a new "start" begins the next run; stdin closes at the end)

A reply must arrive within the per-step time limit. A reply that is not an action, a missing
reply, a crash or a timeout stops the test with :class:`~pipeline.errors.AgentProtocolError`
naming the agent, the cycle and what was received. stderr is kept and its last lines are shown.
"""

from __future__ import annotations

import atexit
import importlib
import json
import os
import selectors
import shlex
import subprocess
import tempfile
import time
from collections.abc import Callable, Mapping, Sequence
from typing import IO, Any

from pipeline.errors import AgentProtocolError
from pipeline.metrics.aiq.agent_specs import AgentSpec

DEFAULT_STEP_TIMEOUT = 10.0
_MAX_LINE = 1 << 16


def import_agent_module(module_name: str) -> Any:
    """Import a user's agent module, with the working folder on the path (as ``python -m``).

    Raises
    ------
    AgentProtocolError
        Any import failure, reported plainly (it is the agent's, not gmeter's).
    """
    import sys

    cwd = os.getcwd()
    if cwd not in sys.path and "" not in sys.path:
        sys.path.append(cwd)
    try:
        return importlib.import_module(module_name)
    except Exception as exc:  # any import failure is the agent's, reported plainly
        raise AgentProtocolError(
            f"cannot import agent module {module_name!r}: {exc}",
            hint="check the module is on PYTHONPATH (run gmeter from its folder)",
        ) from exc


def load_python_agent(target: str) -> type:
    """Import ``module:Class``; raise AgentProtocolError if it cannot be used."""
    module_name, _, class_name = target.partition(":")
    module = import_agent_module(module_name)
    cls = getattr(module, class_name, None)
    if not isinstance(cls, type):
        raise AgentProtocolError(f"{module_name!r} has no class {class_name!r}")
    for method in ("reset", "act"):
        if not callable(getattr(cls, method, None)):
            raise AgentProtocolError(
                f"agent class {target} has no method {method}()",
                hint="implement reset(settings) and act(observation, reward) -> int",
            )
    return cls


class PythonAgent:
    """Wraps a user class: checks each returned action."""

    def __init__(self, target: str) -> None:
        self.target = target
        self.inner = load_python_agent(target)()
        self.cycle = 0
        self.n = 0

    def reset(self, settings: Mapping[str, Any]) -> None:
        """Start a run."""
        self.n = int(settings["num_actions"])
        self.cycle = 0
        self.inner.reset(dict(settings))

    def act(self, observation: Sequence[int], reward: float) -> int:
        """Return the agent's action, validated."""
        a = self.inner.act(tuple(observation), reward)
        self.cycle += 1
        return _check_action(a, self.n, f"agent {self.target}", self.cycle, a)


def _check_action(a: Any, n: int, who: str, cycle: int, got: Any) -> int:
    if isinstance(a, bool) or not isinstance(a, int) or not 0 <= a < n:
        try:
            import numpy as np

            if isinstance(a, np.integer) and 0 <= int(a) < n:
                return int(a)
        except ImportError:  # pragma: no cover
            pass
        raise AgentProtocolError(
            f"{who} returned {got!r} at cycle {cycle}, not an action in 0..{n - 1}",
            hint="return a whole number between 0 and num_actions - 1",
        )
    return a


class CommandAgent:
    """A program speaking the JSON-lines protocol, started once and reused across runs."""

    def __init__(self, command: str, step_timeout: float = DEFAULT_STEP_TIMEOUT) -> None:
        self.command = command
        self.argv = shlex.split(command)
        self.step_timeout = step_timeout
        self.proc: subprocess.Popen[bytes] | None = None
        self.stderr: IO[bytes] | None = None
        self.buf = b""
        self.cycle = 0
        self.n = 0
        self.max_line = _MAX_LINE

    # ------------------------------------------------------------------ process
    def _start(self) -> None:
        self.stderr = tempfile.TemporaryFile()
        try:
            self.proc = subprocess.Popen(
                self.argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self.stderr,
                bufsize=0,
            )  # fmt: skip
        except OSError as exc:
            self.stderr.close()
            self.stderr = None
            raise AgentProtocolError(
                f"cannot start agent command {self.command!r}: {exc.strerror or exc}",
                hint="check the program exists and is executable",
            ) from exc
        self.buf = b""

    def _stderr_tail(self) -> str:
        if self.stderr is None:
            return ""
        self.stderr.seek(0, os.SEEK_END)
        size = self.stderr.tell()
        self.stderr.seek(max(0, size - 2000))
        tail = self.stderr.read().decode("utf-8", "replace").strip().splitlines()[-5:]
        return ("; stderr: " + " | ".join(tail)) if tail else ""

    def _fail(self, what: str) -> AgentProtocolError:
        where = f"agent cmd:{self.command} at cycle {self.cycle}"
        exc = AgentProtocolError(
            f"{where}: {what}{self._stderr_tail()}",
            hint="the agent must answer every percept with one line holding an action",
        )
        self.close()
        return exc

    def _send(self, obj: Mapping[str, Any]) -> None:
        assert self.proc is not None and self.proc.stdin is not None
        try:
            self.proc.stdin.write((json.dumps(obj) + "\n").encode())
            self.proc.stdin.flush()
        except (BrokenPipeError, OSError):
            code = self.proc.poll()
            raise self._fail(f"the program exited (code {code}) before reading input") from None

    def _recv(self) -> bytes:
        assert self.proc is not None and self.proc.stdout is not None
        deadline = time.monotonic() + self.step_timeout
        fd = self.proc.stdout.fileno()
        with selectors.DefaultSelector() as sel:
            sel.register(fd, selectors.EVENT_READ)
            while b"\n" not in self.buf:
                left = deadline - time.monotonic()
                if left <= 0 or not sel.select(left):
                    raise self._fail(f"no reply within the {self.step_timeout:g} s step limit")
                chunk = os.read(fd, 65536)
                if not chunk:
                    code = self.proc.wait(timeout=5)
                    raise self._fail(f"the program exited (code {code}) without replying")
                self.buf += chunk
                if len(self.buf) > self.max_line:
                    raise self._fail(f"reply line longer than {self.max_line // 1024} KiB")
        line, _, self.buf = self.buf.partition(b"\n")
        return line

    def close(self) -> None:
        """Close stdin, give the program a moment to exit, then kill it."""
        proc, self.proc = self.proc, None
        if proc is None:
            return
        try:
            if proc.stdin:
                proc.stdin.close()
            proc.wait(timeout=2)
        except (OSError, subprocess.TimeoutExpired):
            proc.kill()
            proc.wait()
        if proc.stdout:
            proc.stdout.close()
        if self.stderr is not None:
            self.stderr.close()
            self.stderr = None

    # ------------------------------------------------------------------ protocol
    def reset(self, settings: Mapping[str, Any]) -> None:
        """Send ``start`` (starting the program on first use)."""
        if self.proc is None or self.proc.poll() is not None:
            self._start()
        self.n = int(settings["num_actions"])
        self.cycle = 0
        self._send({"type": "start", **settings})

    def act(self, observation: Sequence[int], reward: float) -> int:
        """Send a percept, read the action."""
        self.cycle += 1
        self._send({"type": "percept", "observation": list(observation), "reward": reward})
        raw = self._recv()
        text = raw.decode("utf-8", "replace").strip()
        try:
            msg = json.loads(text)
        except ValueError:
            raise self._fail(f"reply {text[:80]!r} is not JSON") from None
        a = msg.get("action") if isinstance(msg, dict) else msg
        try:
            return _check_action(a, self.n, f"agent cmd:{self.command}", self.cycle, text[:80])
        except AgentProtocolError as exc:
            self.close()
            raise exc


_COMMANDS: dict[tuple[str, str, float], CommandAgent] = {}


def shared_process(key: tuple[str, str, float], make: Callable[[], CommandAgent]) -> CommandAgent:
    """Return this worker's agent process for ``key``, starting it with ``make`` on first use."""
    agent = _COMMANDS.get(key)
    if agent is None:
        agent = _COMMANDS[key] = make()
    return agent


def external_agent(spec: AgentSpec, step_timeout: float = DEFAULT_STEP_TIMEOUT) -> Any:
    """Return an agent object for a ``python`` or ``command`` spec.

    Python agents are fresh per call; a command agent is one process per worker, reused.
    (``gym:`` and ``cmdbatch:`` agents are made by :mod:`pipeline.lab.aiq.runner`.)
    """
    if spec.kind == "python":
        return PythonAgent(spec.target)
    if spec.kind == "command":
        return shared_process(("command", spec.target, step_timeout),
                              lambda: CommandAgent(spec.target, step_timeout))  # fmt: skip
    raise ValueError(f"{spec.kind} is not an external agent")


@atexit.register
def close_external_agents() -> None:
    """Stop every command agent of this process."""
    for agent in list(_COMMANDS.values()):
        agent.close()
    _COMMANDS.clear()


def _register_worker_cleanup() -> None:
    # worker processes of a pool leave through os._exit (no atexit): use multiprocessing's hook
    from multiprocessing import util

    util.Finalize(None, close_external_agents, exitpriority=10)


_register_worker_cleanup()
