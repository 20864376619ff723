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
   ``linear_sum_assignment``; blocks of one row or one column are a plain maximum);
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

import time
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt
from scipy.optimize import linear_sum_assignment

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


class _Block:
    """One connected block of the candidate bipartite graph."""

    __slots__ = ("cand", "cols", "ncol", "nrow", "rows", "single")

    def __init__(self, cand: IntArray, rows: IntArray, cols: IntArray, nrow: int, ncol: int):
        self.cand = cand  # candidate indices
        self.rows = rows  # local row of each candidate
        self.cols = cols  # local column of each candidate
        self.nrow = nrow
        self.ncol = ncol
        self.single = nrow == 1 or ncol == 1


def _blocks(cu: IntArray, cv: IntArray) -> tuple[list[_Block], IntArray]:
    """Split candidates into connected components of the row–column graph."""
    n = len(cu)
    parent: dict[tuple[int, int], tuple[int, int]] = {}

    def find(x: tuple[int, int]) -> tuple[int, int]:
        root = x
        while parent.setdefault(root, root) != root:
            root = parent[root]
        while parent[x] != root:
            parent[x], x = root, parent[x]
        return root

    ul = cu.tolist()
    vl = cv.tolist()
    for i in range(n):
        ra, rb = find((0, ul[i])), find((1, vl[i]))
        if ra != rb:
            parent[ra] = rb
    label: dict[tuple[int, int], int] = {}
    members: list[list[int]] = []
    block_of = np.empty(n, dtype=np.intp)
    for i in range(n):
        r = find((0, ul[i]))
        b = label.get(r)
        if b is None:
            b = label[r] = len(members)
            members.append([])
        members[b].append(i)
        block_of[i] = b
    blocks: list[_Block] = []
    for mem in members:
        cand = np.asarray(mem, dtype=np.intp)
        ru, rinv = np.unique(cu[cand], return_inverse=True)
        cvu, cinv = np.unique(cv[cand], return_inverse=True)
        blocks.append(
            _Block(cand, rinv.astype(np.intp), cinv.astype(np.intp), len(ru), len(cvu))
        )
    return blocks, block_of


def _solve_block(
    blk: _Block, alive: BoolArray, cw: FloatArray
) -> tuple[float, list[int]]:
    """Maximum-weight matching of one block restricted to ``alive`` candidates."""
    mask = alive[blk.cand]
    if not mask.any():
        return 0.0, []
    cand = blk.cand[mask]
    if blk.single or len(cand) == 1:
        k = int(np.argmax(cw[cand]))
        c = int(cand[k])
        return float(cw[c]), [c]
    rows = blk.rows[mask]
    cols = blk.cols[mask]
    mat = np.zeros((blk.nrow, blk.ncol))
    mat[rows, cols] = cw[cand]
    idx = np.full((blk.nrow, blk.ncol), -1, dtype=np.intp)
    idx[rows, cols] = cand
    r, c = linear_sum_assignment(mat, maximize=True)
    picked = idx[r, c]
    picked = picked[picked >= 0]
    return float(cw[picked].sum()), [int(x) for x in picked]


def _repair(chosen: list[int], conf: BoolArray, cw: FloatArray) -> list[int]:
    """Drop candidates of ``chosen`` until no two conflict (most conflicts, then lightest)."""
    keep = list(chosen)
    sub = conf[np.ix_(keep, keep)].copy()
    deg = sub.sum(axis=1)
    while deg.any():
        w = cw[keep]
        # most conflicts first, then the smallest weight
        order = np.lexsort((w, -deg))
        k = int(order[0])
        deg -= sub[:, k]
        sub[k, :] = False
        sub[:, k] = False
        deg[k] = 0
        keep[k] = -1
    return [c for c in keep if c >= 0]


def _augment(
    chosen: list[int], alive: BoolArray, conf: BoolArray, cu: IntArray, cv: IntArray,
    cw: FloatArray,
) -> list[int]:
    """Greedily add alive candidates (heaviest first) that fit the partial solution."""
    used_u = {int(cu[c]) for c in chosen}
    used_v = {int(cv[c]) for c in chosen}
    out = list(chosen)
    bad: BoolArray = np.zeros(len(cw), dtype=bool)
    if out:
        bad |= conf[out].any(axis=0)
    for c in np.flatnonzero(alive)[np.argsort(-cw[alive], kind="stable")].tolist():
        if bad[c] or int(cu[c]) in used_u or int(cv[c]) in used_v:
            continue
        out.append(c)
        used_u.add(int(cu[c]))
        used_v.add(int(cv[c]))
        bad |= conf[c]
    return out


def max_weight_association_clique(
    cu: IntArray,
    cv: IntArray,
    cw: FloatArray,
    conf: BoolArray,
    *,
    max_nodes: int | None = 200_000,
    time_limit: float | None = None,
) -> CliqueResult:
    r"""Maximum-weight clique of the association graph of candidates ``(cu, cv, cw)``.

    Parameters
    ----------
    cu, cv : array of int, shape (C,)
        Row (node of flow a) and column (node of flow b) of each candidate; every pair
        ``(cu[i], cv[i])`` appears at most once.
    cw : array of float, shape (C,)
        Candidate weights :math:`w > 0`.
    conf : array of bool, shape (C, C)
        Symmetric conflict matrix (:func:`conflict_matrix`); pairs sharing a node need not
        be marked, the matching structure excludes them.
    max_nodes, time_limit : int or None, float or None
        Budget. When it runs out the best clique so far is returned with ``exact=False``.

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
    blocks, block_of = _blocks(cu, cv)
    alive = np.ones(n, dtype=bool)
    results = [_solve_block(b, alive, cw) for b in blocks]
    nodes = 1
    chosen = [c for _, ch in results for c in ch]
    if not conf[np.ix_(chosen, chosen)].any():
        chosen.sort()
        return CliqueResult(tuple(chosen), float(cw[chosen].sum()), True, nodes)

    start = time.perf_counter()
    best = _augment(_repair(chosen, conf, cw), alive, conf, cu, cv, cw)
    best_w = float(cw[best].sum())
    exact = True
    # a stack entry: (alive, fixed candidates, fixed weight, block results, bound)
    bound0 = sum(v for v, _ in results)
    stack: list[tuple[BoolArray, list[int], float, list[tuple[float, list[int]]], float]] = [
        (alive, [], 0.0, results, bound0)
    ]
    while stack:
        alive, fixed, base, results, bound = stack.pop()
        if bound <= best_w + EPS:
            continue
        chosen = [c for _, ch in results for c in ch]
        sub = conf[np.ix_(chosen, chosen)]
        deg = sub.sum(axis=1)
        if not deg.any():
            best, best_w = fixed + chosen, bound
            continue
        feasible = fixed + _repair(chosen, conf, cw)
        fw = float(cw[feasible].sum()) if feasible else 0.0
        if fw > best_w:
            best, best_w = feasible, fw
        if (max_nodes is not None and nodes >= max_nodes) or (
            time_limit is not None and time.perf_counter() - start > time_limit
        ):
            exact = False
            break
        # branch on the most conflicted candidate (heaviest among equals)
        cw_ch = cw[chosen]
        k = int(np.lexsort((-cw_ch, -deg))[0])
        c = chosen[k]
        cb = int(block_of[c])
        # child 1: c excluded
        alive_ex = alive.copy()
        alive_ex[c] = False
        res_ex = list(results)
        res_ex[cb] = _solve_block(blocks[cb], alive_ex, cw)
        bound_ex = base + sum(v for v, _ in res_ex)
        nodes += 1
        # child 2: c included; its row, column and conflicting candidates go
        removed = alive & (conf[c] | (cu == cu[c]) | (cv == cv[c]))
        alive_in = alive & ~removed
        res_in = list(results)
        dirty = {int(block_of[x]) for x in chosen if removed[x] and x != c}
        v_c, ch_c = results[cb]
        res_in[cb] = (v_c - float(cw[c]), [x for x in ch_c if x != c])
        for b in dirty:
            res_in[b] = _solve_block(blocks[b], alive_in, cw)
        base_in = base + float(cw[c])
        bound_in = base_in + sum(v for v, _ in res_in)
        nodes += 1
        if bound_ex > best_w + EPS:
            stack.append((alive_ex, fixed, base, res_ex, bound_ex))
        if bound_in > best_w + EPS:
            stack.append((alive_in, [*fixed, c], base_in, res_in, bound_in))
    best = sorted(best)
    return CliqueResult(tuple(best), float(cw[best].sum()) if best else 0.0, exact, nodes)
