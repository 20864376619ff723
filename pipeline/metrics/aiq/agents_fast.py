"""numba kernel of one AIQ run: a reference agent and the BF machine in one compiled loop.

:func:`run_episode` is the compiled twin of :func:`pipeline.metrics.aiq.runs.run_episode_py`
with the agents of :mod:`agents`: same random streams, same floating-point operations in the
same order, hence the same actions and scores (checked in ``tests/test_aiq_agents.py``).

Agent kinds: 0 Random, 1 Freq ``[epsilon]``, 2 Q(λ) ``[init_q, lambda, alpha, epsilon,
gamma]``, 3 HLQ(λ) ``[sel_mode, init_q, lambda, epsilon, gamma]``.

The agent's side of a cycle (:func:`new_agent`, :func:`agent_step`, :func:`percept`) is
shared with :func:`pipeline.metrics.aiq.merged_episode.run_merged_episode`, which drives the same
agents on two interleaved machines.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from pipeline.metrics.aiq.bf_fast import bf_cycle, new_machine, normalise, rng_below, rng_uniform

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


# Planes of an agent's state arrays (:func:`new_agent`). Two arrays rather than six: each
# array the inlined :func:`agent_step` touches costs reference counting on every cycle.
_Q, _E, _V = 0, 1, 2  # table[plane, state, action]: Q values, traces, HLQ(λ) visit counts
_TOT, _CNT, _RATIO = 0, 1, 2  # tally[plane, action]: Freq's reward sums, counts, means


@njit(cache=True)
def new_agent(
    kind: int, params: np.ndarray, n: int, nstates: int
) -> tuple[np.ndarray, np.ndarray]:  # pragma: no cover - compiled
    """Fresh learning state ``(table, tally)`` of an agent (all kinds; tiny).

    ``table[0]`` holds Q, starting at the agent's ``init_q`` (0 for Random and Freq),
    ``table[1]`` the eligibility traces (0) and ``table[2]`` the HLQ(λ) visit counts (1);
    ``tally`` holds Freq's reward sums (0), counts (1) and their ratios per action.
    """
    init_q = 0.0
    if kind == KIND_Q:
        init_q = params[0]
    elif kind == KIND_HLQ:
        init_q = params[1]
    table = np.empty((3, nstates, n))
    table[_Q] = init_q
    table[_E] = 0.0
    table[_V] = 1.0
    tally = np.empty((3, n))
    tally[_TOT] = 0.0
    tally[_CNT] = 1.0
    return table, tally


@njit(cache=True)
def blank_state(n: int, obs_cells: int) -> int:  # pragma: no cover - compiled
    """Index of the observation before the first cycle: every cell blank (``(n - 1) // 2``)."""
    blank = (n - 1) // 2
    state = 0
    pw = 1
    for _ in range(obs_cells):
        state += blank * pw
        pw *= n
    return state


@njit(cache=True, inline="always")
def percept(
    output: np.ndarray, rcell: int, first_obs: int, obs_cells: int, n: int, mid: float
) -> tuple[float, int]:  # pragma: no cover - compiled
    """Reward in [-100, 100] and observation index read off a machine's output cells."""
    r = 100 * (output[rcell] - mid) / mid
    state = 0
    pw = 1
    for j in range(obs_cells):
        state += output[first_obs + j] * pw
        pw *= n
    return r, state


@njit(cache=True, inline="always")
def agent_step(
    kind: int,
    params: np.ndarray,
    seen: float,
    state: int,
    prev_s: int,
    prev_a: int,
    table: np.ndarray,
    tally: np.ndarray,
    arng: np.ndarray,
) -> tuple[int, int, int]:  # pragma: no cover - compiled
    """One agent cycle: learn from the reward ``seen`` and choose the next action.

    Updates the state of :func:`new_agent` in place and returns ``(a, prev_s, prev_a)``: the
    action and the (state, action) pair the next update refers to. The shared agent side of
    :func:`run_episode` and :func:`pipeline.metrics.aiq.merged_episode.run_merged_episode`, so
    the Q(λ) and HLQ(λ) updates live in one place and both kernels consume the agent stream
    ``arng`` identically. Inlined into the kernels (numba IR): a called step would cost a
    reference count per array per cycle.
    """
    n = table.shape[2]
    nstates = table.shape[1]
    if kind == KIND_RANDOM:
        a = rng_below(arng, n)
    elif kind == KIND_FREQ:
        tally[_TOT, prev_a] += seen
        tally[_CNT, prev_a] += 1.0
        for b in range(n):
            tally[_RATIO, b] = tally[_TOT, b] / tally[_CNT, b]
        a = _eps_greedy(_greedy(tally[_RATIO], arng), params[0], n, arng)
        prev_a = a
    elif kind == KIND_Q:
        lam = params[1]
        alpha = params[2]
        gamma = params[4]
        astar = _greedy(table[_Q, state], arng)
        a = _eps_greedy(astar, params[3], n, arng)
        delta = seen + gamma * table[_Q, state, astar] - table[_Q, prev_s, prev_a]
        table[_E, prev_s, prev_a] += 1.0
        ad = alpha * delta
        decay = gamma * lam
        cut = a != astar
        for x in range(nstates):
            for b in range(n):
                table[_Q, x, b] += ad * table[_E, x, b]
                table[_E, x, b] = 0.0 if cut else decay * table[_E, x, b]
        prev_s = state
        prev_a = a
    else:
        lam = params[2]
        eps = params[3]
        gamma = params[4]
        astar = _greedy(table[_Q, state], arng)
        if params[0] == 0:
            a = _eps_greedy(astar, eps, n, arng)
        else:
            a = _softmax(table[_Q, state], eps, arng)
        delta = seen + gamma * table[_Q, state, astar] - table[_Q, prev_s, prev_a]
        table[_E, prev_s, prev_a] += 1.0
        table[_V, prev_s, prev_a] += 1.0
        vsa = table[_V, state, a]
        denom = vsa - gamma * table[_E, state, a]
        decay = gamma * lam
        cut = a != astar
        for x in range(nstates):
            for b in range(n):
                ind = 1.0 if (x == state and b == a) else 0.0
                vx = table[_V, x, b]
                beta = table[_E, x, b] / denom * (lam * vsa + ind) / (lam * vx + ind)
                table[_V, x, b] = lam * vx if vx > 1e-100 else 1e-100
                table[_E, x, b] = 0.0 if cut else decay * table[_E, x, b]
                table[_Q, x, b] += beta * delta
        prev_s = state
        prev_a = a
    return a, prev_s, prev_a


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
    table, tally = new_agent(kind, params, n, n**obs_cells)
    prev_s = 0
    prev_a = 0
    state = blank_state(n, obs_cells)
    actions = np.empty(length if record else 0, np.int8)
    r = 0.0
    total = 0.0
    disc = 1.0
    total_steps = 0
    for i in range(length):
        a, prev_s, prev_a = agent_step(
            kind, params, rflip * r, state, prev_s, prev_a, table, tally, arng
        )
        if record:
            actions[i] = a
        steps = bf_cycle(ops, jump, tape, regs, inputs, output, a, n, blank, max_steps, mrng)
        total_steps += steps
        if steps >= max_steps:
            return np.nan, total_steps, i + 1, True, actions[: i + 1]
        r, state = percept(output, rcell, first_obs, obs_cells, n, mid)
        total += disc * rflip * r
        disc *= discount
    return normalise(total, length, discount), total_steps, length, False, actions
