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
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from pipeline.errors import GmeterError
from pipeline.lab.generality.matrix import read_matrix
from pipeline.metrics.generality.factor import Correlation, FactorResult, minres
from pipeline.metrics.generality.irt import FLAG_MEANINGS, IrtResult, Model, fit_irt


def _num(x: float) -> float | None:
    return float(x) if math.isfinite(float(x)) else None


# ------------------------------------------------------------------ commands
def _matrix(path: Path) -> tuple[np.ndarray, tuple[str, ...], tuple[str, ...]]:
    pop = read_matrix(path)
    return pop.values, pop.items, pop.agents


def factor_analysis(
    path: Path, factors: int = 1, correlation: Correlation = "pearson"
) -> FactorResult:
    """Minres factor analysis of a response file (wide or long); see :func:`minres`."""
    values, items, _ = _matrix(path)
    if len(items) < 2:
        raise GmeterError(f"{path}: factor analysis needs several items, got {len(items)}")
    if correlation == "tetrachoric":
        present = values[~np.isnan(values)]
        if not np.isin(present, (0.0, 1.0)).all():
            raise GmeterError(
                f"{path}: tetrachoric correlations need 0/1 responses; this file has other "
                "values",
                hint="recode the responses to 1 = correct, 0 = not, or use --correlation pearson",
            )
    return minres(values, items, factors, correlation)


@dataclass(frozen=True)
class IrtRun:
    """An IRT fit of a response file and the agents (rows) it was fitted on."""

    result: IrtResult
    agents: tuple[str, ...]


def irt(path: Path, model: Model = "2pl") -> IrtRun:
    """1PL/2PL IRT of a response file (wide or long); see :func:`fit_irt`."""
    values, items, agents = _matrix(path)
    return IrtRun(fit_irt(values, items, model), agents)


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
        "correlation": fa.correlation,
        "method": f"minres on {fa.correlation.capitalize()} correlations, unrotated",
        "converged": fa.converged,
        "tetrachoric_corrected_pairs": fa.corrected_pairs,
        "tetrachoric_smoothed": fa.smoothed,
        "warnings": list(fa.warnings),
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


#: Columns of ``gmeter irt --format csv`` (the first four as before standard errors existed).
IRT_COLUMNS = (
    "item",
    "difficulty",
    "discrimination",
    "p_correct",
    "difficulty_se",
    "discrimination_se",
    "n_answered",
    "infit",
    "outfit",
    "sx2",
    "sx2_df",
    "sx2_p",
    "flags",
)
#: Columns of ``gmeter irt --persons --format csv``.
PERSON_COLUMNS = ("agent", "theta", "theta_se", "answered", "score")


def irt_rows(res: IrtResult) -> list[dict[str, Any]]:
    """One dict per estimated item (keys :data:`IRT_COLUMNS`; NaN → None, flags joined by +)."""
    rows = []
    for k, item in enumerate(res.items):
        rows.append(
            {
                "item": item,
                "difficulty": float(res.difficulty[k]),
                "discrimination": float(res.discrimination[k]),
                "p_correct": float(res.p_correct[k]),
                "difficulty_se": _num(res.difficulty_se[k]),
                "discrimination_se": _num(res.discrimination_se[k]),
                "n_answered": int(res.n_answered[k]),
                "infit": _num(res.infit[k]),
                "outfit": _num(res.outfit[k]),
                "sx2": _num(res.sx2[k]),
                "sx2_df": None if not math.isfinite(res.sx2_df[k]) else int(res.sx2_df[k]),
                "sx2_p": _num(res.sx2_p[k]),
                "flags": "+".join(res.flags[k]),
            }
        )
    return rows


def person_rows(run: IrtRun) -> list[dict[str, Any]]:
    """One dict per agent (keys :data:`PERSON_COLUMNS`), in the file's order."""
    res = run.result
    return [
        {
            "agent": agent,
            "theta": float(res.theta[j]),
            "theta_se": float(res.theta_se[j]),
            "answered": int(res.person_answered[j]),
            "score": int(res.person_score[j]),
        }
        for j, agent in enumerate(run.agents)
    ]


def _cell(v: Any) -> str:
    if v is None:
        return "NA"
    return repr(v) if isinstance(v, float) else str(v)


def _csv(columns: tuple[str, ...], rows: list[dict[str, Any]]) -> str:
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(columns)
    for r in rows:
        w.writerow([_cell(r[c]) for c in columns])
    return buf.getvalue()


def irt_csv(res: IrtResult) -> str:
    """The item table (:data:`IRT_COLUMNS`, full precision, NA where not available)."""
    return _csv(IRT_COLUMNS, irt_rows(res))


def persons_csv(run: IrtRun) -> str:
    """The person table (:data:`PERSON_COLUMNS`, full precision)."""
    return _csv(PERSON_COLUMNS, person_rows(run))


def irt_summary(res: IrtResult) -> dict[str, Any]:
    """Model-level numbers: convergence, reliability, Andersen's test, warnings."""
    conv = res.convergence
    test = res.andersen
    return {
        "model": res.model,
        "estimator": (
            "marginal maximum likelihood (EM, then Newton on the observed information), "
            "61 quadrature nodes on [-6, 6], abilities N(0, 1)"
        ),
        "n_agents": res.n_agents,
        "n_items": len(res.items),
        "dropped_items": list(res.dropped),
        "binarised_responses": res.binarised,
        "standard_errors": "inverse observed information (Louis), delta method for difficulty",
        "convergence": {
            "converged": conv.converged,
            "em_iterations": conv.em_iterations,
            "newton_iterations": conv.newton_iterations,
            "max_abs_gradient": conv.max_gradient,
            "log_likelihood": conv.loglik,
            "information_positive_definite": conv.information_positive_definite,
        },
        "reliability": {
            "empirical": _num(res.reliability_empirical),
            "marginal": _num(res.reliability_marginal),
        },
        "abilities": "EAP (posterior mean) with posterior standard deviation as SE",
        "andersen_test": None
        if test is None
        else {
            "statistic": test.statistic,
            "df": test.df,
            "p_value": test.p_value,
            "split": "raw score <= median vs > median",
            "agents": test.agents,
            "low": test.low,
            "high": test.high,
            "excluded_items": list(test.excluded),
        },
        "flags": dict(FLAG_MEANINGS),
        "warnings": list(res.warnings),
    }


def irt_json(run: IrtRun, persons: bool = False) -> str:
    """The JSON document of ``gmeter irt --format json`` (``persons``: with the abilities)."""
    doc = irt_summary(run.result)
    doc["items"] = irt_rows(run.result)
    if persons:
        doc["persons"] = person_rows(run)
    return json.dumps(doc, indent=2, ensure_ascii=False)
