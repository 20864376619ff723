"""Integrity checks of g-index bundles: generated programs, reported divergences, compute.

The layout is the track's (:mod:`pipeline.tracks.gindex.track`): reference programs under
``reference/domains/<domain>/<task>.json``; a bundle's ``programs/<task>.json`` (verified) or
``divergences.csv`` (reported), ``curriculum.csv`` (``domain,num_samples``) and ``compute.csv``
(``tflops,seconds`` or ``compute`` in the benchmark's unit, optionally ``seconds``). What the
track's validation already rejects (non-positive compute, a declared total that disagrees
with the log, missing programs) is not repeated here.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Iterator
from typing import Any

from pipeline.inputs import BenchmarkInput, BundleInput, FileSet
from pipeline.tracks.review import (
    Finding,
    IntegrityContext,
    integrity_check,
    listing,
    read_csv,
    to_float,
)

PROGRAMS = "programs/"
COMPUTE = "compute.csv"
DIVERGENCES = "divergences.csv"
PEER_ORDERS = 3.0
"""A total compute this many orders of magnitude from the peers' median is flagged."""
MAX_TFLOPS = 1e7
"""No computer delivers 10 EFLOPS (1e7 TFLOPS); a rate above it is a unit mistake."""
MIN_SHARED_DIVERGENCES = 4
"""Fewest informative per-domain divergences shared with another bundle to call it copied."""


def programs(fs: FileSet) -> dict[str, bytes]:
    """Return task id → program bytes of ``programs/<task>.json``."""
    return {p[len(PROGRAMS):-5]: d for p, d in fs.files.items()
            if p.startswith(PROGRAMS) and p.endswith(".json") and "/" not in p[len(PROGRAMS):]}


def _nodes(data: bytes) -> list[Any] | None:
    """Return the node list of a program file, or ``None`` when it is not one."""
    from pipeline.limits import loads_bounded

    try:
        flow = loads_bounded(data.decode("utf-8"))
        if isinstance(flow, dict):
            flow = flow.get("flow")
        if isinstance(flow, str):
            flow = loads_bounded(flow)
    except (UnicodeDecodeError, ValueError):
        return None
    return flow if isinstance(flow, list) else None


def _shape(nodes: list[Any]) -> tuple[str, ...]:
    """Return a cheap invariant of a flow: its sorted node types."""
    return tuple(sorted(str(n.get("type")) for n in nodes if isinstance(n, dict)))


NODE_REF = "\x00node"
"""What :func:`_unlinked` writes for an attribute value that names a node of its own flow."""


def _unlinked(nodes: list[Any]) -> list[Any]:
    """The flow with every attribute value that names one of its node ids replaced.

    Configuration references (``bot``, ``botProduction``, ``z``, ``group`` …) hold node ids,
    so renumbering the ids of a copied program changes those values too; with each reference
    written as :data:`NODE_REF` a renumbered copy compares equal. Ids and wires are kept:
    Δ maps them.
    """
    ids = {n.get("id") for n in nodes if isinstance(n, dict)}
    ids = {i for i in ids if isinstance(i, str)}

    def sub(v: Any) -> Any:
        if isinstance(v, str):
            return NODE_REF if v in ids else v
        if isinstance(v, list):
            return [sub(x) for x in v]
        if isinstance(v, dict):
            return {k: sub(x) for k, x in v.items()}
        return v

    return [{k: (v if k in ("id", "wires", "type") else sub(v)) for k, v in n.items()}
            if isinstance(n, dict) else n for n in nodes]


TOO_LARGE = None
"""What :func:`same_program` returns for a pair too large for an exact Δ."""


def same_program(a: bytes, b: bytes) -> bool | None:
    """Whether flow ``a`` is a copy of flow ``b``: the same program, or ``b`` stripped.

    Two exact tests, either suffices:

    * Δ = 0 under the board's convention (:data:`~pipeline.tracks.gindex.settings.
      BOARD_CONVENTION`, ``paper``): the same program up to node ids, node order, coordinates
      and editor layout.
    * Δ(a, b) = 0 under the companion code's ``reference`` convention, ``a`` first: ``a`` has
      ``b``'s node types and every attribute ``a`` keeps equals ``b``'s — ``b`` with
      attributes (or wires) stripped, which that convention scores as a perfect answer (a
      node with no compared key weighs 1; issue 20, item 4a).
    * Either of the above once ``a`` is :func:`_restricted` to the attributes ``b``'s nodes
      of each type have: ``b`` padded with attributes of its own.

    Both compare the flows with their references to their own nodes unlinked
    (:func:`_unlinked`), so renumbered configuration nodes hide nothing.

    Flows whose sorted node types differ cannot be either; empty programs (``[]``: nothing
    generated) are never a copy. A pair too large for an exact Δ
    (:class:`~pipeline.metrics.gindex.delta.DeltaTooLarge`, raised before any large
    structure is built) gives :data:`TOO_LARGE` (``None``): memory stays bounded.
    """
    na, nb = _nodes(a), _nodes(b)
    if not na or not nb:
        return False
    stripped = any(not isinstance(n, dict) or "type" not in n for n in (*na, *nb))
    if _shape(na) != _shape(nb) and not stripped:  # typeless nodes: only Δ can tell
        return False
    if a == b:
        return True
    from pipeline.metrics.gindex.delta import DeltaTooLarge, delta
    from pipeline.tracks.gindex.settings import BOARD_CONVENTION

    ua, ub = _unlinked(na), _unlinked(nb)
    large = False
    restricted = _restricted(ua, ub)
    for flow in (ua, restricted) if restricted != ua else (ua,):
        for convention in (BOARD_CONVENTION, "reference"):
            try:
                res = delta(flow, ub, convention=convention)
            except DeltaTooLarge:
                large = True
                continue
            except Exception:
                continue  # a flow this convention cannot read is not a copy under it
            if res.exact and res.delta == 0.0:
                return True
    return TOO_LARGE if large else False


def _restricted(a: list[Any], b: list[Any]) -> list[Any]:
    """Flow ``a`` without the attributes that no node of ``b`` of the same type has.

    A copy of ``b`` padded with attributes of its own (an ``info`` note on every node, a
    made-up key) is ``b`` again once they are dropped: the padding only lowers Δ's node
    similarities, it adds nothing the task asked for. A program that differs from ``b`` in
    any attribute ``b`` has stays different.
    """
    keys: dict[Any, set[str]] = {}
    for n in b:
        if isinstance(n, dict):
            keys.setdefault(n.get("type"), set()).update(n)
    out: list[Any] = []
    for n in a:
        if isinstance(n, dict):
            allowed = keys.get(n.get("type"), set()) | {"id", "type", "wires"}
            out.append({k: v for k, v in n.items() if k in allowed})
        else:
            out.append(n)
    return out


def _tasks(bench: BenchmarkInput) -> dict[str, tuple[str, str]]:
    """Return task id → (domain, path) of the benchmark's reference programs."""
    from pipeline.tracks.gindex.validate import reference_tasks

    return {t: (d, p) for d, items in reference_tasks(bench).items() for t, p in items}


@integrity_check(
    "program-leak",
    track="gindex",
    title="Programs identical to the benchmark's reference solutions",
    description="A generated program equal to a public reference program of its task's "
    "domain up to node ids (references to them included), node order, coordinates and "
    "layout (Δ = 0 under the board's paper convention), or that reference stripped of "
    "attributes or wires (Δ = 0 under the companion code's convention, where a node with no "
    "compared key weighs 1). An error whatever the curriculum says: the curriculum is "
    "self-declared, and a public answer submitted as an observation measures nothing.",
)
def program_leak(ctx: IntegrityContext) -> Iterator[Finding]:
    """Find public reference solutions reproduced (the curriculum does not excuse them)."""
    tasks = _tasks(ctx.benchmark)
    refs: dict[str, list[bytes]] = {}
    for domain, path in tasks.values():
        refs.setdefault(domain, []).append(ctx.benchmark.files.files[path])
    for t in ctx.targets:
        leaked = sorted(
            task for task, data in programs(t.files).items()
            if task in tasks and any(same_program(data, r) is True for r in refs[tasks[task][0]])
        )
        if leaked:
            domains = sorted({tasks[x][0] for x in leaked})
            yield Finding(
                "error", "program-leak", ctx.where(t, PROGRAMS.rstrip("/")), "programs",
                f"{len(leaked)} program(s) are the benchmark's public reference solutions "
                f"(up to ids, coordinates and layout; domains {listing(domains)}): "
                f"{listing(leaked)}",
                "submit the programs your system generated; a listed curriculum does not "
                "excuse a copied public answer",
            )


@integrity_check(
    "copied-programs",
    track="gindex",
    title="Programs identical to another submission's",
    description="Generated programs equal (up to node ids and layout, or stripped of "
    "attributes) to another bundle's program for the same task. Half or more of the bundle's "
    "programs is an error (copied results), whatever the contacts say; fewer is a warning "
    "(small tasks can coincide).",
)
def copied_programs(ctx: IntegrityContext) -> Iterator[Finding]:
    """Find programs shared with other bundles, per other bundle."""
    for t in ctx.targets:
        mine = {k: v for k, v in programs(t.files).items() if _nodes(v)}
        if not mine:
            continue
        for other in [*ctx.peers, *(x for x in ctx.targets if x.id != t.id)]:
            theirs = programs(other.files)
            verdict = {task: same_program(data, theirs[task])
                       for task, data in mine.items() if task in theirs}
            large = sorted(task for task, v in verdict.items() if v is TOO_LARGE)
            if large:
                yield Finding(
                    "warning", "copied-programs", ctx.where(t, PROGRAMS.rstrip("/")),
                    "programs", f"{len(large)} program(s) too large for exact Δ against bundle "
                    f"{other.id!r} were not compared: {listing(large)}",
                    "a reviewer compares them by hand; keep programs within the benchmark's "
                    "size limits")
            same = sorted(task for task, v in verdict.items() if v is True)
            if not same:
                continue
            sev = "error" if len(same) * 2 >= len(mine) else "warning"
            yield Finding(
                sev, "copied-programs", ctx.where(t, PROGRAMS.rstrip("/")), "programs",
                f"{len(same)} of {len(mine)} programs are identical to bundle {other.id!r}'s: "
                f"{listing(same)}",
                "submit the programs your own system generated; if both bundles come from "
                "the same system, update the existing bundle instead",
            )


def _informative(v: float) -> bool:
    """A divergence precise enough that two runs agreeing on it is evidence (not 0, 0.2…)."""
    return not (v * 100).is_integer()


def _divergences(bundle: BundleInput) -> dict[str, float]:
    _, rows = read_csv(bundle.files, DIVERGENCES)
    out = {}
    for r in rows:
        v = to_float(r.get("divergence"))
        if v is not None and r.get("domain"):
            out[r["domain"]] = v
    return out


@integrity_check(
    "copied-divergences",
    track="gindex",
    title="Reported divergences taken from another bundle",
    description="A reported bundle (divergences.csv) whose per-domain mean divergences equal "
    f"another bundle's for the same domains on at least half of them (and at least "
    f"{MIN_SHARED_DIVERGENCES}), counting only precise values (round values such as 0 or "
    "0.2 coincide by chance): another run's numbers, perhaps edited. An error whatever the "
    "contacts say (a maintainer confirms a republished run of one's own).",
)
def copied_divergences(ctx: IntegrityContext) -> Iterator[Finding]:
    """Find per-domain divergences shared with another bundle."""
    for t in ctx.targets:
        mine = {d: v for d, v in _divergences(t).items() if _informative(v)}
        if len(mine) < MIN_SHARED_DIVERGENCES:
            continue
        for other in [*ctx.peers, *(x for x in ctx.targets if x.id != t.id)]:
            theirs = _divergences(other)
            same = sorted(d for d, v in mine.items() if theirs.get(d) == v)
            if len(same) >= MIN_SHARED_DIVERGENCES and 2 * len(same) >= len(mine):
                yield Finding(
                    "error", "copied-divergences",
                    ctx.where(t, DIVERGENCES), "divergence",
                    f"{len(same)} of {len(mine)} divergences equal bundle {other.id!r}'s "
                    f"for the same domains ({listing(same)})",
                    "report the divergences of your own run, unedited; a republished run of "
                    "your own is for a maintainer to confirm",
                )


def _compute(bundle: BundleInput, bench: BenchmarkInput) -> float | None:
    """Return the total compute of a bundle in the benchmark's unit (None if unreadable)."""
    from pipeline.tracks.gindex.validate import read_compute

    unit = float(bench.settings.get("tflops_seconds_per_unit", 1000.0))
    try:
        total, _, problems = read_compute(bundle.files, unit)
    except Exception:
        return None
    return total if total > 0 and not problems else None


@integrity_check(
    "compute-log",
    track="gindex",
    title="An implausible compute log",
    description="Each row of the compute log must describe hardware that exists: a rate below "
    f"{MAX_TFLOPS:g} TFLOPS, whether given (tflops) or implied by compute and seconds; when "
    "tflops, seconds and compute are all given they must agree; and the total should lie "
    f"within {PEER_ORDERS:g} orders of magnitude of the other entries' (a warning: more "
    "often a unit mistake than a breakthrough). Zero or negative compute and a declared total "
    "that disagrees with the log are validation errors.",
)
def compute_log(ctx: IntegrityContext) -> Iterator[Finding]:
    """Check rates, internal consistency and the peers' magnitude of the compute."""
    unit = float(ctx.benchmark.settings.get("tflops_seconds_per_unit", 1000.0))
    peers = [c for c in (_compute(p, ctx.benchmark) for p in ctx.peers) if c is not None]
    for t in ctx.targets:
        where = ctx.where(t, COMPUTE)
        _, rows = read_csv(t.files, COMPUTE)
        for n, r in enumerate(rows, start=2):
            rate, secs, comp = (to_float(r.get(k)) for k in ("tflops", "seconds", "compute"))
            implied = comp * unit / secs if comp is not None and secs else None
            fast = rate if rate is not None else implied
            if fast is not None and fast > MAX_TFLOPS:
                yield Finding("error", "compute-log", where, f"line {n}",
                              f"implies {fast:.3g} TFLOPS, more than any computer delivers",
                              "check the units: tflops in teraFLOPS, seconds of training, "
                              f"compute in {ctx.benchmark.settings.get('compute_unit', 'PFLOP·s')}")
            if rate is not None and secs is not None and comp is not None and rate * secs > 0:
                if abs(rate * secs / unit - comp) > 1e-6 * max(comp, 1e-12):
                    yield Finding("error", "compute-log", where, f"line {n}",
                                  f"tflops × seconds = {rate * secs / unit:.6g}, but compute "
                                  f"says {comp:g}",
                                  "give either tflops and seconds, or compute, or make them "
                                  "agree")
        total = _compute(t, ctx.benchmark)
        if total is not None and peers:
            med = statistics.median(peers)
            orders = abs(math.log10(total / med))
            if orders >= PEER_ORDERS:
                yield Finding("warning", "compute-log", where, "-",
                              f"total compute {total:.3g} is {orders:.1f} orders of magnitude "
                              f"from the other entries' median ({med:.3g})",
                              "check the units; if right, cite the training report in the "
                              "description")


@integrity_check(
    "gindex-claimed",
    track="gindex",
    title="A declared average divergence that the programs do not give",
    description="A verified bundle (programs/) that also declares `average_divergence` in "
    "submission.toml: gmeter recomputes the mean divergence 1 − mean θ from the programs; a "
    "declared value that differs is flagged (the leaderboard shows the recomputed one).",
)
def gindex_claimed(ctx: IntegrityContext) -> Iterator[Finding]:
    """Compare a declared average divergence with the recomputed one."""
    targets = {t.id: t for t in ctx.targets}
    for row in ctx.scores:
        t = targets.get(row.get("bundle", ""))
        if t is None or row.get("metric") != "theta_mean" or not row.get("verified"):
            continue
        declared = to_float(t.settings.get("average_divergence"))
        value = to_float(row.get("value"))
        if declared is None or value is None:
            continue
        if abs(declared - (1.0 - value)) > 1e-6:
            yield Finding(
                "warning", "gindex-claimed", ctx.where(t, "submission.toml"),
                "gindex.average_divergence",
                f"declares {declared:g}; the programs give {1.0 - value:.6g}",
                "correct or remove average_divergence (the recomputed value is what counts)",
            )


@integrity_check(
    "own-priors",
    track="gindex",
    title="A bundle that brings its own priors ρ",
    description="The paper treats the priors ρ as a constant of the measure: the benchmark "
    "owns it (`rho` in benchmark.toml). A bundle that declares `priors` is scored with the "
    "benchmark's ρ all the same, and the board marks it; the finding asks the submitter to "
    "remove the field (a small or negative ρ would otherwise inflate the g-index without "
    "bound as ρ + E approaches 0).",
)
def own_priors(ctx: IntegrityContext) -> Iterator[Finding]:
    """Flag bundles that declare ``[gindex] priors``."""
    rho = to_float(ctx.benchmark.settings.get("rho"))
    for t in ctx.targets:
        priors = t.settings.get("priors")
        if priors is None:
            continue
        yield Finding(
            "warning", "own-priors", ctx.where(t, "submission.toml"), "gindex.priors",
            f"declares its own priors ρ ({priors!r}); the benchmark owns ρ, so the bundle is "
            f"ranked with ρ = {rho if rho is not None else 1e-4:g} and marked on the board",
            "remove `priors` from [gindex] in submission.toml",
        )
