"""Chunks and the driver: run a chunk in a worker, and feed chunks to a backend in order.

:func:`_drive` implements the adaptive chunking (guided self-scheduling), the retries of
chunks whose worker died and the in-order gathering described in :mod:`pipeline.executor`;
the process-pool and Dask executors are backends (:class:`_Backend`) it drives.
"""

from __future__ import annotations

import math
import pickle
import time
import traceback
from collections.abc import Callable, Iterable, Sequence
from typing import Any, NamedTuple, Protocol

from pipeline.executor.base import ProgressFn, RemoteError, TaskFailed, WorkerLost

# --------------------------------------------------------------------------- chunks


class _Failure(NamedTuple):
    position: int
    item_repr: str
    exc: BaseException
    traceback: str


class _ChunkResult(NamedTuple):
    start: int
    values: list[Any]
    seconds: float
    failure: _Failure | None


def _short_repr(x: object, limit: int = 80) -> str:
    try:
        text = repr(x)
    except Exception:  # a broken __repr__ must not hide the real error
        text = f"<{type(x).__name__}>"
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _portable(exc: BaseException) -> BaseException:
    try:
        pickle.loads(pickle.dumps(exc))
    except Exception:
        return RemoteError(f"{type(exc).__name__}: {exc}")
    return exc


def _run_chunk(fn: Callable[[Any], Any], start: int, items: Sequence[Any]) -> _ChunkResult:
    """Run ``fn`` over one chunk in a worker; an item's exception is returned, not raised.

    Returning it keeps deterministic errors out of the retry machinery (retries are for dead
    workers) and lets the driver name the item.
    """
    t0 = time.perf_counter()
    values: list[Any] = []
    for k, x in enumerate(items):
        try:
            values.append(fn(x))
        except Exception as exc:
            fail = _Failure(start + k, _short_repr(x), _portable(exc), traceback.format_exc())
            return _ChunkResult(start, values, time.perf_counter() - t0, fail)
    return _ChunkResult(start, values, time.perf_counter() - t0, None)


class _Packed(NamedTuple):
    """The work function, pickled once per map; workers unpickle it once and keep it."""

    key: str
    data: bytes


#: Unpickled work functions of the last maps, per worker process (see :func:`_run_packed`).
_FN_CACHE: dict[str, Callable[[Any], Any]] = {}
_FN_CACHE_SIZE = 2


def _pack(fn: Callable[[Any], Any], dumps: Callable[..., bytes] = pickle.dumps) -> _Packed:
    import hashlib

    try:
        data = dumps(fn, protocol=pickle.HIGHEST_PROTOCOL)
    except Exception as exc:
        raise TypeError(
            f"{fn!r} cannot be sent to worker processes ({exc}); use a module-level "
            "function and bind arguments with functools.partial"
        ) from None
    return _Packed(hashlib.blake2b(data, digest_size=16).hexdigest(), data)


def _run_packed(packed: _Packed, start: int, items: Sequence[Any]) -> _ChunkResult:
    """Run one chunk in a worker, unpickling the function only on its first chunk there.

    Every chunk of a map then shares one function object per worker, as in-process: data
    bound with :func:`functools.partial` (e.g. normalised flows, with their lazily computed
    properties) is unpickled and warmed once per worker instead of once per chunk.
    """
    fn = _FN_CACHE.get(packed.key)
    if fn is None:
        fn = pickle.loads(packed.data)
        while len(_FN_CACHE) >= _FN_CACHE_SIZE:
            _FN_CACHE.pop(next(iter(_FN_CACHE)))
        _FN_CACHE[packed.key] = fn
    return _run_chunk(fn, start, items)


def _raise_failure(label: str, f: _Failure) -> None:
    raise TaskFailed(label, f.position, f.item_repr, f.exc, f.traceback) from f.exc


class _Lost(Exception):
    """Internal: the chunk's worker died; the driver may resubmit it."""


class _Backend(Protocol):
    def submit(self, packed: _Packed, start: int, chunk: list[Any]) -> Any: ...
    def wait_any(self, futures: Iterable[Any]) -> Iterable[Any]: ...
    def outcome(self, future: Any) -> _ChunkResult: ...
    def abort(self, futures: Iterable[Any]) -> None: ...


def _drive(
    backend: _Backend,
    fn: Callable[[Any], Any],
    items: list[Any],
    *,
    label: str,
    progress: ProgressFn | None,
    workers: int,
    chunksize: int | None,
    target_s: float,
    retries: int,
    depth: int = 2,
    dumps: Callable[..., bytes] = pickle.dumps,
) -> list[Any]:
    """Feed chunks to ``backend``, keep ``depth * workers`` in flight, gather results in order."""
    n = len(items)
    out: list[Any] = [None] * n
    inflight: dict[Any, tuple[int, int, int]] = {}  # future -> (start, size, attempt)
    next_start = done = 0
    t_item = -1.0  # measured seconds per item of the last chunk; < 0 before the first

    def size_of_next() -> int:
        remaining = n - next_start
        if chunksize:
            return min(chunksize, remaining)
        balanced = max(1, math.ceil(remaining / (2 * workers)))
        if t_item < 0:  # nothing measured yet: one item per task
            return 1
        want = max(1, int(target_s / t_item)) if t_item > 0 else balanced
        # guided self-scheduling: a share of what remains, but never more than the target
        # and never less than an eighth of it (overhead stays < ~5 % even in the tail)
        return min(remaining, want, max(balanced, want // 8))

    packed = _pack(fn, dumps)

    def submit(start: int, size: int, attempt: int) -> None:
        chunk = items[start : start + size]
        inflight[backend.submit(packed, start, chunk)] = (start, size, attempt)

    def fill() -> None:
        nonlocal next_start
        while next_start < n and len(inflight) < depth * workers:
            size = size_of_next()
            submit(next_start, size, 0)
            next_start += size

    if progress is not None:
        progress(label, 0, n)
    try:
        fill()
        while inflight:
            for fut in sorted(backend.wait_any(list(inflight)), key=lambda f: inflight[f][0]):
                start, size, attempt = inflight.pop(fut)
                try:
                    res = backend.outcome(fut)
                except _Lost as exc:
                    if attempt >= retries:
                        raise WorkerLost(
                            f"{label}: a worker died running items #{start}..#{start + size - 1} "
                            f"({attempt + 1} attempts): {exc}",
                            hint="check worker memory and logs; a crash in native code "
                            "(numba, numpy) also kills workers",
                        ) from None
                    submit(start, size, attempt + 1)
                    continue
                if res.failure is not None:
                    _raise_failure(label, res.failure)
                out[start : start + size] = res.values
                done += size
                t_item = res.seconds / size
                if progress is not None:
                    progress(label, done, n)
            fill()
    except BaseException:
        backend.abort(list(inflight))
        raise
    return out
