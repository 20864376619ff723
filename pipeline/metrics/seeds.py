"""Seeds of work items: randomness derived from what an item *is*, never from where it runs.

Every random stream in gmeter's metrics comes from :func:`derive_seed` (or the generator of
:func:`derive_rng`), keyed by the run's root seed and the item's own keys. Because a seed
depends only on its inputs — not on the worker, the chunk or the order of execution — results
are identical whatever executor maps the items.
"""

from __future__ import annotations

import operator
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import numpy as np


def derive_seed(root: int, *keys: int | str) -> int:
    r"""Derive a 64-bit seed for one work item from the root seed and the item's keys.

    .. math::

        s = \mathrm{SeedSequence}([r, k_1, \dots, k_m]).\mathrm{generate\_state}(1, \mathrm{uint64})

    where :math:`r` is the root seed and :math:`k_i` the keys (non-negative integers; a string
    key is first mapped to the integer of its UTF-8 SHA-256 digest). The seed depends only on
    its inputs, never on the worker, the chunk or the order of execution, which is what makes
    results identical whatever the executor.

    Parameters
    ----------
    root : int
        The run's root seed (``ScoreContext.seed``), ``>= 0``.
    *keys : int or str
        What identifies the item: its index, a stage number, a bundle id, ...

    Returns
    -------
    int
        A seed in ``[0, 2**64)`` for :func:`numpy.random.default_rng`.

    Raises
    ------
    ValueError
        If the root or an integer key is negative.
    TypeError
        If a key is neither an integer nor a string (e.g. a float).

    Notes
    -----
    ``derive_seed(r, i)`` differs from ``SeedSequence(r).spawn(n)[i]`` (which keys on
    ``spawn_key``); both are sound, this one needs no ``n`` and accepts string keys.
    """
    import hashlib

    import numpy as np

    words: list[int] = []
    for k in (root, *keys):
        if isinstance(k, str):
            words.append(int.from_bytes(hashlib.sha256(k.encode()).digest(), "little"))
        else:
            v = operator.index(k)  # ints and numpy ints; a float key is a bug, not a seed
            if v < 0:
                raise ValueError(f"seed keys must be >= 0, got {k!r}")
            words.append(v)
    return int(np.random.SeedSequence(words).generate_state(1, dtype=np.uint64)[0])


def derive_rng(root: int, *keys: int | str) -> np.random.Generator:
    """Return ``numpy.random.default_rng(derive_seed(root, *keys))``: the item's generator."""
    import numpy as np

    return np.random.default_rng(derive_seed(root, *keys))
