"""One meaning of S everywhere: eq. 3 gives S near 1 when V_AB is near the harder test's score.

Pereyda & Holder 2020, eq. 3: for a sufficient agent ``S = (V_A + V_B - 2 V_AB) / (V_A - V_B)``,
so ``S = 1`` exactly when the merged score equals the harder test's ``V_B`` (the tests
interfere). No text a visitor or a reader of the docs sees may call S near 1 "transfer".
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from pipeline.metrics.similarity.measure import similarity
from pipeline.tracks.similarity import charts

ROOT = Path(__file__).resolve().parents[1]

# "S near 1 ... transfer" / "S = 1 ... transfers" within one sentence, in either order
_CLAIM = re.compile(
    r"(S\s*(near|≈|=|close to|→)\s*1[^.;\n]{0,120}transfer)"
    r"|(transfer[^.;\n]{0,120}S\s*(near|≈|=|close to|→)\s*1(?![0-9.]))",
    re.IGNORECASE,
)


def _texts() -> list[tuple[str, str]]:
    out = [("charts.METHODOLOGY", charts.METHODOLOGY)]
    globs = [
        "docs/**/*.md",
        "README.md",
        "site_templates/**/*",
        "pipeline/site/templates/**/*",
        "submissions/similarity-*/**/*.toml",
        "pipeline/tracks/similarity/*.py",
        "pipeline/lab/similarity/*.py",
        "pipeline/metrics/similarity/*.py",
    ]
    for g in globs:
        for path in sorted(ROOT.glob(g)):
            if path.is_file():
                out.append((str(path.relative_to(ROOT)), path.read_text(encoding="utf-8")))
    return out


def test_the_claim_pattern_catches_the_wrong_reading() -> None:
    assert _CLAIM.search("S near 1 when learning one test transfers to the other")
    assert _CLAIM.search("transfer between the tests gives S = 1")
    assert not _CLAIM.search("S near 1: the tests interfere (V_AB near V_B)")


@pytest.mark.parametrize("name,text", _texts(), ids=lambda x: x if len(x) < 60 else "")
def test_no_text_says_s_near_one_means_transfer(name: str, text: str) -> None:
    hit = _CLAIM.search(text)
    assert hit is None, f"{name}: {hit.group(0)!r} contradicts eq. 3 (S near 1: interference)"


def test_methodology_states_eq3_reading() -> None:
    m = charts.METHODOLOGY
    assert "harder test" in m and "interfere" in m


@pytest.mark.parametrize("v_a,v_b", [(0.9, 0.2), (0.6, 0.5), (0.99, 0.01)])
def test_s_is_one_exactly_at_the_harder_score(v_a: float, v_b: float) -> None:
    assert similarity(v_a, v_b, v_b, 0.5).value == pytest.approx(1.0)
    assert similarity(v_a, v_b, v_a, 0.5).value == pytest.approx(-1.0)
