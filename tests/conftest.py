"""Shared fixtures: copies of the good fixture benchmarks to mutate, and a scratch store."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

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
