"""A straightforward Δ of the companion code (spec §2.9 recipe), for comparison only.

The association graph is built pair by pair in Python and every maximal clique enumerated
(``networkx.find_cliques``), or, with ``brute=True``, every candidate subset tried. It is the
independent oracle of ``tests/test_gindex_delta.py`` and the baseline that
``bench/bench_gindex.py`` times gmeter's branch and bound against: one implementation, so
the benchmark measures against exactly what the tests trust.
"""

from __future__ import annotations

import itertools
from typing import Any

import networkx as nx

SKIP = {"id", "x", "y", "z", "wires", "type", "endpointUrl", "name", "group", "tab", "label"}


def _ref_norm(flow: list[dict[str, Any]]) -> dict[Any, dict[str, Any]]:
    out = {}
    for node in flow:
        n = dict(node)
        w = n.get("wires", [])
        if len(w) > 0 and isinstance(w[0], list):
            w = [t for port in w for t in port]
        n["wires"] = w
        out[n["id"]] = n
    return out


def _ref_w(n1: dict[str, Any], n2: dict[str, Any]) -> float:
    if "type" not in n1 or "type" not in n2 or n1["type"] != n2["type"]:
        return 0
    num = den = 0
    for k in n1:
        if k in SKIP:
            continue
        den += 1
        v1, v2 = n1[k], n2.get(k)
        if (v1 is None) != (v2 is None) or v1 != v2:
            continue
        num += 1
    return 1 if (den == 0 or num == den) else num / den


def reference_delta(
    a: list[dict[str, Any]], b: list[dict[str, Any]], *, brute: bool = False
) -> float:
    """A straightforward reimplementation of the companion code (spec §2.9 recipe):
    association graph pair by pair, then networkx.find_cliques (or brute force)."""
    A, B = _ref_norm(a), _ref_norm(b)
    if not A or not B:
        return 1.0
    nm = [(k1, k2, _ref_w(n1, n2)) for k1, n1 in A.items() for k2, n2 in B.items()]
    nm = [x for x in nm if x[2] > 0]
    if not nm:
        return 1.0

    def ok(i: int, j: int) -> bool:
        u1, v1, _ = nm[i]
        u2, v2, _ = nm[j]
        if u1 == u2 or v1 == v2:
            return False
        return (u2 in A[u1]["wires"]) == (v2 in B[v1]["wires"]) or (
            u1 in A[u2]["wires"]
        ) == (v1 in B[v2]["wires"])

    if brute:
        best = 0.0
        for r in range(1, len(nm) + 1):
            for sub in itertools.combinations(range(len(nm)), r):
                if all(ok(i, j) for i, j in itertools.combinations(sub, 2)):
                    best = max(best, sum(nm[i][2] for i in sub))
        s = best
    else:
        g = nx.Graph()
        g.add_nodes_from(range(len(nm)))
        g.add_edges_from(
            (i, j) for i in range(len(nm)) for j in range(i + 1, len(nm)) if ok(i, j)
        )
        s = max(sum(nm[i][2] for i in c) for c in nx.find_cliques(g))
    return 1 - (s / len(A)) * (s / len(B))
