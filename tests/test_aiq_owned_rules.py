"""AIQ: the benchmark owns the run seed and the number of runs (issue 20 item 3).

Gaming test: an honest bundle run with the benchmark's seed and samples validates; every value
a bundle could set differently (seed, samples, run seeds, dropping runs) is refused with the
file and field named and a fix saying the benchmark owns it.
"""

from __future__ import annotations

import shutil
import tomllib
from pathlib import Path

import pytest

from pipeline.lab.aiq.run import owned_seed_and_samples, run_to_bundle
from tests.aiq_fixtures import small_benchmark

ROOT = Path(__file__).resolve().parents[1]


def _errors(bench_dir: Path, name: str) -> list:
    from pipeline.validate import load_benchmark

    loaded = load_benchmark(bench_dir.resolve())
    return [p for b in loaded.bundles if b.path.name == name for p in b.problems
            if p.severity == "error" and not p.file.endswith("submission.toml")]  # fmt: skip


@pytest.fixture(scope="module")
def seeded(tmp_path_factory) -> Path:
    bench = small_benchmark(tmp_path_factory.mktemp("b") / "aiq-owned", 600, seed=7,
                            samples=40, method="mc-antithetic")  # fmt: skip
    run_to_bundle("freq", 100, None, None, bench / "honest", benchmark=bench)
    return bench


def _variant(bench: Path, name: str) -> Path:
    out = bench / name
    if out.exists():
        shutil.rmtree(out)
    shutil.copytree(bench / "honest", out)
    return out


def test_the_default_run_uses_the_benchmarks_seed_and_samples(seeded):
    log = tomllib.loads((seeded / "honest" / "aiq.toml").read_text())
    assert (log["seed"], log["samples"]) == (7, 40)
    assert _errors(seeded, "honest") == []


@pytest.mark.parametrize(
    ("field", "value"), [("seed", 8), ("seed", 0), ("samples", 20), ("samples", 80)]
)
def test_another_seed_or_sample_size_in_aiq_toml_is_refused(seeded, field, value):
    out = _variant(seeded, f"v-{field}-{value}")
    text = (out / "aiq.toml").read_text()
    log = tomllib.loads(text)
    text = text.replace(f"{field} = {log[field]}\n", f"{field} = {value}\n", 1)
    (out / "aiq.toml").write_text(text)
    errs = [p for p in _errors(seeded, out.name) if p.field == field]
    assert errs and all("benchmark owns" in p.message for p in errs)
    assert all(p.file.endswith("aiq.toml") for p in errs)


def test_a_bundle_run_with_another_seed_is_refused(seeded):
    notes: list[str] = []
    run_to_bundle("freq", 100, None, 8, seeded / "shopped", benchmark=seeded, notify=notes.append)
    assert len(notes) == 1 and "--seed" in notes[0]
    fields = {p.field for p in _errors(seeded, "shopped")}
    assert "seed" in fields and any(f.endswith(": seed") for f in fields)


def test_a_bundle_with_fewer_runs_is_refused(seeded):
    notes: list[str] = []
    run_to_bundle("freq", 100, 20, None, seeded / "short", benchmark=seeded, notify=notes.append)
    assert len(notes) == 1 and "--samples" in notes[0]
    errs = _errors(seeded, "short")
    assert {"samples", "-"} <= {p.field for p in errs}


def test_an_undeclared_seed_is_the_submitters_choice_with_a_warning():
    samples, seed, notes = owned_seed_and_samples({"samples": 50}, None, 9)
    assert (samples, seed, notes) == (50, 9, [])
    assert owned_seed_and_samples({"samples": 50, "seed": 3}, None, None) == (50, 3, [])
    assert len(owned_seed_and_samples({"samples": 50, "seed": 3}, 10, 4)[2]) == 2


@pytest.mark.parametrize("bench", ["aiq-bf5", "aiq-bf5-el10000"])
def test_committed_benchmarks_own_their_seed_and_samples(bench):
    s = tomllib.loads((ROOT / "submissions" / bench / "benchmark.toml").read_text())["aiq"]
    assert isinstance(s.get("seed"), int)
    for log_path in (ROOT / "submissions" / bench).glob("*/aiq.toml"):
        log = tomllib.loads(log_path.read_text())
        assert (log["seed"], log["samples"]) == (s["seed"], s["samples"]), log_path
