r"""A merged AIQ test: one agent lifetime interleaving two BF environments (numba kernel).

Pereyda & Holder (2020) merge two tests by *sampling*: the merged test's items are drawn from
A with probability ``p`` and from B otherwise, and the agent learns on the merged stream. An
AIQ test's "items" are the interaction cycles of one agent lifetime (the agent is created
afresh for every environment, so nothing is learnt across episodes). The merge of an
environment :math:`\mu_A` of test A with an environment :math:`\mu_B` of test B is therefore
one episode of ``L`` cycles in which, at every cycle, an independent draw
:math:`z_i \sim \mathrm{Bernoulli}(p)` picks the environment that receives the action and
returns the percept:

.. math::

    (r_i, o_i) = \begin{cases} \mu_A(a_i) & z_i = 1 \\ \mu_B(a_i) & z_i = 0 \end{cases},
    \qquad V_{AB} = \frac{1}{L}\sum_{i=1}^{L} \sigma r_i

with :math:`\sigma = \pm 1` the antithetic reward sign applied to both. Each machine keeps its
own tapes, history and ``%`` stream and is frozen while the other is active; the agent is not
told which environment answered. With ``p = 1`` (``0``) the episode is exactly an ordinary AIQ
run on :math:`\mu_A` (:math:`\mu_B`): the same random streams are consumed in the same order as
:func:`pipeline.metrics.aiq.agents_fast.run_episode` (tested), and the schedule has its own stream.

Why not merge whole episodes: with a fresh agent per environment, a merged test that samples
whole environments has :math:`E[V_{AB}] = pV_A + (1-p)V_B` exactly, so eq. 3 is
:math:`1 - 2p` whatever the tests are; only a merge inside one lifetime can show interference.

References
----------
Pereyda, C. & Holder, L. (2020). Measuring the Relative Similarity and Difficulty Between AI
Benchmark Problems. Legg, S. & Veness, J. (2013). An Approximation of the Universal
Intelligence Measure.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numba import njit

from pipeline.metrics.aiq.agents_fast import (
    KIND_FREQ,
    KIND_HLQ,
    KIND_Q,
    KIND_RANDOM,
    agent_step,
    blank_state,
    new_agent,
    percept,
)
from pipeline.metrics.aiq.bf_fast import bf_cycle, new_machine, rng_uniform

__all__ = ["KIND_FREQ", "KIND_HLQ", "KIND_Q", "KIND_RANDOM", "run_merged_episode"]


@njit(cache=True)
def run_merged_episode(
    ops_a: np.ndarray,
    jump_a: np.ndarray,
    ops_b: np.ndarray,
    jump_b: np.ndarray,
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
    p: float,
    mseed_a: Any,
    mseed_b: Any,
    aseed: Any,
    sseed: Any,
) -> tuple[float, bool, int]:  # pragma: no cover - compiled
    r"""Run one agent for ``length`` cycles on the interleaving of two BF programs.

    Returns ``(score, failed, cycles_on_a)``: the mean of :math:`\sigma r_i` (NaN when a cycle
    of either machine reached the step limit; the run stops there), whether it failed, and
    how many cycles environment A answered. Agent kinds and ``params`` as in
    :func:`pipeline.metrics.aiq.agents_fast.run_episode`.
    """
    blank = (n - 1) // 2
    mid = (n - 1) / 2
    tape_a, regs_a, in_a, out_a, rng_a = new_machine(n, obs_cells, tape_len, in_len, mseed_a)
    tape_b, regs_b, in_b, out_b, rng_b = new_machine(n, obs_cells, tape_len, in_len, mseed_b)
    arng = np.empty(1, np.uint64)
    arng[0] = aseed
    srng = np.empty(1, np.uint64)
    srng[0] = sseed
    rcell = obs_cells if reverse else 0
    first_obs = 0 if reverse else 1
    table, tally = new_agent(kind, params, n, n**obs_cells)
    prev_s = 0
    prev_a = 0
    state = blank_state(n, obs_cells)
    r = 0.0
    total = 0.0
    on_a = 0
    for _i in range(length):
        a, prev_s, prev_a = agent_step(
            kind, params, rflip * r, state, prev_s, prev_a, table, tally, arng
        )
        if rng_uniform(srng) < p:
            on_a += 1
            steps = bf_cycle(
                ops_a, jump_a, tape_a, regs_a, in_a, out_a, a, n, blank, max_steps, rng_a
            )
            output = out_a
        else:
            steps = bf_cycle(
                ops_b, jump_b, tape_b, regs_b, in_b, out_b, a, n, blank, max_steps, rng_b
            )
            output = out_b
        if steps >= max_steps:
            return np.nan, True, on_a
        r, state = percept(output, rcell, first_obs, obs_cells, n, mid)
        total += rflip * r
    return total / length, False, on_a
