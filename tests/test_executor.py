"""The executor contract: same results bit for bit in-process, on a local pool and on Dask.

The work functions live at module level so worker processes (forkserver/spawn, Dask nanny
processes) can import them: pytest puts tests/ on sys.path and children inherit it.
"""

from __future__ import annotations

import os
import pickle
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from pipeline.errors import GmeterError, UsageError
from pipeline.executor import (
    DaskExecutor,
    ExecutorError,
    InProcessExecutor,
    LocalProcessExecutor,
    RemoteError,
    TaskFailed,
    WorkerLost,
    _ChunkResult,
    _drive,
    _run_chunk,
    _run_packed,
    get_executor,
)
from pipeline.metrics.seeds import derive_rng, derive_seed

ROOT = 20211

# --------------------------------------------------------------------------- work functions


def numeric_item(i: int) -> tuple[int, float, bytes]:
    """A deterministic numeric workload: a seeded random walk and a float reduction.

    The result depends on the item only (seed derived from (ROOT, i)); returning the raw bytes
    of a float64 vector makes the comparison bit for bit.
    """
    rng = derive_rng(ROOT, i)
    steps = rng.standard_normal(257)
    walk = np.cumsum(steps)
    return i, float(np.sum(np.sin(walk) * steps)), walk[::32].tobytes()


def uneven_item(i: int) -> float:
    """Items with very different costs (to exercise adaptive chunking and order)."""
    rng = derive_rng(ROOT, "uneven", i)
    n = 10 + (i % 7) * 400
    return float(rng.random(n).sum())


def boom_at_5(i: int) -> int:
    if i == 5:
        raise ValueError(f"item {i} is bad")
    return i


class Unpicklable(Exception):
    def __init__(self, a: int, b: int) -> None:  # two required args: default pickling fails
        super().__init__(f"{a}/{b}")
        self.lock = __import__("threading").Lock()


def raise_unpicklable(i: int) -> int:
    if i == 2:
        raise Unpicklable(1, 2)
    return i


def usage_error_at_1(i: int) -> int:
    if i == 1:
        raise UsageError("bad option")
    return i


def die_once(arg: tuple[int, str]) -> tuple[int, float, bytes]:
    """Kill the worker process the first time item 3 runs; the marker file records it."""
    i, marker = arg
    if i == 3 and not os.path.exists(marker):
        Path(marker).write_text("died once")
        os._exit(13)
    return numeric_item(i)


def die_always(i: int) -> int:
    if i == 1:
        os._exit(13)
    return i


class Tracked:
    """Shared data bound to a work function; counts its unpickling in each process."""

    loads = 0

    def __init__(self, tag: str) -> None:
        self.tag = tag

    def __setstate__(self, state: dict[str, Any]) -> None:
        type(self).loads += 1
        self.__dict__.update(state)


def loads_so_far(shared: Tracked, i: int) -> int:
    return type(shared).loads


def slow_item(i: int) -> int:
    time.sleep(0.2)
    return i


# --------------------------------------------------------------------------- fixtures


@pytest.fixture(scope="module")
def local2() -> Iterator[LocalProcessExecutor]:
    with LocalProcessExecutor(workers=2) as ex:
        yield ex


@pytest.fixture(scope="module")
def dask2() -> Iterator[DaskExecutor]:
    with DaskExecutor(workers=2) as ex:  # LocalCluster, processes, 2 workers x 1 thread
        yield ex


@pytest.fixture(scope="module")
def reference() -> list[tuple[int, float, bytes]]:
    return [numeric_item(i) for i in range(300)]


# --------------------------------------------------------------------------- seeds


def test_derive_seed_is_a_pure_function_of_its_keys() -> None:
    # Golden values: SeedSequence([20211, 0]) etc.; numpy guarantees the SeedSequence stream
    # across versions, so these must never change (they key every stored AIQ/bootstrap run).
    assert derive_seed(ROOT, 0) == derive_seed(ROOT, 0)
    golden = [derive_seed(ROOT, i) for i in range(3)]
    assert golden == [
        int(np.random.SeedSequence([ROOT, i]).generate_state(1, dtype=np.uint64)[0])
        for i in range(3)
    ]
    assert len(set(golden)) == 3
    # literal goldens: stored AIQ, bootstrap and similarity results depend on these values
    assert derive_seed(ROOT, 0) == 8194154571035566025
    assert derive_seed(ROOT, "similarity", 3) == 8627471109537370305
    assert all(0 <= s < 2**64 for s in golden)
    assert derive_seed(ROOT, "bundle-a") != derive_seed(ROOT, "bundle-b")
    assert derive_seed(ROOT, 1, 2) != derive_seed(ROOT, 2, 1)
    assert derive_seed(ROOT, np.int64(4)) == derive_seed(ROOT, 4)


def test_derive_seed_rejects_negative_keys() -> None:
    with pytest.raises(ValueError, match=">= 0"):
        derive_seed(ROOT, -1)
    with pytest.raises(TypeError):
        derive_seed(ROOT, 1.5)  # type: ignore[arg-type]


# --------------------------------------------------------------------------- same results


def test_inprocess_matches_plain_loop(reference: list[Any]) -> None:
    assert InProcessExecutor().map(numeric_item, range(300)) == reference


@pytest.mark.parametrize("chunksize", [None, 1, 7, 1000])
def test_local_pool_is_bit_identical(
    local2: LocalProcessExecutor, reference: list[Any], chunksize: int | None
) -> None:
    assert local2.map(numeric_item, range(300), chunksize=chunksize) == reference


def test_one_worker_equals_two_workers(reference: list[Any]) -> None:
    with get_executor("local", workers=1) as one:
        assert one.map(numeric_item, range(300)) == reference


def test_dask_local_cluster_is_bit_identical(
    dask2: DaskExecutor, local2: LocalProcessExecutor, reference: list[Any]
) -> None:
    assert dask2.workers == 2
    on_dask = dask2.map(numeric_item, range(300))
    assert on_dask == local2.map(numeric_item, range(300)) == reference


def test_uneven_items_keep_their_order(local2: LocalProcessExecutor, dask2: DaskExecutor) -> None:
    expected = [uneven_item(i) for i in range(200)]
    assert local2.map(uneven_item, list(range(200))) == expected
    assert dask2.map(uneven_item, list(range(200))) == expected


def test_empty_input_gives_empty_output(local2: LocalProcessExecutor) -> None:
    assert local2.map(numeric_item, []) == []
    assert InProcessExecutor().map(numeric_item, []) == []


# --------------------------------------------------------------------------- errors


@pytest.mark.parametrize("kind", ["inprocess", "local", "dask"])
def test_a_raising_item_is_named(kind: str, local2: Any, dask2: Any) -> None:
    ex = {"inprocess": InProcessExecutor(), "local": local2, "dask": dask2}[kind]
    with pytest.raises(TaskFailed) as info:
        ex.map(boom_at_5, list(range(12)), label="delta", chunksize=3)
    err = info.value
    assert isinstance(err, GmeterError)
    assert err.index == 5 and err.item_repr == "5"
    assert "delta: work item #5 (5) failed: ValueError: item 5 is bad" in str(err)
    assert isinstance(err.original, ValueError) and err.__cause__ is err.original
    assert "boom_at_5" in err.remote_traceback
    # the executor is still usable afterwards
    assert ex.map(boom_at_5, [1, 2]) == [1, 2]


def test_an_unpicklable_exception_still_surfaces(local2: LocalProcessExecutor) -> None:
    with pytest.raises(TaskFailed, match=r"#2 \(2\).*Unpicklable: 1/2") as info:
        local2.map(raise_unpicklable, list(range(4)))
    assert isinstance(info.value.original, RemoteError)


def test_a_gmeter_error_keeps_its_exit_code() -> None:
    with pytest.raises(TaskFailed) as info:
        InProcessExecutor().map(usage_error_at_1, [0, 1])
    assert info.value.exit_code == 2


def test_long_item_reprs_are_truncated() -> None:
    with pytest.raises(TaskFailed) as info:
        InProcessExecutor().map(len, [1])  # len(1) raises TypeError
    assert info.value.item_repr == "1"
    long = ["x" * 500]
    with pytest.raises(TaskFailed) as info2:
        InProcessExecutor().map(int, long)
    assert len(info2.value.item_repr) == 80 and info2.value.item_repr.endswith("...")


def test_lambdas_are_refused_with_advice(local2: LocalProcessExecutor) -> None:
    with pytest.raises(TypeError, match="module-level function"):
        local2.map(lambda x: x, [1])


@pytest.mark.parametrize("kind", ["local", "dask"])
def test_bound_data_is_unpickled_once_per_worker(kind: str, local2: Any, dask2: Any) -> None:
    from functools import partial

    ex = {"local": local2, "dask": dask2}[kind]
    fn = partial(loads_so_far, Tracked(f"{kind}-{time.time()}"))
    # 40 one-item chunks, yet each worker unpickles the function (and its data) only once
    assert ex.map(fn, list(range(40)), chunksize=1) == [1] * 40


# --------------------------------------------------------------------------- dead workers


def test_local_pool_retries_a_dead_worker(
    tmp_path: Path, local2: LocalProcessExecutor, reference: list[Any]
) -> None:
    marker = str(tmp_path / "died")
    got = local2.map(die_once, [(i, marker) for i in range(40)], chunksize=4)
    assert Path(marker).exists(), "the worker must really have died once"
    assert got == reference[:40]


def test_dask_retries_a_dead_worker(
    tmp_path: Path, dask2: DaskExecutor, reference: list[Any]
) -> None:
    marker = str(tmp_path / "died")
    got = dask2.map(die_once, [(i, marker) for i in range(40)], chunksize=4)
    assert Path(marker).exists(), "the worker must really have died once"
    assert got == reference[:40]


def test_a_worker_that_keeps_dying_is_reported() -> None:
    with LocalProcessExecutor(workers=1, retries=1) as ex:
        with pytest.raises(WorkerLost, match=r"items #1\.\.#1 \(2 attempts\)"):
            ex.map(die_always, list(range(4)), chunksize=1, label="aiq")
        assert ex.map(boom_at_5, [1, 2]) == [1, 2]  # the pool is rebuilt


# --------------------------------------------------------------------------- progress, cancel


@pytest.mark.parametrize("kind", ["inprocess", "local", "dask"])
def test_progress_reaches_total_monotonically(kind: str, local2: Any, dask2: Any) -> None:
    ex = {"inprocess": InProcessExecutor(), "local": local2, "dask": dask2}[kind]
    calls: list[tuple[str, int, int]] = []
    ex.map(numeric_item, range(50), label="omega", progress=lambda *a: calls.append(a))
    done = [c[1] for c in calls]
    assert calls[-1] == ("omega", 50, 50)
    assert all(c[0] == "omega" and c[2] == 50 for c in calls)
    assert done == sorted(done) and len(calls) >= 2


class _Interrupt:
    """A progress callback that presses Ctrl-C after the first finished chunk."""

    def __call__(self, label: str, done: int, total: int) -> None:
        if done > 0:
            raise KeyboardInterrupt


@pytest.mark.parametrize("kind", ["local", "dask"])
def test_keyboard_interrupt_cancels_pending_work(kind: str, local2: Any, dask2: Any) -> None:
    ex = {"local": local2, "dask": dask2}[kind]
    t0 = time.perf_counter()
    with pytest.raises(KeyboardInterrupt):
        ex.map(slow_item, list(range(100)), chunksize=1, progress=_Interrupt())
    # 100 items x 0.2 s on 2 workers would take 10 s; cancelling returns after the first one
    assert time.perf_counter() - t0 < 5
    assert ex.map(numeric_item, range(3)) == [numeric_item(i) for i in range(3)]


# --------------------------------------------------------------------------- chunking policy


class _Done:
    """A finished "future" (hashable by identity, like real futures)."""

    def __init__(self, result: _ChunkResult) -> None:
        self.result = result


class _FakeBackend:
    """Runs chunks synchronously and pretends each item took ``t_item`` seconds."""

    def __init__(self, t_item: float) -> None:
        self.t_item = t_item
        self.sizes: list[int] = []

    def submit(self, packed: Any, start: int, chunk: list[Any]) -> _Done:
        self.sizes.append(len(chunk))
        res = _run_packed(packed, start, chunk)
        return _Done(res._replace(seconds=self.t_item * len(chunk)))

    def wait_any(self, futures: Any) -> Any:
        return list(futures)[:1]

    def outcome(self, future: Any) -> _ChunkResult:
        return future.result

    def abort(self, futures: Any) -> None:
        pass


@pytest.mark.parametrize(("t_item", "n"), [(1e-5, 100_000), (0.01, 2_000), (2.0, 50)])
def test_adaptive_chunks_bound_task_overhead(t_item: float, n: int) -> None:
    fake = _FakeBackend(t_item)
    out = _drive(
        fake,
        int,
        list(range(n)),
        label="x",
        progress=None,
        workers=4,
        chunksize=None,
        target_s=0.2,
        retries=0,
    )
    assert out == list(range(n)) and sum(fake.sizes) == n
    # At ~1 ms overhead a task, overhead / work = tasks * 1e-3 / (n * t_item) must stay < 5 %.
    assert len(fake.sizes) * 1e-3 / (n * t_item) < 0.05
    # ... and the tail stays balanced: no chunk holds more than a 1/8 of the work (2 x 4 workers)
    assert max(fake.sizes) <= -(-n // 8)


def test_results_pickle_round_trip() -> None:
    res = _run_chunk(numeric_item, 0, [0, 1])
    assert pickle.loads(pickle.dumps(res)) == res


# --------------------------------------------------------------------------- factory


def test_get_executor_kinds_and_usage_errors() -> None:
    with get_executor("inprocess") as ex:
        assert ex.kind == "inprocess" and ex.workers == 1
    with get_executor(None, workers=3) as ex:
        assert ex.kind == "local" and ex.workers == 3
    with pytest.raises(UsageError, match="unknown executor"):
        get_executor("spark")
    with pytest.raises(UsageError, match="only applies to --executor dask"):
        get_executor("local", scheduler="tcp://127.0.0.1:8786")
    with pytest.raises(UsageError, match=">= 1"):
        get_executor("local", workers=0)


def test_unreachable_scheduler_is_a_clear_error() -> None:
    with pytest.raises(ExecutorError, match="could not reach the Dask scheduler") as info:
        get_executor("dask", scheduler="tcp://127.0.0.1:1", connect_timeout="1s")
    assert "dask scheduler" in info.value.hint


# --------------------------------------------------------------------------- Δ matrices

DOMAINS = Path("/work/shared/data/gindex/domains")


def delta_pair(flows: list[Any], ij: tuple[int, int]) -> float:
    """Δ of one ordered pair of normalised flows: the work item of a Δ matrix."""
    from pipeline.metrics.gindex.delta import delta_value

    i, j = ij
    return delta_value(flows[i], flows[j])


@pytest.fixture(scope="module")
def real_flows() -> list[Any]:
    import json

    files = sorted(DOMAINS.glob("*/*.json"))
    assert len(files) >= 30, "the g-index domain flows are part of the shared data"
    return [json.loads(f.read_text(encoding="utf-8")) for f in files]


@pytest.mark.parametrize("convention", ["reference", "paper"])
def test_delta_matrix_is_identical_on_every_executor(
    convention: str, real_flows: list[Any], local2: LocalProcessExecutor, dask2: DaskExecutor
) -> None:
    from functools import partial

    from pipeline.metrics.gindex.delta import delta_matrix
    from pipeline.metrics.gindex.flows import normalise_flow

    normal = [normalise_flow(f, convention) for f in real_flows]
    n = len(normal)
    pairs = [(i, j) for i in range(n) for j in range(n)]
    fn = partial(delta_pair, normal)  # the flows travel once per chunk, with the function
    mats = {
        kind: np.array(ex.map(fn, pairs, label="delta")).reshape(n, n)
        for kind, ex in [("inprocess", InProcessExecutor()), ("local", local2), ("dask", dask2)]
    }
    assert mats["inprocess"].tobytes() == mats["local"].tobytes() == mats["dask"].tobytes()
    # ... and equal to the in-process kernel on every pair it computes directly (i <= j)
    kernel = np.array(delta_matrix(real_flows, convention=convention))
    upper = np.triu_indices(n)
    assert mats["local"][upper].tobytes() == kernel[upper].tobytes()
    assert 0 < float(np.mean(kernel)) < 1


# --------------------------------------------------------------------------- AIQ runs


def _aiq_items(n_programs: int) -> list[Any]:
    from pipeline.metrics.aiq.bf import BFConfig
    from pipeline.metrics.aiq.runs import RunItem, run_seed
    from pipeline.metrics.aiq.sampler import sample_block

    programs = sample_block(ROOT, n_programs, BFConfig()).programs
    # antithetic pairs with per-(program, sign) seeds, as the stratified estimator runs them
    return [RunItem(p, s, run_seed(ROOT, k, s)) for k, p in enumerate(programs) for s in (1, -1)]


def test_aiq_runs_are_identical_on_every_executor(
    local2: LocalProcessExecutor, dask2: DaskExecutor
) -> None:
    """The AIQ engine's work item (plain-Python agent and machine) on the three executors."""
    from functools import partial

    from pipeline.lab.aiq.runner import execute_run
    from pipeline.metrics.aiq.runs import AIQSettings

    items = _aiq_items(8)
    fn = partial(
        execute_run, agent="q-lambda", settings=AIQSettings(episode_length=100), record=True,
        plain=True,
    )  # fmt: skip
    runs = {
        kind: ex.map(fn, items, label="aiq")
        for kind, ex in [("inprocess", InProcessExecutor()), ("local", local2), ("dask", dask2)]
    }
    assert runs["inprocess"] == runs["local"] == runs["dask"]
    scores = np.array([r.score for r in runs["local"]])
    assert np.array([r.score for r in runs["dask"]]).tobytes() == scores.tobytes()
    assert all(r.actions for r in runs["dask"])  # the traces came back too


@pytest.mark.slow  # each fresh worker process loads the numba kernels (seconds each)
def test_aiq_compiled_runs_are_identical_on_every_executor(
    local2: LocalProcessExecutor, dask2: DaskExecutor
) -> None:
    from pipeline.lab.aiq.runner import run_agent_on_programs
    from pipeline.metrics.aiq.runs import AIQSettings

    items = _aiq_items(12)
    args = (
        [it.program for it in items], AIQSettings(episode_length=200),
        [it.seed for it in items], [it.sign for it in items],
    )  # fmt: skip
    runs = {
        kind: run_agent_on_programs("q-lambda", *args, record=True, executor=ex)
        for kind, ex in [("inprocess", InProcessExecutor()), ("local", local2), ("dask", dask2)]
    }
    assert runs["inprocess"] == runs["local"] == runs["dask"]
