r"""The g-index (paper eqs. 8–9): task contributions, both forms, bootstrap CI and simulation.

For test tasks :math:`T'_j` with performance :math:`\theta_j = 1 - \Delta(P'_j, P'_{j,opt})`
and curriculum domains :math:`C_i` with :math:`|C_i|` training samples,

.. math::

    W_i = \frac{1}{1 + \log_2 |C_i|}, \qquad
    E_i = \log_2(\text{compute}_i), \qquad
    GD_{ij} = e^{10\,\Omega(T'_j, C_i)},

    TC_j = \sqrt{\, e^{12\,\theta_j} \sum_i \frac{W_i \, GD_{ij}}{\rho_i + E_i} \,},
    \qquad
    g = \frac{1}{N} \sum_{j=1}^{N} TC_j .

:math:`\rho` are the priors (a constant 1e-4 in the companion code), :math:`E` the experience
(log2 of the training compute). Higher is better: a system that performs well (θ) on tasks far
from its curriculum (Ω) with little data (W) and compute (E) scores high.

Two forms:

``domain`` (companion code, spec §4)
    one "task" per task *domain*, θ = 1 − the domain's mean divergence, Ω from the
    domain-distance matrix, a single global E, ρ = 1e-4, the mean over unique task-domain names,
    rounded to 3 decimals with numpy rounding. This reproduces the published numbers.
``task`` (paper)
    one contribution per test task, Ω per task and curriculum domain, E and ρ per curriculum
    domain when known (else global), no rounding.

References
----------
.. [1] G. Venkatasubramanian et al., "Towards a Measure of General Machine Intelligence",
   arXiv:2109.12075, 2021, eqs. (7)–(10), Table 1. Companion code ``g_index.py``.
"""

from __future__ import annotations

import statistics
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

RHO = 1e-4
"""The companion code's constant prior ρ."""
THETA_SCALE = 12.0
"""a in exp(a θ)."""
GD_SCALE = 10.0
"""b in GD = exp(b Ω)."""


@dataclass(frozen=True)
class TaskContribution:
    r"""One term of the g-index mean.

    Attributes
    ----------
    task : str
        The task id (``task`` form) or task-domain name (``domain`` form).
    theta : float
        Performance θ in [0, 1].
    contribution : float
        :math:`TC_j`.
    omega : Mapping[str, float]
        Ω to each curriculum domain.
    gd_sum : float
        :math:`\sum_i W_i GD_{ij} / (\rho_i + E_i)`.
    """

    task: str
    theta: float
    contribution: float
    omega: Mapping[str, float] = field(default_factory=dict)
    gd_sum: float = float("nan")

    @property
    def omega_min(self) -> float:
        """Ω(T', C): the distance to the nearest curriculum domain (eq. 6)."""
        return min(self.omega.values()) if self.omega else float("nan")


@dataclass(frozen=True)
class GIndexResult:
    r"""A g-index and its parts.

    Attributes
    ----------
    g_index : float
        The value as published: rounded to 3 decimals in the ``domain`` form, unrounded in
        the ``task`` form.
    raw : float
        The unrounded mean of the contributions.
    form : str
        ``domain`` or ``task``.
    E : float
        log2 of the total training compute.
    E_domains : Mapping[str, float]
        E per curriculum domain where the compute log splits it (``task`` form), else empty.
    W : Mapping[str, float]
        :math:`W_i` per curriculum domain.
    rho : Mapping[str, float]
        :math:`\rho_i` per curriculum domain.
    tasks : tuple of TaskContribution
        In input order (unique names).
    """

    g_index: float
    raw: float
    form: str
    E: float
    E_domains: Mapping[str, float]
    W: Mapping[str, float]
    rho: Mapping[str, float]
    tasks: tuple[TaskContribution, ...]

    @property
    def contributions(self) -> list[float]:
        """The task contributions :math:`TC_j`."""
        return [t.contribution for t in self.tasks]

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready form (``gmeter gindex --json``)."""
        return {
            "g_index": self.g_index,
            "g_index_unrounded": self.raw,
            "form": self.form,
            "E": self.E,
            "E_domains": dict(self.E_domains),
            "W": dict(self.W),
            "rho": dict(self.rho),
            "tasks": [
                {
                    "task": t.task,
                    "theta": t.theta,
                    "contribution": t.contribution,
                    "omega_min": t.omega_min,
                    "GD": {c: float(np.exp(GD_SCALE * o)) for c, o in t.omega.items()},
                }
                for t in self.tasks
            ],
        }


def weight(num_samples: float) -> np.float64:
    r""":math:`W = 1/(1 + \log_2 n)`; ``n = 1`` gives 1, ``n = 0`` gives −0.0 (as the code)."""
    with np.errstate(divide="ignore"):
        return np.float64(1 / (1 + np.log2(num_samples)))


def companion_g_index(
    tasks: Sequence[tuple[str, float]],
    curriculum: Sequence[tuple[str, float]],
    compute: float,
    distances: Mapping[tuple[str, str], float],
    rho: float = RHO,
) -> GIndexResult:
    r"""Compute the g-index exactly as the companion code does (spec §4).

    .. math::

        g = \operatorname{round}_3 \Big( \operatorname{mean}_{t}
        \sqrt{ e^{12 (1 - \bar\Delta_t)} \sum_{c \in C}
        \frac{e^{10\,\Omega(t,c)} \, W_c}{\rho + \log_2(\text{compute})} } \Big)

    with :math:`\bar\Delta_t` the mean divergence of task domain :math:`t` and Ω the
    symmetric domain-distance matrix. The arithmetic is numpy float64 in the code's order and
    the mean is exact (``statistics.mean``), so results are bit for bit the published ones.

    Parameters
    ----------
    tasks : sequence of (task domain, mean divergence)
        ``performance.domains`` restricted to the test set, in test-set order. A repeated
        name counts once (the first divergence wins).
    curriculum : sequence of (domain, number of samples)
        ``train_set.data`` in file order; a repeated name is summed twice with the last
        entry's weight (as the code).
    compute : float
        ``train_cost.compute`` (PFLOP·s); E = log2(compute), one global value.
    distances : mapping (task domain, curriculum domain) -> Ω
        E.g. :meth:`pipeline.metrics.gindex.omega.DomainDistances.as_mapping`.
    rho : float
        The prior ρ, 1e-4.

    Returns
    -------
    GIndexResult
        ``form = "domain"``.

    Raises
    ------
    ValueError
        If there are no tasks, or a distance is missing.

    Notes
    -----
    Degenerate values follow numpy: ``compute = 1`` gives E = 0 (denominator ρ),
    ``compute < 1`` a negative E, ``num_samples = 0`` a weight of −0.0.
    """
    if not tasks:
        raise ValueError("no test tasks")
    e = np.log2(compute)
    pc: dict[str, np.float64] = {}
    for name, n in curriculum:
        pc[name] = weight(n)
    contribs: dict[str, TaskContribution] = {}
    for t_name, div in tasks:
        if t_name in contribs:
            continue
        p_theta = np.exp((1 - div) * THETA_SCALE)
        total: Any = 0
        omegas: dict[str, float] = {}
        for c_name, _ in curriculum:
            try:
                om = distances[(t_name, c_name)]
            except KeyError as exc:
                raise ValueError(f"no domain distance for ({t_name}, {c_name})") from exc
            gd = np.exp(om * GD_SCALE)
            total += (gd * pc[c_name]) / (rho + e)
            omegas[c_name] = float(om)
        tc = np.sqrt(p_theta * total)
        contribs[t_name] = TaskContribution(t_name, 1 - div, float(tc), omegas, float(total))
    mean = statistics.mean([np.float64(t.contribution) for t in contribs.values()])
    return GIndexResult(
        g_index=float(round(mean, 3)),
        raw=float(mean),
        form="domain",
        E=float(e),
        E_domains={},
        W={k: float(v) for k, v in pc.items()},
        rho={k: rho for k in pc},
        tasks=tuple(contribs.values()),
    )


@dataclass(frozen=True)
class TaskInput:
    """One test task for the paper's per-task form.

    Attributes
    ----------
    task : str
        Task id.
    theta : float
        θ = 1 − Δ(generated, reference).
    omega : Mapping[str, float]
        Ω(T', C_i) per curriculum domain (eq. 6).
    """

    task: str
    theta: float
    omega: Mapping[str, float]


def paper_g_index(
    tasks: Sequence[TaskInput],
    curriculum: Mapping[str, float],
    compute: float | Mapping[str, float],
    rho: float | Mapping[str, float] = RHO,
) -> GIndexResult:
    r"""Compute the g-index in the paper's per-task form (eqs. 8–9).

    .. math::

        g = \frac{1}{N} \sum_j \sqrt{ e^{12\theta_j} \sum_i
        \frac{W_i\, e^{10\,\Omega(T'_j, C_i)}}{\rho_i + E_i} }

    Parameters
    ----------
    tasks : sequence of TaskInput
        One per test task.
    curriculum : mapping of domain to number of samples
        :math:`|C_i|`.
    compute : float or mapping
        Total training compute (every :math:`E_i` is its log2), or compute per curriculum
        domain (then :math:`E_i = \log_2 \text{compute}_i`).
    rho : float or mapping
        Priors, constant or per domain.

    Returns
    -------
    GIndexResult
        ``form = "task"``, ``g_index`` unrounded.

    Raises
    ------
    ValueError
        If there are no tasks, or a task lacks Ω for a curriculum domain.
    """
    if not tasks:
        raise ValueError("no test tasks")
    if isinstance(compute, Mapping):
        e_dom = {c: float(np.log2(compute[c])) for c in curriculum}
        e_total = float(np.log2(sum(compute.values())))
    else:
        e_total = float(np.log2(compute))
        e_dom = {}
    w = {c: float(weight(n)) for c, n in curriculum.items()}
    r = {c: float(rho[c] if isinstance(rho, Mapping) else rho) for c in curriculum}
    out: list[TaskContribution] = []
    for t in tasks:
        total = 0.0
        for c in curriculum:
            if c not in t.omega:
                raise ValueError(f"task {t.task}: no Ω for curriculum domain {c}")
            e = e_dom.get(c, e_total)
            total += w[c] * float(np.exp(GD_SCALE * t.omega[c])) / (r[c] + e)
        tc = float(np.sqrt(np.exp(THETA_SCALE * t.theta) * total))
        out.append(TaskContribution(t.task, t.theta, tc, dict(t.omega), total))
    raw = statistics.fmean(x.contribution for x in out)
    return GIndexResult(raw, raw, "task", e_total, e_dom, w, r, tuple(out))


# --------------------------------------------------------------------------- uncertainty
@dataclass(frozen=True)
class BootstrapCI:
    """A percentile bootstrap interval of a mean of task contributions.

    Attributes
    ----------
    low, high : float
        Interval bounds.
    confidence : float
        E.g. 0.95.
    n_resamples : int
        Bootstrap resamples.
    seed : int
        The seed of the ``numpy.random.Generator`` used.
    """

    low: float
    high: float
    confidence: float
    n_resamples: int
    seed: int


def bootstrap_ci(
    contributions: Sequence[float],
    *,
    n_resamples: int = 2000,
    confidence: float = 0.95,
    seed: int = 0,
) -> BootstrapCI:
    r"""Percentile bootstrap CI of :math:`g = \operatorname{mean}_j TC_j`, resampling tasks.

    Each resample draws :math:`N` test tasks with replacement (``numpy.random.default_rng
    (seed)``) and takes the mean of their contributions; the interval is the
    :math:`(1 \mp \text{confidence})/2` quantiles of the resampled means. The contributions do
    not depend on which other tasks are drawn, so the resample is exact.

    A single task gives a zero-width interval; no tasks give NaN bounds.
    """
    x = np.asarray(contributions, dtype=np.float64)
    if len(x) == 0:
        return BootstrapCI(float("nan"), float("nan"), confidence, n_resamples, seed)
    rng = np.random.default_rng(seed)
    idx = rng.integers(0, len(x), size=(n_resamples, len(x)))
    means = x[idx].mean(axis=1)
    alpha = (1 - confidence) / 2
    lo, hi = np.quantile(means, [alpha, 1 - alpha])
    return BootstrapCI(float(lo), float(hi), confidence, n_resamples, seed)


# --------------------------------------------------------------------------- simulation
def simulate_g_index(
    theta: float | Sequence[float],
    *,
    samples: float | Sequence[float],
    compute: float,
    omega: float | Sequence[Sequence[float]] | np.ndarray,
    n_tasks: int | None = None,
    rho: float = RHO,
) -> float:
    r"""Compute the g-index of a hypothetical system (the responsiveness study, §3.4).

    Tasks get θ (one value or one per task), the curriculum has ``samples`` per domain
    (one value per domain, or the same for every domain when ``omega`` is a matrix), the
    experience is :math:`E = \log_2(\text{compute})` — the companion notebook passes the raw
    compute instead (spec §4.2), which is a bug not copied here — and Ω is a constant or a
    task × domain matrix.

    Returns
    -------
    float
        The unrounded per-task g-index.
    """
    om = np.asarray(omega, dtype=np.float64)
    th = np.atleast_1d(np.asarray(theta, dtype=np.float64))
    if om.ndim == 2:
        n_t, n_c = om.shape
    else:
        n_c = len(samples) if isinstance(samples, Sequence) else 1
        n_t = n_tasks if n_tasks is not None else max(len(th), n_c)
        om = np.full((n_t, n_c), float(om))
    if len(th) == 1:
        th = np.full(n_t, th[0])
    s = np.broadcast_to(np.asarray(samples, dtype=np.float64), (n_c,))
    w = 1 / (1 + np.log2(s))
    e = np.log2(compute)
    gd_sum = (w[None, :] * np.exp(GD_SCALE * om) / (rho + e)).sum(axis=1)
    return float(np.mean(np.sqrt(np.exp(THETA_SCALE * th) * gd_sum)))


def responsiveness_curves(
    *,
    omega: float | Sequence[Sequence[float]] = 0.9,
    n_domains: int = 16,
    samples: float = 160,
    compute: float = 128.0,
) -> list[dict[str, Any]]:
    """Return the data of the g-index responsiveness charts (paper Figs. 7–9).

    Each curve varies one input around a base experiment (θ = 0.7, 160 samples in each of 16
    domains, 128 PFLOP·s, Ω = 0.9 between different domains and 0 within) while a second
    input picks the series. Rows: ``{"curve", "x", "series", "g_index"}``.
    """
    if isinstance(omega, int | float):
        om = np.full((n_domains, n_domains), float(omega))
        np.fill_diagonal(om, 0.0)
    else:
        om = np.asarray(omega, dtype=np.float64)
        n_domains = len(om)
    rows: list[dict[str, Any]] = []

    def add(curve: str, x: float, series: str, g: float) -> None:
        rows.append({"curve": curve, "x": float(x), "series": series, "g_index": g})

    for c in (1e1, 1e2, 1e3, 1e4):
        for th in np.linspace(0, 1, 21):
            g = simulate_g_index(float(th), samples=[samples] * n_domains, compute=c, omega=om)
            add("theta", th, f"compute {c:g}", g)
    for th in (0.5, 0.7, 0.9):
        for c in np.logspace(0.5, 6, 23):
            g = simulate_g_index(th, samples=[samples] * n_domains, compute=float(c), omega=om)
            add("compute", c, f"θ = {th}", g)
        for n in np.logspace(0, 4, 17):
            g = simulate_g_index(th, samples=[float(n)] * n_domains, compute=compute, omega=om)
            add("samples", n, f"θ = {th}", g)
        for o in np.linspace(0, 1, 21):
            m = np.full((n_domains, n_domains), float(o))
            np.fill_diagonal(m, 0.0)
            g = simulate_g_index(th, samples=[samples] * n_domains, compute=compute, omega=m)
            add("omega", o, f"θ = {th}", g)
    return rows
