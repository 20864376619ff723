"""The ``gindex`` track: the g-index of Venkatasubramanian et al. (2021).

A benchmark holds the reference programs of its test tasks, one folder per task domain
(``reference/domains/<domain>/<task>.json``, each ``{"flow": [...]}`` or a bare node list),
and declares the domain order used to symmetrise the domain distances (``[gindex]
domain_order``). A bundle brings

* ``curriculum.csv`` — ``domain,num_samples``: the training data per curriculum domain;
* ``compute.csv`` — rows of ``tflops,seconds`` (or ``compute`` in the benchmark's unit),
  optionally with a ``domain`` column;
* either ``programs/<task>.json`` — the program the system generated for each test task:
  θ is computed against the reference program (**verified**) —
* or ``divergences.csv`` — ``domain,divergence[,num_samples,perfects]``: mean Δ per task
  domain, as the published experiments give it (**reported**).

Scores: ``g_index`` (primary, with a bootstrap interval over test tasks), ``theta_mean``,
``omega_mean`` and ``compute_log2``. See docs/gindex.md.
"""

from __future__ import annotations

import json
import math
import statistics
from collections.abc import Sequence
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from pipeline.errors import Problem, ScoringError
from pipeline.tracks.base import (
    BenchmarkInput,
    BundleInput,
    Column,
    FileSet,
    ScoreContext,
    ScoreRow,
    TrackResult,
    TrackSpec,
    check_csv,
    iter_json_problems,
)

CURRICULUM = "curriculum.csv"
COMPUTE = "compute.csv"
DIVERGENCES = "divergences.csv"
PROGRAMS = "programs/"


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", str_strip_whitespace=True)


class PublishedValue(_Strict):
    """A published g-index of one bundle, shown next to gmeter's."""

    bundle: str = Field(description="The bundle id.")
    paper: float | None = Field(None, description="The value in the paper (Table 1).")
    companion: float | None = Field(
        None, description="The value the companion code prints for the published data."
    )


class BenchmarkSettings(_Strict):
    """The ``[gindex]`` section of ``benchmark.toml``."""

    domains_dir: str = Field(
        "reference/domains",
        description="Folder of the reference programs: <domains_dir>/<domain>/<task>.json.",
    )
    domain_order: list[str] = Field(
        default_factory=list,
        description="Every task domain once, in the order that symmetrises the domain "
        "distances (the earlier domain of a pair is the one averaged over). Empty: sorted.",
    )
    convention: Literal["reference", "paper"] = Field(
        "reference",
        description="Δ convention: reference (the companion code's semantics) or paper "
        "(the paper's definition). See docs/gindex.md.",
    )
    form: Literal["domain", "task"] = Field(
        "domain",
        description="domain: one contribution per task domain, as the companion code; task: "
        "one per test task (paper eqs. 8-9). Reported bundles always use domain.",
    )
    rho: float = Field(1e-4, gt=0, description="The prior ρ when a bundle declares none.")
    compute_unit: str = Field("PFLOP·s", description="Unit of compute (E = log2 of it).")
    tflops_seconds_per_unit: float = Field(
        1000.0, gt=0, description="TFLOPS × seconds in one compute unit (1000 for PFLOP·s)."
    )
    max_nodes: int = Field(2000, ge=1, description="Largest program accepted (nodes).")
    confidence: float = Field(0.95, gt=0.5, lt=1.0, description="Bootstrap interval level.")
    resamples: int = Field(2000, ge=100, description="Bootstrap resamples of the test tasks.")
    published: list[PublishedValue] = Field(
        default_factory=list, description="Published values shown for comparison."
    )


class SubmissionSettings(_Strict):
    """The ``[gindex]`` section of ``submission.toml``."""

    model: str = Field("", max_length=200, description="Model identifier (e.g. gpt2-medium).")
    priors: float | dict[str, float] | None = Field(
        None,
        description="Priors ρ: one number, or one per curriculum domain (task form only). "
        "Default: the benchmark's rho.",
    )
    compute: float | None = Field(
        None, gt=0, description="Declared total compute; must equal the compute log's total."
    )
    average_divergence: float | None = Field(
        None, ge=0, le=1, description="Published overall mean divergence (shown, not scored)."
    )


# --------------------------------------------------------------------------- reading
def reference_tasks(bench: BenchmarkInput) -> dict[str, list[tuple[str, str]]]:
    """Domain → [(task id, path)] of the benchmark's reference programs (sorted)."""
    base = str(bench.settings.get("domains_dir", "reference/domains")).rstrip("/")
    out: dict[str, list[tuple[str, str]]] = {}
    for p in bench.files.under(base):
        rest = p[len(base) + 1 :].split("/")
        if len(rest) == 2 and rest[1].endswith(".json"):
            out.setdefault(rest[0], []).append((rest[1][:-5], p))
    return out


def domain_order(bench: BenchmarkInput) -> list[str]:
    """The declared domain order (sorted domain names when none is declared)."""
    declared = list(bench.settings.get("domain_order") or [])
    return declared or sorted(reference_tasks(bench))


def read_flow(fs: FileSet, path: str) -> Any:
    """The node list of a program file (``{"flow": ...}``, a bare list or a JSON string)."""
    from pipeline.metrics.flows import load_flow

    return load_flow(fs.json(path))


def flow_problems(obj: Any, where: str, max_nodes: int) -> list[Problem]:
    """Structure checks of one program: node objects with id/type, wires, size, cycles."""
    from pipeline.metrics.flows import FlowError, load_flow

    try:
        nodes = load_flow(obj)
    except FlowError as exc:
        return [Problem(where, "flow", str(exc), 'give {"flow": [node, ...]} or a node list')]
    out: list[Problem] = []
    if len(nodes) > max_nodes:
        out.append(Problem(where, "flow", f"has {len(nodes)} nodes, more than {max_nodes}",
                           "submit the program itself, not a concatenation"))
        return out
    ids: dict[Any, int] = {}
    for k, nd in enumerate(nodes):
        f = f"flow[{k}]"
        if not isinstance(nd, dict):
            out.append(Problem(where, f, "is not an object", "each node is a JSON object"))
            continue
        nid = nd.get("id")
        if not isinstance(nid, str | int) or isinstance(nid, bool) or nid == "":
            out.append(Problem(where, f"{f}.id", "is missing or not a string",
                               "give every node a unique string id"))
        elif nid in ids:
            out.append(Problem(where, f"{f}.id", f"repeats the id {nid!r} of flow[{ids[nid]}]",
                               "give every node a unique id"))
        else:
            ids[nid] = k
        if not isinstance(nd.get("type"), str) or not nd.get("type"):
            out.append(Problem(where, f"{f}.type", "is missing or not a string",
                               "give every node its node type"))
        w = nd.get("wires", [])
        ok = isinstance(w, list) and (
            all(isinstance(p, list) and all(isinstance(t, str | int) for t in p) for p in w)
            or all(isinstance(t, str | int) for t in w)
        )
        if not ok:
            out.append(Problem(where, f"{f}.wires", "is not a list of ports (lists of ids)",
                               'write wires as [["target-id", ...], ...]'))
        for key, val in nd.items():
            if isinstance(val, float) and not math.isfinite(val):
                out.append(Problem(where, f"{f}.{key}", "is NaN or infinite",
                                   "use finite numbers"))
    if not out:
        cyc = _cycle(nodes)
        if cyc:
            out.append(Problem(where, "flow", f"the wires form a cycle ({' → '.join(cyc)})",
                               "a program is a directed acyclic graph: remove a wire"))
    return out


def _cycle(nodes: list[dict[str, Any]]) -> list[str]:
    """One directed cycle of the wiring (node ids), or [] for a DAG."""
    succ: dict[Any, list[Any]] = {}
    for nd in nodes:
        w = nd.get("wires", [])
        flat = [t for p in w for t in p] if w and isinstance(w[0], list) else list(w)
        succ[nd["id"]] = [t for t in flat if t in {n["id"] for n in nodes}]
    state: dict[Any, int] = {}
    for root in succ:
        if state.get(root):
            continue
        stack: list[tuple[Any, int]] = [(root, 0)]
        path: list[Any] = []
        while stack:
            v, i = stack.pop()
            if i == 0:
                state[v] = 1
                path.append(v)
            if i < len(succ[v]):
                stack.append((v, i + 1))
                t = succ[v][i]
                if state.get(t) == 1:
                    return [str(x) for x in path[path.index(t) :]] + [str(t)]
                if not state.get(t):
                    stack.append((t, 0))
            else:
                state[v] = 2
                path.pop()
    return []


CURRICULUM_COLUMNS = (Column("domain"), Column("num_samples", "int", low=1))
COMPUTE_COLUMNS = (
    Column("domain", required=False, allow_empty=True),
    Column("tflops", "float", required=False, allow_empty=True, low=0.0),
    Column("seconds", "float", required=False, allow_empty=True, low=0.0),
    Column("compute", "float", required=False, allow_empty=True, low=0.0),
)
DIVERGENCE_COLUMNS = (
    Column("domain"),
    Column("divergence", "float", low=0.0, high=1.0),
    Column("num_samples", "int", required=False, allow_empty=True, low=0),
    Column("perfects", "float", required=False, allow_empty=True, low=0.0, high=1.0),
)


def read_compute(
    fs: FileSet, unit_tflops_s: float
) -> tuple[float, dict[str, float], list[Problem]]:
    """Total compute, compute per domain (rows with a domain) and problems."""
    rows, problems = check_csv(fs, COMPUTE, COMPUTE_COLUMNS)
    total = 0.0
    per: dict[str, float] = {}
    for n, r in enumerate(rows, start=2):
        if r.get("compute") is not None:
            v = float(r["compute"])
        elif r.get("tflops") is not None and r.get("seconds") is not None:
            v = float(r["tflops"]) * float(r["seconds"]) / unit_tflops_s
        else:
            problems.append(Problem(fs.where(COMPUTE), f"line {n}", "has no compute",
                                    "give compute, or tflops and seconds"))
            continue
        if v <= 0:
            problems.append(Problem(fs.where(COMPUTE), f"line {n}", "compute must be > 0",
                                    "log the compute actually used"))
            continue
        total += v
        if r.get("domain"):
            per[r["domain"]] = per.get(r["domain"], 0.0) + v
    return total, per, problems


def validate_benchmark(bench: BenchmarkInput) -> list[Problem]:
    """Reference programs parse and are DAGs; the domain order lists every domain once."""
    fs = bench.files
    tasks = reference_tasks(bench)
    problems: list[Problem] = []
    if not tasks:
        base = bench.settings.get("domains_dir", "reference/domains")
        return [Problem(fs.where("benchmark.toml"), "gindex.domains_dir",
                        f"no reference programs under {base}/<domain>/<task>.json",
                        "add the reference programs, one folder per task domain")]
    paths = [p for v in tasks.values() for _, p in v]
    bad = {p.file for p in iter_json_problems(fs, paths)}
    problems += list(iter_json_problems(fs, paths))
    seen: dict[str, str] = {}
    max_nodes = int(bench.settings.get("max_nodes", 2000))
    for d, items in tasks.items():
        for task, p in items:
            if task in seen:
                problems.append(Problem(fs.where(p), "-", f"task id {task!r} also in {seen[task]}",
                                        "task ids (file names) must be unique"))
            seen[task] = d
            if fs.where(p) not in bad:
                problems += flow_problems(fs.json(p), fs.where(p), max_nodes)
    declared = list(bench.settings.get("domain_order") or [])
    if declared and sorted(declared) != sorted(tasks):
        missing = sorted(set(tasks) - set(declared))
        extra = sorted(set(declared) - set(tasks))
        dup = sorted({d for d in declared if declared.count(d) > 1})
        msg = "; ".join(x for x in (
            f"missing {', '.join(missing)}" if missing else "",
            f"unknown {', '.join(extra)}" if extra else "",
            f"repeated {', '.join(dup)}" if dup else "") if x)
        problems.append(Problem(fs.where("benchmark.toml"), "gindex.domain_order", msg,
                                "list every domain folder exactly once"))
    return problems


def validate_bundle(bundle: BundleInput, bench: BenchmarkInput) -> list[Problem]:
    """Curriculum, compute log, and the programs or the divergence table."""
    fs = bundle.files
    tasks = reference_tasks(bench)
    domains = set(tasks)
    problems: list[Problem] = []
    rows, probs = check_csv(fs, CURRICULUM, CURRICULUM_COLUMNS, unique=("domain",))
    problems += probs
    for n, r in enumerate(rows, start=2):
        if r["domain"] not in domains:
            problems.append(Problem(fs.where(CURRICULUM), f"line {n}: domain",
                                    f"unknown domain {r['domain']!r}",
                                    "use one of the benchmark's domains: "
                                    + ", ".join(sorted(domains))))
    unit = float(bench.settings.get("tflops_seconds_per_unit", 1000.0))
    total, _, probs = read_compute(fs, unit)
    problems += probs
    declared = bundle.settings.get("compute")
    if declared is not None and total > 0 and abs(total - float(declared)) > 1e-9 * total:
        problems.append(Problem(fs.where("submission.toml"), "gindex.compute",
                                f"declares {declared}, the compute log adds up to {total}",
                                "make them agree"))
    progs = [p for p in fs.files if p.startswith(PROGRAMS) and p.endswith(".json")]
    for p in sorted(set(fs.files) - set(progs)):
        if p.startswith(PROGRAMS):
            problems.append(Problem(fs.where(p), "-", "is not a .json program and is ignored",
                                    "keep only programs/<task>.json here", "warning"))
    if progs:
        known = {t for v in tasks.values() for t, _ in v}
        problems += list(iter_json_problems(fs, sorted(progs)))
        bad = {p.file for p in problems}
        max_nodes = int(bench.settings.get("max_nodes", 2000))
        for p in sorted(progs):
            task = p[len(PROGRAMS):]
            if "/" in task or not task.endswith(".json") or task[:-5] not in known:
                problems.append(Problem(fs.where(p), "-", "is not programs/<task>.json of a "
                                        "benchmark task", "name files after the test tasks"))
            elif fs.where(p) not in bad:
                problems += flow_problems(fs.json(p), fs.where(p), max_nodes)
        have = {p[len(PROGRAMS):-5] for p in progs}
        for t in sorted(known - have):
            problems.append(Problem(fs.where(f"{PROGRAMS}{t}.json"), "-", "is missing",
                                    "give every test task a program ([] if none was generated)"))
    elif fs.has(DIVERGENCES):
        drows, probs = check_csv(fs, DIVERGENCES, DIVERGENCE_COLUMNS, unique=("domain",))
        problems += probs
        got = {r["domain"] for r in drows}
        for r in drows:
            if r["domain"] not in domains:
                problems.append(Problem(fs.where(DIVERGENCES), "domain",
                                        f"unknown domain {r['domain']!r}",
                                        "use the benchmark's domain names"))
        if drows and not probs:
            for d in sorted(domains - got):
                problems.append(Problem(fs.where(DIVERGENCES), "domain", f"{d!r} is missing",
                                        "give the mean divergence of every task domain"))
    else:
        problems.append(Problem(fs.where(PROGRAMS.rstrip("/")), "-",
                                "the bundle has neither programs/ nor divergences.csv",
                                "add the generated programs (verified) or divergences.csv"))
    return problems


# --------------------------------------------------------------------------- scoring
def _theta_item(item: tuple[Any, Any, str]) -> tuple[float, bool]:
    """Executor item: Δ(generated, reference) and whether the search was exact."""
    from pipeline.metrics.delta import delta

    generated, reference, convention = item
    r = delta(generated, reference, convention)
    return r.delta, r.exact


def _omega_item(item: tuple[Any, dict[str, list[Any]], str]) -> dict[str, float]:
    """Executor item: Ω of one reference task to every domain (paper eq. 6)."""
    from pipeline.metrics.omega import omega_task

    task, domains, convention = item
    return omega_task(task, domains, convention)


def _options(bench: BenchmarkInput, ctx: ScoreContext) -> tuple[str, str]:
    conv = str(ctx.options.get("convention", bench.settings.get("convention", "reference")))
    form = str(ctx.options.get("form", bench.settings.get("form", "domain")))
    if conv not in ("reference", "paper"):
        raise ScoringError(f"unknown Δ convention {conv!r}", hint="use reference or paper")
    if form not in ("domain", "task"):
        raise ScoringError(f"unknown g-index form {form!r}", hint="use domain or task")
    return conv, form


def score(bench: BenchmarkInput, bundles: Sequence[BundleInput], ctx: ScoreContext) -> TrackResult:
    """Score every bundle: θ (verified from programs or reported), Ω, the g-index and charts."""
    from pipeline.executor import InProcessExecutor, derive_seed
    from pipeline.metrics.gindex import TaskInput, bootstrap_ci, companion_g_index, paper_g_index
    from pipeline.metrics.omega import domain_distance_matrix, generalisation_level

    conv, form = _options(bench, ctx)
    ex = ctx.executor or InProcessExecutor()
    fs = bench.files
    tasks = reference_tasks(bench)
    order = domain_order(bench)
    flows = {d: [read_flow(fs, p) for _, p in items] for d, items in tasks.items()}
    task_domain = {t: d for d, items in tasks.items() for t, _ in items}
    ref_flow = {t: read_flow(fs, p) for items in tasks.values() for t, p in items}
    dd = domain_distance_matrix(flows, order, conv, executor=ex, progress=ctx.progress)
    ddmap = dd.as_mapping()
    rho0 = float(bench.settings.get("rho", 1e-4))
    unit = float(bench.settings.get("tflops_seconds_per_unit", 1000.0))
    level = float(bench.settings.get("confidence", 0.95))
    resamples = int(bench.settings.get("resamples", 2000))
    how = "declared" if bench.settings.get("domain_order") else "sorted"
    result = TrackResult(notes=[f"g-index: Δ convention {conv}, {form} form, {how} domain order"])

    # θ of every verified task, all bundles in one parallel map
    ordered = sorted(bundles, key=lambda b: b.id)
    verified = {b.id: any(p.startswith(PROGRAMS) and p.endswith(".json") for p in b.files.files)
                for b in ordered}
    items: list[tuple[Any, Any, str]] = []
    keys: list[tuple[str, str]] = []
    for b in ordered:
        if verified[b.id]:
            for t in sorted(task_domain):
                path = f"{PROGRAMS}{t}.json"
                prog = read_flow(b.files, path) if b.files.has(path) else []
                items.append((prog, ref_flow[t], conv))
                keys.append((b.id, t))
    thetas = dict(zip(keys, ex.map(_theta_item, items, label="Δ of programs",
                                   progress=ctx.progress), strict=True))
    omega_t: dict[str, dict[str, float]] = {}
    if form == "task" and any(verified.values()):
        names = sorted(task_domain)
        got = ex.map(_omega_item, [(ref_flow[t], flows, conv) for t in names],
                     label="Ω of tasks", progress=ctx.progress)
        omega_t = dict(zip(names, got, strict=True))

    points: list[dict[str, Any]] = []
    contrib: list[dict[str, Any]] = []
    for b in ordered:
        curriculum = [(r["domain"], r["num_samples"])
                      for r in check_csv(b.files, CURRICULUM, CURRICULUM_COLUMNS)[0]]
        total, per, _ = read_compute(b.files, unit)
        if not curriculum or total <= 0:
            result.notes.append(f"{b.id}: skipped (no usable curriculum or compute log)")
            continue
        priors = b.settings.get("priors")
        rho: Any = rho0 if priors is None else priors
        inexact = False
        if verified[b.id]:
            by_dom: dict[str, list[float]] = {}
            for t in sorted(task_domain):
                d_val, exact = thetas[(b.id, t)]
                inexact |= not exact
                by_dom.setdefault(task_domain[t], []).append(d_val)
            if form == "task":
                cur = dict(curriculum)
                g = paper_g_index(
                    [TaskInput(t, 1 - thetas[(b.id, t)][0], {c: omega_t[t][c] for c in cur})
                     for t in sorted(task_domain)],
                    cur, per if set(per) >= set(cur) else total, rho)
            else:
                divs = [(d, mean(by_dom[d])) for d in order if d in by_dom]
                g = companion_g_index(divs, curriculum, total, ddmap,
                                      rho if isinstance(rho, float) else rho0)
        else:
            if form == "task":
                result.notes.append(f"{b.id}: reported divergences per domain, scored in "
                                    "the domain form")
            rows = check_csv(b.files, DIVERGENCES, DIVERGENCE_COLUMNS)[0]
            divs = [(r["domain"], float(r["divergence"])) for r in rows]
            g = companion_g_index(divs, curriculum, total, ddmap,
                                  rho if isinstance(rho, float) else rho0)
        ci = bootstrap_ci(g.contributions, n_resamples=resamples, confidence=level,
                          seed=derive_seed(ctx.seed, "gindex", b.id))
        theta_mean = mean([t.theta for t in g.tasks])
        omega_mean = mean([t.omega_min for t in g.tasks])
        lv = generalisation_level(omega_mean)
        samples = sum(n for _, n in curriculum)
        details = {
            "form": g.form, "convention": conv, "verified": verified[b.id],
            "exact": not inexact, "E": g.E, "W": dict(g.W), "rho": dict(g.rho),
            "g_index_unrounded": g.raw, "training_samples": samples, "compute": total,
            "level": lv.label, "level_in_gap": lv.in_gap,
            "bootstrap": {"resamples": ci.n_resamples, "seed": ci.seed,
                          "confidence": ci.confidence},
            "tasks": [{"task": t.task, "theta": t.theta, "contribution": t.contribution,
                       "omega_min": t.omega_min, "level": generalisation_level(t.omega_min).label}
                      for t in g.tasks],
        }
        if inexact:
            details["why"] = "a clique search hit its budget: Δ is an upper bound"
        v = verified[b.id]
        sysname = b.system
        result.rows += [
            ScoreRow(b.id, sysname, "g_index", g.g_index, ci.low, ci.high, v, details),
            ScoreRow(b.id, sysname, "theta_mean", theta_mean, None, None, v),
            ScoreRow(b.id, sysname, "omega_mean", omega_mean, None, None, v),
            ScoreRow(b.id, sysname, "compute_log2", g.E, None, None, v),
        ]
        points.append({"system": f"{sysname} ({b.id})", "compute_log2": g.E,
                       "theta_mean": theta_mean, "training_samples": samples,
                       "g_index": g.g_index})
        contrib += [{"row": b.id, "col": t.task, "contribution": t.contribution}
                    for t in g.tasks]
    result.charts.update(_charts(bench, dd, points, contrib))
    result.notes.append(_cluster_note(ref_flow, task_domain, conv, ex))
    return result


CLUSTER_LIMIT = 500
"""Reference programs beyond which the clustering note is skipped (it is quadratic)."""


def _cluster_note(ref_flow: dict[str, Any], task_domain: dict[str, str], conv: str,
                  ex: Any) -> str:
    """How the reference programs cluster at Δ̄ ≤ 0.15 compared with the declared domains."""
    from pipeline.metrics.delta import delta_matrix_map
    from pipeline.metrics.omega import cluster_tasks

    names = sorted(ref_flow)
    if len(names) > CLUSTER_LIMIT:
        return f"clustering skipped: more than {CLUSTER_LIMIT} reference programs"
    m = delta_matrix_map([ref_flow[t] for t in names], convention=conv, executor=ex)
    c = cluster_tasks(m, 0.15)
    doms: dict[str, set[int]] = {}
    for t, lab in zip(names, c.labels, strict=True):
        doms.setdefault(task_domain[t], set()).add(lab)
    split = sorted(d for d, labs in doms.items() if len(labs) > 1)
    return (f"task-domain clustering (average linkage, Δ̄ ≤ 0.15): {c.n_clusters} clusters for "
            f"{len(doms)} declared domains" + (f"; split: {', '.join(split)}" if split else ""))


def _charts(bench: BenchmarkInput, dd: Any, points: list[dict[str, Any]],
            contrib: list[dict[str, Any]]) -> dict[str, Any]:
    from pipeline.metrics.gindex import responsiveness_curves

    unit = str(bench.settings.get("compute_unit", "PFLOP·s"))
    charts: dict[str, Any] = {
        "gindex_domain_distance": {
            "title": "Domain distance Ω (after the paper's Fig. 6)",
            "labels": list(dd.order), "matrix": dd.matrix.tolist(),
            "value": {"label": "Ω", "unit": "0–1"},
        },
        "gindex_theta_compute": {
            "title": "θ vs training compute, g-index as size (Figs. 12–13)",
            "x": {"field": "compute_log2", "label": "E = log2 compute", "unit": f"log2 {unit}"},
            "y": {"field": "theta_mean", "label": "mean θ", "unit": "0–1"},
            "size": {"field": "g_index", "label": "g-index"}, "records": points,
        },
        "gindex_theta_samples": {
            "title": "θ vs training samples, g-index as size (Figs. 12–13)",
            "x": {"field": "training_samples", "label": "training samples", "unit": ""},
            "y": {"field": "theta_mean", "label": "mean θ", "unit": "0–1"},
            "size": {"field": "g_index", "label": "g-index"}, "records": points,
        },
        "gindex_contributions": {
            "title": "Task contributions to the g-index", "records": contrib,
            "value": {"label": "contribution", "unit": ""},
        },
    }
    curves = responsiveness_curves(omega=dd.matrix.tolist())
    labels = {"theta": ("θ", "0–1", False), "compute": ("E = log2 compute", unit, True),
              "samples": ("log2 samples per domain", "", True),
              "omega": ("Ω between domains", "0–1", False)}
    for curve, (label, u, log) in labels.items():
        charts[f"gindex_responsiveness_{curve}"] = {
            "title": f"g-index responsiveness to {label} (simulation, Figs. 7–9)",
            "x": {"field": "x", "label": label, "unit": u},
            "y": {"field": "g_index", "label": "g-index", "unit": ""},
            "records": [{"series": r["series"], "x": math.log2(r["x"]) if log else r["x"],
                         "g_index": r["g_index"]} for r in curves if r["curve"] == curve],
        }
    pub = bench.settings.get("published") or []
    if pub:
        charts["gindex_published"] = {
            "title": "Published g-index: paper Table 1 vs companion code",
            "records": [dict(p) for p in pub],
        }
    return charts


def mean(xs: Sequence[float]) -> float:
    """Exact mean (``statistics.mean``) of floats; NaN for none."""
    return float(statistics.mean(xs)) if xs else float("nan")


def bundle_template() -> dict[str, str]:
    """Files ``gmeter new`` writes into a new gindex bundle."""
    return {
        "submission.toml": '\n[gindex]\nmodel = "TODO: model identifier"\n'
        "# priors = 1e-4          # optional ρ\n",
        CURRICULUM: "domain,num_samples\nTODO: domain,100\n",
        COMPUTE: "tflops,seconds\n0,0\n",
        f"{PROGRAMS}README.txt": "Put the generated program of each test task here as "
        "<task>.json (the benchmark's reference/domains/<domain>/<task>.json names), then "
        "delete this file.\n",
    }


def benchmark_template() -> dict[str, str]:
    """The ``[gindex]`` section ``gmeter new`` writes into a new benchmark."""
    return {
        "benchmark.toml": '\n[gindex]\nconvention = "reference"\nform = "domain"\n'
        "# every domain folder of reference/domains, in the order that symmetrises Ω\n"
        'domain_order = ["TODO: first domain"]\n',
    }


# --------------------------------------------------------------------------- published files
MAYA_URL = "https://github.com/mayahq/g-index-benchmark"
MAYA_COMMIT = "41aa8291c8bebb88b0c05a10ee4974dbaec09c05"
#: The directory order of ``domains/`` on the authors' machine (spec §10.13); the only order
#: that reproduces the companion code's published output.
MAYA_DOMAIN_ORDER: tuple[str, ...] = (
    "template-slider", "template-form", "url-skill", "cron-schedule", "gmail-send",
    "telegram-3-reply", "telegram-2-reply", "youtube-pause", "youtube-resume", "http",
    "cron-reminder", "google-search", "twitter", "youtube-play", "facebook",
    "googlesearch-to-csv",
)
#: Display names of the published models.
MAYA_SYSTEMS = {
    "gpt2-medium": "GPT2-345M",
    "gpt2-large": "GPT2-774M",
    "gpt2-xl": "GPT2-1.5B",
    "EleutherAI/gpt-neo-2.7B": "GPT-Neo-2.7B",
}
PAPER = ("G. Venkatasubramanian, S. Kar, A. Singh, S. Mishra, D. Yadav, S. Chandak, \"Towards "
         "a Measure of General Machine Intelligence\", arXiv:2109.12075 (2021)")


class MayaExperiment(BaseModel):
    """The fields of a published experiment file (companion code's ``experiments/*.json``)."""

    model_config = ConfigDict(frozen=True)

    model_name: str
    model_family: str
    train: list[tuple[str, int]]
    test: list[tuple[str, int]]
    compute: float
    train_seconds: float | None
    domains: list[tuple[str, float, int | None, float | None]]
    divergence: float | None


def parse_maya_experiment(obj: Any) -> MayaExperiment:
    """Read a published experiment object; ``ValueError`` names the first missing field."""

    def get(path: str) -> Any:
        cur = obj
        for part in path.split("."):
            if not isinstance(cur, dict) or part not in cur:
                raise ValueError(f"the experiment has no {path}")
            cur = cur[part]
        return cur

    def pairs(path: str) -> list[tuple[str, int]]:
        out = []
        for k, x in enumerate(get(path)):
            if not isinstance(x, dict) or not isinstance(x.get("name"), str):
                raise ValueError(f"{path}[{k}] has no name")
            n = x.get("num_samples")
            if not isinstance(n, int) or isinstance(n, bool):
                raise ValueError(f"{path}[{k}].num_samples is not a whole number")
            out.append((x["name"], n))
        return out

    compute = get("train_cost.compute")
    if not isinstance(compute, int | float) or isinstance(compute, bool):
        raise ValueError("train_cost.compute is not a number")
    doms = []
    for k, x in enumerate(get("performance.domains")):
        div = x.get("divergence") if isinstance(x, dict) else None
        if not isinstance(x, dict) or not isinstance(x.get("name"), str) or \
                not isinstance(div, int | float) or isinstance(div, bool):
            raise ValueError(f"performance.domains[{k}] needs a name and a divergence")
        doms.append((x["name"], float(div), x.get("num_samples"), x.get("perfects")))
    perf = obj.get("performance", {})
    ts = obj.get("train_cost", {}).get("time")
    model = obj.get("model", {}) if isinstance(obj.get("model"), dict) else {}
    return MayaExperiment(
        model_name=str(get("model.train_params.model_name")),
        model_family=str(model.get("name", "")),
        train=pairs("train_set.data"),
        test=pairs("test_set.data"),
        compute=float(compute),
        train_seconds=float(ts) if isinstance(ts, int | float) else None,
        domains=doms,
        divergence=perf.get("divergence") if isinstance(perf.get("divergence"), float) else None,
    )


def experiment_tasks(exp: MayaExperiment) -> list[tuple[str, float]]:
    """(task domain, divergence) in test-set order, the first matching divergence (spec §4)."""
    first: dict[str, float] = {}
    for name, div, _, _ in exp.domains:
        first.setdefault(name, div)
    missing = [t for t, _ in exp.test if t not in first]
    if missing:
        raise ValueError(f"performance.domains lacks the test domain(s) {', '.join(missing)}")
    return [(t, first[t]) for t, _ in exp.test]


def experiment_g_index(
    obj: Any,
    domains: dict[str, list[Any]],
    order: Sequence[str],
    convention: str = "reference",
    *,
    rho: float = 1e-4,
    executor: Any = None,
) -> tuple[MayaExperiment, Any]:
    """The companion code's g-index of a published experiment file (spec §4).

    Returns the parsed experiment and the :class:`~pipeline.metrics.gindex.GIndexResult`
    (per-domain form; Ω from ``domains`` symmetrised in ``order``).

    Raises
    ------
    ValueError
        A malformed experiment, a domain order that does not match the domains, or a task or
        curriculum domain without reference programs.
    """
    from pipeline.metrics.gindex import companion_g_index
    from pipeline.metrics.omega import domain_distance_matrix

    exp = parse_maya_experiment(obj)
    tasks = experiment_tasks(exp)
    unknown = sorted({t for t, _ in tasks} | {c for c, _ in exp.train} - set(domains))
    unknown = [d for d in unknown if d not in domains]
    if unknown:
        raise ValueError(f"no reference programs for domain(s) {', '.join(unknown)}")
    dd = domain_distance_matrix(domains, order, convention, executor=executor)
    return exp, companion_g_index(tasks, exp.train, exp.compute, dd.as_mapping(), rho)


def _toml_str(s: str) -> str:
    return json.dumps(s, ensure_ascii=False)


def maya_experiment_bundle(
    obj: Any, *, source: str, system: str, version: str = "", submitted: str = "2021-09-30"
) -> dict[str, bytes]:
    """Convert a published experiment into the files of a *reported* gindex bundle.

    Numbers are written with ``repr`` so they read back as the same doubles: scoring the
    bundle gives the companion code's value bit for bit.
    """
    exp = parse_maya_experiment(obj)
    tasks = experiment_tasks(exp)
    extra = {name: (n, pf) for name, _, n, pf in exp.domains}
    div = ["domain,divergence,num_samples,perfects"]
    for t, d in tasks:
        n, pf = extra.get(t, (None, None))
        div.append(f"{t},{d!r},{'' if n is None else n},{'' if pf is None else repr(pf)}")
    cur = ["domain,num_samples"] + [f"{c},{n}" for c, n in exp.train]
    comp = ["domain,compute,seconds"]
    comp.append(f",{exp.compute!r},{'' if exp.train_seconds is None else repr(exp.train_seconds)}")
    total = sum(n for _, n in exp.train)
    desc = (f"{exp.model_name} fine-tuned on {total} samples of {len(exp.train)} domains "
            f"({exp.compute!r} PFLOP·s of training compute), tested on {len(tasks)} task "
            "domains. Mean divergences as published; the programs are not published.")
    notes = (f"Converted by gmeter import maya-experiment from {source} (commit {MAYA_COMMIT}); "
             "one row of the paper's Table 1.")
    toml = [
        f"submitted = {submitted}",
        f"contact = {_toml_str(MAYA_URL)}",
        'licence = "MIT"',
        f"description = {_toml_str(desc)}",
        "",
        "[system]",
        f"name = {_toml_str(system)}",
        f"version = {_toml_str(version)}",
        'organisation = "Dotmaya (Maya)"',
        f"url = {_toml_str(MAYA_URL)}",
        "",
        "[origin]",
        f"paper = {_toml_str(PAPER)}",
        f"url = {_toml_str(MAYA_URL)}",
        f"notes = {_toml_str(notes)}",
        'licence_note = "MIT, Copyright (c) 2021 Dotmaya Private Limited"',
        "",
        "[gindex]",
        f"model = {_toml_str(exp.model_name)}",
        f"compute = {exp.compute!r}",
    ]
    if exp.divergence is not None:
        toml.append(f"average_divergence = {exp.divergence!r}")
    return {
        "submission.toml": ("\n".join(toml) + "\n").encode(),
        DIVERGENCES: ("\n".join(div) + "\n").encode(),
        CURRICULUM: ("\n".join(cur) + "\n").encode(),
        COMPUTE: ("\n".join(comp) + "\n").encode(),
    }


TRACK = TrackSpec(
    name="gindex",
    title="g-index",
    paper="G. Venkatasubramanian et al., Towards a Measure of General Machine Intelligence, "
    "arXiv:2109.12075 (2021)",
    primary_metric="g_index",
    secondary_metrics=("theta_mean", "omega_mean", "compute_log2"),
    benchmark_settings=BenchmarkSettings,
    submission_settings=SubmissionSettings,
    validate_benchmark=validate_benchmark,
    validate_bundle=validate_bundle,
    score=score,
    bundle_template=bundle_template,
    benchmark_template=benchmark_template,
)
