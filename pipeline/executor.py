"""Executors: map a pure function over work items, in-process, on local processes or on Dask.

This first version holds the interface and the in-process executor; the process-pool and
Dask implementations are added by the scale-out work (issue 9) behind the same interface.

Contract for every executor: ``map(fn, items, label=...)`` returns ``[fn(x) for x in items]``
in item order, whatever the number of workers; ``fn`` is a picklable module-level function and
must derive any randomness from its item (never from the worker).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, Protocol, TypeVar

T = TypeVar("T")
R = TypeVar("R")

ProgressFn = Callable[[str, int, int], None]


class Executor(Protocol):
    """Maps a pure function over items, preserving order."""

    def map(
        self,
        fn: Callable[[T], R],
        items: Sequence[T],
        *,
        label: str = "work",
        progress: ProgressFn | None = None,
    ) -> list[R]:
        """Return ``[fn(x) for x in items]``."""
        ...


class InProcessExecutor:
    """Runs everything in the calling process: for tests, debugging and tiny jobs."""

    workers = 1

    def map(
        self,
        fn: Callable[[T], R],
        items: Sequence[T],
        *,
        label: str = "work",
        progress: ProgressFn | None = None,
    ) -> list[R]:
        """Return ``[fn(x) for x in items]``, reporting progress after each item."""
        out: list[R] = []
        total = len(items)
        for i, x in enumerate(items, start=1):
            out.append(fn(x))
            if progress is not None:
                progress(label, i, total)
        return out


def get_executor(kind: str = "inprocess", **_: Any) -> Executor:
    """Return an executor by name (``inprocess`` for now)."""
    return InProcessExecutor()
