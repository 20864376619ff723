"""Integrity checks of AIQ run logs (``aiq.toml`` + ``samples.csv`` [+ traces]).

The replay check uses the AIQ track's own verification (the same function behind
``gmeter aiq verify``), imported lazily so that the check works on installs where the engine
is still missing (it then says so instead of passing silently).
"""

from __future__ import annotations

import importlib
from collections.abc import Iterator, Mapping
from typing import Any

from pipeline.integrity import Finding, IntegrityContext, integrity_check
from pipeline.integrity._common import flat, listing, read_toml
from pipeline.tracks.base import BundleInput

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
    for module, name in (("pipeline.aiq_verify", "verify_bundle"),
                         ("pipeline.tracks.aiq", "verify_bundle")):
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
    for t in ctx.targets:
        if fn is None:
            yield Finding(
                "info", "aiq-replay", ctx.where(t), "-",
                "this gmeter has no AIQ replay verification yet; the rewards were not replayed",
                "nothing to do: a maintainer reruns the check on a newer gmeter",
            )
            continue
        yield from _replay_findings(ctx, t, fn(t, ctx.benchmark))


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
    "aiq-settings",
    track="aiq",
    title="Run settings that differ from the benchmark's",
    description="Settings recorded in the bundle's aiq.toml (reference machine, episode "
    "length, discount, sample size …) that contradict the same setting in the benchmark's "
    "[aiq] section. AIQ values measured under other settings are not comparable.",
)
def aiq_settings(ctx: IntegrityContext) -> Iterator[Finding]:
    """Find settings present in both the benchmark and the log with different values."""
    bench = flat(dict(ctx.benchmark.settings))
    for t in ctx.targets:
        log = _log(t)
        short = {k.rsplit(".", 1)[-1]: v for k, v in log.items()}
        diff = []
        for key, want in sorted(bench.items()):
            leaf = key.rsplit(".", 1)[-1]
            have = log.get(key, short.get(leaf))
            if have is not None and want is not None and leaf not in ("seed", "samples") \
                    and have != want:
                diff.append(f"{leaf} = {have!r} (benchmark: {want!r})")
        if diff:
            yield Finding(
                "error", "aiq-settings", ctx.where(t, LOG), "settings",
                f"the run used other settings than the benchmark: {listing(diff, 4)}",
                "rerun with the benchmark's settings (`gmeter aiq run` reads them from "
                "benchmark.toml), or submit to a benchmark with these settings",
            )


@integrity_check(
    "aiq-seed",
    track="aiq",
    title="A seed reused from another submission",
    description="The root seed in aiq.toml equals another bundle's. With common random "
    "numbers the programs (and the environment's randomness) are then the same as that run's: "
    "fine for a paired comparison of two agents, but a copied run if the agent is the same. "
    "Flagged for the reviewer.",
)
def aiq_seed(ctx: IntegrityContext) -> Iterator[Finding]:
    """Root seeds shared with other bundles."""
    seeds: dict[str, str] = {}
    for p in ctx.peers:
        s = _seed(_log(p))
        if s is not None:
            seeds.setdefault(repr(s), p.id)
    for t in ctx.targets:
        s = _seed(_log(t))
        if s is not None and repr(s) in seeds:
            yield Finding(
                "warning", "aiq-seed", ctx.where(t, LOG), "seed",
                f"seed {s!r} is also the seed of bundle {seeds[repr(s)]!r}",
                "use a fresh seed for an independent run; if this is a deliberate paired run "
                "(common random numbers), say so in the description",
            )
