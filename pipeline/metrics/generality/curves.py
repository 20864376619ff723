r"""Agent characteristic curves and their indicators: capability, spread, generality.

The generality track (Hernández-Orallo et al. 2021, Supplement §E–F) summarises an agent by its
*agent characteristic curve* (ACC) ψ(h), the mean accomplishment on the items of difficulty h.
This module computes, for one agent or — vectorised — for a whole response matrix:

* the merged curve: equal difficulties collapse into one point holding the mean response;
* capability Ψ (the area under ψ), the moment M, the expected difficulty, the spread
  S = sqrt(2M − Ψ²) and the generality Γ = 1/S,

exactly as the reference R code (``CalculateIndicators`` of jorallo/generality, see
``shared/specs/generality-spec.md`` §1–§2 and §11) does it, operation for operation, so that
the published numbers reproduce bit for bit.

Every function is pure. The matrix functions never loop in Python over agents or points: an
agent set is processed in chunks of rows with numpy whole-array operations; agents with
missing items are grouped by their pattern of answered items and each group is merged once.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike, NDArray

from pipeline.metrics.generality.rnumerics import group_means_t, r_group_means

__all__ = [
    "AgentIndicators",
    "CurveIndicators",
    "MergedCurve",
    "agent_indicators",
    "curve_indicators",
    "curve_points",
    "indicators_from_merged",
    "merge_points",
    "r_group_means",
]

FloatArray = NDArray[np.float64]

S2_TOLERANCE = 1e-5
"""Negative S² down to −1e-5 is rounding and becomes 0 (the reference's tolerance)."""

_CHUNK_ELEMENTS = 1 << 18
"""Agents are processed in chunks of about this many matrix cells (a few MiB per temporary)."""

STATUS_OK = "ok"
STATUS_NO_AREA = "no_area"
STATUS_NEGATIVE_S2 = "negative_spread2"


# --------------------------------------------------------------------------- merging
@dataclass(frozen=True)
class MergedCurve:
    """The points of merged agent characteristic curves sharing one difficulty grid.

    Attributes
    ----------
    difficulty : ndarray, shape (N,)
        The distinct difficulties ``u``, ascending.
    response : ndarray, shape (n, N)
        ``ȳ[j, k]``: agent j's mean response over the items of difficulty ``u[k]``.
    counts : ndarray of int, shape (N,)
        How many items were merged into each point.
    """

    difficulty: FloatArray
    response: FloatArray
    counts: NDArray[np.int64]


def merge_points(difficulty: ArrayLike, responses: ArrayLike, exact: bool = True) -> MergedCurve:
    r"""Merge equal difficulties (spec §1): sort, de-duplicate, average responses.

    .. math:: u = \mathrm{sort}(\mathrm{unique}(d)), \qquad
              \bar y_{jk} = \operatorname{mean}\{\, y_{ji} : d_i = u_k \,\}

    Equality is exact floating-point equality. Items keep their input order inside a group.

    Parameters
    ----------
    difficulty : array_like, shape (P,)
        One difficulty per item (finite).
    responses : array_like, shape (P,) or (n, P)
        Responses of one agent or of n agents (finite; no missing values here).
    exact : bool
        Means rounded as R's (default), or plain double means (see
        :func:`pipeline.metrics.generality.rnumerics.group_means_t`).

    Returns
    -------
    MergedCurve
        ``response`` is always 2-D (one row per agent; a transposed view of a points × agents
        array).
    """
    d = np.asarray(difficulty, dtype=np.float64)
    y = np.atleast_2d(np.asarray(responses, dtype=np.float64))
    if d.ndim != 1 or y.shape[1] != d.size:
        raise ValueError(f"{d.size} difficulties but {y.shape[1]} responses per agent")
    if d.size == 0:
        raise ValueError("no items")
    order = np.argsort(d, kind="stable")
    ds = d[order]
    first = np.concatenate(([True], ds[1:] != ds[:-1]))
    starts = np.flatnonzero(first)
    counts = np.diff(np.concatenate((starts, [ds.size]))).astype(np.int64)
    # Points as rows, agents as columns: the kernel's layout (one gather, no transpose copy).
    yt = np.ascontiguousarray(y.T)[order]  # transpose first: the gather then copies rows
    ybar_t = yt if counts.size == ds.size else group_means_t(yt, counts, exact)
    return MergedCurve(ds[starts], ybar_t.T, counts)


# --------------------------------------------------------------------------- indicators
@dataclass(frozen=True)
class CurveIndicators:
    r"""Indicators of n agent characteristic curves (one entry per agent).

    Attributes
    ----------
    capability : ndarray
        Ψ, the area under the curve measured from the origin, in difficulty units.
    expected_difficulty : ndarray
        The reference's ``expdiff`` = M/A (location-dependent, see :func:`curve_indicators`).
    spread : ndarray
        S ≥ 0, in difficulty units; NaN only for responses outside [0, 1].
    generality : ndarray
        Γ = 1/S in 1/difficulty; +inf for S = 0.
    spread_squared : ndarray
        S² before the tolerance clamp (diagnostic).
    status : ndarray of str
        ``ok``; ``no_area`` (A = 0: where R errors, see below); ``negative_spread2``.
    """

    capability: FloatArray
    expected_difficulty: FloatArray
    spread: FloatArray
    generality: FloatArray
    spread_squared: FloatArray
    status: NDArray[np.str_]


@dataclass(frozen=True)
class AgentIndicators:
    """Return the indicators of one agent (see :class:`CurveIndicators`)."""

    capability: float
    expected_difficulty: float
    spread: float
    generality: float
    status: str


def _limits(
    u: FloatArray, kmin: float | None, kmax: float | None
) -> tuple[float, float, float, int, int]:
    """Return (k, left_area, left_moment, imin, imax) with 0-based indices (spec §2.1–2.2)."""
    n = u.size
    kmin0 = float(u[0])
    left = 0.0
    left_m = 0.0
    imin = 0
    if kmin is None:
        k = kmin0
    else:
        k = float(kmin)
        if k < kmin0:
            left = 1.0 * (kmin0 - k)
            left_m = ((1 / 2) * (kmin0 - k)) * (kmin0 + k)
        elif k > kmin0:
            i = int(np.searchsorted(u, k, side="left"))
            imin = i if i < n else n - 1
    imax = n - 1
    if kmax is not None and kmax < u[-1]:
        i = int(np.searchsorted(u, kmax, side="right")) - 1
        imax = i if i >= 0 else 0
    return k, left, left_m, imin, imax


def _sequential_sum(terms: FloatArray, start: float) -> FloatArray:
    """``start + terms[0] + terms[1] + …`` down each column, strictly left to right.

    ``numpy.add.reduce`` over the outer axis of a C-contiguous array with two or more columns
    accumulates row by row (sequentially, like R's loop); a single column would be summed
    pairwise, so it goes through ``cumsum``. A test pins this behaviour.
    """
    if terms.shape[1] >= 2:
        return np.add.reduce(terms, axis=0, initial=start)
    col = np.concatenate(([start], terms[:, 0]))
    return np.cumsum(col)[-1:]


def _indicators_merged(
    u: FloatArray, ybar: FloatArray, kmin: float | None, kmax: float | None
) -> CurveIndicators:
    """Spec §2.3–2.4 on merged points shared by all rows of ``ybar`` (n × N).

    Works on the transposed layout (points × agents), in chunks of agents: every operation
    is a whole-array numpy expression in R's operation order.
    """
    k, left, left_m, imin, imax = _limits(u, kmin, kmax)
    yt_all = ybar.T  # a C-contiguous (N, n) array when it comes from merge_points
    n = yt_all.shape[1]
    a_tot = np.empty(n)
    m_tot = np.empty(n)
    seg = max(imax - imin, 0)
    if seg == 0:
        a_tot.fill(left)
        m_tot.fill(left_m)
        return _finish(a_tot, m_tot, k)
    a = u[imin:imax]
    b = u[imin + 1 : imax + 1]
    # (du·(c+e))/2 == (du/2)·(c+e) bit for bit: halving is exact (scaling by a power of two)
    half_du = ((b - a) / 2)[:, None]
    w = ((1 / 6) * (b - a))[:, None]
    a_col = a[:, None]
    b_col = b[:, None]
    width = max(2, _CHUNK_ELEMENTS // (seg + 1))
    for lo in range(0, n, width):
        hi = min(n, lo + width)
        c = yt_all[imin:imax, lo:hi]
        e = yt_all[imin + 1 : imax + 1, lo:hi]
        # A: ((u[i+1] - u[i]) * (ȳ[i] + ȳ[i+1])) / 2
        t = np.add(c, e)
        t *= half_du
        a_tot[lo:hi] = _sequential_sum(t, left)
        # M: ((1/6)*(b - a)) * (a*(2*c + e) + b*(c + 2*e))
        np.multiply(c, 2, out=t)
        t += e
        t *= a_col
        t2 = np.multiply(e, 2)
        t2 += c  # c + 2e: addition is commutative in IEEE arithmetic
        t2 *= b_col
        t += t2
        t *= w
        m_tot[lo:hi] = _sequential_sum(t, left_m)
    return _finish(a_tot, m_tot, k)


def _finish(a_tot: FloatArray, m_tot: FloatArray, k: float | FloatArray) -> CurveIndicators:
    """Capability, expdiff, S², S and Γ from the accumulated area and moment (spec §2.4)."""
    n = a_tot.size
    k_arr = np.broadcast_to(np.asarray(k, dtype=np.float64), (n,))
    capability = a_tot + k_arr
    status = np.full(n, STATUS_OK, dtype="<U16")
    no_area = a_tot == 0
    with np.errstate(divide="ignore", invalid="ignore"):
        expdiff = m_tot / a_tot
        s2 = (2 * a_tot) * (expdiff - k_arr) - a_tot * a_tot
    # A = 0 (R: error). The limit of a vanishing saturated block: a step at k.
    expdiff = np.where(no_area, k_arr, expdiff)
    s2 = np.where(no_area, 0.0, s2)
    status[no_area] = STATUS_NO_AREA
    bad = s2 < -S2_TOLERANCE
    status[bad] = STATUS_NEGATIVE_S2
    s2_clamped = np.where((s2 < 0) & ~bad, 0.0, s2)
    spread = np.where(bad, np.nan, np.sqrt(np.where(bad, 0.0, s2_clamped)))
    with np.errstate(divide="ignore", invalid="ignore"):
        generality = np.where(spread == 0, np.inf, 1.0 / spread)
    return CurveIndicators(capability, expdiff, spread, generality, s2, status)


def _check(d: FloatArray, y: FloatArray) -> bool:
    """Validate the inputs; return whether any response is missing (NaN)."""
    if not np.all(np.isfinite(d)):
        raise ValueError("difficulties must be finite")
    lo, hi = (float(y.min()), float(y.max())) if y.size else (0.0, 0.0)
    if not (np.isnan(lo) or np.isnan(hi)):  # the common case: two passes, no copy
        if lo < 0 or hi > 1:
            raise ValueError("responses must lie in [0, 1]")
        return False
    finite = y[~np.isnan(y)]
    if not np.all(np.isfinite(finite)):
        raise ValueError("responses must be finite")
    if finite.size and (finite.min() < 0 or finite.max() > 1):
        raise ValueError("responses must lie in [0, 1]")
    return True


def curve_indicators(
    difficulty: ArrayLike,
    responses: ArrayLike,
    kmin: float | None = None,
    kmax: float | None = None,
    *,
    exact: bool = True,
) -> CurveIndicators:
    r"""Capability, expected difficulty, spread and generality of n agents' curves.

    With the merged points :math:`u_1 < \dots < u_N` and mean responses :math:`\bar y_i`
    (:func:`merge_points`), the curve is 1 on :math:`[k_{min}, u_1)` when
    :math:`k_{min} < u_1` (saturation to the left), linear between points and 0 right of
    :math:`u_N`:

    .. math::

        A &= (u_1 - k_{min})^+ + \sum_{i=i_{min}}^{i_{max}-1}
             \frac{(u_{i+1}-u_i)(\bar y_i + \bar y_{i+1})}{2}, \qquad \Psi = A + k_{min} \\
        M &= \tfrac12 (u_1 - k_{min})^+ (u_1 + k_{min}) + \sum_{i=i_{min}}^{i_{max}-1}
             \frac{u_{i+1}-u_i}{6}\big(u_i(2\bar y_i + \bar y_{i+1})
             + u_{i+1}(\bar y_i + 2\bar y_{i+1})\big) \\
        E &= M / A, \qquad S^2 = 2A(E - k_{min}) - A^2, \qquad S = \sqrt{S^2},
        \qquad \Gamma = 1/S

    Ψ, S and E are in difficulty units, Γ in 1/difficulty. For :math:`k_{min} \le u_1` this is
    the paper's :math:`\Psi = \int_0^\infty \psi`, :math:`S^2 = 2\int_0^\infty h\psi - \Psi^2`.

    Parameters
    ----------
    difficulty : array_like, shape (P,)
        Item difficulties (finite), shared by all agents.
    responses : array_like, shape (P,) or (n, P)
        Responses in [0, 1]; NaN marks an item the agent did not attempt (its curve is built
        from the items it did attempt).
    kmin, kmax : float or None
        Integration limits. ``kmin`` None means :math:`u_1`; below :math:`u_1` it adds the
        saturated block; above it, integration starts at the first point ≥ kmin and the
        segment [kmin, that point] is **dropped** (the reference's "hole"). ``kmax`` below
        :math:`u_N` truncates at the last point ≤ kmax; at or above :math:`u_N` it has no
        effect (no padding, no extrapolation).
    exact : bool
        Merge with R's long-double means (default). False uses double means, faster and
        within about an ulp (used for bootstrap replicates).

    Returns
    -------
    CurveIndicators

    Raises
    ------
    ValueError
        Non-finite difficulties, responses outside [0, 1], a length mismatch, or an agent
        with no answered item.

    Notes
    -----
    Sums run sequentially left to right in the reference's operation order, so results equal
    R's doubles. Where R stops with an error this function returns an answer instead:

    * **A = 0** (an all-zero agent without a saturated block, a single distinct difficulty
      with kmin None, or limits that leave no segment): Ψ = kmin, S = 0, Γ = +inf and
      E = kmin — the limit of a vanishing saturated block, i.e. a step at kmin; status
      ``no_area``.
    * **No segment** (one distinct difficulty, or kmin/kmax beyond the data, where R's
      ``imin:(imax-1)`` would count downwards): nothing is summed, so A is the left block.
    * **S² < −1e-5** (only possible with responses outside [0, 1], which this function
      refuses; the internal kernel reports it): S = Γ = NaN, status ``negative_spread2``.
      Between −1e-5 and 0, S² is rounding and becomes 0 as in R.

    ``expected_difficulty`` divides M by A (not by Ψ) and counts the saturated block from
    the origin, so it moves with kmin while Ψ and S do not (spec §2.5). With kmin = 0 it is the
    paper's expected difficulty H = M/Ψ.

    References
    ----------
    J. Hernández-Orallo, B. S. Loe, L. Cheke, F. Martínez-Plumed, S. Ó hÉigeartaigh, "General
    intelligence disentangled via a generality metric for natural and artificial
    intelligence", Scientific Reports 11, 22822 (2021), Supplement §E, §F.4.
    """
    d = np.asarray(difficulty, dtype=np.float64)
    y = np.atleast_2d(np.asarray(responses, dtype=np.float64))
    if d.ndim != 1 or y.ndim != 2 or y.shape[1] != d.size:
        raise ValueError(f"{d.size} difficulties but responses of shape {y.shape}")
    if not _check(d, y):
        merged = merge_points(d, y, exact)
        return _indicators_merged(merged.difficulty, merged.response, kmin, kmax)
    missing = np.isnan(y)
    if (missing.all(axis=1)).any():
        raise ValueError("an agent has no answered item")
    # Agents sharing a pattern of answered items share a merge.
    patterns, inverse = np.unique(~missing, axis=0, return_inverse=True)
    inverse = inverse.ravel()
    parts: list[CurveIndicators] = []
    rows_of: list[NDArray[np.intp]] = []
    for p in range(patterns.shape[0]):
        rows = np.flatnonzero(inverse == p)
        cols = np.flatnonzero(patterns[p])
        merged = merge_points(d[cols], y[np.ix_(rows, cols)], exact)
        parts.append(_indicators_merged(merged.difficulty, merged.response, kmin, kmax))
        rows_of.append(rows)
    return _scatter(parts, rows_of, y.shape[0])


def _scatter(
    parts: list[CurveIndicators], rows_of: list[NDArray[np.intp]], n: int
) -> CurveIndicators:
    fields: dict[str, np.ndarray] = {
        "capability": np.empty(n),
        "expected_difficulty": np.empty(n),
        "spread": np.empty(n),
        "generality": np.empty(n),
        "spread_squared": np.empty(n),
        "status": np.empty(n, dtype="<U16"),
    }
    for part, rows in zip(parts, rows_of, strict=True):
        for name, arr in fields.items():
            arr[rows] = getattr(part, name)
    return CurveIndicators(**fields)


def agent_indicators(
    difficulty: ArrayLike,
    responses: ArrayLike,
    kmin: float | None = None,
    kmax: float | None = None,
) -> AgentIndicators:
    """Return the indicators of one agent (see :func:`curve_indicators` for the formulas)."""
    y = np.asarray(responses, dtype=np.float64)
    if y.ndim != 1:
        raise ValueError("one agent's responses must be a vector")
    r = curve_indicators(difficulty, y[None, :], kmin, kmax)
    return AgentIndicators(
        float(r.capability[0]),
        float(r.expected_difficulty[0]),
        float(r.spread[0]),
        float(r.generality[0]),
        str(r.status[0]),
    )


def indicators_from_merged(
    difficulty: ArrayLike, mean_responses: ArrayLike, kmin: float | None, kmax: float | None
) -> CurveIndicators:
    """Run the kernel on already merged points, unchecked (responses may leave [0, 1]).

    ``difficulty`` must be strictly increasing. Used by tests of the degenerate branches and
    by callers that merged themselves.
    """
    u = np.asarray(difficulty, dtype=np.float64)
    ybar = np.atleast_2d(np.asarray(mean_responses, dtype=np.float64))
    return _indicators_merged(u, ybar, kmin, kmax)


def curve_points(
    difficulty: ArrayLike, responses: ArrayLike, kmin: float | None = None
) -> tuple[FloatArray, FloatArray]:
    """Return one agent's curve as integrated: points (x, ψ), saturated block included.

    For charts: the merged points, preceded by (kmin, 1) when kmin < u₁ (the curve then
    jumps from 1 to ȳ₁ at u₁). NaN responses are ignored.
    """
    d = np.asarray(difficulty, dtype=np.float64)
    y = np.asarray(responses, dtype=np.float64)
    keep = ~np.isnan(y)
    merged = merge_points(d[keep], y[keep])
    x = merged.difficulty
    psi = merged.response[0]
    if kmin is not None and kmin < x[0]:
        x = np.concatenate(([kmin, x[0]], x))
        psi = np.concatenate(([1.0, 1.0], psi))
    return x, psi
