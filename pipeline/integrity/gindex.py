"""Integrity checks of g-index bundles: generated programs and the compute log."""

from __future__ import annotations

import math
import statistics
from collections.abc import Iterator

from pipeline.integrity import Finding, IntegrityContext, integrity_check
from pipeline.integrity._common import listing, read_csv, same_submitter, to_float
from pipeline.tracks.base import BundleInput, FileSet

PROGRAMS = "programs/"
COMPUTE = "compute.csv"
PEER_ORDERS = 3.0
"""A total compute this many orders of magnitude from the peers' median is flagged."""
MAX_TFLOPS = 1e7
"""No hardware delivers 10 EFLOPS (1e7 TFLOPS); a rate above it is a unit mistake."""


def programs(fs: FileSet) -> dict[str, bytes]:
    """Task id → program bytes of ``programs/<task>.json``."""
    return {p[len(PROGRAMS):-5]: d for p, d in fs.files.items()
            if p.startswith(PROGRAMS) and p.endswith(".json") and "/" not in p[len(PROGRAMS):]}


def _shape(data: bytes) -> tuple[str, ...] | None:
    """Return a cheap invariant of a flow (its sorted node types), ``None`` if not a flow."""
    from pipeline.integrity._common import read_json

    flow = read_json(FileSet("", {"f": data}), "f")
    if isinstance(flow, dict):
        flow = flow.get("flow")
    if isinstance(flow, str):
        import json

        try:
            flow = json.loads(flow)
        except ValueError:
            return None
    if not isinstance(flow, list):
        return None
    return tuple(sorted(str(n.get("type")) for n in flow if isinstance(n, dict)))


def same_program(a: bytes, b: bytes) -> bool:
    """Whether two flows are the same program up to node ids and layout (Δ = 0, paper rule).

    Identical bytes are the same program; otherwise flows whose sorted node types differ
    cannot be; the rest are compared exactly with Δ under the ``paper`` convention.
    """
    if a == b:
        return True
    sa, sb = _shape(a), _shape(b)
    if sa is None or sb is None or sa != sb or not sa:
        return False
    try:
        import json

        from pipeline.metrics.delta import delta

        res = delta(json.loads(a), json.loads(b), convention="paper")
    except Exception:
        return False  # a flow Δ cannot read is simply not the same program
    return res.exact and res.delta == 0.0


def _reference_programs(ctx: IntegrityContext) -> dict[str, list[tuple[str, bytes]]]:
    """Task id → [(path, bytes)] of the benchmark's reference programs for that task."""
    out: dict[str, list[tuple[str, bytes]]] = {}
    for path, data in sorted(ctx.benchmark.files.files.items()):
        if path.startswith("reference/") and path.endswith(".json"):
            parts = path[:-5].split("/")  # reference/domains/<domain>/<task>.json
            for key in {parts[-1], parts[-2]} - {"reference"}:
                out.setdefault(key, []).append((path, data))
    return out


def _curriculum_domains(bundle: BundleInput) -> set[str]:
    header, rows = read_csv(bundle.files, "curriculum.csv")
    col = "domain" if "domain" in header else (header[0] if header else "")
    doms = {r.get(col, "") for r in rows}
    settings = bundle.settings.get("curriculum")
    if isinstance(settings, dict):
        doms |= {str(k) for k in settings}
    return {d for d in doms if d}


def _task_domain(ctx: IntegrityContext, task: str) -> str:
    tasks = ctx.benchmark.settings.get("tasks")
    if isinstance(tasks, list):
        for t in tasks:
            if isinstance(t, dict) and t.get("id") == task:
                return str(t.get("domain", task))
    if isinstance(tasks, dict) and isinstance(tasks.get(task), str):
        return str(tasks[task])
    return task.rsplit("-", 1)[0] if "-" in task else task


@integrity_check(
    "program-leak",
    track="gindex",
    title="Programs identical to the benchmark's reference solutions",
    description="A generated program equal (up to node ids and layout, Δ = 0) to the "
    "benchmark's reference program for a test task whose domain the bundle's curriculum does "
    "not contain. A system cannot reproduce an unseen solution node for node: the answers "
    "leaked into training or were copied into the bundle.",
)
def program_leak(ctx: IntegrityContext) -> Iterator[Finding]:
    """Find reference solutions reproduced for tasks outside the curriculum."""
    refs = _reference_programs(ctx)
    for t in ctx.targets:
        trained = _curriculum_domains(t)
        leaked = []
        for task, data in sorted(programs(t.files).items()):
            domain = _task_domain(ctx, task)
            if domain in trained:
                continue
            if any(same_program(data, r) for _, r in refs.get(task, []) + refs.get(domain, [])):
                leaked.append(task)
        if leaked:
            yield Finding(
                "error", "program-leak", ctx.where(t, PROGRAMS.rstrip("/")), "programs",
                f"{len(leaked)} program(s) are the benchmark's reference solution for tasks "
                f"outside the curriculum: {listing(leaked)}",
                "submit the programs your system generated; if the curriculum did contain "
                "these domains, declare them in curriculum.csv",
            )


@integrity_check(
    "copied-programs",
    track="gindex",
    title="Programs identical to another submission's",
    description="Generated programs equal (up to node ids and layout) to another bundle's "
    "program for the same task. Half or more of the bundle's programs is an error (copied "
    "results); fewer, or a bundle naming the same contact, is a warning (small tasks can "
    "coincide; a submitter may reuse their own programs).",
)
def copied_programs(ctx: IntegrityContext) -> Iterator[Finding]:
    """Programs shared with other bundles, per other bundle."""
    for t in ctx.targets:
        mine = programs(t.files)
        if not mine:
            continue
        for other in [*ctx.peers, *(x for x in ctx.targets if x.id != t.id)]:
            theirs = programs(other.files)
            same = sorted(task for task, data in mine.items()
                          if task in theirs and same_program(data, theirs[task]))
            if not same:
                continue
            own = same_submitter(t, other)
            sev = "error" if len(same) * 2 >= len(mine) and not own else "warning"
            yield Finding(
                sev, "copied-programs", ctx.where(t, PROGRAMS.rstrip("/")), "programs",
                f"{len(same)} of {len(mine)} programs are identical to bundle {other.id!r}'s: "
                f"{listing(same)}",
                "submit the programs your own system generated; if both bundles come from "
                "the same system, update the existing bundle instead",
            )


def compute_total(bundle: BundleInput) -> float | None:
    """Total compute of a bundle's log (Σ TFLOPS × seconds, or a single ``compute`` column)."""
    header, rows = read_csv(bundle.files, COMPUTE)
    if not rows:
        return None
    total = 0.0
    for r in rows:
        if "compute" in header:
            v = to_float(r.get("compute"))
        else:
            a, b = to_float(r.get("tflops")), to_float(r.get("seconds"))
            v = a * b if a is not None and b is not None else None
        if v is None:
            return None
        total += v
    return total


@integrity_check(
    "compute-log",
    track="gindex",
    title="An implausible compute log",
    description="The compute log must be positive (E = log2 of it; zero or negative compute "
    "gives E = −∞ or an undefined logarithm), use a rate real hardware can deliver "
    f"(< {MAX_TFLOPS:g} TFLOPS), agree with the total declared in submission.toml if one is "
    f"given, and lie within {PEER_ORDERS:g} orders of magnitude of the other entries' "
    "(a warning: more often a unit mistake than a breakthrough).",
)
def compute_log(ctx: IntegrityContext) -> Iterator[Finding]:
    """Sign, rate, declared total and peer magnitude of the compute."""
    peers = [c for c in (compute_total(p) for p in ctx.peers) if c is not None and c > 0]
    for t in ctx.targets:
        where = ctx.where(t, COMPUTE)
        header, rows = read_csv(t.files, COMPUTE)
        for n, r in enumerate(rows, start=2):
            for col in ("tflops", "seconds", "compute"):
                v = to_float(r.get(col)) if col in header else None
                if v is not None and v <= 0:
                    yield Finding("error", "compute-log", where, f"line {n}: {col}",
                                  f"is {v:g}; compute must be positive",
                                  "log the hardware's rate and the training time actually used")
            rate = to_float(r.get("tflops")) if "tflops" in header else None
            if rate is not None and rate > MAX_TFLOPS:
                yield Finding("error", "compute-log", where, f"line {n}: tflops",
                              f"{rate:g} TFLOPS is more than any computer delivers",
                              "give the rate in teraFLOPS (1 PFLOPS = 1000 TFLOPS)")
        total = compute_total(t)
        declared = to_float(t.settings.get("compute"))
        if total is not None and declared is not None and declared > 0 and \
                abs(total - declared) > 1e-6 * max(abs(declared), 1.0):
            yield Finding("error", "compute-log", where, "-",
                          f"the log adds up to {total:g}, submission.toml declares "
                          f"{declared:g}", "make the two agree (the log is what is scored)")
        if total is not None and total > 0 and peers:
            med = statistics.median(peers)
            orders = abs(math.log10(total / med))
            if orders >= PEER_ORDERS:
                yield Finding("warning", "compute-log", where, "-",
                              f"total compute {total:.3g} is {orders:.1f} orders of magnitude "
                              f"from the other entries' median ({med:.3g})",
                              "check the units (TFLOPS × seconds); if right, cite the training "
                              "report in the description")

