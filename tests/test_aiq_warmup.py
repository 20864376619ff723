"""The AIQ kernels compiled ahead (``make install``) seed the test workers' numba caches."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from pipeline.metrics.aiq.warmup import compile_kernels
from tests.conftest import seed_numba_cache

ROOT = Path(__file__).resolve().parents[1]


def _own_cache() -> Path:
    """This worker's numba cache, with every kernel of the warm-up in it."""
    if not os.environ.get("NUMBA_CACHE_DIR"):
        pytest.skip("run by make test's workers, each with its own NUMBA_CACHE_DIR")
    compile_kernels()  # loaded from the cache, or compiled into it
    return Path(os.environ["NUMBA_CACHE_DIR"])


def _run(code: str, cache: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "NUMBA_CACHE_DIR": str(cache), "NUMBA_DEBUG_CACHE": "1"}
    return subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True,
                          text=True, timeout=300, check=False)  # fmt: skip


def test_a_seeded_cache_loads_every_kernel_and_compiles_none(tmp_path: Path) -> None:
    cache = tmp_path / "gw9"
    copied = seed_numba_cache(_own_cache(), cache)
    assert copied and all(name.endswith(".nbi") for name in copied)
    assert seed_numba_cache(_own_cache(), cache) == [], "a kernel already there is kept"
    got = _run("from pipeline.metrics.aiq.warmup import compile_kernels; compile_kernels()",
               cache)  # fmt: skip
    assert got.returncode == 0, got.stderr
    log = got.stdout + got.stderr
    loaded = [line for line in log.splitlines() if f"data loaded from '{cache}/" in line]
    for module in {name.split(".")[0] for name in copied}:  # each module's entry points ...
        assert any(f"/{module}." in line for line in loaded), module
    assert "saved" not in log, "... came from the seed: nothing was compiled again"


def test_a_damaged_seed_kernel_is_not_copied_and_numba_compiles_it(tmp_path: Path) -> None:
    seed = tmp_path / "seed"
    for index in _own_cache().glob("*/sampler_fast.*.nbi"):
        (seed / index.parent.name).mkdir(parents=True, exist_ok=True)
        for path in index.parent.glob(index.name[: -len(".nbi")] + ".*"):
            shutil.copy2(path, seed / index.parent.name / path.name)
    sub = next(seed.iterdir())

    def files(kernel: str, suffix: str) -> list[Path]:
        return sorted(sub.glob(f"sampler_fast.{kernel}-*{suffix}"))

    jumps, draw, classify = files("_jumps", ".nbi")[0], files("_draw", ".nbc"), files(
        "_classify", ".nbc")  # fmt: skip
    jumps.write_bytes(jumps.read_bytes()[:-9])  # an index cut short
    draw[0].write_bytes(b"not a pickle")  # data that does not read back
    classify[0].unlink()  # an index whose data is gone
    cache = tmp_path / "gw9"
    copied = seed_numba_cache(seed, cache)
    assert copied, "the sound kernels are copied"
    for kernel in ("_jumps", "_draw", "_classify"):
        assert not any(kernel in name for name in copied), kernel
        assert not list(cache.glob(f"*/sampler_fast.{kernel}-*")), kernel
    got = _run(
        "import numpy as np\n"
        "from pipeline.metrics.aiq.bf_fast import program_arrays\n"
        "from pipeline.metrics.aiq.sampler_fast import _jumps\n"
        "ops, jump = program_arrays('+[>[-]<]')\n"
        "assert _jumps(ops).tolist() == jump.tolist()\n",
        cache,
    )
    assert got.returncode == 0, got.stderr
    assert f"index saved to '{cache}" in got.stdout + got.stderr, "compiled, then cached"
