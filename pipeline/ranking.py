"""Ranks, tie groups and the way a score is written: one definition for the site and ``check``.

Pure functions of numbers, no I/O: the site's boards (:mod:`pipeline.site.standings`), the
``gmeter check`` report (:mod:`pipeline.check`) and the scorer (:mod:`pipeline.score`) rank,
group and print scores through this module, so a pull request's report and the published board
can never disagree on who is tied with whom.
"""

from __future__ import annotations

import bisect
import math
from collections.abc import Sequence

# --------------------------------------------------------------------------- numbers


def fmt_num(value: float | None) -> str:
    """Format a score with about four significant digits; ``—`` for missing, ``∞`` for inf."""
    if value is None:
        return "—"
    if math.isnan(value):
        return "NaN"
    if math.isinf(value):
        return "∞" if value > 0 else "-∞"
    a = abs(value)
    if a == 0:
        return "0"
    if a >= 1e6 or a < 1e-3:
        return f"{value:.3e}"
    decimals = min(5, max(0, 3 - math.floor(math.log10(a))))
    return f"{value:.{decimals}f}"


def fmt_interval(low: float | None, high: float | None) -> str:
    """``[low, high]``, or ``""`` when there is no interval."""
    if low is None or high is None:
        return ""
    return f"[{fmt_num(low)}, {fmt_num(high)}]"


def same_value(a: float | None, b: float | None) -> bool:
    """Equality where NaN equals NaN (a recomputed NaN is not a change)."""
    if a is None or b is None:
        return a is b
    if math.isnan(a) and math.isnan(b):
        return True
    return a == b


def usable(v: float | None) -> bool:
    """Whether a score can be ranked: present and not NaN (``inf`` ranks as the extreme)."""
    return v is not None and not math.isnan(v)


# --------------------------------------------------------------------------- ranks and groups


def ranked_pool(verified: Sequence[bool]) -> list[bool]:
    """Which entries are ranked against each other: the verified ones, where any exist.

    An entry the benchmark cannot recompute is *reported*; it never outranks a verified one.
    On a board with a verified entry, ranks and tie groups are computed over the verified
    entries alone and reported entries are listed apart, in their own order; a board of
    reported entries only is ranked among them.
    """
    flags = [bool(v) for v in verified]
    return flags if any(flags) else [True] * len(flags)


def pooled(ranks: Sequence[int | None], pool: Sequence[bool]) -> list[int | None]:
    r"""Restrict ranks to ``pool`` (the order and the ties inside the pool are kept).

    .. math:: r'_i = 1 + \#\{j \in P : r_j < r_i\},\quad i \in P

    and ``None`` outside the pool.
    """
    inside = sorted(r for r, p in zip(ranks, pool, strict=True) if p and r is not None)
    return [1 + bisect.bisect_left(inside, r) if p and r is not None else None
            for r, p in zip(ranks, pool, strict=True)]


def pooled_groups(
    intervals: Sequence[tuple[float | None, float | None, float | None]], direction: str,
    pool: Sequence[bool],
) -> list[int | None]:
    """:func:`rank_groups` over the entries of ``pool`` only (``None`` outside)."""
    idx = [i for i, p in enumerate(pool) if p]
    out: list[int | None] = [None] * len(intervals)
    for i, g in zip(idx, rank_groups([intervals[i] for i in idx], direction), strict=True):
        out[i] = g
    return out


def min_ranks(values: Sequence[float | None], direction: str) -> list[int | None]:
    r"""Competition ranks (ties share the smallest rank; 1 = best); ``None`` for NaN/missing.

    .. math:: r_i = 1 + \#\{j : s v_j > s v_i\},\quad s = +1 \text{ (higher) or } -1

    Used only when the store holds no ranks (the scorer normally ranks).
    """
    sign = -1.0 if direction == "lower" else 1.0
    keyed = sorted(sign * v for v in values if v is not None and usable(v))
    out: list[int | None] = []
    for v in values:
        if v is None or not usable(v):
            out.append(None)
            continue
        out.append(1 + len(keyed) - bisect.bisect_right(keyed, sign * v))
    return out


def rank_groups(
    intervals: Sequence[tuple[float | None, float | None, float | None]], direction: str
) -> list[int | None]:
    r"""Tie groups as LMArena's "rank (UB)": one plus the entries *surely* better.

    For higher-is-better metrics, with interval :math:`[l_i, h_i]` (the point value when no
    interval was computed),

    .. math:: g_i = 1 + \#\{j : l_j > h_i\}

    so every entry whose interval reaches the best lower bound shares group 1 with the
    leader, and an entry drops a group only for each competitor whose whole interval lies
    above its own. Lower-is-better metrics use :math:`g_i = 1 + \#\{j : h_j < l_i\}`.
    Entries without a usable value (NaN, missing) get ``None``. Without intervals the groups
    equal the competition ranks.

    References
    ----------
    Chiang et al. 2024, *Chatbot Arena* (the "Rank (UB)" column of LMArena).
    """
    lows: list[float] = []
    highs: list[float] = []
    rankable: list[bool] = []
    for value, lo, hi in intervals:
        ok = value is not None and usable(value)
        rankable.append(ok)
        if not ok:
            lows.append(math.nan)
            highs.append(math.nan)
            continue
        assert value is not None
        lo_ = lo if lo is not None and usable(lo) else value
        hi_ = hi if hi is not None and usable(hi) else value
        lows.append(min(lo_, value))
        highs.append(max(hi_, value))
    if direction == "lower":
        # l_j' = -h_j, h_i' = -l_i turns "lower is better" into "higher is better".
        lows, highs = [-h for h in highs], [-lo for lo in lows]
    sorted_lows = sorted(v for v, ok in zip(lows, rankable, strict=True) if ok)
    out: list[int | None] = []
    for hi, ok in zip(highs, rankable, strict=True):
        if not ok:
            out.append(None)
        else:
            out.append(1 + len(sorted_lows) - bisect.bisect_right(sorted_lows, hi))
    return out
