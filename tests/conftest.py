"""Shared fixtures: copies of the good fixture benchmarks to mutate, and a scratch store."""

from __future__ import annotations

import os
import shutil
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

FIXTURES = Path(__file__).parent / "fixtures"
GOOD = FIXTURES / "good"

# pytest-xdist starts its workers with COLUMNS and LINES set (80 x 24): the CLI's consoles,
# made at import, would then keep 80 columns whatever a test asks for (CliRunner's env), unlike
# a run in one process. A worker's environment is made like that of a plain run.
if os.environ.get("PYTEST_XDIST_WORKER"):
    for _name in ("COLUMNS", "LINES"):
        os.environ.pop(_name, None)
    # numba's on-disk cache (cache=True kernels) is not safe for processes compiling the same
    # kernels at once: on a fresh checkout, or after a kernel changed, two workers writing one
    # index made AIQ tests fail with numba's SystemError. Each worker (and the commands it
    # starts) gets its own cache, kept in the environment so later runs start warm. Tests that
    # import ``tests.conftest`` run this file a second time: the folder is named once.
    _numba = Path(os.environ.get("NUMBA_CACHE_DIR") or Path(sys.prefix) / "numba-cache")
    if _numba.name != os.environ["PYTEST_XDIST_WORKER"]:
        _numba = _numba / os.environ["PYTEST_XDIST_WORKER"]
        os.environ["NUMBA_CACHE_DIR"] = str(_numba)
        # caches written in the folder named twice (before this was so) are taken over
        for _old in (_numba / _numba.name).glob("*"):
            if not (_numba / _old.name).exists():
                _old.rename(_numba / _old.name)
        if (_numba / _numba.name).is_dir() and not any((_numba / _numba.name).iterdir()):
            (_numba / _numba.name).rmdir()
    # One xdist worker per core, like one pool worker per core: the same thread caps as a pool
    # worker gets (pipeline.executor.WORKER_ENV). OpenBLAS's own threads in two workers on two
    # cores made each eigh of the factor analyses 3-7x slower in CPU as well as in time. Set
    # before numpy is first imported (no plugin imports it), so OpenBLAS starts with one thread;
    # the commands and pools a test starts inherit them. An explicit setting is kept.
    from pipeline.executor.base import WORKER_ENV

    for _name, _value in WORKER_ENV.items():
        os.environ.setdefault(_name, _value)



def _copy_atomic(src: Path, dest: Path) -> None:
    """Copy a file so that ``dest`` is never seen half written (an interrupted run included)."""
    tmp = dest.with_name(f"{dest.name}.tmp{os.getpid()}")
    shutil.copy2(src, tmp)
    os.replace(tmp, dest)


def _share_numba_caches(root: Path) -> None:
    """Give every worker's numba cache (``root/gw*``) the kernels another worker compiled.

    Run after a parallel session, when no worker writes: a file lands on either worker from
    one run to the next, and its kernels were compiled again (seconds each) whenever it moved.
    Each worker's cache is seeded from the others (:func:`seed_numba_cache`: a kernel's data
    files before its index, a worker's own index kept, a damaged kernel left out).
    """
    workers = sorted(p for p in root.glob("gw*") if p.is_dir())
    for src in workers:
        for dest in workers:
            if dest != src:
                seed_numba_cache(src, dest)


def seed_numba_cache(seed: Path, cache: Path) -> list[str]:
    """Copy into ``cache`` each kernel of the numba cache ``seed`` that ``cache`` lacks.

    ``make install`` compiles the AIQ kernels once into a seed (``pipeline.metrics.aiq.warmup``);
    without it, each worker compiled them itself on a fresh checkout (~20 s of each worker's
    time, on both cores at once). numba keys a cached kernel by a hash of its source file, its
    bytecode and the CPU, not by the cache folder, so a worker loads a copied kernel as its
    own; one whose source changed since is stale, and numba compiles it again. A kernel whose
    index or data do not read back (a damaged file) is not copied: the worker compiles it.
    Returns the names of the indexes copied.
    """
    import pickle

    copied: list[str] = []
    for index in sorted(seed.glob("*/*.nbi")):
        target = cache / index.relative_to(seed)
        if target.exists():
            continue
        try:  # as numba reads them: its version, then (source stamp, {key: data file})
            with index.open("rb") as f:
                pickle.load(f)
                _stamp, overloads = pickle.loads(f.read())
            data = [index.parent / name for name in overloads.values()]
            for path in data:
                pickle.loads(path.read_bytes())
        except Exception:  # any damage: leave the kernel to numba to compile
            continue
        target.parent.mkdir(parents=True, exist_ok=True)
        for path in data:
            _copy_atomic(path, target.parent / path.name)
        _copy_atomic(index, target)
        copied.append(index.name)
    return copied


#: Where ``make install`` compiles the AIQ kernels (``pipeline.metrics.aiq.warmup``).
NUMBA_SEED = Path(sys.prefix) / "numba-cache" / "seed"

if os.environ.get("PYTEST_XDIST_WORKER"):
    # After the thread caps above: reading the seed back imports numba, hence numpy.
    try:
        seed_numba_cache(NUMBA_SEED, Path(os.environ["NUMBA_CACHE_DIR"]))
    except Exception:  # a cache not seeded costs compilations, nothing else
        pass


def pytest_sessionfinish(session: pytest.Session) -> None:
    if os.environ.get("PYTEST_XDIST_WORKER") or not getattr(
        session.config.option, "numprocesses", None
    ):
        return
    try:
        _share_numba_caches(
            Path(os.environ.get("NUMBA_CACHE_DIR") or Path(sys.prefix) / "numba-cache"))
    except OSError:  # a cache not shared costs the next run its compilations, nothing else
        pass


# Hypothesis's timing checks (a slow example, slow input generation) read the wall clock: on a
# shared machine, with the files running in parallel, they fail tests whose properties hold.
# Speed belongs in make bench; every property is still checked on the same number of examples.
try:
    from hypothesis import HealthCheck, settings

    settings.register_profile("gmeter", deadline=None,
                              suppress_health_check=[HealthCheck.too_slow])  # fmt: skip
    settings.load_profile("gmeter")
except ImportError:  # pragma: no cover - hypothesis is a test dependency
    pass

# Builds keep their chart cache next to the store; tests put stores in temporary folders, so
# they share the user's cache instead (drawing every chart of every test site cold is slow).
os.environ.setdefault("GMETER_CACHE_DIR", str(
    Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "gmeter"))


@pytest.fixture
def subs(tmp_path: Path) -> Path:
    """A writable copy of tests/fixtures/good as a submissions folder."""
    dest = tmp_path / "submissions"
    shutil.copytree(GOOD, dest)
    return dest


@pytest.fixture
def db(tmp_path: Path) -> Path:
    """A path for a scratch DuckDB store."""
    return tmp_path / "store" / "gmeter.duckdb"


@pytest.fixture(scope="session")
def local_pool() -> Iterator[Any]:
    """One local process pool (2 workers) for the tests that only need *a* pool.

    Starting a pool and warming its workers (imports, numba kernels loaded from their cache)
    costs seconds; tests of the pool itself (retries, dying workers) make their own.
    """
    from pipeline.executor import get_executor

    with get_executor("local", workers=2) as ex:
        yield ex


@pytest.fixture(scope="session", autouse=True)
def _gmeter_app_converted_once() -> Iterator[None]:
    """``CliRunner.invoke(app, ...)`` converts gmeter's app to click commands once a session.

    Typer's runner converts the whole app (every command's signature) on every call: 30-50 ms,
    a few hundred calls. The commands are made from the same functions each time and each call
    still parses its own command line in a fresh click context, so the tests see the same CLI.
    Other Typer apps (the tests' own) are converted on every call as before.
    """
    import typer.testing

    real = getattr(typer.testing, "_get_command", None)
    if real is None:  # another Typer: nothing to share
        yield
        return
    made: dict[str, Any] = {}

    def get_command(app: Any) -> Any:
        from cli.app import app as gmeter

        if app is not gmeter:
            return real(app)
        if "gmeter" not in made:
            made["gmeter"] = real(app)
        return made["gmeter"]

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(typer.testing, "_get_command", get_command)
        yield
