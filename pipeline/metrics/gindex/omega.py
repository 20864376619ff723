r"""Generalisation difficulty Ω, the domain-distance matrix, task clustering and levels L0–L3.

Paper eq. (6) defines the difficulty of a test task :math:`T'` for a curriculum :math:`C` as
the divergence to the nearest curriculum program,

.. math::

    \Omega(T', C) = \min_{T \in C} \Delta(P'_{T'}, P_T),

and eq. (7)/(8) use it through :math:`GD = e^{10\,\Omega}`. The companion code computes it per
*domain pair* instead (``utils.calculate_dd``; spec §3):

.. math::

    \Omega(D_1, D_2) = \operatorname{round}_3\Big(\frac{1}{|D_1|}
    \sum_{f \in D_1} \min_{g \in D_2} \Delta(f, g)\Big),

which is asymmetric; ``cache_dd`` symmetrises it by letting the domain that comes first in
the directory listing play :math:`D_1`. gmeter takes that order as an explicit input (the
benchmark's declared domain order), so results never depend on the filesystem.

References
----------
.. [1] G. Venkatasubramanian et al., "Towards a Measure of General Machine Intelligence",
   arXiv:2109.12075, 2021, §2.5, §3.3, eqs. (6)–(8). Companion code ``utils.py``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from pipeline.metrics.gindex.delta import delta_matrix
from pipeline.metrics.parallel import MapFn, serial_map

FloatArray = npt.NDArray[np.float64]


@dataclass(frozen=True)
class DomainDistances:
    """The symmetric domain-distance matrix of the companion code.

    Attributes
    ----------
    order : tuple of str
        The declared domain order (row/column order of ``matrix``).
    matrix : numpy.ndarray, shape (d, d)
        Ω between domains, rounded to 3 decimals, symmetric, in ``order``.
    unrounded : numpy.ndarray, shape (d, d)
        The same before rounding (for tooltips and analysis).
    convention : str
        The Δ convention used.
    """

    order: tuple[str, ...]
    matrix: FloatArray
    unrounded: FloatArray
    convention: str

    def get(self, d1: str, d2: str) -> float:
        """Ω between two domains (symmetric)."""
        i, j = self.order.index(d1), self.order.index(d2)
        return float(self.matrix[i, j])

    def as_mapping(self) -> dict[tuple[str, str], np.float64]:
        """``{(d1, d2): Ω}`` for every ordered pair, as numpy float64 like ``cache_dd``."""
        return {
            (a, b): self.matrix[i, j]
            for i, a in enumerate(self.order)
            for j, b in enumerate(self.order)
        }


def nearest_mean(deltas: npt.ArrayLike) -> np.float64:
    r"""Mean over rows of the row minimum, rounded like the companion code.

    .. math:: \operatorname{round}_3\big(\operatorname{mean}_i \min_j \Delta_{ij}\big)

    ``np.mean`` (pairwise summation) then ``np.round(·, 3)`` (round half to even on the
    scaled binary value, not Python's decimal-correct ``round``).
    """
    m = np.asarray(deltas, dtype=np.float64)
    per_file = [np.min(row) for row in m]
    return np.round(np.mean(per_file), 3)


def _block(item: tuple[Sequence[Any], Sequence[Sequence[Any]], str]) -> list[list[list[float]]]:
    """Executor work item: Δ from each flow of one domain to each flow of later domains."""
    rows, others, convention = item
    flat = [f for group in others for f in group]
    full = delta_matrix(rows, flat, convention) if flat and rows else [[] for _ in rows]
    out: list[list[list[float]]] = []
    k = 0
    for group in others:
        out.append([r[k : k + len(group)] for r in full])
        k += len(group)
    return out


def domain_distance_matrix(
    domains: Mapping[str, Sequence[Any]],
    order: Sequence[str],
    convention: str = "reference",
    *,
    map_fn: MapFn | None = None,
    progress: Callable[[str, int, int], None] | None = None,
) -> DomainDistances:
    r"""Ω between every pair of domains, as the companion code's ``cache_dd``.

    For :math:`i \le j` in ``order``, :math:`\Omega_{ij} = \Omega_{ji} =
    \operatorname{round}_3(\operatorname{mean}_{f \in D_i} \min_{g \in D_j} \Delta(f, g))`.

    Parameters
    ----------
    domains : mapping of str to sequence of flows
        The programs of each domain (file order does not matter beyond the last bit of a
        mean of more than two values; give them sorted by file name).
    order : sequence of str
        The declared domain order: the earlier domain of a pair plays :math:`D_1`. The
        authors' order reproduces their published numbers (spec §10.13).
    convention : {"reference", "paper"}
        The Δ convention.
    map_fn : MapFn, optional
        An executor's ``map`` (:mod:`pipeline.metrics.parallel`): one work item per domain
        (its Δ to itself and all later domains). In-process when None.
    progress : callable, optional
        ``progress(label, done, total)``.

    Returns
    -------
    DomainDistances

    Raises
    ------
    ValueError
        If ``order`` does not list every domain exactly once, or a domain has no flow.

    Notes
    -----
    The diagonal is computed like any other entry, so it is 0 unless a flow is not at
    divergence 0 from itself (a typeless node under ``reference``). The paper's Fig. 6
    diagonal (0.03–0.15) is a different statistic (spec §7).
    """
    names = list(order)
    if sorted(names) != sorted(domains) or len(set(names)) != len(names):
        raise ValueError("the domain order must list every domain exactly once")
    for d in names:
        if not domains[d]:
            raise ValueError(f"domain {d!r} has no flow")
    items = [
        (list(domains[d]), [list(domains[e]) for e in names[i:]], convention)
        for i, d in enumerate(names)
    ]
    blocks = (map_fn or serial_map)(_block, items, label="domain distances", progress=progress)
    n = len(names)
    matrix = np.zeros((n, n))
    unrounded = np.zeros((n, n))
    for i in range(n):
        for k, d in enumerate(blocks[i]):
            j = i + k
            matrix[i, j] = matrix[j, i] = nearest_mean(d)
            unrounded[i, j] = unrounded[j, i] = np.mean([np.min(r) for r in d])
    return DomainDistances(tuple(names), matrix, unrounded, convention)


def omega_task(
    task: Any,
    curriculum: Mapping[str, Sequence[Any]],
    convention: str = "reference",
) -> dict[str, float]:
    r"""Ω of one task program per curriculum domain, paper eq. (6).

    .. math:: \Omega(T', C_i) = \min_{P \in C_i} \Delta(P', P)

    The task program comes first (Δ is asymmetric under ``reference``). The overall
    :math:`\Omega(T', C)` is the minimum over the returned values.
    """
    out: dict[str, float] = {}
    for name, flows in curriculum.items():
        row = delta_matrix([task], list(flows), convention)[0] if flows else [1.0]
        out[name] = float(min(row))
    return out


# --------------------------------------------------------------------------- clustering
@dataclass(frozen=True)
class Clustering:
    """Task domains found by clustering.

    Attributes
    ----------
    labels : tuple of int
        Cluster of each task, numbered in order of first appearance.
    threshold : float
        The largest average within-cluster Δ allowed at a merge.
    """

    labels: tuple[int, ...]
    threshold: float

    @property
    def n_clusters(self) -> int:
        """Number of clusters."""
        return len(set(self.labels))


def cluster_tasks(deltas: npt.ArrayLike, threshold: float = 0.15) -> Clustering:
    r"""Group tasks into task domains: average-linkage clustering at :math:`\bar\Delta \le t`.

    The paper (§2.5) says two tasks of one domain are close, :math:`\bar\Delta \lesssim 0.15`,
    without an algorithm. gmeter symmetrises :math:`\Delta` as
    :math:`(\Delta + \Delta^\top)/2` and merges, repeatedly, the two clusters with the
    smallest average pairwise divergence while it is :math:`\le t` (UPGMA; ties go to the
    lowest indices, so the result is deterministic).

    Parameters
    ----------
    deltas : array, shape (n, n)
        Δ between task programs.
    threshold : float
        :math:`t`, 0.15 by default.

    Returns
    -------
    Clustering
        One cluster per task when nothing is within :math:`t`; an empty input gives no
        labels.
    """
    m = np.asarray(deltas, dtype=np.float64)
    n = len(m)
    if n == 0:
        return Clustering((), threshold)
    sym = (m + m.T) / 2
    members: dict[int, list[int]] = {i: [i] for i in range(n)}
    while len(members) > 1:
        keys = sorted(members)
        best: tuple[float, int, int] | None = None
        for x in range(len(keys)):
            for y in range(x + 1, len(keys)):
                a, b = members[keys[x]], members[keys[y]]
                avg = float(sym[np.ix_(a, b)].mean())
                if best is None or avg < best[0] - 1e-15:
                    best = (avg, keys[x], keys[y])
        if best is None or best[0] > threshold:
            break
        _, ka, kb = best
        members[ka] = sorted(members[ka] + members.pop(kb))
    # number clusters in order of first appearance (members are sorted, so by first member)
    labels = [-1] * n
    for number, mem in enumerate(sorted(members.values(), key=lambda mem: mem[0])):
        for j in mem:
            labels[j] = number
    return Clustering(tuple(labels), threshold)


# --------------------------------------------------------------------------- levels
L1_MAX, L2_MIN, L2_MAX, L3_MIN = 0.15, 0.4, 0.7, 0.85


@dataclass(frozen=True)
class Level:
    """A level of generalisation (paper §3.3).

    Attributes
    ----------
    level : int
        0–3.
    label : str
        ``L0`` … ``L3``.
    in_gap : bool
        True when Ω lies between the paper's bands (0.15–0.4 or 0.7–0.85) and was assigned
        to the nearer band by the midpoint rule.
    """

    level: int
    label: str
    in_gap: bool


def generalisation_level(omega: float) -> Level:
    r"""Level of generalisation of a task (or a mean) with difficulty Ω.

    The paper's bands are informal: L0 "no uncertainty" (the task was seen, Ω = 0),
    L1 :math:`\Omega \lesssim 0.15`, L2 :math:`0.4 \lesssim \Omega \lesssim 0.7`,
    L3 :math:`\Omega \gtrsim 0.85`. gmeter closes the gaps at their midpoints:

    ==========  ======================  ======================
    level       core band               assigned range
    ==========  ======================  ======================
    L0          Ω = 0                   Ω ≤ 1e-12
    L1          0 < Ω ≤ 0.15            Ω < 0.275
    L2          0.4 ≤ Ω ≤ 0.7           0.275 ≤ Ω < 0.775
    L3          Ω ≥ 0.85                Ω ≥ 0.775
    ==========  ======================  ======================

    and flags values outside the core bands with ``in_gap``.
    """
    if omega <= 1e-12:
        return Level(0, "L0", False)
    if omega < (L1_MAX + L2_MIN) / 2:
        return Level(1, "L1", omega > L1_MAX)
    if omega < (L2_MAX + L3_MIN) / 2:
        return Level(2, "L2", not (L2_MIN <= omega <= L2_MAX))
    return Level(3, "L3", omega < L3_MIN)
