"""g-index benchmarks: the 32×32 Δ matrix against a straightforward implementation, a 150-node
composed pair, a batch of mutated and composed pairs, and the 8 published g-index values.

Inputs are built once in :func:`benchmarks` (not timed) from the shipped reference flows
(``submissions/maya-fbp-16/reference/domains``); composed flows are generated deterministically
(:func:`pipeline.metrics.gindex.flows.compose_flows` / ``mutate_flow`` with fixed seeds).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import networkx as nx
import numpy as np

from bench.gindex_baseline import reference_delta
from bench.harness import quick

REPO = Path(__file__).resolve().parent.parent
DOMAINS = REPO / "submissions" / "maya-fbp-16" / "reference" / "domains"
EXPERIMENTS = REPO / "tests" / "data" / "gindex" / "experiments"

# --------------------------------------------------------------------------- the baseline
# The same straightforward Δ the tests use as their independent oracle.
baseline_delta = reference_delta


def _nx_mwc_matrix(flows: list[Any]) -> list[list[float]]:
    """``networkx.max_weight_clique`` (integer-scaled weights) on our candidates/conflicts."""
    from pipeline.metrics.gindex.delta import candidates, conflict_pairs
    from pipeline.metrics.gindex.flows import normalise_flow

    norm = [normalise_flow(f) for f in flows]
    out = []
    for fa in norm:
        row = []
        for fb in norm:
            cu, cv, cw, _ = candidates(fa, fb)
            if not cu:
                row.append(1.0)
                continue
            conf = set(conflict_pairs(fa, fb, cu, cv, strict=False))
            g = nx.Graph()
            for i in range(len(cu)):
                g.add_node(i, weight=round(cw[i] * 720720))
            g.add_edges_from(
                (i, j) for i in range(len(cu)) for j in range(i + 1, len(cu))
                if cu[i] != cu[j] and cv[i] != cv[j] and (i, j) not in conf
            )
            s = nx.max_weight_clique(g)[1] / 720720
            row.append(1 - (s / fa.n) * (s / fb.n))
        out.append(row)
    return out


# --------------------------------------------------------------------------- inputs
def _flows() -> list[list[dict[str, Any]]]:
    return [json.loads(p.read_text())["flow"] for p in sorted(DOMAINS.glob("*/*.json"))]


def composed_pair(flows: list[Any], n_nodes: int = 150, seed: int = 7) -> tuple[Any, Any]:
    """Two composed flows of ``n_nodes`` nodes: the same parts, b in another order (reversed
    chain links between parts) with a few mutations."""
    from pipeline.metrics.gindex.flows import compose_flows, mutate_flow

    rng = np.random.default_rng(seed)
    idx: list[int] = []
    total = 0
    for i in rng.permutation(np.arange(64) % 32).tolist():
        if total + len(flows[i]) <= n_nodes:
            idx.append(i)
            total += len(flows[i])
    a = compose_flows([flows[i] for i in idx])
    b = compose_flows([flows[i] for i in rng.permutation(idx).tolist()])
    b = mutate_flow(b, rng, 10)
    return a, b


def pair_batch(flows: list[Any], n_mutated: int, n_composed: int) -> list[tuple[Any, Any]]:
    """Mutations of the shipped flows and composed 30–150-node flows (like the hidden set)."""
    from pipeline.metrics.gindex.flows import compose_flows, mutate_flow

    rng = np.random.default_rng(2021)
    pairs = []
    for k in range(n_mutated):
        a = flows[k % 32]
        src = a if k % 2 else flows[int(rng.integers(32))]
        b = mutate_flow(src, rng, int(rng.integers(1, 6)))
        pairs.append((a, b) if k % 3 else (b, a))
    for _ in range(n_composed):
        parts = [flows[i] for i in rng.integers(0, 32, int(rng.integers(4, 20))).tolist()]
        a = compose_flows(parts)
        b = mutate_flow(compose_flows([parts[i] for i in rng.permutation(len(parts))]),
                        rng, int(rng.integers(0, 30)))
        pairs.append((a, b))
    return pairs


def benchmarks() -> list[dict[str, Any]]:
    from pipeline.lab.gindex.published import (
        MAYA_DOMAIN_ORDER,
        experiment_tasks,
        parse_maya_experiment,
    )
    from pipeline.metrics.gindex.delta import delta, delta_matrix
    from pipeline.metrics.gindex.index import companion_g_index
    from pipeline.metrics.gindex.omega import domain_distance_matrix

    flows = _flows()
    a150, b150 = composed_pair(flows)
    r150 = delta(a150, b150)
    assert r150.exact and len(a150) == 150
    batch = pair_batch(flows, 40 if quick() else 300, 4 if quick() else 16)
    exps = [parse_maya_experiment(json.loads(p.read_text()))
            for p in sorted(EXPERIMENTS.glob("*.json"))]
    domains = {d.name: [json.loads(f.read_text())["flow"] for f in sorted(d.glob("*.json"))]
               for d in sorted(DOMAINS.iterdir())}

    def eight() -> list[float]:
        dd = domain_distance_matrix(domains, MAYA_DOMAIN_ORDER).as_mapping()
        return [companion_g_index(experiment_tasks(e), e.train, e.compute, dd).g_index
                for e in exps]

    def matrix_baseline() -> list[list[float]]:
        return [[baseline_delta(a, b) for b in flows] for a in flows]

    return [
        {
            "name": "gindex: Δ matrix 32×32 of the shipped flows",
            "run": lambda: delta_matrix(flows),
            "baseline": matrix_baseline,
            "warmup": 1,
            "repeat": 3 if quick() else 7,
            "target": ">= 10x baseline",
            "check": lambda med, base: base is not None and base / med >= 10,
            "note": "1024 ordered pairs, reference convention. Baseline: the association "
            "graph built pair by pair in Python + networkx.find_cliques, max by weight (the "
            "reference's own method). Ours: exact branch and bound over assignment bounds, "
            "each flow normalised once, symmetric pairs computed once",
        },
        {
            "name": "gindex: Δ matrix 32×32 with networkx.max_weight_clique",
            "run": lambda: _nx_mwc_matrix(flows),
            "baseline": matrix_baseline,
            "repeat": 1 if quick() else 3,
            "target": "informational (the alternative the issue suggests)",
            "check": lambda med, base: None,
            "note": "integer-scaled weights (× 720720) on our candidates and conflicts: slower "
            "than find_cliques here and impractical on composed flows (minutes), hence the "
            "branch and bound",
        },
        {
            "name": "gindex: Δ of two composed 150-node flows",
            "run": lambda: delta(a150, b150),
            "baseline": None,
            "warmup": 1,
            "repeat": 3 if quick() else 9,
            "target": "< 0.2 s",
            "check": lambda med, base: med < 0.2,
            "note": f"150 vs {len(b150)} nodes, {r150.candidates} candidates (association "
            "graph of ~10^5 edges), parts in another order (reversed links) and 10 mutations; "
            "exact. The reference does not finish in minutes on such pairs (spec §8)",
        },
        {
            "name": f"gindex: Δ of {len(batch)} mutated and composed pairs",
            "run": lambda: [delta(a, b).delta for a, b in batch],
            "baseline": None,
            "repeat": 1 if quick() else 3,
            "target": "< 3 s",
            "check": lambda med, base: med < 3.0,
            "note": "mutations of the shipped flows and 4–20-part composed flows (30–150 "
            "nodes), in process, exact",
        },
        {
            "name": "gindex: the 8 published g-index values from the flows",
            "run": eight,
            "baseline": None,
            "repeat": 5,
            "target": "< 0.5 s",
            "check": lambda med, base: med < 0.5,
            "note": "domain distances (136 domain pairs, authors' order) + 8 experiments; the "
            "companion CLI needs 3.5 s",
        },
    ]
