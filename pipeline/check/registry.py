"""Every registered integrity check: load the modules that register them, run them safely.

The contract (findings, contexts, the ``integrity_check`` decorator) is
:mod:`pipeline.tracks.review`; the checks themselves live in :mod:`pipeline.check.generic` and
in each track's ``integrity`` module. This module only knows where to look for them.
"""

from __future__ import annotations

import importlib
import importlib.util
from typing import Any

from pipeline.tracks import track_names
from pipeline.tracks.review import (
    _REGISTRY,
    CheckSpec,
    Finding,
    IntegrityContext,
    PullRequestContext,
)

GENERIC = "pipeline.check.generic"
"""The checks of every track."""


def modules() -> list[str]:
    """Modules that register checks: the generic one, then each track's ``integrity`` module.

    The tracks are discovered (:func:`pipeline.tracks.track_names`), so a new paper's checks
    are found without a line here.
    """
    found = [GENERIC]
    for name in track_names():
        mod = f"pipeline.tracks.{name}.integrity"
        if importlib.util.find_spec(mod) is not None:
            found.append(mod)
    return found


def all_checks() -> list[CheckSpec]:
    """Every registered check, generic ones first, then by track and name."""
    for mod in modules():
        importlib.import_module(mod)
    return sorted(_REGISTRY.values(), key=lambda c: (c.track or "", c.scope, c.name))


def _safe(spec: CheckSpec, ctx: Any, where: str) -> list[Finding]:
    try:
        return list(spec.fn(ctx))
    except Exception as exc:
        return [Finding("warning", spec.name, where, "-",
                        f"the {spec.name} check could not run on this input "
                        f"({type(exc).__name__}: {exc})",
                        "fix the validation problems first; if there are none, report a "
                        "gmeter bug with this message")]


def run_benchmark_checks(ctx: IntegrityContext) -> list[Finding]:
    """Run every check that applies to ``ctx.benchmark``'s track; return sorted findings."""
    out: list[Finding] = []
    for spec in all_checks():
        if spec.scope != "benchmark" or spec.track not in (None, ctx.benchmark.track):
            continue
        out += _safe(spec, ctx, ctx.benchmark.files.label)
    return sorted(set(out), key=Finding.sort_key)


def run_pull_request_checks(ctx: PullRequestContext) -> list[Finding]:
    """Run the pull-request-level checks; return sorted findings."""
    out: list[Finding] = []
    for spec in all_checks():
        if spec.scope == "pull-request":
            out += _safe(spec, ctx, "pull request")
    return sorted(set(out), key=Finding.sort_key)
