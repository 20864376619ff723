r"""Exact maximum-weight clique of an association graph, by branch and bound over matchings.

The association graph of two flows has one vertex per candidate node pair :math:`(u, v)` with
similarity :math:`w_{uv} > 0`; two candidates are adjacent when they use different nodes on
both sides and their wiring does not *conflict*. A clique is therefore a partial one-to-one
node mapping without conflicting pairs, and the maximum-weight clique (MWC) is

.. math::

    W^* = \max_{M} \sum_{(u,v) \in M} w_{uv}
    \quad \text{s.t. } M \text{ is a matching and no two pairs of } M \text{ conflict.}

Dropping the conflict constraints leaves a maximum-weight bipartite matching (the assignment
problem), which is solvable in polynomial time and bounds :math:`W^*` from above. The solver
below is a depth-first branch and bound on that relaxation:

1. solve the assignment problem of every connected block of the candidate graph (scipy's
   ``linear_sum_assignment``; blocks of one row or one column are a plain maximum, tiny
   blocks are enumerated);
2. if the optimal matching has no conflicting pair it is optimal for the subproblem;
3. otherwise repair it greedily into a feasible solution (a lower bound / incumbent) and
   branch on a conflicting candidate ``c``: either ``c`` is in the mapping (its row, column and
   every candidate conflicting with it are removed) or it is not;
4. prune a subproblem whose bound does not exceed the incumbent by more than ``1e-9``.

Only the blocks whose matching lost a candidate are re-solved in a child, since removing an
unused candidate (or fixing a used one) keeps the rest of a block's matching optimal.

Conflict rules (``conflict[i, j]`` for candidates :math:`i=(u_1,v_1)`, :math:`j=(u_2,v_2)`
with :math:`u_1 \ne u_2, v_1 \ne v_2`; :math:`a_1 = E_a(u_1,u_2)`, :math:`a_2 = E_a(u_2,u_1)`,
:math:`b_1, b_2` likewise in flow b):

``loose`` (companion code, spec §2.4)
    :math:`a_1 \ne b_1 \wedge a_2 \ne b_2`: only a reversed edge blocks a mapping.
``strict`` (paper eq. 12)
    :math:`a_1 \ne b_1 \vee a_2 \ne b_2`: edges must correspond exactly.

References
----------
.. [1] G. Venkatasubramanian et al., "Towards a Measure of General Machine Intelligence",
   arXiv:2109.12075, 2021, eq. (4), Appendix C, footnote 6 (node-weighted maximum clique).
.. [2] E. Balas and C. S. Yu, "Finding a maximum clique in an arbitrary graph", SIAM J.
   Comput. 15(4), 1986 (branch and bound on a relaxation).
"""

from __future__ import annotations

import itertools
import time
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

EPS = 1e-9
"""A subproblem is pruned when its bound is not above the incumbent by more than this."""

IntArray = npt.NDArray[np.intp]
FloatArray = npt.NDArray[np.float64]
BoolArray = npt.NDArray[np.bool_]


@dataclass(frozen=True)
class CliqueResult:
    """The best clique found.

    Attributes
    ----------
    chosen : tuple of int
        Candidate indices of the clique, ascending.
    weight : float
        Their total weight (summed in index order).
    exact : bool
        True when the search finished (the clique is a maximum-weight clique); False when the
        node or time budget ran out (the clique is feasible, but may not be the best).
    nodes : int
        Branch-and-bound subproblems evaluated.
    """

    chosen: tuple[int, ...]
    weight: float
    exact: bool
    nodes: int


def conflict_matrix(
    cu: IntArray, cv: IntArray, adj_a: BoolArray, adj_b: BoolArray, *, strict: bool
) -> BoolArray:
    """Pairwise conflicts of candidates (not counting shared nodes; see module docstring)."""
    d1 = adj_a[np.ix_(cu, cu)] != adj_b[np.ix_(cv, cv)]
    conf: BoolArray = (d1 | d1.T) if strict else (d1 & d1.T)
    # pairs sharing a node are excluded by the matching structure, not by this matrix
    conf &= cu[:, None] != cu[None, :]
    conf &= cv[:, None] != cv[None, :]
    return conf


MILP_SECONDS = 30.0
"""Time given to the integer-programming fallback when the caller sets no time limit."""

BRUTE_LIMIT = 24
"""Assignment problems with at most this many injective maps are enumerated (no scipy)."""


def assignment(mat: FloatArray) -> tuple[list[int], list[int]]:
    """Maximum-weight assignment of a (rows × columns) weight matrix: matched (row, col) lists.

    Tiny problems are enumerated in Python; larger ones use scipy's
    ``linear_sum_assignment`` (imported on first use: scipy.optimize costs ~0.5 s to import,
    which a single ``gmeter delta`` call should not pay when it needs no assignment).
    Zero-weight pairs may appear in the result; callers drop them.
    """
    nr, nc = mat.shape
    k = min(nr, nc)
    count = 1
    for x in range(max(nr, nc), max(nr, nc) - k, -1):
        count *= x
        if count > BRUTE_LIMIT:
            break
    if count <= BRUTE_LIMIT:
        m = mat.tolist()
        best = -1.0
        best_map: tuple[int, ...] = ()
        if nr <= nc:
            for cols in itertools.permutations(range(nc), nr):
                v = sum(m[r][c] for r, c in enumerate(cols))
                if v > best:
                    best, best_map = v, cols
            return list(range(nr)), list(best_map)
        for rows in itertools.permutations(range(nr), nc):
            v = sum(m[r][c] for c, r in enumerate(rows))
            if v > best:
                best, best_map = v, rows
        return list(best_map), list(range(nc))
    from scipy.optimize import linear_sum_assignment

    r, c = linear_sum_assignment(mat, maximize=True)
    return r.tolist(), c.tolist()


class _Block:
    """One connected block of the candidate bipartite graph, as a dense local matrix."""

    __slots__ = ("cand", "idx", "single", "weights")

    def __init__(self, cand: IntArray, cu: IntArray, cv: IntArray, cw: FloatArray, dead: int):
        self.cand = cand  # candidate indices
        ru, rinv = np.unique(cu[cand], return_inverse=True)
        cvu, cinv = np.unique(cv[cand], return_inverse=True)
        self.single = len(ru) == 1 or len(cvu) == 1
        # local matrix of candidate ids; ``dead`` (an always-dead slot) where there is none
        self.idx = np.full((len(ru), len(cvu)), dead, dtype=np.intp)
        self.idx[rinv, cinv] = cand
        self.weights = np.zeros((len(ru), len(cvu)))
        self.weights[rinv, cinv] = cw[cand]

    def solve(self, alive: BoolArray, cw: FloatArray) -> tuple[float, list[int]]:
        """Maximum-weight matching restricted to ``alive`` candidates: (weight, chosen)."""
        if self.single:
            live = self.cand[alive[self.cand]]
            if len(live) == 0:
                return 0.0, []
            k = int(live[int(np.argmax(cw[live]))])
            return float(cw[k]), [k]
        mat = self.weights * alive[self.idx]
        r, c = assignment(mat)
        picked = self.idx[r, c][mat[r, c] > 0]
        return float(cw[picked].sum()), picked.tolist()


def _blocks(cu: IntArray, cv: IntArray, cw: FloatArray, dead: int) -> tuple[list[_Block], IntArray]:
    """Split candidates into connected components of the row–column graph."""
    from scipy.sparse import coo_matrix
    from scipy.sparse.csgraph import connected_components

    n = len(cu)
    nr = int(cu.max()) + 1
    nc = int(cv.max()) + 1
    g = coo_matrix((np.ones(n), (cu, cv + nr)), shape=(nr + nc, nr + nc))
    _, label = connected_components(g, directed=False)
    lab = label[cu]
    order = np.argsort(lab, kind="stable")
    cuts = np.flatnonzero(np.diff(lab[order])) + 1
    blocks: list[_Block] = []
    block_of = np.empty(n, dtype=np.intp)
    for b, cand in enumerate(np.split(order, cuts)):
        blocks.append(_Block(cand, cu, cv, cw, dead))
        block_of[cand] = b
    return blocks, block_of


def _repair(chosen: list[int], conf: dict[int, set[int]], cw: FloatArray) -> list[int]:
    """Drop candidates of ``chosen`` until no two conflict (most conflicts, then lightest)."""
    keep = set(chosen)
    hot = {c: conf[c] & keep for c in chosen if c in conf}
    hot = {c: s for c, s in hot.items() if s}
    while hot:
        c = max(hot, key=lambda x: (len(hot[x]), -cw[x], -x))
        for d in hot.pop(c):
            s = hot.get(d)
            if s is not None:
                s.discard(c)
                if not s:
                    del hot[d]
        keep.discard(c)
    return sorted(keep)


def _augment(
    chosen: list[int], alive: BoolArray, conf: dict[int, set[int]], cu: IntArray, cv: IntArray,
    cw: FloatArray,
) -> list[int]:
    """Greedily add alive candidates (heaviest first) that fit the partial solution."""
    used_u = {int(cu[c]) for c in chosen}
    used_v = {int(cv[c]) for c in chosen}
    out = list(chosen)
    bad: set[int] = set()
    for c in out:
        bad |= conf.get(c, set())
    live = np.flatnonzero(alive)
    for c in live[np.argsort(-cw[live], kind="stable")].tolist():
        if c in bad or int(cu[c]) in used_u or int(cv[c]) in used_v:
            continue
        out.append(c)
        used_u.add(int(cu[c]))
        used_v.add(int(cv[c]))
        bad |= conf.get(c, set())
    return out


def _milp(
    cu: IntArray, cv: IntArray, cw: FloatArray, pairs: IntArray, time_limit: float | None
) -> tuple[list[int] | None, float | None]:
    """Solve the clique as an integer programme: (feasible solution or None, dual bound)."""
    from scipy.optimize import Bounds, LinearConstraint, milp
    from scipy.sparse import coo_matrix

    n = len(cu)
    nr, nc = int(cu.max()) + 1, int(cv.max()) + 1
    idx = np.arange(n)
    rows = np.concatenate([cu, nr + cv, nr + nc + np.arange(len(pairs)).repeat(2)])
    cols = np.concatenate([idx, idx, pairs.reshape(-1)])
    a = coo_matrix((np.ones(len(rows)), (rows, cols)), shape=(nr + nc + len(pairs), n)).tocsr()
    options: dict[str, Any] = {"mip_rel_gap": 0.0}
    if time_limit is not None:
        options["time_limit"] = max(time_limit, 0.1)
    res = milp(-cw, constraints=LinearConstraint(a, -np.inf, 1.0), integrality=np.ones(n),
               bounds=Bounds(0, 1), options=options)
    dual = getattr(res, "mip_dual_bound", None)
    dual_w = None if dual is None or not np.isfinite(dual) else -float(dual)
    if res.x is None:
        return None, dual_w
    sol = np.flatnonzero(res.x > 0.5)
    # verify: a matching without conflicting pairs
    if len(set(cu[sol].tolist())) != len(sol) or len(set(cv[sol].tolist())) != len(sol):
        return None, dual_w
    chosen = set(sol.tolist())
    if any(i in chosen and j in chosen for i, j in pairs.tolist()):
        return None, dual_w
    return sorted(chosen), dual_w


def max_weight_association_clique(
    cu: IntArray,
    cv: IntArray,
    cw: FloatArray,
    conflicts: npt.ArrayLike,
    *,
    max_nodes: int | None = 200_000,
    time_limit: float | None = None,
    fallback_nodes: int | None = 3000,
) -> CliqueResult:
    r"""Maximum-weight clique of the association graph of candidates ``(cu, cv, cw)``.

    Parameters
    ----------
    cu, cv : array of int, shape (C,)
        Row (node of flow a) and column (node of flow b) of each candidate; every pair
        ``(cu[i], cv[i])`` appears at most once.
    cw : array of float, shape (C,)
        Candidate weights :math:`w > 0`.
    conflicts : array of int, shape (P, 2)
        The conflicting candidate pairs ``(i, j)`` (:func:`conflict_matrix` or
        :func:`pipeline.metrics.gindex.delta.conflict_pairs`); pairs sharing a node need not be
        listed, the matching structure excludes them.
    max_nodes, time_limit : int or None, float or None
        Budget. When it runs out the best clique so far is returned with ``exact=False``.
    fallback_nodes : int or None
        After this many subproblems the search hands over to an integer programme (HiGHS,
        :func:`scipy.optimize.milp`: rows and columns used at most once, conflicting pairs
        not both), which proves optimality of hard instances (many conflicts, as under the
        strict rule) far faster. Its answer counts as exact only when its dual bound does
        not exceed the best feasible weight by more than ``EPS``; otherwise the branch and
        bound continues with the better incumbent.

    Returns
    -------
    CliqueResult
        ``weight`` is :math:`W^*` (up to ``EPS``) when ``exact``. No candidates give an empty
        clique of weight 0.

    Notes
    -----
    Ties between cliques of equal weight are broken arbitrarily (the reference keeps the
    first maximal clique ``networkx.find_cliques`` yields); Δ depends only on the weight.
    """
    cu = np.asarray(cu, dtype=np.intp)
    cv = np.asarray(cv, dtype=np.intp)
    cw = np.asarray(cw, dtype=np.float64)
    n = len(cu)
    if n == 0:
        return CliqueResult((), 0.0, True, 0)
    pairs = np.asarray(conflicts, dtype=np.intp).reshape(-1, 2)
    conf: dict[int, set[int]] = {}
    for i, j in pairs.tolist():
        conf.setdefault(i, set()).add(j)
        conf.setdefault(j, set()).add(i)
    blocks, block_of = _blocks(cu, cv, cw, n)
    alive = np.ones(n + 1, dtype=bool)
    alive[n] = False  # the dead slot of the blocks' local matrices
    results = [b.solve(alive, cw) for b in blocks]
    nodes = 1
    chosen = [c for _, ch in results for c in ch]
    first = _repair(chosen, conf, cw)
    if len(first) == len(chosen):
        first.sort()
        return CliqueResult(tuple(first), float(cw[first].sum()), True, nodes)

    start = time.perf_counter()
    best = _augment(first, alive[:n], conf, cu, cv, cw)
    best_w = float(cw[best].sum())
    exact = True
    conf_arr = {c: np.fromiter(s, dtype=np.intp, count=len(s)) for c, s in conf.items()}
    row_order = np.argsort(cu, kind="stable")
    row_cut = np.searchsorted(cu[row_order], np.arange(int(cu.max()) + 2))
    col_order = np.argsort(cv, kind="stable")
    col_cut = np.searchsorted(cv[col_order], np.arange(int(cv.max()) + 2))
    # a stack entry: (alive, fixed candidates, fixed weight, block results, bound)
    bound0 = sum(v for v, _ in results)
    stack: list[tuple[BoolArray, list[int], float, list[tuple[float, list[int]]], float]] = [
        (alive, [], 0.0, results, bound0)
    ]
    tried_milp = False
    while stack:
        alive, fixed, base, results, bound = stack.pop()
        if bound <= best_w + EPS:
            continue
        chosen = [c for _, ch in results for c in ch]
        chosen_set = set(chosen)
        deg = {c: len(conf[c] & chosen_set) for c in chosen if c in conf}
        deg = {c: d for c, d in deg.items() if d}
        if not deg:
            best, best_w = fixed + chosen, bound
            continue
        feasible = fixed + _repair(chosen, conf, cw)
        fw = float(cw[feasible].sum()) if feasible else 0.0
        if fw > best_w:
            best, best_w = feasible, fw
        if fallback_nodes is not None and nodes >= fallback_nodes and not tried_milp:
            tried_milp = True
            left = MILP_SECONDS if time_limit is None else \
                time_limit - (time.perf_counter() - start)
            sol, dual = _milp(cu, cv, cw, pairs, left)
            if sol is not None and float(cw[sol].sum()) > best_w:
                best, best_w = sol, float(cw[sol].sum())
            if dual is not None and dual <= best_w + EPS:
                stack.clear()
                break
        if (max_nodes is not None and nodes >= max_nodes) or (
            time_limit is not None and time.perf_counter() - start > time_limit
        ):
            exact = False
            break
        # branch on the most conflicted candidate (heaviest among equals)
        c = max(deg, key=lambda x: (deg[x], cw[x], -x))
        cb = int(block_of[c])
        # child 1: c excluded
        alive_ex = alive.copy()
        alive_ex[c] = False
        res_ex = list(results)
        res_ex[cb] = blocks[cb].solve(alive_ex, cw)
        bound_ex = bound - results[cb][0] + res_ex[cb][0]
        nodes += 1
        # child 2: c included; its row, column and conflicting candidates go
        u, v = int(cu[c]), int(cv[c])
        alive_in = alive.copy()
        alive_in[row_order[row_cut[u] : row_cut[u + 1]]] = False
        alive_in[col_order[col_cut[v] : col_cut[v + 1]]] = False
        alive_in[conf_arr[c]] = False
        res_in = list(results)
        v_c, ch_c = results[cb]
        res_in[cb] = (v_c - float(cw[c]), [x for x in ch_c if x != c])
        dirty = {int(block_of[x]) for x in chosen if x != c and not alive_in[x]}
        for b in dirty:
            res_in[b] = blocks[b].solve(alive_in, cw)
        base_in = base + float(cw[c])
        bound_in = base_in + sum(v for v, _ in res_in)
        nodes += 1
        if bound_ex > best_w + EPS:
            stack.append((alive_ex, fixed, base, res_ex, bound_ex))
        if bound_in > best_w + EPS:
            stack.append((alive_in, [*fixed, c], base_in, res_in, bound_in))
    best = sorted(best)
    return CliqueResult(tuple(best), float(cw[best].sum()) if best else 0.0, exact, nodes)
