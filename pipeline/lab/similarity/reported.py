r"""Pereyda & Holder's published Tables 1-3 as *reported* similarity bundles.

The paper gives the baseline network's accuracy on each image test alone (Table 1, our V_A and
V_B) and the similarity S of each pair (Tables 2 and 3), but not the merged accuracy V_AB. For
a sufficient agent eq. 3 determines it,

.. math::

    V_{AB} = \\frac{V_A + V_B - S\\,(V_A - V_B)}{2},

so a ``runs.csv`` can carry the published numbers without inventing any: scoring it gives back
the published S (to its three decimals; the bundle declares ``digits = 3``). The bundles are
marked ``reported``: nothing in them can be recomputed, the CNN and its data sets are not
available to gmeter.

:func:`reported_runs` is a pure function of the three transcribed tables kept under
``submissions/pereyda-holder-2020/reference/``; ``tests/test_similarity_reported.py`` checks
that the committed bundles are exactly what it writes.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Mapping
from dataclasses import dataclass

from pipeline.metrics.similarity.merge import implied_v_ab

TEST_IDS: dict[str, str] = {
    "MNIST": "mnist",
    "Fashion-MNIST": "fashion-mnist",
    "CIFAR10": "cifar-10",
    "CIFAR100": "cifar-100",
    "CartPole": "cartpole",
}
"""The paper's test names → the benchmark's test ids."""

CARTPOLE_V = 0.10
"""The baseline's effective accuracy on the passive CartPole test (stated in the text, not in
Table 1; a random agent reached about 0.063)."""

RUNS_HEADER = ("test_a", "test_b", "p", "merge", "agent", "v_a", "v_b", "v_ab", "seed")


@dataclass(frozen=True)
class ReportedPair:
    """One published pair with the V_AB eq. 3 implies."""

    test_a: str
    test_b: str
    v_a: float
    v_b: float
    v_ab: float
    s: float


def read_accuracies(text: str) -> dict[str, float]:
    """Table 1 (``test,description,validation_accuracy``) → ``{paper name: V}``, CartPole added."""
    out = {r["test"]: float(r["validation_accuracy"]) for r in csv.DictReader(io.StringIO(text))}
    out.setdefault("CartPole", CARTPOLE_V)
    return out


def read_matrix(text: str) -> dict[tuple[str, str], float]:
    """A published square matrix (first column ``test``) → its upper-triangle pairs."""
    rows = list(csv.reader(io.StringIO(text)))
    head = rows[0][1:]
    out: dict[tuple[str, str], float] = {}
    for i, r in enumerate(rows[1:]):
        for j in range(i + 1, len(head)):
            out[(r[0], head[j])] = float(r[j + 1])
    return out


def reported_runs(
    accuracy: Mapping[str, float], matrix: Mapping[tuple[str, str], float]
) -> list[ReportedPair]:
    """Every published pair with ``V_A``, ``V_B`` from Table 1 and the implied ``V_AB``."""
    out = []
    for (a, b), s in matrix.items():
        v_ab = implied_v_ab(accuracy[a], accuracy[b], s)
        out.append(ReportedPair(TEST_IDS[a], TEST_IDS[b], accuracy[a], accuracy[b], v_ab, s))
    return out


def runs_csv(pairs: list[ReportedPair], agent: str = "keras-cnn") -> str:
    """Return the ``runs.csv`` text (p = 0.5, sampling merge, one "seed": ``published``)."""
    lines = [",".join(RUNS_HEADER)]
    for pr in pairs:
        lines.append(
            f"{pr.test_a},{pr.test_b},0.5,sampling,{agent},{pr.v_a!r},{pr.v_b!r},{pr.v_ab!r},"
            "published"
        )
    return "\n".join(lines) + "\n"


def published_csv(matrix: Mapping[tuple[str, str], float], source: str) -> str:
    """Return ``reference/published.csv`` rows for the pairs of ``matrix``."""
    lines = ["test_a,test_b,similarity,merge,p,note"]
    for (a, b), s in matrix.items():
        lines.append(f"{TEST_IDS[a]},{TEST_IDS[b]},{s!r},sampling,0.5,{source}")
    return "\n".join(lines) + "\n"
