"""Synthetic stores for the site tests and the site benchmark.

:func:`make_store` fills a DuckDB store through the Store methods (put_benchmark, put_bundle,
put_release, replace_scores) with benchmarks of all four tracks, several releases, changed
bundles, a code-version change, ties, NaN and infinite values, a stale benchmark and a stale
bundle, unknown chart names, and a hostile system name. ``big`` adds one g-index benchmark with
that many bundles (the 1,000 × 5 benchmark of issue 7). ``twins`` gives two g-index bundles
one system name, told apart only by their declared variant (as a model trained on more data).
"""

from __future__ import annotations

import bisect
import datetime as dt
import hashlib
import math
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from pipeline.store import open_store
from pipeline.tracks import metric_info

HOSTILE = "</script><script>alert(1)</script>"
NOW = dt.datetime(2024, 6, 1, 12, 0, 0)

TRACK_METRICS = {
    "gindex": ("g_index", "theta_mean", "omega_mean", "compute_log2"),
    "generality": (
        "capability",
        "spread",
        "generality",
        "normalised_generality",
        "expected_difficulty",
    ),
    "aiq": ("aiq",),
    "similarity": ("similarity", "dissimilarity", "diversity"),
}
PRIMARY = {
    "gindex": "g_index",
    "generality": "capability",
    "aiq": "aiq",
    "similarity": "similarity",
}
STEP_AGENT = (2, 0)
"""(bundle, agent) of the generality agent with a step curve (spread 2.861e-06, marked)."""
STEP_SPREAD = 2.86102294921875e-06
TESTS = ["CartPole", "MountainCar", "Acrobot"]
PAIRS = [f"{a}|{b}" for k, a in enumerate(TESTS) for b in TESTS[k + 1 :]]


def _hash(*parts: object) -> str:
    return hashlib.sha256("/".join(map(str, parts)).encode()).hexdigest()


def _ranks(values: Sequence[float | None], metric: str) -> list[int | None]:
    """Competition ranks (ties share the min rank); None for NaN or descriptive metrics."""
    d = metric_info(metric).direction
    if d == "none":
        return [None] * len(values)
    sign = -1.0 if d == "lower" else 1.0
    # 1 + how many are strictly better: a binary search in the sorted values (big stores)
    ok = sorted(sign * v for v in values if v is not None and not math.isnan(v))
    out: list[int | None] = []
    for v in values:
        if v is None or math.isnan(v):
            out.append(None)
        else:
            out.append(1 + len(ok) - bisect.bisect_right(ok, sign * v))
    return out


TWINS = (0, 1)
"""The gindex-demo bundles that share a system name when ``make_store(twins=True)``."""
_twins = False


def _system(benchmark: str, i: int) -> str:
    if benchmark == "gindex-demo" and i == 2:
        return HOSTILE
    if _twins and benchmark == "gindex-demo" and i in TWINS:
        i = TWINS[0]
    names = [
        "Atlas",
        "Borealis",
        "Cygnus",
        "Draco",
        "Eridanus",
        "Fornax",
        "Gemini",
        "Hydra",
        "Indus",
        "Lyra",
        "Mensa",
        "Norma",
    ]
    base = names[i % len(names)]
    return base if i < len(names) else f"{base}-{i}"


def _values(
    track: str, i: int, j: int, agent: int, rng: np.random.Generator
) -> dict[str, tuple[float, float | None, float | None]]:
    """metric → (value, ci_low, ci_high) for bundle i, version j, agent index."""
    drift = 0.05 * j * ((i % 3) - 1)
    if track == "gindex":
        g = 10.0 + 3.0 * ((i * 7) % 11) + drift
        if i in (3, 4):
            g = 25.0  # a tie
        theta = min(0.99, 0.3 + 0.05 * (i % 10) + 0.01 * j)
        return {
            "g_index": (g, None, None),
            "theta_mean": (theta, None, None),
            "omega_mean": (0.2 + 0.03 * (i % 5), None, None),
            "compute_log2": (20.0 + i % 7, None, None),
        }
    if track == "generality":
        cap = 0.2 + 0.1 * ((i + agent) % 7) + 0.01 * j
        spread = 0.0 if (i, agent) == (1, 1) else 0.05 + 0.02 * ((i * 3 + agent) % 5)
        if (i, agent) == STEP_AGENT:  # a perfect scorer: the padded pipeline's float artefact
            spread = STEP_SPREAD
        gen = math.inf if spread == 0 else 1.0 / spread
        return {
            "capability": (cap, None, None),
            "spread": (spread, None, None),
            "generality": (gen, None, None),
            "normalised_generality": (max(-1.0, 1 - spread**2 / 0.09), None, None),
            "expected_difficulty": (cap / 2 + 0.1, None, None),
        }
    if track == "aiq":
        v = math.nan if i == 4 else 20.0 + 8.0 * ((i * 5) % 7) + float(rng.normal(0, 0.3))
        if i == 2:  # its interval reaches the leader's (bundle 1): "2 tied for first"
            v = 56.0 + float(rng.normal(0, 0.3))
        half = 2.0 + (i % 3)
        return {"aiq": (v, v - half, v + half)}
    if agent == len(PAIRS):  # the suite row carries only the diversity
        v = 0.9 + 0.1 * (i % 5) + 0.02 * j  # diversity lies in [0, 2]: some above 1
        return {"diversity": (v, v - 0.05, v + 0.05)}
    sim = 0.9 - 0.2 * agent - 0.05 * (i % 3)
    return {
        "similarity": (sim, sim - 0.1, sim + 0.1),
        "dissimilarity": (1 - sim, 0.9 - sim, 1.1 - sim),
    }


def _charts(track: str, bundles: list[int], j: int) -> dict[str, Any]:
    if track == "gindex":
        doms = ["alarm", "cron", "email", "http", "mqtt", "sql", "weather"]
        m = [
            [round(abs(a - b) / 7 + 0.05 * ((a * b) % 3), 3) if a != b else 0.0 for b in range(7)]
            for a in range(7)
        ]
        return {
            "domain_distance": {
                "labels": doms,
                "matrix": m,
                "title": "Domain distance Ω",
                "value": {"label": "Ω", "unit": "0–1"},
            },
            "theta_vs_samples": [
                {
                    "system": _system("gindex-demo", i),
                    "samples": 100 * (i + 1),
                    "theta": 0.3 + 0.05 * (i % 10),
                    "g_index": 10.0 + i,
                }
                for i in bundles[:60]
            ],
        }
    if track == "generality":
        xs = [h / 4 for h in range(9)]
        curves = [
            {
                "agent": f"agent-{a}",
                "bundle": "b0000",
                "x": xs,
                "psi": [max(0.0, 1 - x / (1.5 + a / 2)) for x in xs],
            }
            for a in range(3)
        ]
        iso_x = [k / 20 for k in range(21)]
        iso_c = [math.sqrt(max(0.0, x * (1 - x))) for x in iso_x]
        pts = [
            {
                "agent": f"agent-{a}",
                "bundle": f"b{i:04d}",
                "capability": 0.2 + 0.1 * ((i + a) % 7),
                "spread": 0.05 + 0.02 * ((i * 3 + a) % 5),
                "generality": 10.0,
                "normalised_generality": 0.5 - 0.1 * a,
                "expected_difficulty": 0.3,
                "abstruse": False,
            }
            for i in bundles
            for a in range(2)
        ]
        return {
            "generality_acc": {"kmin": 0.0, "kmax": 2.0, "curves": curves},
            "generality_aggregated_acc": {
                "x": xs,
                "psi": curves[1]["psi"],
                "capability": 1.1,
                "spread": 0.4,
            },
            "generality_capability_spread": {
                "range": [0.0, 1.0],
                "normalisation": "paper",
                "points": pts,
                "isometrics": {
                    "capability": iso_x,
                    "constant": iso_c,
                    "maximum": [math.sqrt(2) * c for c in iso_c],
                },
            },
            "generality_evolution": [
                {"agent": f"agent-{a}", "date": f"201{a}-06-01", "capability": 0.3 + 0.1 * a}
                for a in range(3)
            ],
            "mystery": {"not": "drawable"},
            "generality_psychometric": {
                "fa": {"status": "too_small", "message": "too small for factor analysis"},
                "what_generality_adds": "generality describes each agent",
            },
            "generality_psychometric_loadings": {
                "title": "First-factor loadings (minres): mean 0.3",
                "value": {"label": "loading", "unit": ""},
                "records": [
                    {"item": f"IT{k}", "loading": 0.1 * k - 0.15} for k in range(1, 8)
                ],
            },
            "generality_psychometric_irt": {
                "title": "2PL IRT difficulty against the benchmark's difficulty",
                "x": {"field": "difficulty", "label": "benchmark difficulty", "unit": ""},
                "y": {"field": "irt_difficulty", "label": "2PL IRT difficulty", "unit": "logits"},
                "records": [
                    {
                        "item": f"IT{k}",
                        "difficulty": 0.2 * k,
                        "irt_difficulty": 0.5 * k - 1.0,
                        "discrimination": 1.0,
                        "mean_response": 1 - 0.1 * k,
                    }
                    for k in range(1, 8)
                ],
            },
        }
    if track == "aiq":
        return {
            "aiq_vs_episode_length": [
                {"agent": f"Q(λ) {k}", "episode_length": el, "aiq": 10 + k * 5 + math.log(el)}
                for k in range(3)
                for el in (100, 1000, 10000)
            ]
        }
    heat = [
        {
            "bundle": f"b{i:04d}",
            "config": "",
            "row": a,
            "col": b,
            "similarity": 1.0 if a == b else 0.9 - 0.2 * abs(TESTS.index(a) - TESTS.index(b)),
        }
        for i in bundles[:2]
        for a in TESTS
        for b in TESTS
    ]
    pts = [
        {
            "bundle": f"b{i:04d}",
            "config": "",
            "test": t,
            "x": 0.3 * k - 0.3,
            "y": 0.1 * (k % 2),
            "explained": 0.9,
        }
        for i in bundles[:2]
        for k, t in enumerate(TESTS)
    ]
    return {
        "similarity_heatmap": heat,
        "similarity_map": pts,
        "similarity_sweep": {
            "sweep": [
                {
                    "bundle": "b0000",
                    "system": _system("similarity-demo", 0),
                    "agent": f"mlp-{w}",
                    "p": p,
                    "pair": pair,
                    "similarity": None if (w, p, pair) == (8, 0.9, PAIRS[0]) else 0.8 - p / 2,
                    "status": "ok",
                }
                for w in (8, 16)
                for p in (0.1, 0.5, 0.9)
                for pair in PAIRS
            ]
        },
        "similarity_published": [
            {"row": a, "col": b, "similarity": 1.0 if a == b else 0.3, "source": "paper"}
            for a in TESTS
            for b in TESTS
        ],
        "similarity_flags": {"flags": []},
        "similarity_suites": {"suites": []},
        "legacy_matrix": {
            "labels": TESTS,
            "matrix": [[1.0, 0.5, 0.2], [0.5, 1.0, 0.4], [0.2, 0.4, 1.0]],
        },
    }


def make_store(
    path: Path,
    *,
    bundles: int = 5,
    releases: int = 2,
    big: int = 0,
    seed: int = 7,
    stale: bool = True,
    twins: bool = False,
) -> Path:
    """Create a synthetic store at ``path`` (see the module docstring); return ``path``."""
    global _twins
    _twins = twins
    try:
        return _make_store(path, bundles, releases, big, seed, stale)
    finally:
        _twins = False


def _make_store(path: Path, bundles: int, releases: int, big: int, seed: int, stale: bool) -> Path:
    rng = np.random.default_rng(seed)
    specs: list[tuple[str, str, int]] = [
        ("aiq-demo", "aiq", bundles),
        ("generality-demo", "generality", bundles),
        ("gindex-demo", "gindex", bundles),
        ("similarity-demo", "similarity", max(2, bundles - 2)),
    ]
    if big:
        specs.append(("gindex-large", "gindex", big))
    start = dt.date(2024, 1, 15)
    rel_dates = [start + dt.timedelta(days=60 * k) for k in range(releases)]
    versions = [f"2024.{k + 1}" for k in range(releases)] + ["current"]
    with open_store(path) as store:
        store.set_primary_metrics(PRIMARY)
        for bid, track, _ in specs:
            with store.transaction():
                _put_benchmark(store, bid, track, "1.0.0")
        current_hash: dict[tuple[str, str], str] = {}
        for j, version in enumerate(versions):
            code = "0.1.0" if j < max(1, releases - 1) else "0.2.0"
            members: list[tuple[str, str, str]] = []
            for bid, track, n in specs:
                present = list(range(max(2, math.ceil(n * (j + 1) / len(versions)))))
                # bundle 1 is resubmitted (new content hash) from the second version on
                with store.transaction():  # one commit per version and benchmark (big stores)
                    for i in present:
                        h = _hash(bid, i, "v2" if (i == 1 and j >= 1) else "v1")
                        if current_hash.get((bid, f"b{i:04d}")) != h:
                            _put_bundle(store, bid, i, h)
                            current_hash[(bid, f"b{i:04d}")] = h
                        members.append((bid, f"b{i:04d}", h))
                rows = []
                agents = {"generality": 2, "similarity": len(PAIRS) + 1}.get(track, 1)
                for metric in TRACK_METRICS[track]:
                    recs = []
                    for i in present:
                        for a in range(agents):
                            name = (
                                _system(bid, i)
                                if agents == 1
                                else f"agent-{a}"
                                if track == "generality"
                                else [*PAIRS, "suite"][a]
                            )
                            got = _values(track, i, j, a, rng).get(metric)
                            if got is None:
                                continue
                            v, lo, hi = got
                            recs.append((i, name, v, lo, hi))
                    ranks = _ranks([r[2] for r in recs], metric)
                    for (i, name, v, lo, hi), rank in zip(recs, ranks, strict=True):
                        rows.append(
                            {
                                "bundle": f"b{i:04d}",
                                "content_hash": current_hash[(bid, f"b{i:04d}")],
                                "agent": name,
                                "metric": metric,
                                "value": v,
                                "ci_low": lo,
                                "ci_high": hi,
                                "rank": rank,
                                "verified": i % 4 != 3,
                                "details": _details(track, i, name, metric),
                            }
                        )
                store.replace_scores(
                    release=version,
                    benchmark=bid,
                    benchmark_hash=_hash(bid, "1.0.0"),
                    track=track,
                    rows=rows,
                    charts=_charts(track, present, j),
                    code_version=code,
                    seed=seed,
                    options={},
                    notes=[f"synthetic scores for {bid}"],
                    now=NOW,
                )
            if version != "current":
                store.put_release(
                    version,
                    rel_dates[j],
                    f"Release {version}: synthetic.",
                    code,
                    members,
                    {bid: _hash(bid, "1.0.0") for bid, _, _ in specs},
                )
        if stale:
            with store.transaction():
                _put_benchmark(store, "aiq-demo", "aiq", "1.1.0")  # scores are now stale
                _put_bundle(store, "generality-demo", 0, _hash("generality-demo", 0, "v9"))
    return path


TRAINED_BUNDLE = 1
"""The AIQ bundle whose aiq.toml declares a ``[training]`` table (a trained policy)."""
TRAINING = {
    "seed": 11,
    "steps": 50000,
    "checkpoint_setting": "checkpoint",
    "checkpoint": "q_table.npz",
    "checkpoint_sha256": "ab" * 32,
    "libraries": "gymnasium 1.0.0, numpy 2.1.3",
}
OWN_PRIORS_BUNDLE = 3
"""The g-index bundle that declared its own priors (the track marks it ``own-priors``)."""


def _details(track: str, i: int, agent: str, metric: str) -> dict[str, Any] | None:
    """Marks as the tracks write them: the generality step agent, a g-index bundle's own ρ."""
    if track == "gindex" and i == OWN_PRIORS_BUNDLE and metric == "g_index":
        return {"marks": ["own-priors"], "declared_priors": {"default": -0.5}}
    if track == "aiq" and i == TRAINED_BUNDLE:
        return {"status": "verified", "training": dict(TRAINING)}
    if track != "generality" or (i, agent) != (STEP_AGENT[0], f"agent-{STEP_AGENT[1]}"):
        return None
    step = {"where": "all_solved", "spread": STEP_SPREAD, "tolerance": 1e-5}
    note = "perfect score (every item solved): S = 0 and Γ = ∞ by convention"
    shown = {"spread": 0.0, "generality": "inf"}.get(metric)
    d: dict[str, Any] = {"status": "ok", "step": step}
    if shown is not None:
        d["display"] = {"value": shown, "label": "step", "note": note}
    return d


def _put_benchmark(store: Any, bid: str, track: str, version: str) -> None:
    manifest = {
        "id": bid,
        "title": f"{track.title()} demo" if not bid.endswith("large") else "Large g-index",
        "track": track,
        "version": version,
        "description": f"A synthetic {track} benchmark.",
        "origin": {"paper": "Synthetic et al. 2024", "notes": "generated for tests"},
    }
    store.put_benchmark(
        benchmark_id=bid,
        content_hash=_hash(bid, version),
        track=track,
        title=manifest["title"],
        version=version,
        description=manifest["description"],
        licence="MIT",
        created=dt.date(2024, 1, 1),
        manifest=manifest,
        source_path=f"submissions/{bid}",
        git_commit="0" * 40,
        files={"benchmark.toml": f"id = '{bid}'\n".encode()},
        now=NOW,
    )


def _put_bundle(store: Any, bid: str, i: int, h: str) -> None:
    name = _system(bid, i)
    manifest = {
        "submitted": dt.date(2024, 1, 1) + dt.timedelta(days=i % 300),
        "contact": "someone@example.org",
        "licence": "MIT",
        "description": f"Bundle {i} of {bid}.",
        "system": {
            "name": name,
            "organisation": "Example Lab" if i % 2 else "",
            "version": f"{100 * (i + 1)} training samples",
            "url": "javascript:alert(1)" if name == HOSTILE else f"https://example.org/{i}",
        },
    }
    files = {
        "submission.toml": f"[system]\nname = {name!r}\n".encode(),
        "programs/task-1.json": b'{"nodes": []}',
    }
    if name == HOSTILE:
        files["notes.html"] = b"<script>alert(1)</script>"
    store.put_bundle(
        benchmark=bid,
        bundle_id=f"b{i:04d}",
        content_hash=h,
        manifest=manifest,
        source_path=f"submissions/{bid}/b{i:04d}",
        git_commit="1" * 40,
        files=files,
        now=NOW,
    )
