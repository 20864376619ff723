"""numba kernel of one MC-AIXI run: the agent of :mod:`mc_aixi` and the BF machine in one loop.

Same random stream, same floating-point operations in the same order as the plain
:class:`pipeline.metrics.aiq.mc_aixi.MCAIXIAgent` (checked action by action in
``tests/test_aiq_mc_aixi.py``); see that module for the equations and the departures from the
paper. What differs is only how the state is stored:

* the context trees are one pool of 32-byte nodes (β, the counts of zeros and ones, the two
  children; one cache line holds two), nodes ``0 … roots-1`` being the roots, grown by doubling
  between cycles so a cycle never reallocates;
* a simulation logs the old values of the *pre-existing* nodes it touches; reverting restores
  them, cuts the links to nodes created since the mark and truncates the pool back, which is
  the plain agent's exact revert without per-node bookkeeping of the new nodes;
* one pass up the path computes the KT estimates and weighted conditionals of both bits; the
  sampled bit's are then committed (the plain agent computes the chosen bit's again with the
  same expressions, so the floats agree);
* the search tree is a pool rebuilt every cycle: decision nodes keep one child per action
  (``act[node, a]``), chance nodes a linked list of percept children; a simulation runs as a
  loop that remembers its path and backs the return up afterwards (returns are sums of small
  integers, exact in floating point, so the order of the additions does not matter).
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from pipeline.metrics.aiq.agents_fast import _greedy
from pipeline.metrics.aiq.bf_fast import bf_cycle, new_machine, normalise, rng_below, rng_uniform

# A context-tree node is one 32-byte row of int32: columns 0-1 hold β (read through a float64
# view of the same memory), then the counts of zeros and ones, then the two children.
_WIDTH, _CNT, _KID = 8, 2, 4
_BETA_MAX = 1e250  # mc_aixi.BETA_MAX
_BETA_MIN = 1e-250  # mc_aixi.BETA_MIN
# st[] slots: pool size, history length, next percept bit position, undo entries, pool mark
_SIZE, _HLEN, _POS, _NUNDO, _MARK = 0, 1, 2, 3, 4
# params[] slots (AgentSpec.kernel_args for mc-aixi)
P_DEPTH, P_SIMS, P_HORIZON, P_EPS, P_DECAY, P_C, P_FACTORED = 0, 1, 2, 3, 4, 5, 6


@njit(cache=True)
def _grow(ints: np.ndarray, need: int) -> tuple[np.ndarray, np.ndarray]:
    # pragma: no cover - compiled
    cap = ints.shape[0]
    while cap < need:
        cap *= 2
    ni = np.empty((cap, _WIDTH), np.int32)
    ni[: ints.shape[0]] = ints
    return ni, ni.view(np.float64)


@njit(cache=True, inline="always")
def _conditionals(
    ints: np.ndarray,
    betas: np.ndarray,
    hist: np.ndarray,
    st: np.ndarray,
    depth: int,
    nroots: int,
    path: np.ndarray,
    cond: np.ndarray,
) -> None:  # pragma: no cover - compiled
    r"""Fill ``path`` (-1 where no node yet) and ``cond`` for both bits at once.

    Per depth ``d`` and bit ``x``: ``cond[d, x]`` = the KT estimate and ``cond[d, 2 + x]`` =
    the weighted conditional :math:`P_w(x \mid s)`.
    """
    hlen = st[_HLEN]
    node = st[_POS] if nroots > 1 else 0
    path[0] = node
    for d in range(1, depth + 1):
        if node >= 0:
            node = ints[node, _KID + hist[hlen - d]]
        path[d] = node
    below0 = 0.0
    below1 = 0.0
    for d in range(depth, -1, -1):
        node = path[d]
        if node >= 0:
            c0 = ints[node, _CNT]
            c1 = ints[node, _CNT + 1]
            beta = betas[node, 0]
        else:
            c0 = 0
            c1 = 0
            beta = 1.0
        kt0 = (c0 + 0.5) / (c0 + c1 + 1)
        kt1 = (c1 + 0.5) / (c0 + c1 + 1)
        if d == depth:
            p0 = kt0
            p1 = kt1
        else:
            w = 1.0 / (beta + 1.0)  # off the dependency chain through ``below``
            p0 = (beta * kt0 + below0) * w
            p1 = (beta * kt1 + below1) * w
        cond[d, 0] = kt0
        cond[d, 1] = kt1
        cond[d, 2] = p0
        cond[d, 3] = p1
        below0 = p0
        below1 = p1


@njit(cache=True, inline="always")
def _commit(
    ints: np.ndarray,
    betas: np.ndarray,
    hist: np.ndarray,
    st: np.ndarray,
    depth: int,
    nroots: int,
    pbits: int,
    bit: int,
    path: np.ndarray,
    cond: np.ndarray,
    log: bool,
    und_i: np.ndarray,
    und_f: np.ndarray,
) -> None:  # pragma: no cover - compiled
    """Learn ``bit`` along the path of :func:`_conditionals` (creating nodes); append it."""
    hlen = st[_HLEN]
    mark = st[_MARK]
    node = path[0]
    for d in range(depth + 1):
        if d > 0:
            node = path[d]
            if node < 0:
                node = st[_SIZE]
                st[_SIZE] = node + 1
                ints[node, _CNT] = 0
                ints[node, _CNT + 1] = 0
                ints[node, _KID] = -1
                ints[node, _KID + 1] = -1
                betas[node, 0] = 1.0
                ints[path[d - 1], _KID + hist[hlen - d]] = node
                path[d] = node
        if log and node < mark:
            u = st[_NUNDO]
            und_i[u, 0] = node
            und_i[u, 1] = bit
            und_f[u] = betas[node, 0]
            st[_NUNDO] = u + 1
        if d < depth:
            beta = betas[node, 0] * cond[d, bit] / cond[d + 1, 2 + bit]
            if beta > _BETA_MAX:
                beta = _BETA_MAX
            elif beta < _BETA_MIN:
                beta = _BETA_MIN
            betas[node, 0] = beta
        ints[node, _CNT + bit] += 1
    hist[hlen] = bit
    st[_HLEN] = hlen + 1
    st[_POS] = (st[_POS] + 1) % pbits if nroots > 1 else 0


@njit(cache=True, inline="always")
def _revert(
    ints: np.ndarray,
    betas: np.ndarray,
    st: np.ndarray,
    und_i: np.ndarray,
    und_f: np.ndarray,
    hlen: int,
    pos: int,
) -> None:  # pragma: no cover - compiled
    mark = st[_MARK]
    for u in range(st[_NUNDO] - 1, -1, -1):
        node = und_i[u, 0]
        ints[node, _CNT + und_i[u, 1]] -= 1
        betas[node, 0] = und_f[u]
        if ints[node, _KID] >= mark:
            ints[node, _KID] = -1
        if ints[node, _KID + 1] >= mark:
            ints[node, _KID + 1] = -1
    st[_NUNDO] = 0
    st[_SIZE] = mark
    st[_HLEN] = hlen
    st[_POS] = pos


@njit(cache=True, inline="always")
def _sample_percept(
    ints: np.ndarray,
    betas: np.ndarray,
    hist: np.ndarray,
    st: np.ndarray,
    depth: int,
    nroots: int,
    pbits: int,
    path: np.ndarray,
    cond: np.ndarray,
    und_i: np.ndarray,
    und_f: np.ndarray,
    arng: np.ndarray,
) -> int:  # pragma: no cover - compiled
    """Draw a percept from the model bit by bit (learning it, logged); return its code."""
    code = 0
    for i in range(pbits):
        _conditionals(ints, betas, hist, st, depth, nroots, path, cond)
        bit = 1 if rng_uniform(arng) < cond[0, 3] else 0
        _commit(ints, betas, hist, st, depth, nroots, pbits, bit, path, cond, True, und_i, und_f)
        code |= bit << i
    return code


@njit(cache=True, inline="always")
def _push_action(hist: np.ndarray, st: np.ndarray, a: int, k: int) -> None:  # pragma: no cover
    hlen = st[_HLEN]
    for i in range(k):
        hist[hlen + i] = (a >> i) & 1
    st[_HLEN] = hlen + k


@njit(cache=True, inline="always")
def _reward_of(code: int, cells: int, k: int, n: int) -> int:  # pragma: no cover - compiled
    r = (code >> (cells * k)) & ((1 << k) - 1)
    return r if r < n else n - 1


@njit(cache=True, inline="always")
def _new_search_node(
    vis: np.ndarray,
    mean: np.ndarray,
    act: np.ndarray,
    first: np.ndarray,
    nxt: np.ndarray,
    key: np.ndarray,
    tsize: np.ndarray,
    k: int,
) -> int:  # pragma: no cover - compiled
    node = tsize[0]
    tsize[0] = node + 1
    vis[node] = 0
    mean[node] = 0.0
    act[node, :] = -1
    first[node] = -1
    nxt[node] = -1
    key[node] = k
    return node


@njit(cache=True)
def _search(
    ints: np.ndarray,
    betas: np.ndarray,
    hist: np.ndarray,
    st: np.ndarray,
    depth: int,
    nroots: int,
    pbits: int,
    n: int,
    k: int,
    cells: int,
    sims: int,
    horizon: int,
    c: float,
    path: np.ndarray,
    cond: np.ndarray,
    und_i: np.ndarray,
    und_f: np.ndarray,
    arng: np.ndarray,
    vis: np.ndarray,
    mean: np.ndarray,
    act: np.ndarray,
    first: np.ndarray,
    nxt: np.ndarray,
    key: np.ndarray,
    walk: np.ndarray,
    cum: np.ndarray,
    scores: np.ndarray,
    unvisited: np.ndarray,
) -> int:  # pragma: no cover - compiled
    """ρUCT from a fresh root: ``sims`` simulations to ``horizon``; return the action."""
    tsize = np.zeros(1, np.int64)
    root = _new_search_node(vis, mean, act, first, nxt, key, tsize, -1)
    hlen0 = st[_HLEN]
    pos0 = st[_POS]
    for _s in range(sims):
        st[_MARK] = st[_SIZE]
        st[_NUNDO] = 0
        node = root
        m = horizon
        chance = False
        steps = 0
        total = 0.0
        while m > 0:
            walk[steps] = node
            cum[steps] = total
            steps += 1
            if chance:
                code = _sample_percept(ints, betas, hist, st, depth, nroots, pbits, path, cond,
                                       und_i, und_f, arng)  # fmt: skip
                total += _reward_of(code, cells, k, n)
                kid = first[node]
                while kid >= 0 and key[kid] != code:
                    kid = nxt[kid]
                if kid < 0:
                    kid = _new_search_node(vis, mean, act, first, nxt, key, tsize, code)
                    nxt[kid] = first[node]
                    first[node] = kid
                node = kid
                m -= 1
                chance = False
            elif vis[node] == 0:
                for _i in range(m):
                    _push_action(hist, st, rng_below(arng, n), k)
                    code = _sample_percept(ints, betas, hist, st, depth, nroots, pbits, path,
                                           cond, und_i, und_f, arng)  # fmt: skip
                    total += _reward_of(code, cells, k, n)
                break
            else:
                nun = 0
                for b in range(n):
                    ch = act[node, b]
                    if ch < 0 or vis[ch] == 0:
                        unvisited[nun] = b
                        nun += 1
                if nun == 1:
                    a = unvisited[0]
                elif nun > 1:
                    a = unvisited[rng_below(arng, nun)]
                else:
                    scale = m * (n - 1)
                    log_t = math.log(vis[node])
                    for b in range(n):
                        ch = act[node, b]
                        scores[b] = mean[ch] / scale + c * math.sqrt(log_t / vis[ch])
                    a = _greedy(scores, arng)
                _push_action(hist, st, a, k)
                ch = act[node, a]
                if ch < 0:
                    ch = _new_search_node(vis, mean, act, first, nxt, key, tsize, a)
                    act[node, a] = ch
                node = ch
                chance = True
        for j in range(steps):
            w = walk[j]
            reward = total - cum[j]
            mean[w] = (reward + vis[w] * mean[w]) / (vis[w] + 1)
            vis[w] += 1
        _revert(ints, betas, st, und_i, und_f, hlen0, pos0)
    best_any = False
    for b in range(n):
        ch = act[root, b]
        if ch >= 0 and vis[ch] > 0:
            scores[b] = mean[ch]
            best_any = True
        else:
            scores[b] = -np.inf
    if not best_any:
        return rng_below(arng, n)
    return _greedy(scores, arng)


@njit(cache=True)
def run_episode_mc_aixi(
    ops: np.ndarray,
    jump: np.ndarray,
    n: int,
    obs_cells: int,
    reverse: bool,
    tape_len: int,
    in_len: int,
    max_steps: int,
    params: np.ndarray,
    length: int,
    rflip: float,
    discount: float,
    mseed: np.uint64,
    aseed: np.uint64,
    record: bool,
) -> tuple[float, int, int, bool, np.ndarray]:  # pragma: no cover - compiled
    """One MC-AIXI run; same contract as :func:`agents_fast.run_episode`.

    ``params`` = ``[depth, simulations, horizon, epsilon, decay, c, factored]``.
    """
    depth = int(params[P_DEPTH])
    sims = int(params[P_SIMS])
    horizon = int(params[P_HORIZON])
    eps = params[P_EPS]
    decay = params[P_DECAY]
    c = params[P_C]
    factored = params[P_FACTORED] != 0
    blank = (n - 1) // 2
    mid = (n - 1) / 2
    k = 1
    while (1 << k) < n:
        k += 1
    pbits = (obs_cells + 1) * k
    nroots = pbits if factored else 1
    tape, regs, inputs, output, mrng = new_machine(
        n,
        obs_cells,
        tape_len,
        in_len,
        mseed,  # type: ignore[arg-type]
    )
    arng = np.empty(1, np.uint64)
    arng[0] = aseed
    rcell = obs_cells if reverse else 0
    first_obs = 0 if reverse else 1
    # context-tree pool, history (zero padding first), undo log, scratch
    cap = 1 << 12
    while cap < nroots + (horizon + 1) * pbits * (depth + 1):
        cap *= 2
    ints = np.empty((cap, _WIDTH), np.int32)
    betas = ints.view(np.float64)
    for root in range(nroots):
        betas[root, 0] = 1.0
        ints[root, _CNT] = 0
        ints[root, _CNT + 1] = 0
        ints[root, _KID] = -1
        ints[root, _KID + 1] = -1
    st = np.zeros(5, np.int64)
    st[_SIZE] = nroots
    st[_HLEN] = depth
    hist = np.zeros(depth + (length + horizon + 2) * (pbits + k), np.int8)
    path = np.empty(depth + 1, np.int64)
    cond = np.empty((depth + 1, 4), np.float64)
    und_i = np.empty((horizon * pbits * (depth + 1) + 1, 2), np.int64)
    und_f = np.empty(horizon * pbits * (depth + 1) + 1, np.float64)
    tcap = sims * 2 * horizon + 2
    vis = np.empty(tcap, np.int64)
    mean = np.empty(tcap, np.float64)
    act = np.empty((tcap, n), np.int64)
    first = np.empty(tcap, np.int64)
    nxt = np.empty(tcap, np.int64)
    key = np.empty(tcap, np.int64)
    walk = np.empty(2 * horizon + 2, np.int64)
    cum = np.empty(2 * horizon + 2, np.float64)
    scores = np.empty(n, np.float64)
    unvisited = np.empty(n, np.int64)
    symbols = np.empty(obs_cells + 1, np.int64)
    for j in range(obs_cells):
        symbols[j] = blank
    actions = np.empty(length if record else 0, np.int8)
    r = 0.0
    total = 0.0
    disc = 1.0
    total_steps = 0
    for i in range(length):
        seen = rflip * r
        symbols[obs_cells] = math.floor((seen + 100.0) / 200.0 * (n - 1) + 0.5)
        need = st[_SIZE] + (horizon + 1) * pbits * (depth + 1)
        if need > ints.shape[0]:
            ints, betas = _grow(ints, need)
        for j in range(obs_cells + 1):
            for b in range(k):
                bit = (symbols[j] >> b) & 1
                _conditionals(ints, betas, hist, st, depth, nroots, path, cond)
                _commit(ints, betas, hist, st, depth, nroots, pbits, bit, path, cond, False,
                        und_i, und_f)  # fmt: skip
        if rng_uniform(arng) < eps:
            a = rng_below(arng, n)
        else:
            a = _search(ints, betas, hist, st, depth, nroots, pbits, n, k, obs_cells, sims,
                        horizon, c, path, cond, und_i, und_f, arng, vis, mean, act, first, nxt,
                        key, walk, cum, scores, unvisited)  # fmt: skip
        eps *= decay
        _push_action(hist, st, a, k)
        if record:
            actions[i] = a
        steps = bf_cycle(ops, jump, tape, regs, inputs, output, a, n, blank, max_steps, mrng)
        total_steps += steps
        if steps >= max_steps:
            return np.nan, total_steps, i + 1, True, actions[: i + 1]
        r = 100 * (output[rcell] - mid) / mid
        for j in range(obs_cells):
            symbols[j] = output[first_obs + j]
        total += disc * rflip * r
        disc *= discount
    return normalise(total, length, discount), total_steps, length, False, actions
