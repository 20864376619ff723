r"""The divergence Δ between two flow programs (paper eqs. 2, 5 and Appendix C).

.. math::

    \Delta(a, b) = 1 - \frac{S}{n_a} \cdot \frac{S}{n_b},
    \qquad S = \max_{\text{cliques } Q} \sum_{(u,v) \in Q} w(u, v)

where :math:`n_a, n_b` are the numbers of (unique) nodes of the two flows, :math:`w` the node
similarity (:mod:`pipeline.metrics.gindex.flows`) and the maximum runs over the cliques of the
association graph (:mod:`pipeline.metrics.gindex.clique`): one-to-one node mappings between nodes of
the same type whose wiring does not conflict.

Two conventions (spec ``gindex-spec.md`` §2 and §10):

========================  ===================================  =================================
                          ``reference`` (companion code)       ``paper``
========================  ===================================  =================================
node similarity           first node's keys, skip list         union of keys, strict equality
                          incl. ``name``/``label``; asymmetric  (only ids, layout, containers
                                                               skipped); symmetric
edge rule                 consistent in either direction       consistent in both (eq. 12)
                          (only reversed edges conflict)
typeless node             matches nothing                      typeless nodes form one type
empty flow(s)             Δ = 1                                both empty 0, one empty 1
========================  ===================================  =================================

The clique is always the exact maximum-weight clique. The companion code switches to the
``cliquematch`` library above 2000 association edges (a maximum-*cardinality* clique, often not
finishing); spec §2.5 and §10.1 recommend the maximum-weight semantics for every size, which is
what the reference computes whenever its networkx path finishes.

References
----------
.. [1] G. Venkatasubramanian et al., "Towards a Measure of General Machine Intelligence",
   arXiv:2109.12075, 2021, eqs. (1), (2), (5), (12), (13). Companion code
   github.com/mayahq/g-index-benchmark, ``node_utils.py``.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, NamedTuple

import numpy as np
import numpy.typing as npt

from pipeline.metrics.gindex.clique import assignment, max_weight_association_clique
from pipeline.metrics.gindex.flows import (
    CONVENTIONS,
    FlowError,
    NormalFlow,
    normalise_flow,
    w_paper,
    w_reference,
)
from pipeline.metrics.parallel import MapFn, serial_map

__all__ = [
    "CONVENTIONS",
    "DeltaResult",
    "DeltaTooLarge",
    "FlowError",
    "candidates",
    "delta",
    "delta_normal",
]


MAX_PAIRS_EXAMINED = 4_000_000
r"""Most same-type node pairs (:math:`\sum_t |a_t|\,|b_t|`) examined for candidates."""
MAX_CANDIDATES = 20_000
"""Most vertices of the association graph (candidate node pairs with w > 0)."""
MAX_CONFLICT_WORK = 1_000_000
"""Most candidate pairs examined along edges for wiring conflicts."""


class DeltaTooLarge(ValueError):
    """Two flows whose association graph exceeds the budget: too large for an exact Δ.

    Raised *before* the large structures are built, so memory stays bounded (a hostile pair
    of same-type programs would otherwise need gigabytes). Δ ≤ 1 always holds, so a caller
    that needs a number may use 1 as an upper bound and mark it inexact.
    """


def _budget(fa: NormalFlow, fb: NormalFlow) -> None:
    """Raise :class:`DeltaTooLarge` when the candidate search would exceed its budget."""
    pairs = sum(len(is_) * len(fb.by_type.get(t, ())) for t, is_ in fa.by_type.items())
    if pairs > MAX_PAIRS_EXAMINED:
        raise DeltaTooLarge(
            f"too large for exact Δ: {pairs:,} same-type node pairs (limit "
            f"{MAX_PAIRS_EXAMINED:,}; flows of {fa.n} and {fb.n} nodes)")


def _conflict_budget(fa: NormalFlow, fb: NormalFlow, cu: Sequence[int],
                     cv: Sequence[int]) -> None:
    """Raise :class:`DeltaTooLarge` when the conflict search would exceed its budget."""
    if len(cu) > MAX_CANDIDATES:
        raise DeltaTooLarge(f"too large for exact Δ: {len(cu):,} candidate node pairs (limit "
                            f"{MAX_CANDIDATES:,})")
    rows = np.bincount(np.asarray(cu, dtype=np.intp), minlength=fa.n)
    cols = np.bincount(np.asarray(cv, dtype=np.intp), minlength=fb.n)
    work = 0
    for counts, flow in ((rows, fa), (cols, fb)):
        for x1, succ in enumerate(flow.succ):
            if counts[x1] and succ:
                work += int(counts[x1]) * int(sum(int(counts[x2]) for x2 in succ))
        if work > MAX_CONFLICT_WORK:
            raise DeltaTooLarge(f"too large for exact Δ: over {MAX_CONFLICT_WORK:,} candidate "
                                "pairs along edges to compare")


@dataclass(frozen=True)
class DeltaResult:
    """Δ between two flows and the mapping that attains it.

    Attributes
    ----------
    delta : float
        Δ in [0, 1]; 0 for identical programs, 1 for nothing in common.
    mapping : tuple of (id_a, id_b, w)
        The node pairs of the best clique, in flow a's node order.
    sum_w : float
        :math:`S`, the clique's total similarity.
    n_a, n_b : int
        Unique node counts.
    exact : bool
        False when the clique search stopped at its budget (then ``delta`` is an upper bound).
    convention : str
        ``reference`` or ``paper``.
    candidates : int
        Vertices of the association graph.
    search_nodes : int
        Branch-and-bound subproblems evaluated.
    """

    delta: float
    mapping: tuple[tuple[Any, Any, float], ...]
    sum_w: float
    n_a: int
    n_b: int
    exact: bool
    convention: str
    candidates: int = 0
    search_nodes: int = 0

    def as_dict(self, seconds: float | None = None) -> dict[str, Any]:
        """JSON-ready form (the ``gmeter delta --json`` keys)."""
        out: dict[str, Any] = {
            "delta": self.delta,
            "sum_w": self.sum_w,
            "n_a": self.n_a,
            "n_b": self.n_b,
            "mapping": [{"a": a, "b": b, "w": w} for a, b, w in self.mapping],
            "exact": self.exact,
        }
        if seconds is not None:
            out["seconds"] = seconds
        return out


def candidates(
    fa: NormalFlow, fb: NormalFlow
) -> tuple[list[int], list[int], list[float], list[tuple[int, int]]]:
    """Vertices of the association graph: node pairs of one type with :math:`w > 0`.

    Returns
    -------
    cu, cv, cw : lists
        Row index (flow a), column index (flow b) and weight of each candidate, grouped by
        type. The reference sorts its ``nodemap`` differently; that order does not affect Δ.
    spans : list of (start, stop)
        The candidate index range of each type present on both sides.
    """
    cu: list[int] = []
    cv: list[int] = []
    cw: list[float] = []
    spans: list[tuple[int, int]] = []
    gb = fb.by_type
    if not gb:
        return cu, cv, cw, spans
    ref = fa.convention == "reference"
    attrs_a, attrs_b, nodes_b = fa.attrs, fb.attrs, fb.nodes
    for t, is_ in fa.by_type.items():
        js = gb.get(t)
        if js is None:
            continue
        start = len(cu)
        for i in is_:
            a1 = attrs_a[i]
            den = len(a1.items)
            s1 = a1.iset
            for j in js:
                a2 = attrs_b[j]
                if not ref:
                    w = w_paper(a1, a2)
                elif den == 0:
                    w = 1.0
                elif s1 is not None and a2.iset is not None:  # w_reference, inlined
                    num = len(s1 & a2.iset)
                    if a1.none_keys:
                        num += len(a1.none_keys - a2.keys)
                    w = 1.0 if num == den else num / den
                else:
                    w = w_reference(a1, a2, nodes_b[j])
                if w > 0:
                    cu.append(i)
                    cv.append(j)
                    cw.append(w)
        if len(cu) > start:
            spans.append((start, len(cu)))
    return cu, cv, cw, spans


def conflict_pairs(
    fa: NormalFlow, fb: NormalFlow, cu: Sequence[int], cv: Sequence[int], *, strict: bool
) -> list[tuple[int, int]]:
    """Pairs of candidates ``(i, j)``, ``i < j``, whose wiring conflicts (sorted).

    A conflict needs an edge between the two nodes in flow a or in flow b, so only candidate
    pairs along edges are examined: along a's edges, and along b's edges under the strict
    rule (under the loose rule only along b's 2-cycles, since without an edge in a both
    directions must differ in b).
    """
    rows: dict[int, list[int]] = {}
    cols: dict[int, list[int]] = {}
    for k, (u, v) in enumerate(zip(cu, cv, strict=True)):
        rows.setdefault(u, []).append(k)
        cols.setdefault(v, []).append(k)
    sa, sb = fa.succ, fb.succ
    if len(cu) > 64:
        work = 0
        for x1, ks1 in rows.items():
            for x2 in sa[x1]:
                ks2 = rows.get(x2)
                if ks2 is not None:
                    work += len(ks1) * len(ks2)
        if work > 4000:
            return _conflict_pairs_np(fa, fb, cu, cv, strict=strict)
    seen: set[tuple[int, int]] = set()
    out: list[tuple[int, int]] = []

    def visit(group: dict[int, list[int]], succ: tuple[frozenset[int], ...], b_side: bool) -> None:
        for x1, ks1 in group.items():
            for x2 in succ[x1]:
                if b_side and not strict and x1 not in succ[x2]:
                    continue
                ks2 = group.get(x2)
                if ks2 is None or x2 == x1:
                    continue
                for i in ks1:
                    u1, v1 = cu[i], cv[i]
                    for j in ks2:
                        u2, v2 = cu[j], cv[j]
                        if u1 == u2 or v1 == v2:
                            continue
                        key = (i, j) if i < j else (j, i)
                        if key in seen:
                            continue
                        seen.add(key)
                        a1 = u2 in sa[u1]
                        a2 = u1 in sa[u2]
                        b1 = v2 in sb[v1]
                        b2 = v1 in sb[v2]
                        if (a1 != b1 or a2 != b2) if strict else (a1 != b1 and a2 != b2):
                            out.append(key)

    visit(rows, sa, False)
    visit(cols, sb, True)
    out.sort()
    return out


def _pairs_along_edges(
    keys: npt.NDArray[np.intp], n: int, edges: npt.NDArray[np.intp]
) -> tuple[npt.NDArray[np.intp], npt.NDArray[np.intp]]:
    """All candidate pairs (i, j) with ``keys[i] = p`` and ``keys[j] = q`` for edges (p, q)."""
    order = np.argsort(keys, kind="stable")
    starts = np.searchsorted(keys[order], np.arange(n + 1))
    counts = np.diff(starts)
    p, q = edges[:, 0], edges[:, 1]
    cnt = counts[p] * counts[q]
    total = int(cnt.sum())
    if total == 0:
        empty = np.zeros(0, dtype=np.intp)
        return empty, empty
    e = np.repeat(np.arange(len(p)), cnt)
    offs = np.arange(total) - np.repeat(np.cumsum(cnt) - cnt, cnt)
    qc = counts[q][e]
    i = order[starts[p][e] + offs // qc]
    j = order[starts[q][e] + offs % qc]
    return i, j


def _conflict_pairs_np(
    fa: NormalFlow, fb: NormalFlow, cu: Sequence[int], cv: Sequence[int], *, strict: bool
) -> list[tuple[int, int]]:
    """Vectorised :func:`conflict_pairs` for large flows (same result)."""
    A, B = fa.adj, fb.adj
    ua = np.asarray(cu, dtype=np.intp)
    va = np.asarray(cv, dtype=np.intp)
    ea = np.argwhere(A)
    ea = ea[ea[:, 0] != ea[:, 1]]
    eb = np.argwhere(B)
    eb = eb[eb[:, 0] != eb[:, 1]]
    if not strict:
        eb = eb[B[eb[:, 1], eb[:, 0]]]  # only b's 2-cycles can conflict without an a-edge
    i1, j1 = _pairs_along_edges(ua, fa.n, ea)
    i2, j2 = _pairs_along_edges(va, fb.n, eb)
    i = np.concatenate([i1, i2])
    j = np.concatenate([j1, j2])
    u1, u2, v1, v2 = ua[i], ua[j], va[i], va[j]
    ok = (u1 != u2) & (v1 != v2)
    d1 = A[u1, u2] != B[v1, v2]
    d2 = A[u2, u1] != B[v2, v1]
    bad = ok & ((d1 | d2) if strict else (d1 & d2))
    lo = np.minimum(i[bad], j[bad])
    hi = np.maximum(i[bad], j[bad])
    key = np.unique(lo * len(ua) + hi)
    return list(zip((key // len(ua)).tolist(), (key % len(ua)).tolist(), strict=True))


def _matching(
    cu: list[int], cv: list[int], cw: list[float], spans: list[tuple[int, int]]
) -> list[int]:
    """Maximum-weight bipartite matching, type by type (no conflicts to respect)."""
    chosen: list[int] = []
    for start, stop in spans:
        if stop - start == 1:
            chosen.append(start)
            continue
        rs = set(cu[start:stop])
        cs = set(cv[start:stop])
        if stop - start == len(rs) == len(cs):  # already one-to-one
            chosen.extend(range(start, stop))
        elif len(rs) == 1 or len(cs) == 1:
            best = max(range(start, stop), key=lambda k: cw[k])
            chosen.append(best)
        else:
            rl = sorted(rs)
            cl = sorted(cs)
            ri = {u: i for i, u in enumerate(rl)}
            ci = {v: i for i, v in enumerate(cl)}
            mat = np.zeros((len(rl), len(cl)))
            idx = {}
            for k in range(start, stop):
                mat[ri[cu[k]], ci[cv[k]]] = cw[k]
                idx[ri[cu[k]], ci[cv[k]]] = k
            r, c = assignment(mat)
            chosen.extend(idx[x, y] for x, y in zip(r, c, strict=True) if mat[x, y] > 0)
    return chosen


class _Solved(NamedTuple):
    s: float
    chosen: list[int]
    cu: list[int]
    cv: list[int]
    cw: list[float]
    exact: bool
    nodes: int


def _solve(
    fa: NormalFlow, fb: NormalFlow, max_nodes: int | None, time_limit: float | None
) -> _Solved:
    """Solve the maximum-weight clique of the association graph of two non-empty flows.

    Raises
    ------
    DeltaTooLarge
        Before building anything over budget.
    """
    _budget(fa, fb)
    cu, cv, cw, spans = candidates(fa, fb)
    if not cu:
        return _Solved(0.0, [], cu, cv, cw, True, 0)
    _conflict_budget(fa, fb, cu, cv)
    exact, nodes = True, 0
    conf = conflict_pairs(fa, fb, cu, cv, strict=fa.convention == "paper") if len(cu) > 1 else []
    # the best matching ignoring conflicts bounds the clique; without a conflicting pair
    # inside it, it is the answer (the common case)
    chosen = _matching(cu, cv, cw, spans)
    picked = set(chosen)
    if any(i in picked and j in picked for i, j in conf):
        res = max_weight_association_clique(
            np.asarray(cu, dtype=np.intp),
            np.asarray(cv, dtype=np.intp),
            np.asarray(cw, dtype=np.float64),
            conf,
            max_nodes=max_nodes,
            time_limit=time_limit,
        )
        chosen, exact, nodes = list(res.chosen), res.exact, res.nodes
    chosen.sort()
    s = 0.0
    for k in chosen:
        s += cw[k]
    return _Solved(s, chosen, cu, cv, cw, exact, nodes)


def delta_normal(
    fa: NormalFlow,
    fb: NormalFlow,
    *,
    max_nodes: int | None = 200_000,
    time_limit: float | None = None,
) -> DeltaResult:
    """Δ between two normalised flows (see :func:`delta`)."""
    if fa.convention != fb.convention:
        raise ValueError("both flows must be normalised under the same convention")
    conv = fa.convention
    n_a, n_b = fa.n, fb.n
    if n_a == 0 or n_b == 0:
        d = 0.0 if (conv == "paper" and n_a == n_b) else 1.0
        return DeltaResult(d, (), 0.0, n_a, n_b, True, conv)
    sol = _solve(fa, fb, max_nodes, time_limit)
    cu, cv, cw = sol.cu, sol.cv, sol.cw
    mapping = tuple(
        (fa.ids[cu[k]], fb.ids[cv[k]], cw[k]) for k in sorted(sol.chosen, key=lambda k: cu[k])
    )
    s = sol.s
    d = 1 - (s / n_a) * (s / n_b)
    return DeltaResult(d, mapping, s, n_a, n_b, sol.exact, conv, len(cu), sol.nodes)


def delta_value(fa: NormalFlow, fb: NormalFlow) -> float:
    """Only Δ (no mapping) between two normalised flows: the kernel of matrices."""
    n_a, n_b = fa.n, fb.n
    if n_a == 0 or n_b == 0:
        return 0.0 if (fa.convention == "paper" and n_a == n_b) else 1.0
    s = _solve(fa, fb, 200_000, None).s
    return 1 - (s / n_a) * (s / n_b)


def symmetric_pair(fa: NormalFlow, fb: NormalFlow) -> bool:
    """Whether Δ(a, b) = Δ(b, a) is guaranteed (so a matrix computes the pair once).

    Under ``paper`` always. Under ``reference`` when, for every type on both sides, all its
    nodes carry the same compared keys: then :math:`w` is symmetric, and the edge rule is.
    """
    if fa.convention == "paper":
        return True
    ka, kb = fa.keysets, fb.keysets
    for t, sa in ka.items():
        sb = kb.get(t)
        if sb is not None and (len(sa) != 1 or sa != sb):
            return False
    return True


def delta(
    a: Any,
    b: Any,
    convention: str = "reference",
    *,
    max_nodes: int | None = 200_000,
    time_limit: float | None = None,
) -> DeltaResult:
    r"""Divergence Δ(a, b) between two flow programs.

    .. math::

        \Delta(a, b) = 1 - \frac{S}{n_a}\cdot\frac{S}{n_b}

    with :math:`S` the weight of the maximum-weight clique of the association graph (module
    docstring). The product is evaluated in this order, like the companion code, so results
    agree to the last bit or so (compare with a tolerance of about 1e-9).

    Parameters
    ----------
    a, b : list, str or dict
        Flows: a node list, a JSON string of one, or an object with a ``flow`` key.
        Under ``reference``, argument order matters: :math:`w` iterates over a's node keys.
    convention : {"reference", "paper"}
        Companion-code semantics or the paper's definition.
    max_nodes, time_limit : int or None, float or None
        Budget of the clique search (subproblems, seconds). When exhausted the result has
        ``exact=False`` and ``delta`` is an upper bound of the true Δ.

    Returns
    -------
    DeltaResult

    Raises
    ------
    FlowError
        For flows the companion code would crash on (missing ``id``, ``wires: null``).
    DeltaTooLarge
        When the association graph exceeds :data:`MAX_PAIRS_EXAMINED`,
        :data:`MAX_CANDIDATES` or :data:`MAX_CONFLICT_WORK` ("too large for exact Δ"):
        memory stays bounded whatever the input.

    Notes
    -----
    Degenerate cases: an empty flow gives Δ = 1 (``paper``: two empty flows give 0); no
    candidate pair gives Δ = 1. Under ``reference`` a typeless node matches nothing, so
    Δ(f, f) > 0 for a flow with one, and NaN attribute values never match.

    Properties under ``paper`` (eq. 1): :math:`0 \le \Delta \le 1`; symmetric;
    :math:`\Delta = 0` iff the flows are the same program up to ids, editor layout and
    container references; :math:`\Delta = 1` iff no two nodes of one type share an attribute
    value; a single node on each side gives :math:`1 - w^2` (eq. 2).

    Examples
    --------
    >>> a = [{"id": "1", "type": "debug", "active": True}]
    >>> delta(a, a).delta
    0.0
    """
    if convention not in CONVENTIONS:
        raise ValueError(f"unknown convention {convention!r}; use reference or paper")
    fa = normalise_flow(a, convention)
    fb = normalise_flow(b, convention)
    return delta_normal(fa, fb, max_nodes=max_nodes, time_limit=time_limit)


def delta_timed(a: Any, b: Any, convention: str = "reference") -> tuple[DeltaResult, float]:
    """:func:`delta` and its wall time in seconds (for ``gmeter delta --json``)."""
    t0 = time.perf_counter()
    res = delta(a, b, convention)
    return res, time.perf_counter() - t0


def delta_matrix(
    flows_a: Sequence[Any], flows_b: Sequence[Any] | None = None, convention: str = "reference"
) -> list[list[float]]:
    """Δ for every ordered pair (rows: ``flows_a``, columns: ``flows_b``, default the same).

    Each flow is normalised once; this is the in-process kernel the executor's chunks call.
    """
    na = [normalise_flow(f, convention) for f in flows_a]
    if flows_b is not None:
        nb = [normalise_flow(f, convention) for f in flows_b]
        return [[delta_value(x, y) for y in nb] for x in na]
    n = len(na)
    out = [[0.0] * n for _ in range(n)]
    for i in range(n):
        for j in range(i, n):
            out[i][j] = delta_value(na[i], na[j])
            if j != i:
                sym = symmetric_pair(na[i], na[j])
                out[j][i] = out[i][j] if sym else delta_value(na[j], na[i])
    return out


def pair_record(item: tuple[Any, Any, Any, str]) -> dict[str, Any]:
    """Executor work item of ``gmeter delta --pairs``: one JSON-ready result line.

    ``item`` is ``(id, a, b, convention)``. A flow the reference would crash on gives
    ``{"id", "error"}`` instead of raising, so one bad line does not stop a batch.
    """
    pid, a, b, convention = item
    t0 = time.perf_counter()
    try:
        res = delta(a, b, convention)
    except (FlowError, ValueError) as exc:
        return {"id": pid, "error": str(exc)}
    return {"id": pid, **res.as_dict(seconds=time.perf_counter() - t0)}


def _rows_item(item: tuple[Sequence[Any], Sequence[Any], str]) -> list[list[float]]:
    """Executor work item: Δ from a chunk of rows to every column flow."""
    rows, cols, convention = item
    return delta_matrix(rows, cols, convention)


def delta_matrix_map(
    flows_a: Sequence[Any],
    flows_b: Sequence[Any] | None = None,
    convention: str = "reference",
    *,
    map_fn: MapFn | None = None,
    chunk: int = 8,
    progress: Any = None,
) -> list[list[float]]:
    """:func:`delta_matrix` through ``map_fn`` (an executor's ``map``), ``chunk`` rows per item.

    Results are identical to :func:`delta_matrix` whatever maps the items.
    """
    cols = list(flows_a if flows_b is None else flows_b)
    items = [(list(flows_a[i : i + chunk]), cols, convention)
             for i in range(0, len(flows_a), chunk)]
    parts = (map_fn or serial_map)(_rows_item, items, label="Δ matrix", progress=progress)
    return [row for part in parts for row in part]
