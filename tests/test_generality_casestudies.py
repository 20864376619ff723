"""Letter series (Supplement A.2) and PCTB (A.10) against an independent oracle of the spec.

The oracle below is written from ``shared/specs/generality-spec.md`` §1–§4.2, §7, §8.3 with
plain Python loops (no gmeter code), on the raw data files of each submission folder.
"""

from __future__ import annotations

import csv
import io
import math
from pathlib import Path

import numpy as np
import pytest
from scipy.special import betainc

from pipeline.lab.generality.tables import benchmark_table
from pipeline.validate import benchmark_inputs

SUB = Path(__file__).resolve().parents[1] / "submissions"


def q7(x, p):
    x = sorted(x)
    h = (len(x) - 1) * p
    j = math.floor(h)
    return x[j] if j + 1 >= len(x) else (1 - (h - j)) * x[j] + (h - j) * x[j + 1]


def indicators(d, y, kmin, kmax):
    u = sorted(set(d))
    yb = [np.mean([v for dd, v in zip(d, y, strict=True) if dd == uu]) for uu in u]
    k0 = u[0]
    imin = 0 if kmin <= k0 else next(i for i in range(len(u)) if kmin <= u[i])
    imax = len(u) - 1 if kmax >= u[-1] else max(i for i in range(len(u)) if kmax >= u[i])
    area = k0 - kmin if kmin < k0 else 0.0
    moment = 0.5 * (k0 - kmin) * (k0 + kmin) if kmin < k0 else 0.0
    for i in range(imin, imax):
        a, b, c, e = u[i], u[i + 1], yb[i], yb[i + 1]
        area += ((b - a) * (c + e)) / 2
        moment += ((1 / 6) * (b - a)) * (a * (2 * c + e) + b * (c + 2 * e))
    s2 = (2 * area) * (moment / area - kmin) - area * area
    return area + kmin, math.sqrt(max(s2, 0.0))


def gamma(cap, spr, lo, hi):
    x = np.linspace(lo, hi, 100)
    a = (x - lo) * ((hi - lo) - (x - lo))
    a[(a < 0) & (a > -1e-4)] = 0
    cy, ay = np.sqrt(a), np.sqrt(2 * a)
    out = []
    for c, s in zip(cap, spr, strict=True):
        w = int(np.argmin(np.abs(c - x)))
        den = ay[w] ** 2 - cy[w] ** 2
        out.append(-(0.0 if den == 0 else (s * s - cy[w] ** 2) / den))
    return out


def table(bid):
    rows, _ = benchmark_table(*benchmark_inputs(SUB / bid, "generality"))
    return rows


def matrix(path):
    rows = list(csv.DictReader(io.StringIO(path.read_text(encoding="utf-8"))))
    agents = list(dict.fromkeys(r["agent"] for r in rows))
    items = list(dict.fromkeys(r["item"] for r in rows))
    v = {(r["agent"], r["item"]): float(r["value"]) for r in rows}
    return agents, items, [[v[a, i] for i in items] for a in agents]


def test_letter_series_matches_the_oracle():
    items = list(
        csv.DictReader(
            io.StringIO((SUB / "letter-series/reference/items.csv").read_text(encoding="utf-8"))
        )
    )
    d = [float(i["difficulty"]) for i in items]
    ha, _, h = matrix(SUB / "letter-series/humans/responses.csv")
    sa, _, s = matrix(SUB / "letter-series/systems/responses.csv")
    y = [[(x + 0.25) / 1.25 for x in row] for row in h + s]  # the "nonbinary" scoring
    kmax = q7(d, 0.5) + 2 * (q7(d, 0.95) - q7(d, 0.05))
    assert kmax == 23.599999999999994  # the README's double
    dp = [0.0, min(d) - 0.00001, *d, max(d) + 0.00001, kmax]
    want = [indicators(dp, [1, 1, *r, 0, 0], 0.0, kmax) for r in y]
    g = gamma([w[0] for w in want], [w[1] for w in want], 7.0, 14.0)
    got = table("letter-series")
    assert [r["agent"] for r in got] == ha + sa  # 48 humans, magic, freq ... halfright
    for r, (cap, spr), gg in zip(got, want, g, strict=True):
        assert r["capability"] == pytest.approx(cap, abs=1e-12)
        assert r["spread"] == pytest.approx(spr, abs=1e-12)
        assert r["normalised_generality"] == pytest.approx(gg, abs=1e-12)


def test_pctb_matches_the_oracle_and_the_published_mean():
    cats = list(
        csv.DictReader(io.StringIO((SUB / "pctb/reference/items.csv").read_text(encoding="utf-8")))
    )
    _, _, y = matrix(SUB / "pctb/herrmann-2007/responses.csv")
    grid = np.linspace(0, 1, 100)
    want = []
    for row in y:
        d, resp = [], []
        for c, v in zip(cats, row, strict=True):
            mu, var = float(c["ref_mean"]), float(c["ref_variance"])
            alpha = ((1 - mu) / var - 1 / mu) * mu**2
            q = betainc(alpha, alpha * (1 / mu - 1), v)
            d += list(grid)
            resp += [1.0 if q > x else 0.5 if q == x else 0.0 for x in grid]
        want.append(indicators(d, resp, 0.0, 1.0))
    g = gamma([w[0] for w in want], [w[1] for w in want], 0.0, 1.0)
    got = table("pctb")
    assert [r["agent"] for r in got] == ["human", "chimpanzee", "orangutan"]
    for r, (cap, spr), gg in zip(got, want, g, strict=True):
        assert r["capability"] == pytest.approx(cap, abs=1e-12)
        assert r["spread"] == pytest.approx(spr, abs=1e-12)
        assert r["normalised_generality"] == pytest.approx(gg, abs=1e-12)
    assert round(float(np.mean([r["normalised_generality"] for r in got])), 2) == 0.91
