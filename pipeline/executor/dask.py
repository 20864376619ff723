"""The Dask executor (:class:`DaskExecutor`): a Dask distributed cluster or a private one.

:mod:`pipeline.executor` re-exports it; :func:`pipeline.executor.get_executor` builds it.
Dask itself is imported only when a :class:`DaskExecutor` is created.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import Any

from pipeline.executor.base import (
    ExecutorError,
    ProgressFn,
    R,
    T,
    WorkerLost,
    _Base,
    _default_workers,
)
from pipeline.executor.chunks import _ChunkResult, _drive, _Packed, _run_packed


def dask_setup(worker: Any) -> None:
    """Dask preload hook for the private ``LocalCluster``'s workers: ignore Ctrl-C.

    The driver cancels the work and closes the cluster; workers dying of the same SIGINT
    would print tracebacks and leave the cluster without workers.
    """
    import signal
    import threading

    if threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGINT, signal.SIG_IGN)


class DaskExecutor(_Base):
    """Run on a Dask distributed cluster, or on a private ``LocalCluster``.

    Parameters
    ----------
    scheduler : str, optional
        ``tcp://host:8786`` of a running ``dask scheduler``. Without it a ``LocalCluster``
        of ``workers`` single-threaded worker processes is started (and closed by :meth:`close`).
    workers : int, optional
        Workers of the private ``LocalCluster`` (default: the cores this process may use).
    retries : int
        Re-runs of a chunk whose task raised outside the work function (e.g. could not be
        unpickled); a dead worker is re-run by the scheduler (``allowed-failures``, set to
        ``retries`` for the private cluster).
    target_task_seconds : float
        Adaptive chunks aim at this much work per task (Dask's overhead is ~1-10 ms a task).
    connect_timeout : str
        How long to wait for the scheduler.

    Notes
    -----
    Only the function and each chunk's items travel (pickled per task); nothing is scattered
    and the DuckDB store never leaves the machine running ``gmeter``.
    """

    kind = "dask"

    def __init__(
        self,
        scheduler: str | None = None,
        workers: int | None = None,
        *,
        retries: int = 3,
        target_task_seconds: float = 1.0,
        connect_timeout: str = "10s",
    ) -> None:
        try:
            import dask
            from distributed import Client, LocalCluster
        except ImportError as exc:  # pragma: no cover - dask is a core dependency
            raise ExecutorError(
                f"the Dask executor needs dask[distributed] ({exc})",
                hint="pip install 'dask[distributed]'",
            ) from None
        import logging

        self.retries = retries
        self.target_task_seconds = target_task_seconds
        self._cluster: Any = None
        self.client: Any = None
        self._completed: Any = None
        self._values: dict[Any, Any] = {}
        try:
            if scheduler:
                self.client = Client(scheduler, timeout=connect_timeout)
            else:
                with dask.config.set({"distributed.scheduler.allowed-failures": retries}):
                    self._cluster = LocalCluster(
                        n_workers=workers or _default_workers(),
                        threads_per_worker=1,
                        processes=True,
                        # its HTTP server always starts: a free local port, never 8787
                        # (which another cluster may hold)
                        dashboard_address="127.0.0.1:0",
                        silence_logs=logging.ERROR,
                        preload=["pipeline.executor.dask"],  # runs dask_setup in each worker
                    )
                self.client = Client(self._cluster)
        except (OSError, TimeoutError) as exc:
            self.close()
            raise ExecutorError(
                f"could not reach the Dask scheduler at {scheduler}: {exc}",
                hint="start one with `dask scheduler` and workers with "
                "`dask worker tcp://HOST:8786`, or omit --scheduler for a local cluster",
            ) from None
        self.scheduler = scheduler or self.client.scheduler.address
        self.workers = self._count_workers()

    def _count_workers(self) -> int:
        info = self.client.scheduler_info()
        return max(1, sum(w.get("nthreads", 1) for w in info.get("workers", {}).values()))

    # backend protocol -------------------------------------------------------------
    def submit(self, packed: _Packed, start: int, chunk: list[Any]) -> Any:
        """Submit one chunk as a task (``pure=False``: never deduplicated or cached)."""
        fut = self.client.submit(
            _run_packed, packed, start, chunk, retries=self.retries, pure=False
        )
        self._completed.add(fut)
        return fut

    def wait_any(self, futures: Iterable[Any]) -> Iterable[Any]:
        """Block until at least one future is done; return every one done by then.

        Results are fetched in the background as tasks finish (``with_results``): one
        ``Future.result()`` per task would cost a round trip each.
        """
        done = []
        for fut, value in self._completed.next_batch(block=True):
            self._values[fut] = value
            done.append(fut)
        return done

    def outcome(self, future: Any) -> _ChunkResult:
        """Return the chunk's result; a worker the scheduler gave up on is :class:`WorkerLost`."""
        from distributed import KilledWorker

        value = self._values.pop(future, None)
        if future.status == "finished" and isinstance(value, _ChunkResult):
            return value
        try:
            res: _ChunkResult = future.result()
        except KilledWorker as exc:
            raise WorkerLost(
                f"Dask workers kept dying running a chunk: {exc}",
                hint="check worker memory and logs",
            ) from None
        except Exception as exc:
            raise ExecutorError(
                f"a chunk could not run on the Dask cluster: {type(exc).__name__}: {exc}",
                hint="every worker needs the same gmeter, Python and numpy as this machine",
            ) from exc
        return res

    def abort(self, futures: Iterable[Any]) -> None:
        """Cancel the chunks still queued or running."""
        futures = list(futures)
        if futures:
            self.client.cancel(futures)

    # public -----------------------------------------------------------------------
    def map(
        self,
        fn: Callable[[T], R],
        items: Sequence[T],
        *,
        label: str = "work",
        progress: ProgressFn | None = None,
        chunksize: int | None = None,
    ) -> list[R]:
        """Return ``[fn(x) for x in items]`` computed on the cluster, in item order."""
        items = list(items)
        if not items:
            return []
        import cloudpickle
        from distributed import as_completed

        self.workers = self._count_workers()
        self._completed = as_completed(with_results=True, raise_errors=False)
        self._values = {}
        return _drive(
            self,
            fn,
            items,
            label=label,
            progress=progress,
            workers=self.workers,
            chunksize=chunksize,
            target_s=self.target_task_seconds,
            retries=self.retries,
            depth=4,  # hides the ~10 ms client-scheduler-worker round trip
            dumps=cloudpickle.dumps,  # as Dask does: functions of __main__ travel by value
        )

    def close(self) -> None:
        """Close the client and, if we started it, the local cluster."""
        client = getattr(self, "client", None)
        if client is not None:
            client.close()
            self.client = None
        if self._cluster is not None:
            self._cluster.close()
            self._cluster = None
