"""Executor building blocks shared by every backend: errors, the protocol, the common base.

:mod:`pipeline.executor` re-exports the public names; import them from there.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from typing import Any, Protocol, TypeVar

from pipeline.errors import GmeterError

T = TypeVar("T")
R = TypeVar("R")

ProgressFn = Callable[[str, int, int], None]

#: Thread caps set in every worker process (as Dask's nanny does): one worker per core, so
#: BLAS/OpenMP/numba thread pools inside a worker would only oversubscribe the machine.
WORKER_ENV = {
    "OMP_NUM_THREADS": "1",
    "OPENBLAS_NUM_THREADS": "1",
    "MKL_NUM_THREADS": "1",
    "NUMBA_NUM_THREADS": "1",
}


# --------------------------------------------------------------------------- errors


class TaskFailed(GmeterError):
    """A work item raised; names the item and carries the original exception.

    Attributes
    ----------
    label, index, item_repr : str, int, str
        The map's label, the item's position in ``items`` and its (truncated) ``repr``.
    original : BaseException
        The exception the item raised (a :class:`RemoteError` stand-in if it could not be
        pickled back from the worker); also the ``__cause__`` of this error.
    remote_traceback : str
        The traceback text as formatted where the item ran.
    """

    def __init__(
        self, label: str, index: int, item_repr: str, original: BaseException, remote_tb: str
    ) -> None:
        super().__init__(
            f"{label}: work item #{index} ({item_repr}) failed: "
            f"{type(original).__name__}: {original}",
            hint="rerun with --executor inprocess to debug it in one process",
        )
        self.label, self.index, self.item_repr = label, index, item_repr
        self.original, self.remote_traceback = original, remote_tb
        self.exit_code = getattr(original, "exit_code", GmeterError.exit_code)


class WorkerLost(GmeterError):
    """A worker died (crash, out of memory, killed) running a chunk more often than allowed."""


class ExecutorError(GmeterError):
    """The executor itself failed (cluster unreachable, a chunk that cannot be sent)."""


class RemoteError(Exception):
    """Stand-in for an exception raised in a worker that could not be pickled back."""


# --------------------------------------------------------------------------- protocol


class Executor(Protocol):
    """Maps a pure function over items, preserving order; a context manager that frees workers."""

    kind: str
    workers: int

    def map(
        self,
        fn: Callable[[T], R],
        items: Sequence[T],
        *,
        label: str = "work",
        progress: ProgressFn | None = None,
        chunksize: int | None = None,
    ) -> list[R]:
        """Return ``[fn(x) for x in items]``."""
        ...

    def close(self) -> None:
        """Release workers, pools and clients (idempotent)."""
        ...

    def __enter__(self) -> Executor: ...

    def __exit__(self, *exc: object) -> None: ...


class _Base:
    kind = "base"
    workers = 1

    def close(self) -> None:
        """Release workers, pools and clients (idempotent)."""

    def __enter__(self) -> Any:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"{type(self).__name__}(workers={self.workers})"


def _default_workers() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1
