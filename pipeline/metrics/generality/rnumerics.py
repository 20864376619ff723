r"""R's numerics, reproduced bit for bit: ``mean``, ``rowMeans``, ``seq``, ``quantile(type=7)``.

The reference R code decides ties and rounds through these functions, so the generality
indicators only match R's doubles if they are emulated exactly (spec §11):

* ``mean(x)`` sums in 80-bit long double, divides, then adds a long-double correction pass;
* ``rowMeans`` sums in long double and divides in long double;
* ``seq(a, b, length.out=n)`` is :math:`a + k\,(b-a)/(n-1)` with the last element set to b;
* ``quantile(type=7)`` interpolates :math:`(1-h)\,x_{(l)} + h\,x_{(l+1)}`.

``numpy.longdouble`` is the x87 80-bit format on x86-64 Linux, as R's ``LDOUBLE``. Where it is
a plain double (some other platforms) results may differ from R by an ulp for non-dyadic data.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from fractions import Fraction

import numpy as np
from numpy.typing import ArrayLike, NDArray

FloatArray = NDArray[np.float64]


def _starts(counts: NDArray[np.int64]) -> NDArray[np.int64]:
    return np.concatenate(([0], np.cumsum(counts)[:-1])).astype(np.int64)


def _ld_means(vt: FloatArray, counts: NDArray[np.int64]) -> FloatArray:
    """R's ``mean`` of each row group of ``vt`` (P × n), emulated step by step in long double."""
    starts = _starts(counts)
    n = vt.shape[1]
    block = vt.astype(np.longdouble)
    cnt_ld = counts.astype(np.longdouble)[:, None]
    # Sequential sums (numpy's reduce may be pairwise): one vectorised step per position in
    # the groups, over every group still that long and every agent at once.
    steps = [np.flatnonzero(counts > k) for k in range(int(counts.max()))]
    total = np.zeros((counts.size, n), dtype=np.longdouble)
    for k, act in enumerate(steps):
        total[act] += block[starts[act] + k]
    s = total / cnt_ld
    resid = np.zeros_like(total)
    for k, act in enumerate(steps):
        resid[act] += block[starts[act] + k] - s[act]
    s += resid / cnt_ld
    return s.astype(np.float64)


def group_means_t(vt: FloatArray, counts: NDArray[np.int64], exact: bool = True) -> FloatArray:
    r"""Means of consecutive row groups of ``vt`` (P × n), rounded as R's ``mean``.

    .. math:: \bar y_k = \mathrm{fl}_{64}\Big(s_k + \tfrac{1}{n_k}\sum_{i \in k}
              \mathrm{fl}_{80}(y_i - s_k)\Big), \qquad
              s_k = \mathrm{fl}_{80}\Big(\tfrac{1}{n_k}\sum_{i \in k} y_i\Big)

    with :math:`n_k` the size of group k and every sum running left to right in 80-bit long
    double (R's ``summary.c``).

    Parameters
    ----------
    vt : ndarray, shape (P, n)
        Points as rows (already ordered so that each group is a run of rows), agents as columns.
    counts : ndarray of int, shape (G,)
        Group sizes, summing to P.
    exact : bool
        False gives plain double means (pairwise sums, within about an ulp of R's): faster,
        good enough for bootstrap replicates.

    Returns
    -------
    ndarray, shape (G, n)

    Notes
    -----
    Groups of one row are copied (the mean of one number is that number). For dyadic data
    (0/1, halves, …) ``sum / n`` is used where it provably equals R's result
    (:func:`_dyadic_means`); otherwise every group is emulated step by step, in long double,
    in the values' order (the correction pass depends on that order).
    """
    counts = np.asarray(counts, dtype=np.int64)
    starts = _starts(counts)
    out = np.empty((counts.size, vt.shape[1]), dtype=np.float64)
    single = counts == 1
    out[single] = vt[starts[single]]
    multi = np.flatnonzero(~single)
    if multi.size == 0:
        return out
    cnt = counts[multi]
    if not exact:
        out[multi] = np.add.reduceat(vt, starts, axis=0)[multi] / cnt[:, None]
        return out
    rows = np.concatenate([np.arange(starts[g], starts[g] + counts[g]) for g in multi])
    sub = vt[rows] if rows.size < vt.shape[0] else vt
    fast = _dyadic_means(sub, cnt)
    if fast is not None:
        out[multi] = fast
        return out
    # Chunks of agents keep the long-double copy small (about 32 MiB).
    width = max(1, (1 << 21) // max(rows.size, 1))
    for lo in range(0, vt.shape[1], width):
        out[multi, lo : lo + width] = _ld_means(sub[:, lo : lo + width], cnt)
    return out


_DYADIC = 1024.0
_MAX_PAIRS = 20000


def _safe_quotient(total: float, n: int, spread: float) -> bool:
    r"""Whether R's mean of n values summing exactly to ``total`` is ``fl64(total / n)``.

    R computes :math:`s_0 = \mathrm{fl}_{80}(q)` with :math:`q = total/n`, then
    :math:`t = \sum_i \mathrm{fl}_{80}(y_i - s_0)` left to right and
    :math:`s = \mathrm{fl}_{80}(s_0 + t/n)`. With :math:`R \ge \max_i |y_i - s_0|`
    (``spread``) every residual is off by at most :math:`2^{-64}R` and the j-th partial sum by
    at most :math:`2^{-64} jR`, whatever the order of the values, so

    .. math:: |s - q| \le B = 1.25 \cdot 2^{-64}\big(R\,(n+3)/2 + |q|\big)

    (25 % margin). If q is farther than B from every rounding boundary of doubles (the
    midpoints between neighbours), R's double is the correctly rounded q. The distance is
    computed in exact rational arithmetic. A short dyadic q (0, 1/2, …) is returned exactly.
    """
    q = Fraction(total) / n
    den = q.denominator
    if den & (den - 1) == 0 and den <= 2 ** (10 + n.bit_length()) and spread * n < 2**25:
        # q is a short dyadic number (0, 1/2, 3/4, ...): every residual and partial sum is
        # exact in long double, t = 0 and R returns q itself.
        return True
    d = total / n  # correctly rounded q (total and n are exact doubles)
    fd = Fraction(d)
    up = (fd + Fraction(math.nextafter(d, math.inf))) / 2
    down = (fd + Fraction(math.nextafter(d, -math.inf))) / 2
    dist = min(abs(q - up), abs(q - down))
    bound = Fraction(5, 4) * (Fraction(spread) * Fraction(n + 3, 2) + abs(q)) / 2**64
    return dist > bound


def _is_dyadic(sub: FloatArray) -> bool:
    """Whether every value is a multiple of 2⁻¹⁰ (0/1 data is checked the cheap way first)."""
    if np.count_nonzero(sub == 0) + np.count_nonzero(sub == 1) == sub.size:
        return True
    frac, _ = np.modf(sub * _DYADIC)
    return not np.any(frac)


def _dyadic_means(sub: FloatArray, cnt: NDArray[np.int64]) -> FloatArray | None:
    """R's group means without the step-by-step emulation where that is provably the same.

    Applies to data that are multiples of 2⁻¹⁰ (0/1, halves, quarters, …) with small enough
    sums: the group sums are then exact in double whatever the order, and for each distinct
    (sum, size) pair :func:`_safe_quotient` decides whether R's correction pass can change the
    rounded result. Only the entries of unsafe pairs are emulated step by step. Returns None
    (emulate everything) for other data or too many distinct pairs.
    """
    big = float(np.max(np.abs(sub))) if sub.size else 0.0
    top = float(cnt.max())
    if not math.isfinite(big) or big * top * _DYADIC > 2.0**40 or not _is_dyadic(sub):
        return None
    starts = _starts(cnt)
    sums = np.add.reduceat(sub, starts, axis=0)  # exact in any order
    # one exact float key per (sum, size) pair: sum·2^10 is an integer below 2^40
    keys = (sums * _DYADIC) * (top + 1) + cnt[:, None]
    uniq, inverse = np.unique(keys, return_inverse=True)
    if uniq.size > _MAX_PAIRS:
        return None
    # max |y_i − s0| ≤ max|y| for data of one sign (s0 lies between them), ≤ 2 max|y| otherwise
    one_sign = bool(np.all(sub >= 0)) or bool(np.all(sub <= 0))
    spread = big if one_sign else 2 * big
    safe_of = np.array(
        [_safe_quotient(float(k // (top + 1)) / _DYADIC, int(k % (top + 1)), spread) for k in uniq]
    )
    safe = safe_of[inverse.reshape(sums.shape)]
    out: FloatArray = sums / cnt[:, None]
    for g in np.flatnonzero(~safe.all(axis=1)):
        agents = np.flatnonzero(~safe[g])
        members = sub[starts[g] : starts[g] + cnt[g]][:, agents]
        out[g, agents] = _ld_means(members, cnt[g : g + 1])[0]
    return out


def r_group_means(values: FloatArray, counts: NDArray[np.int64], exact: bool = True) -> FloatArray:
    """R's ``mean`` of consecutive column groups of ``values`` (n × P) → (n × G).

    See :func:`group_means_t` (the same on the transposed layout).
    """
    return group_means_t(np.asarray(values, dtype=np.float64).T, counts, exact).T


def r_seq(start: float, stop: float, n: int) -> FloatArray:
    """R's ``seq(start, stop, length.out=n)``: start + k·((stop − start)/(n − 1)), last = stop."""
    if n == 1:
        return np.array([start], dtype=np.float64)
    by = (stop - start) / (n - 1)
    out = start + np.arange(n, dtype=np.float64) * by
    out[-1] = stop
    return out


def r_quantile7(x: ArrayLike, prob: float) -> float:
    r"""R's ``quantile(x, prob, type=7)``, bit for bit.

    .. math:: h = 1 + (n-1)p,\quad l = \lfloor h \rfloor,\quad
              Q = (1 - (h - l))\,x_{(l)} + (h - l)\,x_{(l+1)}

    on the sorted data (1-based), the interpolation skipped when :math:`h = l` or the two
    order statistics are equal.
    """
    xs = np.sort(np.asarray(x, dtype=np.float64))
    n = xs.size
    if n == 0:
        raise ValueError("quantile of an empty vector")
    index = 1 + max(n - 1, 0) * prob
    lo = math.floor(index)
    hi = math.ceil(index)
    q = float(xs[lo - 1])
    x_hi = float(xs[hi - 1])
    if index > lo and x_hi != q:
        h = index - lo
        q = (1 - h) * q + h * x_hi
    return q


def r_row_means(values: ArrayLike, groups: Sequence[Sequence[int]]) -> FloatArray:
    r"""R's ``rowMeans`` over column groups: long-double sum, long-double division, rounding.

    .. math:: m_{jg} = \mathrm{fl}_{64}\Big(\mathrm{fl}_{80}\big(\textstyle\sum_{i \in g}
              x_{ji}\big) / |g|\Big)

    The sum runs left to right in the group's column order. The grouped GVGAI scenario needs
    this exact rounding: double ``sum/5`` changes which scores tie (spec §8.7). A missing
    member (NaN) makes the mean missing.
    """
    x = np.atleast_2d(np.asarray(values, dtype=np.float64))
    out = np.empty((x.shape[0], len(groups)))
    for g, cols in enumerate(groups):
        acc = np.zeros(x.shape[0], dtype=np.longdouble)
        for c in cols:
            acc += x[:, c].astype(np.longdouble)
        out[:, g] = (acc / np.longdouble(len(cols))).astype(np.float64)
    return out
