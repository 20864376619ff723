"""The ``gindex`` track's bundle layout, readers and validation.

The column rules of the files a bundle brings (names and settings in
:mod:`pipeline.tracks.gindex.settings`); reading the benchmark's reference programs
(``<domains_dir>/<domain>/<task>.json``); the structure checks of a program; and
:func:`validate_benchmark` / :func:`validate_bundle`, which report every problem as a
:class:`~pipeline.errors.Problem`.
"""

from __future__ import annotations

import hashlib
import json
import math
from typing import Any, NamedTuple

from pipeline.errors import Problem
from pipeline.inputs import BenchmarkInput, BundleInput, FileSet
from pipeline.tracks.filecheck import Column, check_csv, iter_json_problems
from pipeline.tracks.gindex.settings import (
    COMPUTE,
    CURRICULUM,
    CURRICULUM_SAMPLES,
    DIVERGENCES,
    MAX_COMPUTE,
    PROGRAMS,
    BenchmarkSettings,
    settings_of,
    submission_of,
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
    from pipeline.metrics.gindex.flows import load_flow

    return load_flow(fs.json(path))


def flow_problems(obj: Any, where: str, max_nodes: int) -> list[Problem]:
    """Structure checks of one program: node objects with id/type, wires, size, cycles."""
    from pipeline.metrics.gindex.flows import FlowError, load_flow

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
    """One directed cycle of the wiring (node ids), or [] for a DAG.

    Iterative depth-first search with three colours: O(N + E) in the nodes and wires, whatever
    the shape (a 17 MB program is checked in well under a second).
    """
    ids = {nd["id"] for nd in nodes}
    succ: dict[Any, list[Any]] = {}
    for nd in nodes:
        w = nd.get("wires", [])
        flat = [t for p in w for t in p] if w and isinstance(w[0], list) else list(w)
        succ[nd["id"]] = [t for t in flat if t in ids]
    state: dict[Any, int] = {}
    for root in succ:
        if state.get(root):
            continue
        stack: list[tuple[Any, int]] = [(root, 0)]
        path: list[Any] = []
        on_path: dict[Any, int] = {}
        while stack:
            v, i = stack.pop()
            if i == 0:
                state[v] = 1
                on_path[v] = len(path)
                path.append(v)
            if i < len(succ[v]):
                stack.append((v, i + 1))
                t = succ[v][i]
                if state.get(t) == 1:
                    return [str(x) for x in path[on_path[t]:]] + [str(t)]
                if not state.get(t):
                    stack.append((t, 0))
            else:
                state[v] = 2
                path.pop()
                del on_path[v]
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


class CurriculumEvidence(NamedTuple):
    """What the bundle proves of its curriculum (issue 20, item 4d).

    Attributes
    ----------
    verified : bool
        Every domain of ``curriculum.csv`` has its samples in the bundle, as many as declared.
    sha256 : dict
        Domain → SHA-256 of its ``curriculum/<domain>.jsonl``.
    problems : list of Problem
        Sample files that contradict ``curriculum.csv`` (wrong count, unknown domain, lines
        that are not JSON objects).
    """

    verified: bool
    sha256: dict[str, str]
    problems: list[Problem]


def curriculum_evidence(fs: FileSet, rows: list[dict[str, Any]]) -> CurriculumEvidence:
    r"""Count and hash the curriculum's samples against the sizes ``curriculum.csv`` declares.

    The curriculum size :math:`|C_i|` sets the weight :math:`W_i = 1/(1 + \log_2 |C_i|)` of
    paper eq. 8: a self-declared size moves the g-index (one sample per domain instead of
    10 240 multiplies every term by 14). The paper defines :math:`|C_i|` as the number of
    training samples the system saw, an observation, so the bundle brings them:
    ``curriculum/<domain>.jsonl``, one JSON object per non-blank line (e.g. ``{"prompt",
    "program"}``). Only then is the size counted (verified); without the folder the entry is
    reported; a folder that disagrees with ``curriculum.csv`` is a validation error.
    """
    files = sorted(p for p in fs.files if p.startswith(CURRICULUM_SAMPLES))
    if not files:
        return CurriculumEvidence(False, {}, [])
    declared = {str(r["domain"]): int(r["num_samples"]) for r in rows}
    problems: list[Problem] = []
    digests: dict[str, str] = {}
    for p in files:
        name = p[len(CURRICULUM_SAMPLES):]
        if "/" in name or not name.endswith(".jsonl") or name[:-6] not in declared:
            problems.append(Problem(fs.where(p), "-", "is not curriculum/<domain>.jsonl of a "
                                    "domain listed in curriculum.csv",
                                    "name each sample file after a curriculum.csv domain"))
    for domain, n in sorted(declared.items()):
        p = f"{CURRICULUM_SAMPLES}{domain}.jsonl"
        if not fs.has(p):
            problems.append(Problem(
                fs.where(p), "-", f"is missing: curriculum.csv declares {n} samples of "
                f"{domain!r} and the bundle brings the samples of other domains",
                "add every domain's training samples, one JSON object per line"))
            continue
        data = fs.files[p]
        digests[domain] = hashlib.sha256(data).hexdigest()
        count, bad = _count_samples(data)
        if bad:
            problems.append(Problem(fs.where(p), bad, "is not a JSON object",
                                    "write one training sample per line as a JSON object"))
        elif count != n:
            problems.append(Problem(
                fs.where(CURRICULUM), f"{domain}: num_samples",
                f"declares {n} samples; {p} holds {count}",
                "declare the number of samples the bundle brings (the benchmark counts them)"))
    return CurriculumEvidence(not problems and len(digests) == len(declared), digests, problems)


def _count_samples(data: bytes) -> tuple[int, str]:
    """Non-blank lines of a JSON Lines file, and the first line that is not an object."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return 0, "line 1"
    count = 0
    for k, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            obj = json.loads(line)
        except (ValueError, RecursionError):
            obj = None
        if not isinstance(obj, dict):
            return count, f"line {k}"
        count += 1
    return count, ""


def _experience_problems(fs: FileSet, s: BenchmarkSettings, total: float,
                         per_domain: dict[str, float]) -> list[Problem]:
    r"""The g-index's domain: :math:`\rho + E > 0` with :math:`E = \log_2` compute.

    Below :math:`2^{-\rho}` units (about 1 PFLOP·s) the denominator of every contribution is
    zero or negative, and just above it the g-index explodes (paper eq. 9): a log whose
    :math:`\rho + E` is below the benchmark's ``min_experience`` floor is refused.
    Per-domain compute is checked too when the benchmark uses the task form.
    """
    rho = s.rho
    unit = s.compute_unit
    out = []
    checks = [("total", total)]
    if s.form == "task":
        checks += sorted(per_domain.items())
    for what, value in checks:
        if value <= 0:
            continue  # read_compute has reported it
        if not math.isfinite(value) or value > MAX_COMPUTE:
            out.append(Problem(fs.where(COMPUTE), "compute",
                               f"{what} compute {value:.3g} {unit} is beyond {MAX_COMPUTE:g}",
                               "check the units"))
        elif rho + math.log2(value) < s.min_experience:
            floor = 2 ** (s.min_experience - rho)
            out.append(Problem(
                fs.where(COMPUTE), "compute",
                f"{what} compute {value:.6g} {unit} gives ρ + E = "
                f"{rho + math.log2(value):.4g}; the g-index needs ρ + E > 0 and at least the "
                f"benchmark's compute floor min_experience = {s.min_experience:g} (near the "
                "pole of eq. 9 the g-index explodes; the benchmark owns the floor)",
                f"log at least {floor:.6g} {unit}, in the benchmark's unit ({unit})"))
    return out


def task_names(bench: BenchmarkInput) -> dict[str, list[str]]:
    """Domain → test task ids: the sealed task list of a sealed benchmark, else the files."""
    from pipeline.tracks.gindex.sealed import is_sealed, sealed_task_names

    if is_sealed(bench):
        return sealed_task_names(bench)
    return {d: [t for t, _ in items] for d, items in reference_tasks(bench).items()}


def _sealed_problems(bench: BenchmarkInput) -> list[Problem]:
    """A sealed benchmark: a task list in ``domain/task`` form; a revealed set must verify."""
    from pipeline.tracks.gindex.sealed import commitment, public_set

    s = settings_of(bench)
    where = bench.files.where("benchmark.toml")
    problems = []
    bad = [t for t in s.sealed_tasks if t.count("/") != 1 or "" in t.split("/")]
    if not s.sealed_tasks or bad:
        problems.append(Problem(where, "gindex.sealed_tasks",
                                f"must list every sealed task as domain/task ({bad[:3]} "
                                "are not)" if bad else "is empty",
                                "list the sealed test tasks; only the programs stay sealed"))
    public = public_set(bench)
    if public:
        listed = sorted(f"{t[:-5]}" for t in public)
        if commitment(public) != s.sealed_sha256 or listed != sorted(s.sealed_tasks):
            problems.append(Problem(
                bench.files.where(s.domains_dir), "-",
                "the revealed reference programs do not match gindex.sealed_sha256 (or "
                "gindex.sealed_tasks)",
                "reveal exactly the sealed set that was committed to"))
    return problems


def validate_benchmark(bench: BenchmarkInput) -> list[Problem]:
    """Reference programs parse and are DAGs; the domain order lists every domain once."""
    from pipeline.tracks.gindex.sealed import is_sealed

    s = settings_of(bench)
    fs = bench.files
    tasks = reference_tasks(bench)
    problems: list[Problem] = []
    if is_sealed(bench):
        problems += _sealed_problems(bench)
        if not tasks:  # sealed and not revealed: nothing public to check
            return problems
    if not tasks:
        base = s.domains_dir
        return [Problem(fs.where("benchmark.toml"), "gindex.domains_dir",
                        f"no reference programs under {base}/<domain>/<task>.json",
                        "add the reference programs, one folder per task domain")]
    paths = [p for v in tasks.values() for _, p in v]
    json_probs = list(iter_json_problems(fs, paths))
    bad = {p.file for p in json_probs}
    problems += json_probs
    seen: dict[str, str] = {}
    max_nodes = s.max_nodes
    for d, items in tasks.items():
        for task, p in items:
            if task in seen:
                problems.append(Problem(fs.where(p), "-", f"task id {task!r} also in {seen[task]}",
                                        "task ids (file names) must be unique"))
            seen[task] = d
            if fs.where(p) not in bad:
                problems += flow_problems(fs.json(p), fs.where(p), max_nodes)
    declared = list(s.domain_order)
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
    s = settings_of(bench)
    fs = bundle.files
    tasks = task_names(bench)
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
    if not probs:
        problems += curriculum_evidence(fs, rows).problems
    total, per_domain, probs = read_compute(fs, s.tflops_seconds_per_unit)
    problems += probs
    problems += _experience_problems(fs, s, total, per_domain)
    declared = submission_of(bundle).compute
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
        known = {t for v in tasks.values() for t in v}
        problems += list(iter_json_problems(fs, sorted(progs)))
        bad = {p.file for p in problems}
        max_nodes = s.max_nodes
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
