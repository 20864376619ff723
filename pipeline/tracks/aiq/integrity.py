"""Integrity checks of AIQ run logs (``aiq.toml`` + ``samples.csv`` [+ traces]).

The replay check uses the AIQ track's own verification (the same function behind
``gmeter aiq verify``), imported lazily so that the check works on installs where the engine
is still missing (it then says so instead of passing silently).
"""

from __future__ import annotations

import importlib
from collections.abc import Iterator, Mapping
from typing import Any

from pipeline.inputs import BundleInput
from pipeline.tracks.review import Finding, IntegrityContext, flat, integrity_check, read_toml

LOG = "aiq.toml"
SEED_KEYS = ("seed", "run.seed", "settings.seed", "sampler.seed")


def _log(bundle: BundleInput) -> dict[str, Any]:
    return flat(read_toml(bundle.files, LOG) or {})


def _seed(log: Mapping[str, Any]) -> Any:
    for key in SEED_KEYS:
        if key in log:
            return log[key]
    return None


def _verify_function() -> Any:
    """Return the AIQ engine's public bundle verification, or ``None`` if not landed."""
    for module, name in (("pipeline.tracks.aiq.verify", "verify_bundle"),):
        try:
            fn = getattr(importlib.import_module(module), name, None)
        except ImportError:
            continue
        if callable(fn):
            return fn
    return None


@integrity_check(
    "aiq-replay",
    track="aiq",
    title="Logged rewards that replay differently",
    description="Every traced run is replayed through the BF reference machine with its "
    "logged program, seed and actions (the check behind `gmeter aiq verify`); a reward that "
    "differs from the log is an error — the log was edited or produced by another machine. "
    "A bundle without traces cannot be replayed and is shown as reported, not verified.",
)
def aiq_replay(ctx: IntegrityContext) -> Iterator[Finding]:
    """Replay verification of traced bundles."""
    fn = _verify_function()
    scored = {r.get("bundle"): r.get("details") or {} for r in ctx.scores
              if r.get("metric") == "aiq"}
    for t in ctx.targets:
        d = scored.get(t.id, {})
        if d.get("status") == "verified" and d.get("replayed_runs") == d.get("runs"):
            continue  # the scorer replayed every run with the same code: nothing to add
        if fn is None:
            yield Finding(
                "info", "aiq-replay", ctx.where(t), "-",
                "this gmeter has no AIQ replay verification yet; the rewards were not replayed",
                "nothing to do: a maintainer reruns the check on a newer gmeter",
            )
            continue
        result = fn(t, ctx.benchmark)
        yield from _replay_findings(ctx, t, result)
        if getattr(result, "has_traces", True) is False:
            yield Finding(
                "info", "aiq-replay", ctx.where(t), "traces",
                "no action traces: the rewards cannot be replayed, so the entry is shown as "
                "reported, not verified",
                "rerun with `gmeter aiq run --traces` to be verified",
            )


def _replay_findings(ctx: IntegrityContext, t: BundleInput, result: Any) -> Iterator[Finding]:
    """Turn the engine's verification result into findings (problems pass through)."""
    problems = getattr(result, "problems", result)
    for p in problems or []:
        sev = getattr(p, "severity", "error")
        yield Finding(
            "error" if sev == "error" else "warning", "aiq-replay",
            getattr(p, "file", ctx.where(t)), getattr(p, "field", "-"),
            getattr(p, "message", str(p)),
            getattr(p, "fix", "") or "regenerate the log with `gmeter aiq run --traces`; "
            "never edit samples.csv by hand",
        )


@integrity_check(
    "aiq-seed",
    track="aiq",
    title="A seed reused from another submission",
    description="The root seed in aiq.toml equals another bundle's and so does the agent. "
    "Runs are deterministic given agent, seed and program sample, so this repeats that run "
    "rather than measuring anew. (Different agents sharing a seed is the design: common "
    "random numbers make their comparison paired; that is not flagged.)",
)
def aiq_seed(ctx: IntegrityContext) -> Iterator[Finding]:
    """Find (agent, seed) pairs shared with other bundles."""
    runs: dict[tuple[str, str], str] = {}
    for p in ctx.peers:
        log = _log(p)
        s = _seed(log)
        if s is not None:
            runs.setdefault((str(log.get("agent", "")), repr(s)), p.id)
    for t in ctx.targets:
        log = _log(t)
        s = _seed(log)
        key = (str(log.get("agent", "")), repr(s))
        if s is not None and key in runs:
            yield Finding(
                "warning", "aiq-seed", ctx.where(t, LOG), "seed",
                f"agent {key[0]!r} with seed {s!r} was already run in bundle {runs[key]!r}",
                "run with a fresh seed for an independent measurement (`gmeter aiq run "
                "--seed`), or update that bundle instead",
            )


@integrity_check(
    "aiq-claimed",
    track="aiq",
    title="A logged AIQ that the runs do not give",
    description="aiq.toml records the AIQ its run computed ([result] aiq). gmeter recomputes "
    "the AIQ from samples.csv; if the two differ, the summary was edited (or the runs were): "
    "the leaderboard shows the recomputed value, and the bundle is rejected until they agree.",
)
def aiq_claimed(ctx: IntegrityContext) -> Iterator[Finding]:
    """Compare the logged AIQ with the one recomputed from the runs."""
    targets = {t.id: t for t in ctx.targets}
    for row in ctx.scores:
        t = targets.get(row.get("bundle", ""))
        details = row.get("details") or {}
        logged = details.get("logged_aiq")
        value = row.get("value")
        if t is None or row.get("metric") != "aiq" or not isinstance(logged, int | float) \
                or not isinstance(value, int | float):
            continue
        if abs(float(logged) - float(value)) > 1e-9 * max(1.0, abs(float(value))):
            yield Finding(
                "error", "aiq-claimed", ctx.where(t, LOG), "result.aiq",
                f"the log claims AIQ {float(logged):g}; the runs in samples.csv give "
                f"{float(value):g}",
                "regenerate the bundle with `gmeter aiq run`; never edit aiq.toml or "
                "samples.csv by hand",
            )
