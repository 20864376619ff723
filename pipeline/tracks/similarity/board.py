"""Chart data of a similarity board: matrices and maps, not rankings.

A similarity benchmark is a *suite* of tests; its board shows, for every bundle and
configuration (agent, merge, p), the similarity matrix (the paper's Tables 2-3, Fig. 5), the
2-D map of the tests (classical MDS of ``1 - S``, the paper's Fig. 4), which pairs the baseline
agent was insufficient on, and — when the benchmark holds published values — the paper's
matrix beside the measured one. The site draws these; their shapes are documented in
``docs/similarity.md`` ("Board charts") and kept stable.

Chart names and record shapes (every number finite or ``null``):

``similarity_heatmap``
    ``{bundle, system, config, row, col, similarity, ci_low, ci_high, status, measurement,
    reported}``: one record per cell of each matrix; ``status`` is ``identity``, ``ok``,
    ``insufficient``, ``undefined`` or ``missing``; ``measurement`` is the pair's status
    (``sufficient``, ``insufficient``, ``gap unresolved``, ``forced by the design``,
    ``identity``, ``missing``); only ``sufficient`` cells carry an interval.
``similarity_map``
    ``{bundle, system, config, test, x, y, explained}``: MDS coordinates.
``similarity_flags``
    ``{"flags": [records]}`` (a table, wrapped so generic drawers skip it), records
    ``{bundle, system, config, pair, status, measurement, reason, v_a, v_b, v_ab}``: every pair
    whose ``S`` is not a measurement (insufficient, gap unresolved, forced by the design).
``similarity_suites``
    ``{"suites": [records]}`` (a table), records
    ``{bundle, system, config, tests, n_pairs, n_sufficient, n_flagged, diversity, ci_low,
    ci_high, reported}``: one summary per matrix; the diversity is over the ``n_sufficient``
    sufficient pairs only.
``similarity_sweep``
    ``{"sweep": [records]}``, records ``{bundle, system, agent, p, pair, v_a, v_b, v_ab,
    similarity, status, measurement}``: one per pair and configuration of a bundle with several
    configurations (the paper's Fig. 2, V against network size, and Fig. 3, V_AB against p).
``similarity_published``
    ``{row, col, similarity, source}``: the published matrix (both triangles, diagonal 1).
``similarity_vs_published``
    ``{bundle, system, config, pair, measured, published}``: pairs that have both.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

from pipeline.tracks.similarity.runs import ConfigResult


def _num(x: float | None) -> float | None:
    return None if x is None or not math.isfinite(x) else float(x)


def matrix_records(
    bundle: str, system: str, cfg: ConfigResult, reported: bool
) -> list[dict[str, Any]]:
    """Return the ``similarity_heatmap`` records of one configuration (full square)."""
    by_pair = {frozenset((pr.first, pr.second)): pr for pr in cfg.pairs}
    label = cfg.config.label()
    out: list[dict[str, Any]] = []
    n = len(cfg.tests)
    for i in range(n):
        for j in range(n):
            ti, tj = cfg.tests[i], cfg.tests[j]
            pr = by_pair.get(frozenset((ti, tj)))
            est = pr.estimate if pr is not None and i != j else None
            measured = pr is not None and pr.status == "sufficient"
            out.append(
                {
                    "bundle": bundle,
                    "system": system,
                    "config": label,
                    "row": ti,
                    "col": tj,
                    "similarity": _num(float(cfg.matrix.values[i, j])),
                    # an interval only for a measurement (a sufficient, resolved pair)
                    "ci_low": _num(est.ci_low) if est and measured else None,
                    "ci_high": _num(est.ci_high) if est and measured else None,
                    "status": "identity" if i == j else (est.point.status if est else "missing"),
                    "measurement": "identity"
                    if i == j
                    else (pr.status if pr is not None else "missing"),
                    "reported": reported,
                }
            )
    return out


def map_records(bundle: str, system: str, cfg: ConfigResult) -> list[dict[str, Any]]:
    """Return the ``similarity_map`` records of one configuration (empty without a map)."""
    if cfg.embedding is None:
        return []
    return [
        {
            "bundle": bundle,
            "system": system,
            "config": cfg.config.label(),
            **rec,
            "explained": cfg.embedding.explained,
        }
        for rec in cfg.embedding.as_records()
    ]


def flag_records(bundle: str, system: str, cfg: ConfigResult) -> list[dict[str, Any]]:
    """Return the ``similarity_flags`` records: pairs that are not a sufficient agent's ``S``."""
    out = []
    for pr in cfg.pairs:
        pt = pr.estimate.point
        if pr.status in ("sufficient", "identity"):
            continue
        out.append(
            {
                "bundle": bundle,
                "system": system,
                "config": cfg.config.label(),
                "pair": pr.key,
                "status": pt.status,
                "measurement": pr.status,
                "reason": pt.reason
                or f"{pr.estimate.n_reversed} of {pr.estimate.n_seeds} "
                "seeds reverse which test is easier",
                "v_a": _num(pt.v_a),
                "v_b": _num(pt.v_b),
                "v_ab": _num(pt.v_ab),
            }
        )
    return out


def suite_record(bundle: str, system: str, cfg: ConfigResult, reported: bool) -> dict[str, Any]:
    """Return the ``similarity_suites`` record of one configuration."""
    ci = cfg.diversity_ci
    return {
        "bundle": bundle,
        "system": system,
        "config": cfg.config.label(),
        "tests": list(cfg.tests),
        "n_pairs": sum(pr.first != pr.second for pr in cfg.pairs),
        # the diversity is the mean of 1 - S over these sufficient pairs only
        "n_sufficient": cfg.diversity.n_pairs,
        "n_flagged": sum(pr.status not in ("sufficient", "identity") for pr in cfg.pairs),
        "diversity": _num(cfg.diversity.value),
        "ci_low": _num(ci[0]) if ci else None,
        "ci_high": _num(ci[1]) if ci else None,
        "reported": reported,
    }


def published_matrix(rows: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """Return the published pairs as a full symmetric matrix (``similarity_published``)."""
    tests: list[str] = []
    cells: dict[tuple[str, str], tuple[float, str]] = {}
    for r in rows:
        a, b = str(r["test_a"]), str(r["test_b"])
        for t in (a, b):
            if t not in tests:
                tests.append(t)
        note = str(r.get("note") or "")
        cells[(a, b)] = cells[(b, a)] = (float(r["similarity"]), note)
    out = []
    for a in tests:
        for b in tests:
            if a == b:
                out.append({"row": a, "col": b, "similarity": 1.0, "source": "identity"})
            elif (a, b) in cells:
                v, note = cells[(a, b)]
                out.append({"row": a, "col": b, "similarity": v, "source": note})
    return out


def versus_published(
    bundle: str, system: str, cfg: ConfigResult, rows: Sequence[Mapping[str, Any]]
) -> list[dict[str, Any]]:
    """Return ``similarity_vs_published`` records: measured and published ``S`` of one pair."""
    published = {
        frozenset((str(r["test_a"]), str(r["test_b"]))): float(r["similarity"]) for r in rows
    }
    out = []
    for pr in cfg.pairs:
        key = frozenset((pr.first, pr.second))
        if key in published and pr.first != pr.second:
            out.append(
                {
                    "bundle": bundle,
                    "system": system,
                    "config": cfg.config.label(),
                    "pair": pr.key,
                    "measured": _num(pr.estimate.value),
                    "published": published[key],
                }
            )
    return out


def sweep_records(bundle: str, system: str, cfg: ConfigResult) -> list[dict[str, Any]]:
    """Return the ``similarity_sweep`` records of one configuration (one per pair)."""
    out = []
    for pr in cfg.pairs:
        pt = pr.estimate.point
        if pr.first == pr.second:
            continue
        out.append(
            {
                "bundle": bundle,
                "system": system,
                "agent": cfg.config.agent,
                "p": cfg.config.p,
                "pair": pr.key,
                "v_a": _num(pt.v_a),
                "v_b": _num(pt.v_b),
                "v_ab": _num(pt.v_ab),
                "similarity": _num(pt.value),
                "status": pt.status,
                "measurement": pr.status,
            }
        )
    return out
