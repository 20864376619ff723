"""A JSON-lines AIQ agent for the tests: the reference Freq agent, or a misbehaving one.

Usage: python json_agent.py [good|garbage|sleep|crash|bad-action|dict|trivial]

``trivial`` answers ``(observation + 1) mod n`` without learning (the benchmark's agent, the
step-protocol twin of ``batch_agent.py trivial``).
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
    agent = FreqAgent(0.07)
    for line in sys.stdin:
        msg = json.loads(line)
        if msg["type"] == "start":
            agent.reset(msg)
            n = msg["num_actions"]
            continue
        if mode == "trivial":
            o = msg["observation"]
            print((o[0] + 1) % n if o else 0, flush=True)
            continue
        if mode == "garbage":
            print("hello?", flush=True)
            continue
        if mode == "sleep":
            time.sleep(30)
        if mode == "crash":
            print("boom", file=sys.stderr, flush=True)
            sys.exit(3)
        if mode == "bad-action":
            print(7, flush=True)
            continue
        a = agent.act(tuple(msg["observation"]), msg["reward"])
        print(json.dumps({"action": a}) if mode == "dict" else a, flush=True)


if __name__ == "__main__":
    main()
