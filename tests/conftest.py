"""Shared fixtures: copies of the good fixture benchmarks to mutate, and a scratch store."""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

FIXTURES = Path(__file__).parent / "fixtures"
GOOD = FIXTURES / "good"

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
