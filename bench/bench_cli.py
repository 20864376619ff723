"""CLI start-up: `gmeter --help` must stay quick (it imports no heavy library)."""

from __future__ import annotations

import subprocess
import sys


def _run(args: list[str]) -> None:
    subprocess.run([sys.executable, *args], check=True, capture_output=True, timeout=120)


def benchmarks() -> list[dict]:
    return [
        {
            "name": "gmeter --help start-up",
            "run": lambda: _run(["-m", "cli", "--help"]),
            "baseline": lambda: _run(["-c", "import duckdb, numpy, altair, pydantic"]),
            "repeat": 7,
            "target": "faster than importing the heavy libraries it avoids (ratio > 1)",
            "check": lambda med, base: base is not None and med < base,
            "note": "baseline = a bare interpreter importing duckdb, numpy, altair and pydantic",
        },
    ]
