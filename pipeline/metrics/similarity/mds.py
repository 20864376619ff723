"""Classical (Torgerson) multidimensional scaling: a 2-D map of tests from their dissimilarities.

Used for the map of a test suite (Pereyda & Holder 2020, Fig. 4) from the dissimilarity matrix
``1 - S``. Numpy only; deterministic (fixed axis order and sign convention).

References
----------
.. [1] W. S. Torgerson, "Multidimensional scaling: I. Theory and method", Psychometrika 17
   (1952) 401-419.
.. [2] J. C. Gower, "Some distance properties of latent root and vector methods used in
   multivariate analysis", Biometrika 53 (1966) 325-338.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike, NDArray


@dataclass(frozen=True)
class Embedding:
    """Coordinates of items in ``dims`` dimensions.

    Attributes
    ----------
    labels : tuple of str
        Item names, in row order.
    coords : numpy.ndarray
        ``(n, dims)`` coordinates, centred at the origin.
    eigenvalues : numpy.ndarray
        All eigenvalues of the double-centred matrix ``B``, largest first.
    explained : float
        Share of the positive eigenvalue mass kept by the ``dims`` axes, in ``[0, 1]``
        (1 when the dissimilarities are exactly Euclidean in ``dims`` dimensions); ``1.0`` when
        every eigenvalue is zero.
    negative_mass : float
        ``sum |negative eigenvalues| / sum |eigenvalues|``: how far the dissimilarities are from
        Euclidean distances (0 = Euclidean). ``0.0`` when every eigenvalue is zero.
    """

    labels: tuple[str, ...]
    coords: NDArray[np.float64]
    eigenvalues: NDArray[np.float64]
    explained: float
    negative_mass: float

    def as_records(self) -> list[dict[str, float | str]]:
        """Return one ``{"test", "x", "y"}`` record per item (for chart data; 2-D only)."""
        return [
            {"test": t, "x": float(self.coords[i, 0]), "y": float(self.coords[i, 1])}
            for i, t in enumerate(self.labels)
        ]


def classical_mds(
    dissimilarity: ArrayLike, labels: Sequence[str] | None = None, dims: int = 2
) -> Embedding:
    r"""Embed items so that Euclidean distances approximate the given dissimilarities.

    .. math::

        B = -\tfrac12 J D^{\circ 2} J, \qquad J = I - \tfrac1n \mathbf{1}\mathbf{1}^\top,
        \qquad X_{:,k} = \sqrt{\max(\lambda_k, 0)}\; v_k

    where :math:`D^{\circ 2}` squares the dissimilarities elementwise and
    :math:`\lambda_1 \ge \lambda_2 \ge \dots` are the eigenvalues of :math:`B` with unit
    eigenvectors :math:`v_k`. If ``D`` is a Euclidean distance matrix the embedding reproduces
    it exactly (up to rotation and reflection).

    Parameters
    ----------
    dissimilarity : array_like
        ``(n, n)`` symmetric, non-negative, zero diagonal, finite.
    labels : sequence of str, optional
        Item names (default ``"0" … "n-1"``).
    dims : int
        Number of axes (default 2). Axes beyond the number of positive eigenvalues are 0.

    Returns
    -------
    Embedding

    Raises
    ------
    ValueError
        If the matrix is not square, symmetric, finite, non-negative with a zero diagonal, or
        ``labels`` has the wrong length.

    Notes
    -----
    * **Sign convention**: each axis is flipped so that its coordinate of largest magnitude is
      positive (the first such item on ties, magnitudes compared after rounding to 12
      decimals), which makes the output deterministic for a given input.
    * Negative eigenvalues (non-Euclidean dissimilarities, common for ``1 - S``) are reported
      in ``negative_mass`` and contribute no coordinates.
    * With repeated eigenvalues (e.g. three equally dissimilar tests) the axes within that
      eigenspace are not unique: any rotation fits equally well.
    * ``n = 1`` gives the origin; ``n = 0`` an empty embedding.
    """
    d = np.asarray(dissimilarity, dtype=np.float64)
    if d.ndim != 2 or d.shape[0] != d.shape[1]:
        raise ValueError(f"dissimilarity must be a square matrix, got shape {d.shape}")
    n = d.shape[0]
    names = tuple(labels) if labels is not None else tuple(str(i) for i in range(n))
    if len(names) != n:
        raise ValueError(f"{len(names)} labels for {n} items")
    if dims < 1:
        raise ValueError("dims must be at least 1")
    if not np.all(np.isfinite(d)):
        raise ValueError("dissimilarity has missing (nan) or infinite entries")
    if np.any(d < 0) or np.any(np.diag(d) != 0):
        raise ValueError("dissimilarity must be non-negative with a zero diagonal")
    if not np.allclose(d, d.T, rtol=0.0, atol=1e-12):
        raise ValueError("dissimilarity must be symmetric")
    if n == 0:
        return Embedding(names, np.zeros((0, dims)), np.zeros(0), 1.0, 0.0)
    j = np.eye(n) - np.full((n, n), 1.0 / n)
    b = -0.5 * j @ (d * d) @ j
    b = 0.5 * (b + b.T)
    evals, evecs = np.linalg.eigh(b)
    order = np.argsort(-evals, kind="stable")
    evals, evecs = evals[order], evecs[:, order]
    coords = np.zeros((n, dims))
    for k in range(min(dims, n)):
        lam = evals[k]
        if lam <= 1e-12 * max(1.0, float(np.abs(evals).max())):
            continue
        v = evecs[:, k]
        top = int(np.argmax(np.round(np.abs(v), 12)))
        if v[top] < 0:
            v = -v
        coords[:, k] = np.sqrt(lam) * v
    pos = float(evals[evals > 0].sum())
    total = float(np.abs(evals).sum())
    kept = float(np.clip(evals[: min(dims, n)], 0.0, None).sum())
    explained = kept / pos if pos > 0 else 1.0
    negative_mass = float(-evals[evals < 0].sum()) / total if total > 0 else 0.0
    return Embedding(names, coords, evals, min(explained, 1.0), negative_mass)
