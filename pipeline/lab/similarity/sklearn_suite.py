"""The scikit-learn side of the similarity experiments (the only module that imports sklearn).

The **passive suite** of ``gmeter similarity run --experiment classification`` (Pereyda &
Holder 2020, Sect. "Experiments", Tables 1-3, Figs. 2-3) on data sets that ship with
scikit-learn, so nothing is downloaded:

========================  ======================================================  ========
test                      what                                                    classes
========================  ======================================================  ========
``digits``                8×8 handwritten digits (``load_digits``), 1797 images   10
``digits-inverted``       the same images with every pixel ``16 − x``             10
``digits-rotated``        the same images rotated by 90°                          10
``iris``                  Fisher's iris measurements, 150 flowers                 3
``wine``                  chemical analysis of 178 wines                          3
``breast-cancer``         Wisconsin diagnostic features, 569 cases                2
``cartpole-passive``      CartPole states labelled with a balancing controller's   2
                          action (:func:`~.gym_suite.cartpole_passive`)
``cartpole-pixels``       the same states drawn as 12×24 images (one frame, no     2
                          velocities; :func:`~.gym_suite.cartpole_pixels`)
========================  ======================================================  ========

The variants of ``digits`` are pairs whose relation is known in advance (same images, changed
appearance). Each test is cut to at most ``size`` elements (a seeded random subset) and its
inputs are standardised per feature over that subset (zero mean, unit variance; a constant
feature becomes 0). ``V`` is the held-out accuracy of scikit-learn's ``MLPClassifier`` (ReLU,
Adam, ``hidden`` units per layer, ``max_iter`` epochs) trained on a stratified ``1 −
test_fraction`` of the elements. The merged test is the paper's sampling merge
(:func:`pipeline.metrics.similarity.merge.sample_merge`): the larger test cut to the smaller, a
proportion ``p`` from A, inputs zero-padded to the wider test, B's classes after A's; or its
stitching merge (:func:`pipeline.metrics.similarity.merge.stitch_merge`), scored on ``AB``,
``AA`` and ``BB`` as in the paper's Fig. 2.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass
from functools import lru_cache

import numpy as np
from numpy.typing import NDArray

from pipeline.metrics.similarity.merge import sample_merge, stitch_merge


@dataclass(frozen=True)
class DataTest:
    """One passive test: a name, a description and its number of classes."""

    id: str
    title: str
    description: str
    classes: int


DATASETS: dict[str, DataTest] = {
    t.id: t
    for t in (
        DataTest("digits", "Digits", "scikit-learn's 8×8 handwritten digits (UCI), 10 "
                 "classes.", 10),
        DataTest("digits-inverted", "Digits, inverted", "The digits with every pixel replaced "
                 "by 16 − pixel (a known transformation of digits).", 10),
        DataTest("digits-rotated", "Digits, rotated 90°", "The digits rotated by 90° (the same "
                 "pixels in other places).", 10),
        DataTest("iris", "Iris", "Fisher's iris: 4 measurements, 3 species, 150 flowers.", 3),
        DataTest("wine", "Wine", "13 chemical measurements of 178 wines from 3 cultivars.", 3),
        DataTest("breast-cancer", "Breast cancer", "Wisconsin diagnostic breast cancer: 30 "
                 "features, benign or malignant, 569 cases.", 2),
        DataTest("cartpole-passive", "CartPole (passive)", "Gymnasium CartPole states labelled "
                 "with the action of a fixed balancing controller (push right iff θ + ω/2 > 0); "
                 "the paper's passive CartPole with states instead of images.", 2),
        DataTest("cartpole-pixels", "CartPole (passive, pixels)", "The same CartPole states "
                 "and labels drawn as coarse 12×24 grey images of the cart and pole (one frame: "
                 "no velocities), closer to the paper's images of the cart.", 2),
    )
}  # fmt: skip

CARTPOLE_STATES = 1500
"""Elements of ``cartpole-passive`` (before the cut to ``size``); fixed seed 2020."""


@lru_cache(maxsize=16)
def load(test: str) -> tuple[NDArray[np.float64], NDArray[np.int64]]:
    """Return the whole data set of ``test``: inputs ``(n, d)`` and labels ``0 … c − 1``."""
    from sklearn import datasets

    if test == "cartpole-passive":
        from pipeline.lab.similarity.gym_suite import cartpole_passive

        x, y = cartpole_passive(CARTPOLE_STATES, seed=2020)
        return x, y
    if test == "cartpole-pixels":
        from pipeline.lab.similarity.gym_suite import cartpole_pixels

        return cartpole_pixels(CARTPOLE_STATES, seed=2020)
    if test.startswith("digits"):
        d = datasets.load_digits()
        x = np.asarray(d.data, dtype=np.float64)
        if test == "digits-inverted":
            x = 16.0 - x
        elif test == "digits-rotated":
            x = np.rot90(x.reshape(-1, 8, 8), k=1, axes=(1, 2)).reshape(-1, 64).copy()
        return x, np.asarray(d.target, dtype=np.int64)
    loader = {
        "iris": datasets.load_iris,
        "wine": datasets.load_wine,
        "breast-cancer": datasets.load_breast_cancer,
    }[test]
    d = loader()
    return np.asarray(d.data, dtype=np.float64), np.asarray(d.target, dtype=np.int64)


def prepared(test: str, size: int, seed: int) -> tuple[NDArray[np.float64], NDArray[np.int64]]:
    """The test cut to at most ``size`` elements (seeded subset) and standardised per feature."""
    x, y = load(test)
    rng = np.random.default_rng(seed)
    keep = np.sort(rng.permutation(len(x))[: min(size, len(x))])
    x, y = x[keep], y[keep]
    mean, std = x.mean(axis=0), x.std(axis=0)
    z = np.where(std > 0, (x - mean) / np.where(std > 0, std, 1.0), 0.0)
    return z, y


@dataclass(frozen=True)
class MLPSettings:
    """The baseline classifier and its evaluation."""

    hidden: int = 64
    layers: int = 1
    max_iter: int = 200
    test_fraction: float = 0.3


def accuracy(x: NDArray[np.float64], y: NDArray[np.int64], m: MLPSettings, seed: int) -> float:
    """Held-out accuracy of a fresh ``MLPClassifier`` on ``(x, y)`` (stratified split)."""
    from sklearn.exceptions import ConvergenceWarning
    from sklearn.model_selection import train_test_split
    from sklearn.neural_network import MLPClassifier

    counts = np.bincount(y)
    strat = y if counts[counts > 0].min() >= 2 else None
    xtr, xte, ytr, yte = train_test_split(
        x, y, test_size=m.test_fraction, random_state=seed % 2**32, stratify=strat
    )
    clf = MLPClassifier(
        hidden_layer_sizes=(m.hidden,) * m.layers,
        max_iter=m.max_iter,
        random_state=(seed >> 7) % 2**32,
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        clf.fit(xtr, ytr)
    return float(np.mean(clf.predict(xte) == yte))


def run_data_test(
    tests: tuple[str, ...],
    p: float,
    m: MLPSettings,
    size: int,
    seeds: dict[str, int],
    part: str = "AB",
    merge: str = "sampling",
) -> float:
    """``V`` of one test alone, of the merge of two, or of one part of that merge.

    Parameters
    ----------
    tests : tuple of str
        ``(A,)`` or ``(A, B)``.
    p : float
        Proportion of A in the merge (ignored for one test).
    m : MLPSettings
        The baseline classifier.
    size : int
        At most this many elements per test.
    seeds : dict
        ``{"<test>": subset seed, "merge": which elements are merged, "model": split and
        network}``; the subset seed of a test is shared between the test alone and its merges.
    part : {"AB", "A", "B", "AA", "BB"}
        Sampling: the whole merge, or only the elements it drew from A (from B), with A's
        (B's) own labels — the *matched* reference of ``alone = "matched"``. Stitching: the
        stitched pair ``AB`` or a test stitched with itself (``AA``, ``BB``), all at the
        pair's common half width so the three share one input layout.
    merge : {"sampling", "stitching"}
        The merge method.
    """
    parts = [prepared(t, size, seeds[t]) for t in tests]
    if len(parts) == 1:
        x, y = parts[0]
    elif merge == "stitching":
        (xa, ya), (xb, yb) = parts
        width = max(xa.shape[1], xb.shape[1])
        side = {"A": (xa, ya, tests[0]), "B": (xb, yb, tests[1])}
        left, right = (part[0], part[1]) if part in ("AA", "BB", "AB") else ("A", "B")
        xl, yl, tl = side[left]
        xr, yr, _ = side[right]
        stitched = stitch_merge(xl, yl, xr, yr, p, np.random.default_rng(seeds["merge"]),
                                n_classes_l=DATASETS[tl].classes, width=width,
                                same_test=left == right)  # fmt: skip
        x, y = stitched.x, stitched.y
    else:
        (xa, ya), (xb, yb) = parts
        c_a = DATASETS[tests[0]].classes
        merged = sample_merge(xa, ya, xb, yb, p, np.random.default_rng(seeds["merge"]),
                              n_classes_a=c_a)  # fmt: skip
        x, y = merged.x, merged.y
        if part == "A":
            x, y = x[merged.from_a], y[merged.from_a]
        elif part == "B":
            x, y = x[~merged.from_a], y[~merged.from_a] - c_a
    return accuracy(x, y, m, seeds["model"])


def sklearn_version() -> str:
    """Return the installed scikit-learn version (recorded in the bundle)."""
    import sklearn

    return str(sklearn.__version__)
