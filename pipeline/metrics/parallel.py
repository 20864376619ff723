"""The one seam between pure metrics and executors: a ``map`` callable.

Metrics that fan work out (Δ matrices, domain distances, bootstrap chunks) take a
``map_fn`` with the signature of :meth:`pipeline.executor.Executor.map`; callers pass an
executor's bound ``map`` and metrics never import the executor. Without one, work runs here,
in order, in the calling process (:func:`serial_map`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, Protocol, TypeVar

T = TypeVar("T")
R = TypeVar("R")

ProgressFn = Callable[[str, int, int], None]
"""``progress(label, done, total)``: called as items finish."""


class MapFn(Protocol):
    """``map_fn(fn, items, label=..., progress=...) -> [fn(x) for x in items]`` in item order."""

    def __call__(
        self, fn: Callable[[Any], Any], items: Sequence[Any], *, label: str = ...,
        progress: ProgressFn | None = ...,
    ) -> list[Any]:
        """Return ``[fn(x) for x in items]`` in item order."""
        ...


def serial_map(
    fn: Callable[[T], R],
    items: Sequence[T],
    *,
    label: str = "work",
    progress: ProgressFn | None = None,
) -> list[R]:
    """Return ``[fn(x) for x in items]`` in the calling process, reporting progress per item."""
    out: list[R] = []
    total = len(items)
    for i, x in enumerate(items):
        out.append(fn(x))
        if progress is not None:
            progress(label, i + 1, total)
    return out
