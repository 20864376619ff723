"""Golden tests against the published numbers (Supplement Tables S4–S7, §F.5, main-text figures).

Every benchmark is scored from its folder in ``submissions/`` with exactly its declared settings
(bootstrap off to keep the suite fast), i.e. what ``make site`` stores.
"""

from __future__ import annotations

import math
from functools import cache
from pathlib import Path

import numpy as np
import pytest

from pipeline.tracks.generality.analysis import analyse, assemble
from pipeline.tracks.generality.data import read_bundle, read_items
from pipeline.tracks.generality.settings import BenchmarkSettings
from pipeline.validate import benchmark_inputs

SUBMISSIONS = Path(__file__).resolve().parents[1] / "submissions"


@cache
def table(bid: str) -> dict[str, dict[str, float]]:
    bench, bundles = benchmark_inputs(SUBMISSIONS / bid, "generality")
    s = BenchmarkSettings.model_validate({**bench.settings, "bootstrap": 0})
    items, _ = read_items(bench.files, s)
    data = [(b.id, read_bundle(b.files, s)[0]) for b in bundles]
    an = analyse(s, items, assemble(items, data))  # type: ignore[arg-type]
    r = an.result
    agents = [a for a, k in zip(an.population.agents, an.kept, strict=True) if k]
    return {
        a: {
            "capability": float(r.indicators.capability[j]),
            "spread": float(r.indicators.spread[j]),
            "generality": float(r.indicators.generality[j]),
            "gamma": float(r.normalised.gamma[j]),
            "abstruse": bool(r.normalised.abstruse[j]),
        }
        for j, a in enumerate(agents)
    }


def mean(bid: str, key: str) -> float:
    return float(np.mean([v[key] for v in table(bid).values()]))


# Mean normalised generality printed in the paper's figures (two decimals).
@pytest.mark.parametrize(
    ("bid", "published"),
    [
        ("ale-human-ref", 0.88),
        ("ale-ranks", 0.83),
        ("wccc-2005", 0.73),
        ("wccc-2015", 0.85),
        ("gvgai", 0.78),
        ("gvgai-games", 0.78),
        ("iris-kdn", 0.75),  # "openml with humans"
    ],
)
def test_mean_normalised_generality(bid, published):
    assert round(mean(bid, "gamma"), 2) == published


def test_mazes_abstruse_share():
    # Supplement §F.5: 13.31 % abstruse, 66 of 496 participants
    t = table("mazes")
    n = sum(v["abstruse"] for v in t.values())
    assert (n, len(t)) == (66, 496)
    assert round(100 * n / len(t), 2) == 13.31


# Tables S4–S7: R's values (15 significant digits, spec §13) and the published roundings.
KDN = [
    ("classif.nnet(3)", 0.797058823529412, 0.19451089104693, 0.797, 0.195),
    ("classif.lda(9)", 0.783333333333333, 0.215380799722001, 0.783, 0.215),
    ("classif.qda(2)", 0.766666666666667, 0.242670329642684, 0.767, 0.243),
    ("weka.NBTree(3)", 0.525, 0.112731243820573, 0.525, 0.113),
    ("weka.Dagging_DecisionStump(2)", 0.457913165266106, 0.123642718635162, 0.458, 0.124),
    ("weka.AdaBoostM1_DecisionStump(12)", 0.574579831932773, 0.134771431931837, 0.575, 0.135),
]
TDU = [
    ("classif.lda(9)", 4.79629962962963, 0.379066411487988, 4.80, 0.379),
    ("weka.Logistic(5)", 4.77778111111111, 0.41574149139271, 4.78, 0.416),
    ("weka.VFI(1)", 4.75926259259259, 0.448669990033031, 4.76, 0.449),
    ("weka.LibSVM(2)", 4.64814981481481, 0.36804986952248, 4.65, 0.368),
    ("weka.RandomSubSpace_REPTree(4)", 4.44444444444444, 0.368513865595042, 4.44, 0.369),
]


@pytest.mark.parametrize(("bid", "rows"), [("iris-kdn", KDN), ("iris-tdu", TDU)])
def test_supplement_tables(bid, rows):
    t = table(bid)
    for name, cap, spr, pub_cap, pub_spr in rows:
        v = t[name]
        assert v["capability"] == pytest.approx(cap, abs=1e-14), name
        assert v["spread"] == pytest.approx(spr, abs=1e-14), name
        digits = 2 if bid == "iris-tdu" and pub_cap > 1 else 3
        assert round(v["capability"], digits) == pytest.approx(pub_cap, abs=1e-9), name
        assert round(v["spread"], 3) == pytest.approx(pub_spr, abs=1e-9), name


def test_supplement_a5_logistic():
    # A.5: weka.Logistic(5): KDN 0.63 / 0.17, TD_U 4.78 / 0.416
    k = table("iris-kdn")["weka.Logistic(5)"]
    assert (round(k["capability"], 2), round(k["spread"], 2)) == (0.63, 0.17)
    assert round(table("iris-tdu")["weka.Logistic(5)"]["spread"], 3) == 0.416


def test_iris_population():
    # 414 classifier runs above the 0.35 accuracy cut plus 5 humans = the supplement's "419"
    assert len(table("iris-kdn")) == 419 and len(table("iris-tdu")) == 419


def test_chess_players_and_averages():
    t = table("wccc-2005")
    assert round(t["Zappa"]["capability"], 2) == 10.12
    assert round(t["Zappa"]["generality"], 2) == 0.28
    # averages printed in Fig. S19: Γ 0.52 / 0.87, S 2.48 / 1.51
    assert round(mean("wccc-2005", "generality"), 2) == 0.52
    assert round(mean("wccc-2015", "generality"), 2) == 0.87
    assert round(mean("wccc-2005", "spread"), 2) == 2.48
    assert round(mean("wccc-2015", "spread"), 2) == 1.51


def test_ale_human_on_the_constant_isometric():
    # §8.1: the human's Ψ = u₁ + 0.5·(u_N − u₁) = 0.5217…, γ near 0
    h = table("ale-human-ref")["human.noop"]
    assert h["capability"] == pytest.approx(0.5217391304347826, abs=1e-12)
    assert abs(h["gamma"]) < 0.1
    r = table("ale-human-ref")["random noop"]
    assert r["spread"] == 0.0 and r["generality"] == math.inf


def test_every_benchmark_scores_every_agent():
    sizes = {
        "ale-human-ref": 24,
        "ale-ranks": 24,
        "wccc-2005": 12,
        "wccc-2015": 9,
        "gvgai": 23,
        "gvgai-games": 23,
        "mazes": 496,
        "lambda-one": 2,
    }
    for bid, n in sizes.items():
        t = table(bid)
        assert len(t) == n, bid
        assert all(math.isfinite(v["capability"]) for v in t.values()), bid
