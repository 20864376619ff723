"""A complete agent for the batched protocol (``cmdbatch:``): the reference Freq agent, per run.

Usage: python batch_agent.py [good|garbage|sleep|crash|bad-action|short|trivial]

Protocol (one JSON object per line; see docs/aiq.md): a ``start`` message lists the runs of a
batch with their settings (no reply); each ``percepts`` message lists the runs still going with
their observation and reward, and is answered by ``{"actions": [...]}`` in the same order.
``trivial`` answers ``(observation + 1) mod n`` without learning (the benchmark's agent).
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from pipeline.metrics.aiq.agents import FreqAgent


def main() -> None:
    mode = sys.argv[1] if len(sys.argv) > 1 else "good"
    agents: dict[int, FreqAgent] = {}
    sizes: dict[int, int] = {}
    for line in sys.stdin:
        msg = json.loads(line)
        if msg["type"] == "start":  # a new batch: one fresh agent per run
            agents = {}
            for run in msg["runs"]:
                agent = FreqAgent(0.07)
                agent.reset(run)
                agents[run["run"]] = agent
                sizes[run["run"]] = run["num_actions"]
            continue
        if mode == "garbage":
            print("hello?", flush=True)
            continue
        if mode == "sleep":
            time.sleep(30)
        if mode == "crash":
            print("boom", file=sys.stderr, flush=True)
            sys.exit(3)
        runs, obs, rewards = msg["runs"], msg["observations"], msg["rewards"]
        if mode == "trivial":
            actions = [(o[0] + 1) % sizes[r] if o else 0 for r, o in zip(runs, obs, strict=True)]
        else:
            percepts = zip(runs, obs, rewards, strict=True)
            actions = [agents[r].act(tuple(o), x) for r, o, x in percepts]
        if mode == "bad-action":
            actions[-1] = 7
        if mode == "short":
            actions = actions[:-1]
        print(json.dumps({"actions": actions}), flush=True)


if __name__ == "__main__":
    main()
