"""numba kernel of one AIQ run: a reference agent and the BF machine in one compiled loop.

:func:`run_episode` is the compiled twin of :func:`pipeline.metrics.aiq_runs.run_episode_py`
with the agents of :mod:`agents`: same random streams, same floating-point operations in the
same order, hence the same actions and scores (checked in ``tests/test_aiq_agents.py``).

Agent kinds: 0 Random, 1 Freq ``[epsilon]``, 2 Q(λ) ``[init_q, lambda, alpha, epsilon,
gamma]``, 3 HLQ(λ) ``[sel_mode, init_q, lambda, epsilon, gamma]``.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from pipeline.metrics.bf_fast import bf_cycle, new_machine, normalise, rng_below, rng_uniform

KIND_RANDOM, KIND_FREQ, KIND_Q, KIND_HLQ = 0, 1, 2, 3


@njit(cache=True)
def _greedy(row: np.ndarray, rng: np.ndarray) -> int:  # pragma: no cover - compiled
    best = row[0]
    count = 1
    for i in range(1, row.shape[0]):
        x = row[i]
        if x > best:
            best = x
            count = 1
        elif x == best:
            count += 1
    k = 0 if count == 1 else rng_below(rng, count)
    for i in range(row.shape[0]):
        if row[i] == best:
            if k == 0:
                return i
            k -= 1
    return 0


@njit(cache=True)
def _eps_greedy(best: int, eps: float, n: int, rng: np.ndarray) -> int:  # pragma: no cover
    if rng_uniform(rng) < eps:
        return rng_below(rng, n)
    return best


@njit(cache=True)
def _softmax(row: np.ndarray, temp: float, rng: np.ndarray) -> int:  # pragma: no cover
    top = row.max()
    w = np.empty(row.shape[0])
    total = 0.0
    for b in range(row.shape[0]):
        w[b] = math.exp((row[b] - top) / temp)
        total += w[b]
    u = rng_uniform(rng) * total
    acc = 0.0
    for b in range(row.shape[0]):
        acc += w[b]
        if u < acc:
            return b
    return row.shape[0] - 1


@njit(cache=True)
def run_episode(
    ops: np.ndarray,
    jump: np.ndarray,
    n: int,
    obs_cells: int,
    reverse: bool,
    tape_len: int,
    in_len: int,
    max_steps: int,
    kind: int,
    params: np.ndarray,
    length: int,
    rflip: float,
    discount: float,
    mseed: np.uint64,
    aseed: np.uint64,
    record: bool,
) -> tuple[float, int, int, bool, np.ndarray]:  # pragma: no cover - compiled
    r"""Run one agent for ``length`` cycles; return (score, steps, cycles, failed, actions).

    ``score`` is the mean of :math:`\sigma r_i` (``rflip`` = σ) or the discounted normalised
    sum; NaN when a cycle reached the step limit (the run stops there, ``failed`` is True).
    ``actions`` holds the actions taken when ``record`` is set (else it is empty).
    """
    blank = (n - 1) // 2
    mid = (n - 1) / 2
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
    nstates = n**obs_cells
    # agent state (all kinds; tiny)
    init_q = 0.0
    if kind == KIND_Q:
        init_q = params[0]
    elif kind == KIND_HLQ:
        init_q = params[1]
    q = np.full((nstates, n), init_q)
    e = np.zeros((nstates, n))
    v = np.ones((nstates, n))
    tot = np.zeros(n)
    cnt = np.ones(n)
    ratio = np.empty(n)
    prev_s = 0
    prev_a = 0
    state = 0
    pw = 1
    for _ in range(obs_cells):
        state += blank * pw
        pw *= n
    actions = np.empty(length if record else 0, np.int8)
    r = 0.0
    total = 0.0
    disc = 1.0
    total_steps = 0
    for i in range(length):
        seen = rflip * r
        if kind == KIND_RANDOM:
            a = rng_below(arng, n)
        elif kind == KIND_FREQ:
            tot[prev_a] += seen
            cnt[prev_a] += 1.0
            for b in range(n):
                ratio[b] = tot[b] / cnt[b]
            a = _eps_greedy(_greedy(ratio, arng), params[0], n, arng)
            prev_a = a
        elif kind == KIND_Q:
            lam = params[1]
            alpha = params[2]
            gamma = params[4]
            astar = _greedy(q[state], arng)
            a = _eps_greedy(astar, params[3], n, arng)
            delta = seen + gamma * q[state, astar] - q[prev_s, prev_a]
            e[prev_s, prev_a] += 1.0
            ad = alpha * delta
            decay = gamma * lam
            cut = a != astar
            for x in range(nstates):
                for b in range(n):
                    q[x, b] += ad * e[x, b]
                    e[x, b] = 0.0 if cut else decay * e[x, b]
            prev_s = state
            prev_a = a
        else:
            lam = params[2]
            eps = params[3]
            gamma = params[4]
            astar = _greedy(q[state], arng)
            if params[0] == 0:
                a = _eps_greedy(astar, eps, n, arng)
            else:
                a = _softmax(q[state], eps, arng)
            delta = seen + gamma * q[state, astar] - q[prev_s, prev_a]
            e[prev_s, prev_a] += 1.0
            v[prev_s, prev_a] += 1.0
            vsa = v[state, a]
            denom = vsa - gamma * e[state, a]
            decay = gamma * lam
            cut = a != astar
            for x in range(nstates):
                for b in range(n):
                    ind = 1.0 if (x == state and b == a) else 0.0
                    beta = e[x, b] / denom * (lam * vsa + ind) / (lam * v[x, b] + ind)
                    v[x, b] = lam * v[x, b] if v[x, b] > 1e-100 else 1e-100
                    e[x, b] = 0.0 if cut else decay * e[x, b]
                    q[x, b] += beta * delta
            prev_s = state
            prev_a = a
        if record:
            actions[i] = a
        steps = bf_cycle(ops, jump, tape, regs, inputs, output, a, n, blank, max_steps, mrng)
        total_steps += steps
        if steps >= max_steps:
            return np.nan, total_steps, i + 1, True, actions[: i + 1]
        r = 100 * (output[rcell] - mid) / mid
        state = 0
        pw = 1
        for j in range(obs_cells):
            state += output[first_obs + j] * pw
            pw *= n
        total += disc * rflip * r
        disc *= discount
    return normalise(total, length, discount), total_steps, length, False, actions
