"""R's numerics (pipeline.metrics.generality.rnumerics).

The shortcut for dyadic means is exactly R's mean.
"""

from __future__ import annotations

import numpy as np
import pytest

from pipeline.metrics.generality.rnumerics import _dyadic_means, _ld_means, group_means_t


def _r_mean(values: np.ndarray) -> float:
    """R's summary.c mean, literally: long-double sum, divide, one correction pass."""
    s = np.longdouble(0)
    for v in values:
        s += np.longdouble(v)
    s /= len(values)
    t = np.longdouble(0)
    for v in values:
        t += np.longdouble(v) - s
    s += t / len(values)
    return float(s)


def test_ld_emulation_is_rs_mean():
    rng = np.random.default_rng(0)
    counts = np.array([3, 7, 2, 40])
    vt = rng.random((counts.sum(), 5))
    got = _ld_means(vt, counts)
    starts = np.concatenate(([0], np.cumsum(counts)[:-1]))
    for g, (s0, c) in enumerate(zip(starts, counts, strict=True)):
        for j in range(5):
            assert got[g, j] == _r_mean(vt[s0 : s0 + c, j])


@pytest.mark.parametrize(
    ("values", "layout"),
    [
        ([0.0, 1.0], "random"),
        ([0.0, 1.0], "ones_first"),
        ([0.0, 1.0], "zeros_first"),
        ([0.0, 0.5, 1.0], "random"),
        ([-1.0, 0.25, 2.0], "random"),
    ],
)
def test_dyadic_shortcut_equals_the_emulation(values, layout):
    rng = np.random.default_rng(len(values))
    counts = rng.integers(2, 200, size=30)
    vt = rng.choice(values, size=(counts.sum(), 30))
    if layout != "random":
        starts = np.concatenate(([0], np.cumsum(counts)[:-1]))
        for s0, c in zip(starts, counts, strict=True):
            vt[s0 : s0 + c] = np.sort(vt[s0 : s0 + c], axis=0)
            if layout == "ones_first":
                vt[s0 : s0 + c] = vt[s0 : s0 + c][::-1]
    fast = _dyadic_means(vt, counts)
    assert fast is not None
    assert np.array_equal(fast, _ld_means(vt, counts))


def test_non_dyadic_data_take_the_emulation():
    vt = np.array([[0.1], [0.2], [0.3]])
    counts = np.array([3])
    assert _dyadic_means(vt, counts) is None
    assert group_means_t(vt, counts)[0, 0] == _r_mean(vt[:, 0])


def test_single_member_groups_are_copied():
    vt = np.array([[0.1, 0.7], [0.2, 0.3], [0.3, 0.9]])
    out = group_means_t(vt, np.array([1, 2]))
    assert out[0].tolist() == [0.1, 0.7]
    assert out[1, 0] == _r_mean(np.array([0.2, 0.3]))
