r"""The AIQ estimator (spec §5): stratified antithetic Monte Carlo with honest intervals.

The AIQ of an agent :math:`\pi` is the expected score over the program distribution,
estimated from strata :math:`i` with probabilities :math:`p_i` (frequencies in the benchmark's
program sample) and, per stratum, :math:`k_i` antithetic pairs (each program run with rewards
×+1 and ×−1, pair mean :math:`y = (V^+ + V^-)/2`):

.. math::

    \widehat{\Upsilon} = \sum_i p_i \bar y_i, \qquad
    \widehat{\operatorname{Var}} = \sum_i \frac{p_i^2 s_i^2}{k_i}, \qquad
    \text{95\% CI} = \widehat{\Upsilon} \pm 1.96 \sqrt{\widehat{\operatorname{Var}}}

with :math:`\bar y_i`, :math:`s_i` the mean and SD (ddof 1) of the pair means of stratum
:math:`i`. The allocation of pairs to strata follows Étoré & Jourdain's adaptive scheme with
the original's stage schedule (:func:`stage_schedule`, :func:`allocate`).

References
----------
Legg, S. & Veness, J. (2013). An Approximation of the Universal Intelligence Measure, §4.
Étoré, P. & Jourdain, B. (2010). Adaptive optimal allocation in stratified sampling methods.
*Methodology and Computing in Applied Probability* 12(3), 335–360.

Notes
-----
* **Interval.** The original prints :math:`1.96\,\sum_i p_i s_i/\sqrt{N}` with :math:`N` the
  number of *runs* while :math:`s_i` is the SD of a *pair mean*; the pairs are
  :math:`N/2`, so even under optimal allocation (where :math:`\sum_i p_i^2 s_i^2/k_i =
  (\sum_i p_i s_i)^2/(N/2)`) that interval is :math:`\sqrt 2` too narrow. We report the
  plug-in interval above (:attr:`AIQEstimate.half_ci`) and the original's as
  :attr:`AIQEstimate.legacy_half_ci`, for comparison only.
* The uncertainty of :math:`p_i` (estimated from :math:`M` programs) is reported separately:
  :math:`\operatorname{Var}_p = \sum_i p_i(\bar y_i - \widehat\Upsilon)^2/M`.
* Strata with fewer than 2 pairs get :math:`s_i = 100` (the largest possible SD) in the
  interval; with all :math:`s_i = 0` the allocation falls back to proportional.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

Z95 = 1.96
#: Stage targets in units of A (number of strata with p > 0), AIQ.py (spec §5.2).
STAGE_FACTORS = (0, 3, 6, 10, 20, 30, 50, 70, 100, 250, 500, 750, 1000, 1250, 1500, 1750,
                 2000, 2500, 3000, 3500, 4000, 5000)  # fmt: skip
MAX_SD = 100.0


def stage_schedule(num_active: int, budget: int, num_programs: int) -> list[int]:
    r"""Return the cumulative run targets :math:`N_0 = 0 < N_1 < … < N_K` of the stages.

    :math:`N_k = f_k A` with :math:`f` = :data:`STAGE_FACTORS`, truncated at the first
    :math:`k` with :math:`N_k + A \ge \min(M, B)` (:math:`M` programs, :math:`B` budget in
    runs), which is replaced by :math:`\min(M, B)`. Example: A = 20, B = 2000 gives
    ``[0, 60, 120, 200, 400, 600, 1000, 1400, 2000]``.

    Notes
    -----
    For budgets beyond :math:`5000A` the original stops at :math:`5000A`; we append the
    budget as one more stage. The original compares runs with programs in :math:`\min(M, B)`;
    we keep that.
    """
    if num_active < 1 or budget < 1:
        raise ValueError("need at least one stratum and a positive budget")
    limit = min(num_programs, budget)
    out: list[int] = []
    for f in STAGE_FACTORS:
        n = f * num_active
        if n + num_active >= limit and n > 0:
            out.append(limit)
            return out
        out.append(n)
    if out[-1] < limit:
        out.append(limit)
    return out


def allocate(p: Sequence[float], s: Sequence[float], runs: int) -> list[int]:
    r"""Return the pairs per stratum of one stage (AIQ.py's rule, spec §5.2).

    .. math::

        m_i = \frac{p_i s_i}{\sum_j p_j s_j}\cdot\frac{R - 2A}{2},\qquad
        x_i = \max\bigl(\lfloor C_i + 0.001\rfloor - \lfloor C_{i-1}\rfloor, 0\bigr),\qquad
        \text{pairs}_i = x_i + \lceil p_i \rceil

    with :math:`R` the stage's runs, :math:`A` the strata with :math:`p_i > 0` and
    :math:`C_i = \sum_{j \le i} m_j`. Every active stratum gets at least one pair.

    Notes
    -----
    The +0.001 on one side only is the original's; when :math:`C_{i-1}` lies just below an
    integer it can add a stray pair (the README's "a stage occasionally completes with one run
    extra"). A negative remainder (:math:`R < 2A`) likewise rounds as the original does.
    """
    active = sum(1 for x in p if x > 0)
    weights = [pi * si for pi, si in zip(p, s, strict=True)]
    total = sum(weights)
    if total <= 0:  # every SD is 0: proportional
        weights = list(p)
        total = sum(weights)
    scale = (runs - 2 * active) / 2
    out: list[int] = []
    cum = 0.0
    for pi, w in zip(p, weights, strict=True):
        m = w / total * scale
        before = cum
        cum += m
        x = max(math.floor(cum + 0.001) - math.floor(before), 0)
        out.append(x + (1 if pi > 0 else 0))
    return out


def pair_sd(pairs: Sequence[tuple[float, float]]) -> float:
    r"""Return the SD (ddof 1) of the pair means :math:`(V^+ + V^-)/2`; ``nan`` below 2 pairs.

    Equals the original's :math:`\sqrt{\tfrac14(s_+^2 + s_-^2 + 2\,\mathrm{cov})}`.
    """
    k = len(pairs)
    if k < 2:
        return math.nan
    ys = [(a + b) / 2 for a, b in pairs]
    mean = sum(ys) / k
    return math.sqrt(sum((y - mean) ** 2 for y in ys) / (k - 1))


@dataclass(frozen=True)
class StratumSummary:
    """Per-stratum numbers of an estimate."""

    stratum: int
    p: float
    pairs: int
    mean: float
    sd: float


@dataclass(frozen=True)
class AIQEstimate:
    r"""An AIQ estimate with its intervals.

    Attributes
    ----------
    value : float
        :math:`\widehat\Upsilon` (in [-100, 100]).
    half_ci : float
        95% half-width from the pairs (the interval to report).
    legacy_half_ci : float
        The original's printed half-width (≈ √2 too narrow); ``nan`` if not applicable.
    se_p : float
        Standard error from the uncertainty of :math:`p_i` (0 when the size is unknown).
    pairs, runs : int
        Antithetic pairs (or single runs for simple MC) and runs used.
    method : str
        ``stratified``, ``mc`` or ``mc-antithetic``.
    strata : tuple of StratumSummary
        Per-stratum details (stratified only).
    """

    value: float
    half_ci: float
    legacy_half_ci: float
    se_p: float
    pairs: int
    runs: int
    method: str
    strata: tuple[StratumSummary, ...] = ()

    @property
    def ci_low(self) -> float:
        """Return the lower end of the 95% interval."""
        return self.value - self.half_ci

    @property
    def ci_high(self) -> float:
        """Return the upper end of the 95% interval."""
        return self.value + self.half_ci


def estimate_stratified(
    p: Sequence[float],
    pairs: Mapping[int, Sequence[tuple[float, float]]],
    *,
    legacy_runs: int | None = None,
    num_programs: int | None = None,
) -> AIQEstimate:
    r"""Return the stratified antithetic estimate from pairs :math:`(V^+, V^-)` per stratum.

    Parameters
    ----------
    p : sequence of float
        Stratum probabilities indexed by stratum (index 0 unused, :math:`p_0 = 0`).
    pairs : mapping
        Stratum → list of (score with +1, score with −1) of successful pairs.
    legacy_runs : int, optional
        :math:`N` for the original's interval :math:`1.96\sum_i p_i s_i/\sqrt N` (default:
        the number of runs, :math:`2\sum_i k_i`).
    num_programs : int, optional
        Size :math:`M` of the program sample behind :math:`p` (for :attr:`se_p`).

    Raises
    ------
    ValueError
        If a stratum with :math:`p_i > 0` has no pair.
    """
    value = 0.0
    var = 0.0
    legacy = 0.0
    rows: list[StratumSummary] = []
    total_pairs = 0
    for i, pi in enumerate(p):
        if pi <= 0:
            continue
        got = pairs.get(i, ())
        k = len(got)
        if k == 0:
            raise ValueError(f"stratum {i} (p = {pi:.4f}) has no pair")
        mean = sum((a + b) / 2 for a, b in got) / k
        sd = pair_sd(got)
        value += pi * mean
        s_ci = MAX_SD if math.isnan(sd) else sd
        var += pi * pi * s_ci * s_ci / k
        legacy += pi * (1.0 if k < 2 else sd)  # the original's s_i = 1 below 3 runs
        total_pairs += k
        rows.append(StratumSummary(i, pi, k, mean, sd))
    runs = 2 * total_pairs
    legacy_half = Z95 * legacy / math.sqrt(legacy_runs or runs)
    se_p = 0.0
    if num_programs:
        se_p = math.sqrt(sum(r.p * (r.mean - value) ** 2 for r in rows) / num_programs)
    return AIQEstimate(
        value, Z95 * math.sqrt(var), legacy_half, se_p, total_pairs, runs, "stratified",
        tuple(rows),
    )  # fmt: skip


def estimate_mc(scores: Sequence[float]) -> AIQEstimate:
    r"""Return simple Monte Carlo: one run per program with a random sign.

    .. math:: \widehat\Upsilon = \bar V,\qquad \text{half CI} = 1.96\, s / \sqrt{n}
    """
    n = len(scores)
    if n == 0:
        raise ValueError("no successful run")
    mean = sum(scores) / n
    sd = math.sqrt(sum((x - mean) ** 2 for x in scores) / (n - 1)) if n > 1 else MAX_SD
    half = Z95 * sd / math.sqrt(n)
    return AIQEstimate(mean, half, half, 0.0, n, n, "mc")


def estimate_mc_pairs(pairs: Sequence[tuple[float, float]]) -> AIQEstimate:
    r"""Return Monte Carlo with antithetic pairs: the mean of pair means, CI from their SD."""
    k = len(pairs)
    if k == 0:
        raise ValueError("no successful pair")
    mean = sum((a + b) / 2 for a, b in pairs) / k
    sd = pair_sd(pairs)
    half = Z95 * (MAX_SD if math.isnan(sd) else sd) / math.sqrt(k)
    return AIQEstimate(mean, half, half / math.sqrt(2), 0.0, k, 2 * k, "mc-antithetic")


@dataclass(frozen=True)
class DifferenceEstimate:
    r"""A paired estimate of :math:`\Upsilon(A) - \Upsilon(B)` on common programs and seeds."""

    value: float
    half_ci: float
    pairs: int
    a: AIQEstimate
    b: AIQEstimate

    @property
    def ci_low(self) -> float:
        """Return the lower end of the 95% interval."""
        return self.value - self.half_ci

    @property
    def ci_high(self) -> float:
        """Return the upper end of the 95% interval."""
        return self.value + self.half_ci


def paired_difference(
    p: Sequence[float],
    pairs_a: Mapping[int, Mapping[int, tuple[float, float]]],
    pairs_b: Mapping[int, Mapping[int, tuple[float, float]]],
) -> DifferenceEstimate:
    r"""Return the stratified paired difference of two agents on the programs both ran.

    .. math::

        \widehat\Delta = \sum_i p_i \bar d_i,\quad
        d = \tfrac12(V_A^+ + V_A^-) - \tfrac12(V_B^+ + V_B^-),\quad
        \widehat{\operatorname{Var}} = \sum_i p_i^2 s_{d,i}^2 / k_i

    Parameters
    ----------
    p : sequence of float
        Stratum probabilities.
    pairs_a, pairs_b : mapping
        Stratum → program id → (score +, score −), successful pairs only. Only program ids
        present in both enter (common random numbers: same programs, same seeds).

    Raises
    ------
    ValueError
        If an active stratum has no common program.
    """
    common_a: dict[int, list[tuple[float, float]]] = {}
    common_b: dict[int, list[tuple[float, float]]] = {}
    diffs: dict[int, list[tuple[float, float]]] = {}
    for i, pi in enumerate(p):
        if pi <= 0:
            continue
        a, b = pairs_a.get(i, {}), pairs_b.get(i, {})
        ids = sorted(set(a) & set(b))
        if not ids:
            raise ValueError(f"stratum {i} has no program run by both agents")
        common_a[i] = [a[j] for j in ids]
        common_b[i] = [b[j] for j in ids]
        # encode d as a "pair" (d, d) so that pair means and SDs are those of d
        diffs[i] = [
            ((a[j][0] + a[j][1]) / 2 - (b[j][0] + b[j][1]) / 2,) * 2  # type: ignore[misc]
            for j in ids
        ]
    d = estimate_stratified(p, diffs)
    return DifferenceEstimate(
        d.value,
        d.half_ci,
        d.pairs,
        estimate_stratified(p, common_a),
        estimate_stratified(p, common_b),
    )
