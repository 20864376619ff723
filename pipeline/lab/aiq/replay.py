"""``gmeter aiq replay``: one program and an action sequence through the BF reference machine.

The single-run and the batch forms share :func:`replay_case`. Output keys are fixed:
``rewards`` (floats), ``observations`` (one list of observation cells per cycle), ``outputs``
(the whole output tape after each cycle), ``steps`` (instructions executed per cycle) and
``failure`` (``null`` or ``{"cycle": k}``, the 0-based index of the first cycle that reached
the step limit; the run stops after it, so it is the last cycle listed).
"""

from __future__ import annotations

import json
import sys
from collections.abc import Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

from pipeline.errors import UsageError
from pipeline.metrics.aiq.bf import BFConfig, BFProgramError, ReplayResult, replay

CONFIG_KEYS = (
    "num_symbols",
    "obs_cells",
    "reverse_output",
    "work_tape_len",
    "input_tape_len",
    "max_steps",
    "seed",
)
#: Above this many cycles in one case the compiled kernel is used (same results, tested).
_FAST_FROM = 20_000


def parse_actions(text: str) -> list[int]:
    """Parse ``"0,1,2"`` (commas and/or spaces) into integers; raise UsageError if malformed."""
    parts = [p for p in text.replace(",", " ").split() if p]
    try:
        return [int(p) for p in parts]
    except ValueError as exc:
        raise UsageError(
            f"--actions {text!r} is not a list of whole numbers",
            hint="give actions like 0,1,2,4",
        ) from exc


def make_config(values: Mapping[str, Any]) -> tuple[BFConfig, int]:
    """Build a machine config (and the ``%`` seed) from a ``config`` mapping; defaults = BF(5).

    Raises
    ------
    ValueError
        On unknown keys, non-integers or values out of range.
    """
    unknown = sorted(set(values) - set(CONFIG_KEYS))
    if unknown:
        raise ValueError(f"unknown config keys {unknown}; known: {', '.join(CONFIG_KEYS)}")
    ints: dict[str, int] = {}
    for key in CONFIG_KEYS:
        if key not in values or key == "reverse_output":
            continue
        v = values[key]
        if isinstance(v, float) and v.is_integer():
            v = int(v)  # the original parses its machine parameters as floats
        if isinstance(v, bool) or not isinstance(v, int):
            raise ValueError(f"config.{key} must be a whole number, got {v!r}")
        ints[key] = v
    rev = values.get("reverse_output", False)
    if rev not in (True, False, 0, 1):
        raise ValueError(f"config.reverse_output must be true/false or 0/1, got {rev!r}")
    seed = ints.pop("seed", 0)
    return BFConfig(reverse_output=bool(rev), **ints), seed


def run_replay(
    program: str, actions: Sequence[int], config: BFConfig, seed: int = 0
) -> ReplayResult:
    """Replay with the plain reference machine, or the compiled twin for long runs."""
    for i, a in enumerate(actions):
        if not 0 <= a < config.num_symbols:
            raise ValueError(f"action {a} (cycle {i}) is not in 0..{config.num_symbols - 1}")
    if len(actions) >= _FAST_FROM:
        from pipeline.metrics.aiq.bf_fast import replay_fast

        return replay_fast(program, list(actions), config, seed)
    return replay(program, actions, config, seed)


def replay_case(case: Mapping[str, Any]) -> dict[str, Any]:
    """Replay one batch case ``{"id", "program", "actions", "config"}``.

    Returns the output object with ``id`` first; a malformed case gives ``{"id", "error"}``.
    """
    case_id = case.get("id")
    try:
        program = case.get("program")
        if not isinstance(program, str):
            raise ValueError("program must be a string")
        raw = case.get("actions", [])
        if isinstance(raw, str):
            actions = parse_actions(raw)
        elif isinstance(raw, list) and all(
            isinstance(a, int) and not isinstance(a, bool) for a in raw
        ):
            actions = list(raw)
        else:
            raise ValueError("actions must be a list of whole numbers")
        cfg = case.get("config") or {}
        if not isinstance(cfg, Mapping):
            raise ValueError("config must be an object")
        config, seed = make_config(cfg)
        result = run_replay(program, actions, config, seed)
    except (ValueError, BFProgramError, UsageError) as exc:
        return {"id": case_id, "error": str(exc)}
    return {"id": case_id, **result.to_json()}


def replay_batch(lines: Iterable[str]) -> Iterator[dict[str, Any]]:
    """Replay every non-blank JSON line; yield one output object per line, in order."""
    for lineno, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            case = json.loads(line)
        except json.JSONDecodeError as exc:
            yield {"id": None, "error": f"line {lineno}: not JSON ({exc})"}
            continue
        if not isinstance(case, dict):
            yield {"id": None, "error": f"line {lineno}: not a JSON object"}
            continue
        yield replay_case(case)


def replay_batch_file(path: Path) -> Iterator[dict[str, Any]]:
    """:func:`replay_batch` over a JSON-lines file (``-``: standard input), one output per line."""
    if str(path) == "-":
        yield from replay_batch(sys.stdin)
        return
    if not path.is_file():
        raise UsageError(f"{path}: no such file", hint="give a JSON-lines file of cases")
    with path.open(encoding="utf-8") as fh:
        yield from replay_batch(fh)


def format_table(program: str, actions: Sequence[int], result: ReplayResult) -> list[str]:
    """Human-readable lines: one per cycle, then the failure if any."""
    lines = [f"program {program}", "cycle  action  reward  observation  output  steps"]
    for k, (r, o, out, s) in enumerate(
        zip(result.rewards, result.observations, result.outputs, result.steps, strict=True)
    ):
        obs = " ".join(map(str, o))
        tape = " ".join(map(str, out))
        lines.append(f"{k:5d}  {actions[k]:6d}  {r:6g}  {obs:>11}  {tape:>6}  {s:5d}")
    if result.failure is not None:
        lines.append(f"failure: cycle {result.failure} reached the step limit")
    return lines
