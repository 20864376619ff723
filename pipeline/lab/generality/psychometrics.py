"""``gmeter fa`` and ``gmeter irt``: factor analysis and IRT of a response file on disk.

The supplement of Hernández-Orallo et al. (2021) compares generality with what a
psychometrician would compute instead: a first factor (loadings, variance explained) and 2PL
IRT difficulties. This module is the use case behind both commands (any response file, wide or
long, read by :mod:`pipeline.lab.generality.matrix`) and their CSV/JSON output; the board's
psychometric view is the track's (:mod:`pipeline.tracks.generality.psychometrics`).
"""

from __future__ import annotations

import csv
import io
import json
import math
from pathlib import Path
from typing import Any

import numpy as np

from pipeline.errors import GmeterError
from pipeline.lab.generality.matrix import read_matrix
from pipeline.metrics.generality.factor import FactorResult, minres
from pipeline.metrics.generality.irt import IrtResult, Model, fit_irt


def _num(x: float) -> float | None:
    return float(x) if math.isfinite(float(x)) else None


# ------------------------------------------------------------------ commands
def _matrix(path: Path) -> tuple[np.ndarray, tuple[str, ...], tuple[str, ...]]:
    pop = read_matrix(path)
    return pop.values, pop.items, pop.agents


def factor_analysis(path: Path, factors: int = 1) -> FactorResult:
    """Minres factor analysis of a response file (wide or long); see :func:`minres`."""
    values, items, _ = _matrix(path)
    if len(items) < 2:
        raise GmeterError(f"{path}: factor analysis needs several items, got {len(items)}")
    return minres(values, items, factors)


def irt(path: Path, model: Model = "2pl") -> IrtResult:
    """1PL/2PL IRT of a response file (wide or long); see :func:`fit_irt`."""
    values, items, _ = _matrix(path)
    return fit_irt(values, items, model)


def fa_summary(fa: FactorResult) -> dict[str, Any]:
    """The JSON document of ``gmeter fa --format json``."""
    first = fa.first
    return {
        "loadings": {i: float(v) for i, v in zip(fa.items, first, strict=True)},
        "mean_loading": float(first.mean()),
        "min_loading": float(first.min()),
        "max_loading": float(first.max()),
        "variance_explained": float(fa.variance_explained[0]),
        "factors": int(fa.loadings.shape[1]),
        "variance_explained_per_factor": [float(v) for v in fa.variance_explained],
        "all_loadings": {
            i: [float(v) for v in row] for i, row in zip(fa.items, fa.loadings, strict=True)
        },
        "uniqueness": {i: float(v) for i, v in zip(fa.items, fa.uniqueness, strict=True)},
        "dropped_constant_items": list(fa.dropped),
        "n_agents": fa.n_agents,
        "method": "minres on Pearson correlations, unrotated",
        "converged": fa.converged,
    }


def fa_csv(fa: FactorResult) -> str:
    """``item,loading[,loading_2..],uniqueness`` (full precision)."""
    k = fa.loadings.shape[1]
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(["item", "loading", *[f"loading_{f + 1}" for f in range(1, k)], "uniqueness"])
    for i, row, u in zip(fa.items, fa.loadings, fa.uniqueness, strict=True):
        w.writerow([i, *[repr(float(v)) for v in row], repr(float(u))])
    return buf.getvalue()


def irt_rows(res: IrtResult) -> list[dict[str, Any]]:
    """One dict per estimated item: item, difficulty, discrimination, p_correct."""
    return [
        {
            "item": i,
            "difficulty": float(b),
            "discrimination": float(a),
            "p_correct": float(p),
        }
        for i, b, a, p in zip(
            res.items, res.difficulty, res.discrimination, res.p_correct, strict=True
        )
    ]


def irt_csv(res: IrtResult) -> str:
    """``item,difficulty,discrimination,p_correct`` (full precision)."""
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(["item", "difficulty", "discrimination", "p_correct"])
    for r in irt_rows(res):
        w.writerow(
            [r["item"], repr(r["difficulty"]), repr(r["discrimination"]), repr(r["p_correct"])]
        )
    return buf.getvalue()


def irt_json(res: IrtResult) -> str:
    """The JSON document of ``gmeter irt --format json``."""
    doc = {
        "model": res.model,
        "estimator": "marginal maximum likelihood (girth)",
        "items": irt_rows(res),
        "dropped_items": list(res.dropped),
        "binarised_responses": res.binarised,
        "n_agents": res.n_agents,
        "standard_errors": None,
    }
    return json.dumps(doc, indent=2, ensure_ascii=False)
