"""The batched external-agent protocol (``cmdbatch:PROGRAM ARGS``): many runs per message.

One round trip per cycle is what limits the step protocol (``cmd:``) to ~16 000 cycles/s; here
one round trip serves every run of a batch, and the machines of the batch step together in one
compiled call (:class:`~pipeline.metrics.aiq.bf_fast.MachineBank`). Messages, one JSON object
per line::

    → {"type": "start", "runs": [{"run": 0, "num_actions": 5, "num_symbols": 5, "num_obs": 5,
       "obs_cells": 1, "episode_length": 1000, "discount": 1.0, "seed": 123, "params": {}},
       ...]}                                                          (no reply)
    → {"type": "percepts", "runs": [0, 1, ...], "observations": [[2], [4], ...],
       "rewards": [0.0, 50.0, ...]}
    ← {"actions": [3, 1, ...]}                                        (same order as "runs")
    ...  (a new "start" begins the next batch; stdin closes at the end)

``run`` numbers index the runs of the current batch (0-based); a ``percepts`` message lists
the runs still going (a run that reaches the step limit drops out) and is sent
``episode_length`` times per batch. Every run's percepts, actions, rewards and score are
exactly those of the step protocol, so a deterministic agent gives identical samples through
``cmd:`` and ``cmdbatch:``.

Errors (bad JSON, wrong number of actions, an action out of range, a crash, no reply within
the time limit — per batched message) raise :class:`~pipeline.errors.AgentProtocolError`
naming the agent, the batch, the run (with its program, sign and seed) and the cycle, with the
last lines of the agent's stderr; the agent process is then stopped and reaped.
"""

from __future__ import annotations

import json
import os
import selectors
import time
from collections.abc import Mapping, Sequence
from typing import Any, Protocol

import numpy as np

from pipeline.errors import AgentProtocolError
from pipeline.lab.aiq.external import DEFAULT_STEP_TIMEOUT, CommandAgent
from pipeline.metrics.aiq.bf_fast import MachineBank
from pipeline.metrics.aiq.runs import AIQSettings, RunItem, RunResult, agent_seed, encode_actions

#: Most runs in one batch (one ``start`` message); larger work is split into several batches.
MAX_BATCH = 4096


class BatchCommandAgent(CommandAgent):
    """A program speaking the batched protocol, started once per worker and reused."""

    def __init__(self, command: str, step_timeout: float = DEFAULT_STEP_TIMEOUT) -> None:
        super().__init__(command, step_timeout)
        self.batch = 0
        self.items: Sequence[RunItem] = ()
        self.max_line = 1 << 20

    def _where(self, run: int | None = None) -> str:
        where = f"agent cmdbatch:{self.command}, batch {self.batch}, cycle {self.cycle}"
        if run is not None and 0 <= run < len(self.items):
            it = self.items[run]
            where += f", run {run} (program {it.program!r}, sign {it.sign:+d}, seed {it.seed})"
        return where

    def _fail(self, what: str, run: int | None = None) -> AgentProtocolError:  # type: ignore[override]
        exc = AgentProtocolError(
            f"{self._where(run)}: {what}{self._stderr_tail()}",
            hint='answer every "percepts" line with one line {"actions": [...]} holding one '
            "action per listed run, in the same order (see docs/aiq.md)",
        )
        self.close()
        return exc

    def _send(self, obj: Mapping[str, Any]) -> None:
        """Write one line without blocking past the time limit (big batches fill the pipe)."""
        assert self.proc is not None and self.proc.stdin is not None
        data = (json.dumps(obj) + "\n").encode()
        fd = self.proc.stdin.fileno()
        deadline = time.monotonic() + self.step_timeout
        os.set_blocking(fd, False)
        try:
            with selectors.DefaultSelector() as sel:
                sel.register(fd, selectors.EVENT_WRITE)
                view = memoryview(data)
                while view:
                    left = deadline - time.monotonic()
                    if left <= 0 or not sel.select(left):
                        raise self._fail(
                            f"did not read its input within the {self.step_timeout:g} s limit"
                        )
                    try:
                        view = view[os.write(fd, view) :]
                    except BlockingIOError:
                        continue
        except (BrokenPipeError, OSError) as exc:
            if isinstance(exc, AgentProtocolError):
                raise
            code = self.proc.poll() if self.proc is not None else None
            raise self._fail(f"the program exited (code {code}) before reading input") from None
        finally:
            if self.proc is not None and self.proc.stdin is not None:
                try:
                    os.set_blocking(fd, True)
                except OSError:
                    pass

    def start_batch(self, items: Sequence[RunItem], runs: list[dict[str, Any]]) -> None:
        """Send ``start`` for a new batch (starting the program on first use)."""
        if self.proc is None or self.proc.poll() is not None:
            self._start()
        self.batch += 1
        self.cycle = 0
        self.items = items
        self._send({"type": "start", "runs": runs})

    def exchange(
        self, runs: np.ndarray, observations: np.ndarray, rewards: np.ndarray, n: int
    ) -> np.ndarray:
        """Send one ``percepts`` message; return the validated actions (int array)."""
        self.cycle += 1
        self._send({
            "type": "percepts",
            "runs": runs.tolist(),
            "observations": observations.tolist(),
            "rewards": rewards.tolist(),
        })  # fmt: skip
        text = self._recv().decode("utf-8", "replace").strip()
        try:
            msg = json.loads(text)
        except ValueError:
            raise self._fail(f"reply {text[:80]!r} is not JSON") from None
        acts = msg.get("actions") if isinstance(msg, dict) else None
        if not isinstance(acts, list):
            raise self._fail(f'reply {text[:80]!r} is not an object {{"actions": [...]}}')
        if len(acts) != len(runs):
            raise self._fail(
                f"replied {len(acts)} actions for {len(runs)} runs "
                f"(runs {runs[:8].tolist()}{' ...' if len(runs) > 8 else ''})"
            )
        for k, a in enumerate(acts):
            if isinstance(a, bool) or not isinstance(a, int) or not 0 <= a < n:
                raise self._fail(
                    f"action {a!r} (position {k}) is not an action in 0..{n - 1}", int(runs[k])
                )
        return np.asarray(acts, np.int64)


class BatchAgent(Protocol):
    """What :func:`run_batch` needs of an agent: a program (cmdbatch:) or a vec: policy."""

    def start_batch(self, items: Sequence[RunItem], runs: list[dict[str, Any]]) -> None:
        """Begin a batch of runs."""

    def exchange(
        self, runs: np.ndarray, observations: np.ndarray, rewards: np.ndarray, n: int
    ) -> np.ndarray:
        """Percepts of the active runs in, their actions out."""

    def close(self) -> None:
        """Stop (after an error or an interrupt)."""


def run_batch(
    items: Sequence[RunItem],
    settings: AIQSettings,
    agent: BatchAgent,
    *,
    record: bool = False,
    params: Mapping[str, float | str] | None = None,
) -> list[RunResult]:
    r"""Run every item through one batched agent; the results of :func:`run_episode_py`, exactly.

    The score of run :math:`j` accumulates :math:`d^{i-1}\sigma_j r_{ij}` cycle by cycle in
    the same floating-point order as the step protocol, so scores agree bit for bit.
    """
    c = settings.machine
    size = len(items)
    length = settings.episode_length
    if size == 0:
        return []
    try:
        bank = MachineBank([it.program for it in items], c, [it.seed for it in items])
        settings_of = {
            "num_actions": c.num_symbols,
            "num_symbols": c.num_symbols,
            "num_obs": c.num_obs,
            "obs_cells": c.obs_cells,
            "episode_length": length,
            "discount": settings.discount,
            "params": dict(params or {}),
        }
        agent.start_batch(items, [
            {"run": k, **settings_of, "seed": agent_seed(it.seed)} for k, it in enumerate(items)
        ])  # fmt: skip
        rflip = np.array([float(it.sign) for it in items])
        reward = np.zeros(size)
        obs = np.full((size, c.obs_cells), c.blank, np.int64)
        total = np.zeros(size)
        steps_total = np.zeros(size, np.int64)
        fail_cycle = np.zeros(size, np.int64)
        trace = np.zeros((size, length), np.int64) if record else None
        active = np.arange(size, dtype=np.int64)
        disc = 1.0
        for i in range(length):
            acts = agent.exchange(active, obs[active], rflip[active] * reward[active],
                                  c.num_symbols)  # fmt: skip
            if trace is not None:
                trace[active, i] = acts
            # one compiled call steps the machines and writes their percepts in place
            steps = bank.step_percepts(active, acts, reward, obs)
            steps_total[active] += steps
            failed = steps >= c.max_steps
            if failed.any():
                fail_cycle[active[failed]] = i + 1
                active = active[~failed]
                if active.size == 0:
                    break
            total[active] += disc * rflip[active] * reward[active]
            disc *= settings.discount
    except BaseException:
        agent.close()  # never leave the agent running after an error or an interrupt
        raise
    d = settings.discount
    norm = length if d == 1.0 else (1.0 - d ** (length + 1)) / (1.0 - d)
    out: list[RunResult] = []
    for j in range(size):
        done = int(fail_cycle[j])
        cycles = done if done else length
        acts_text = ""
        if trace is not None:
            acts_text = encode_actions(trace[j, :cycles].tolist(), c.num_symbols)
        if done:
            out.append(RunResult(float("nan"), int(steps_total[j]), done, True, acts_text))
        else:
            out.append(RunResult(float(total[j] / norm), int(steps_total[j]), length, False,
                                 acts_text))  # fmt: skip
    return out
