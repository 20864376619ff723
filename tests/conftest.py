"""Shared fixtures: copies of the good fixture benchmarks to mutate, and a scratch store."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

FIXTURES = Path(__file__).parent / "fixtures"
GOOD = FIXTURES / "good"


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
