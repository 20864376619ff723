"""The process-pool executor (:class:`LocalProcessExecutor`): worker processes on this machine.

:mod:`pipeline.executor` re-exports it; :func:`pipeline.executor.get_executor` builds it.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor
from concurrent.futures import wait as futures_wait
from concurrent.futures.process import BrokenProcessPool
from typing import Any

from pipeline.errors import UsageError
from pipeline.executor.base import (
    WORKER_ENV,
    ExecutorError,
    ProgressFn,
    R,
    T,
    _Base,
    _default_workers,
)
from pipeline.executor.chunks import _ChunkResult, _drive, _Lost, _Packed, _run_packed


def _proc_start(pid: int) -> str | None:
    """The start time of process ``pid`` (Linux ``/proc``), ``None`` when it is gone or a zombie."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as fh:
            stat = fh.read().decode("ascii", "replace")
    except OSError:
        return None
    fields = stat[stat.rfind(")") + 2:].split()
    if not fields or fields[0] in ("Z", "X"):
        return None
    return fields[19] if len(fields) > 19 else "?"


def _watch_driver(pid: int, started: str | None) -> None:
    """End this worker as soon as the driver process is gone.

    A driver killed with ``SIGKILL`` cannot stop its workers, and a worker forked by the fork
    server is not its child (``PR_SET_PDEATHSIG`` would wait for the fork server). A daemon
    thread polls the driver once a second (its pid *and* start time, so a reused pid is not
    mistaken for it) and exits the worker, mid-chunk if need be: no orphan outlives a killed
    ``gmeter score``. Without ``/proc`` the workers stop at their next chunk instead.
    """
    import threading
    import time

    if started is None:
        return

    def watch() -> None:
        while True:
            time.sleep(1.0)
            if _proc_start(pid) != started:
                os._exit(1)

    threading.Thread(target=watch, name="gmeter-driver-watch", daemon=True).start()


def _init_worker(env: dict[str, str], driver: int = 0, started: str | None = None) -> None:
    import signal

    if driver:
        _watch_driver(driver, started)
    # Ctrl-C reaches the whole process group: the driver handles it and stops the workers,
    # so a worker ignores it (otherwise every idle worker prints a KeyboardInterrupt trace).
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    for key, value in env.items():
        os.environ.setdefault(key, value)


class LocalProcessExecutor(_Base):
    """A pool of worker processes on this machine (the default executor).

    Parameters
    ----------
    workers : int, optional
        Number of processes (default: the cores this process may use).
    retries : int
        How many times a chunk is re-run after its worker died.
    target_task_seconds : float
        Adaptive chunks aim at this much work per task (per-task overhead is ~0.1-1 ms).
    start_method : str, optional
        ``forkserver`` (default on Linux) or ``spawn``. Never ``fork``: the parent may hold
        threads (numba, BLAS, Dask) and forking a threaded process can deadlock.

    Notes
    -----
    The pool starts on the first :meth:`map` and is reused until :meth:`close`.
    """

    kind = "local"

    def __init__(
        self,
        workers: int | None = None,
        *,
        retries: int = 3,
        target_task_seconds: float = 0.2,
        start_method: str | None = None,
    ) -> None:
        import multiprocessing as mp

        self.workers = workers or _default_workers()
        if self.workers < 1:
            raise UsageError(f"--workers must be >= 1, got {self.workers}")
        self.retries = retries
        self.target_task_seconds = target_task_seconds
        methods = mp.get_all_start_methods()
        self.start_method = start_method or ("forkserver" if "forkserver" in methods else "spawn")
        self._pool: ProcessPoolExecutor | None = None

    def _get_pool(self) -> ProcessPoolExecutor:
        import multiprocessing as mp

        if self._pool is None:
            self._pool = ProcessPoolExecutor(
                max_workers=self.workers,
                mp_context=mp.get_context(self.start_method),
                initializer=_init_worker,
                initargs=(WORKER_ENV, os.getpid(), _proc_start(os.getpid())),
            )
        return self._pool

    def _kill_pool(self) -> None:
        pool, self._pool = self._pool, None
        if pool is None:
            return
        procs = list((getattr(pool, "_processes", None) or {}).values())
        pool.shutdown(wait=False, cancel_futures=True)
        for p in procs:
            p.terminate()
        for p in procs:
            p.join(timeout=5)

    # backend protocol -------------------------------------------------------------
    def submit(self, packed: _Packed, start: int, chunk: list[Any]) -> Future[Any]:
        """Submit one chunk (rebuilding the pool if a dead worker broke it)."""
        try:
            return self._get_pool().submit(_run_packed, packed, start, chunk)
        except BrokenProcessPool:
            self._kill_pool()
            return self._get_pool().submit(_run_packed, packed, start, chunk)

    def wait_any(self, futures: Iterable[Any]) -> Iterable[Any]:
        """Block until at least one future is done."""
        return futures_wait(list(futures), return_when=FIRST_COMPLETED).done

    def outcome(self, future: Any) -> _ChunkResult:
        """Return the chunk's result; a dead worker becomes :class:`_Lost`."""
        try:
            res: _ChunkResult = future.result()
        except BrokenProcessPool as exc:
            raise _Lost(str(exc)) from None
        except Exception as exc:
            raise ExecutorError(f"a chunk could not run in the worker pool: {exc}") from exc
        return res

    def abort(self, futures: Iterable[Any]) -> None:
        """Stop running chunks by terminating the workers (the pool restarts on demand)."""
        if any(not f.done() for f in futures):
            self._kill_pool()

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
        """Return ``[fn(x) for x in items]`` computed by the pool, in item order."""
        items = list(items)
        if not items:
            return []
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
        )

    def close(self) -> None:
        """Shut the pool down, waiting for its processes."""
        pool, self._pool = self._pool, None
        if pool is not None:
            pool.shutdown(wait=True, cancel_futures=True)
