"""AIQ bundles, replay verification, the aiq track and the run/verify commands."""

from __future__ import annotations

import gzip
import math
import tomllib
from pathlib import Path

import pytest
from aiq_fixtures import small_benchmark
from typer.testing import CliRunner

from cli.app import app
from pipeline.inputs import BenchmarkInput, BundleInput, FileSet
from pipeline.lab.aiq.run import verify_dir
from pipeline.tracks.aiq.settings import AIQBenchmarkSettings
from pipeline.tracks.aiq.track import TRACK
from pipeline.tracks.aiq.verify import verify_files
from pipeline.tracks.base import ScoreContext


def fileset(folder: Path) -> FileSet:
    files = {
        p.relative_to(folder).as_posix(): p.read_bytes()
        for p in sorted(folder.rglob("*"))
        if p.is_file()
        and not any(part in ("reference",) for part in p.relative_to(folder).parts[:0])
    }
    return FileSet(folder.name, files)


def bench_input(folder: Path) -> BenchmarkInput:
    manifest = tomllib.loads((folder / "benchmark.toml").read_text())
    settings = AIQBenchmarkSettings.model_validate(manifest["aiq"]).model_dump()
    files = {
        p.relative_to(folder).as_posix(): p.read_bytes()
        for p in folder.rglob("*")
        if p.is_file() and (p.parent == folder or "reference" in p.parts)
    }
    return BenchmarkInput(
        folder.name, "aiq", "1.0.0", manifest, settings, FileSet(folder.name, files)
    )


def bundle_input(folder: Path) -> BundleInput:
    manifest = tomllib.loads((folder / "submission.toml").read_text())
    return BundleInput(folder.name, folder.parent.name, manifest, {}, fileset(folder))


@pytest.fixture(scope="module")
def bench(tmp_path_factory) -> Path:
    folder = small_benchmark(tmp_path_factory.mktemp("b") / "aiq-small")
    runner = CliRunner()
    for agent, traces in (("freq", True), ("random", True), ("q0", False)):
        args = [
            "aiq",
            "run",
            "--agent",
            agent,
            "--episode-length",
            "100",
            "--samples",
            "200",
            "--seed",
            "3",
            "--out",
            str(folder / f"{agent}-bundle"),
            "--executor",
            "inprocess",
        ]
        res = runner.invoke(app, args + (["--traces"] if traces else []))
        assert res.exit_code == 0, res.output
        assert "AIQ" in res.stdout
    return folder


def test_bundle_files(bench: Path) -> None:
    b = bench / "freq-bundle"
    log = tomllib.loads((b / "aiq.toml").read_text())
    assert log["agent"] == "freq,epsilon=0.07" and log["episode_length"] == 100
    assert log["result"]["stages"] == [0, 60, 120, 200]
    header = (b / "samples.csv").read_text().splitlines()[0]
    assert header == "program_id,program,stratum,sign,seed,reward,steps,cycles,status,stage,weight"
    traces = gzip.decompress((b / "traces" / "actions.csv.gz").read_bytes()).decode()
    first = traces.splitlines()[1].split(",")
    assert len(first[2]) == 100 and set(first[2]) <= set("01234")
    assert (b / "submission.toml").is_file()
    assert not (bench / "q0-bundle" / "traces").exists()


def test_verify_command(bench: Path) -> None:
    res = CliRunner().invoke(app, ["aiq", "verify", str(bench / "freq-bundle")])
    assert res.exit_code == 0, res.output
    assert "verified" in res.stdout
    res = CliRunner().invoke(app, ["aiq", "verify", str(bench / "q0-bundle")])
    assert res.exit_code == 0 and "reported" in res.stdout


def _forge(src: Path, dst: Path, line: int, edit) -> Path:
    import shutil

    shutil.copytree(src, dst)
    rows = (dst / "samples.csv").read_text().splitlines()
    rows[line - 1] = edit(rows[line - 1])
    (dst / "samples.csv").write_text("\n".join(rows) + "\n")
    return dst


def _bump_reward(row: str) -> str:
    cells = row.split(",")
    i = -6  # reward is the 6th cell from the end (program may contain commas)
    cells[i] = repr(float(cells[i]) + 0.5)
    return ",".join(cells)


def test_forged_reward_fails_with_file_and_line(bench: Path) -> None:
    forged = _forge(bench / "freq-bundle", bench / "forged", 5, _bump_reward)
    result = verify_dir(forged)
    assert not result.verified
    [p] = [p for p in result.problems if p.severity == "error"]
    assert p.file.endswith("forged/samples.csv") and p.field == "line 5: reward"
    assert "does not replay" in p.message
    import subprocess
    import sys

    proc = subprocess.run(
        [sys.executable, "-m", "cli", "aiq", "verify", str(forged)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert proc.returncode == 1
    assert "samples.csv: line 5: reward" in proc.stderr


def test_dropped_run_is_detected(bench: Path) -> None:
    import shutil

    dst = bench / "dropped"
    shutil.copytree(bench / "freq-bundle", dst)
    rows = (dst / "samples.csv").read_text().splitlines()
    # drop both runs of the first program
    pid = rows[1].split(",")[0]
    kept = [r for r in rows if r.split(",")[0] != pid]
    (dst / "samples.csv").write_text("\n".join(kept) + "\n")
    problems = TRACK.validate_bundle(bundle_input(dst), bench_input(bench))
    assert any("skipped" in p.message for p in problems)
    shutil.rmtree(dst)


def test_track_validation(bench: Path) -> None:
    b = bench_input(bench)
    assert TRACK.validate_benchmark(b) == []
    found = TRACK.validate_bundle(bundle_input(bench / "freq-bundle"), b)
    # this benchmark declares no [aiq] seed: only a warning that the seed is the submitter's
    assert [(p.field, p.severity) for p in found] == [("seed", "warning")]
    import shutil

    dst = bench / "other-settings"
    shutil.copytree(bench / "freq-bundle", dst)
    text = (dst / "aiq.toml").read_text()
    text = text.replace("num_symbols = 5", "num_symbols = 3").replace(
        "episode_length = 100", "episode_length = 150"
    )
    (dst / "aiq.toml").write_text(text)
    rows = (dst / "samples.csv").read_text().replace(",ok,", ",fine,", 1)
    (dst / "samples.csv").write_text(rows)
    problems = TRACK.validate_bundle(bundle_input(dst), b)
    fields = {p.field for p in problems}
    assert "num_symbols" in fields and "episode_length" in fields
    assert any("status" in p.field for p in problems)
    shutil.rmtree(dst)


def test_track_score(bench: Path) -> None:
    b = bench_input(bench)
    bundles = [bundle_input(bench / n) for n in ("freq-bundle", "random-bundle", "q0-bundle")]
    result = TRACK.score(b, bundles, ScoreContext())
    rows = {r.bundle: r for r in result.rows}
    assert set(rows) == {"freq-bundle", "random-bundle", "q0-bundle"}
    assert rows["freq-bundle"].verified and rows["random-bundle"].verified
    assert not rows["q0-bundle"].verified
    assert rows["q0-bundle"].details["status"] == "reported"
    log = tomllib.loads((bench / "freq-bundle" / "aiq.toml").read_text())
    assert rows["freq-bundle"].value == log["result"]["aiq"]  # recomputed exactly
    assert rows["freq-bundle"].ci_low < rows["freq-bundle"].value < rows["freq-bundle"].ci_high
    assert rows["freq-bundle"].metric == "aiq"
    assert rows["freq-bundle"].value > rows["random-bundle"].value
    assert {"aiq_by_agent", "aiq_vs_episode_length", "aiq_program_lengths"} <= set(result.charts)
    lengths = result.charts["aiq_program_lengths"]["records"]
    assert {r["series"] for r in lengths} == {"sampled", "accepted"}
    per = result.charts["aiq_by_agent"]["records"]
    assert all(math.isfinite(r["aiq"]) for r in per)


def test_forged_bundle_scores_unverified(bench: Path) -> None:
    forged = bench / "forged"
    if not forged.exists():
        _forge(bench / "freq-bundle", forged, 5, _bump_reward)
    result = TRACK.score(bench_input(bench), [bundle_input(forged)], ScoreContext())
    [row] = result.rows
    assert not row.verified and row.details["status"] == "replay failed"
    assert any("replay failed" in n for n in result.notes)


def test_verify_without_benchmark(tmp_path: Path, bench: Path) -> None:
    import shutil

    dst = tmp_path / "alone"
    shutil.copytree(bench / "random-bundle", dst)
    assert verify_dir(dst).verified
    assert verify_files(fileset(dst)).replayed > 0


def test_run_errors(bench: Path) -> None:
    res = CliRunner().invoke(
        app,
        [
            "aiq",
            "run",
            "--agent",
            "nope",
            "--out",
            str(bench / "x"),
            "--samples",
            "20",
            "--executor",
            "inprocess",
        ],
    )
    assert res.exit_code != 0


def test_compare_and_sample_commands(bench: Path, tmp_path: Path) -> None:
    runner = CliRunner()
    res = runner.invoke(
        app,
        [
            "aiq",
            "compare",
            "--agent",
            "freq",
            "--versus",
            "random",
            "--episode-length",
            "100",
            "--samples",
            "200",
            "--seed",
            "2",
            "--benchmark",
            str(bench),
            "--executor",
            "inprocess",
        ],
    )
    assert res.exit_code == 0, res.output
    assert "difference:" in res.stdout
    res = runner.invoke(
        app,
        [
            "aiq",
            "sample",
            "--count",
            "30",
            "--seed",
            "4",
            "--out",
            str(tmp_path / "s"),
            "--executor",
            "inprocess",
        ],
    )
    assert res.exit_code == 0, res.output
    assert (tmp_path / "s" / "programs.csv.gz").is_file()
    assert "30 programs accepted" in res.stdout


@pytest.mark.parametrize(
    ("edit", "field", "message"),
    [
        (("samples = 200", "samples = 18446744073709551616"), "samples",
         "is 18446744073709551616, beyond the largest accepted integer 2^64 - 1"),
        (("episode_length = 100", "episode_length = -5"), "episode_length", "outside 1..10000000"),
        (("discount = 1.0", "discount = nan"), "discount", "finite"),
        (("seed = 3", "seed = 3.5"), "seed", "whole number"),
        (("max_steps = 1000", "max_steps = 1000000000"), "max_steps", "outside 1..1000000"),
        (("[result]", "bogus = 1\n[result]"), "bogus", "not a known field"),
        (("[result]", "[result]\npairs = -1"), "result.pairs", "outside"),
    ],
)  # fmt: skip
def test_log_numbers_have_domains(bench: Path, edit, field: str, message: str) -> None:
    import shutil

    dst = bench.parent / f"dom-{field}"
    shutil.rmtree(dst, ignore_errors=True)
    shutil.copytree(bench / "freq-bundle", dst)
    log = (dst / "aiq.toml").read_text()
    if field == "result.pairs":
        log = "\n".join(x for x in log.splitlines() if not x.startswith("pairs ="))
    assert edit[0] in log
    (dst / "aiq.toml").write_text(log.replace(edit[0], edit[1], 1))
    b, bi = bundle_input(dst), bench_input(bench)
    problems = [p for p in TRACK.validate_bundle(b, bi) if p.field == field]
    assert problems and message in problems[0].message and problems[0].file.endswith("aiq.toml")
    rec = TRACK.score(bi, [b], ScoreContext())  # never a scoring failure: a note instead
    assert not rec.rows and any(field in n for n in rec.notes)


def test_benchmark_settings_have_domains() -> None:
    from pydantic import ValidationError

    for bad in ({"work_tape_len": 10**9}, {"samples": 2**64}, {"discount": float("nan")},
                {"episode_lengths": [0]}, {"max_steps": 10**7}, {"sampler_seed": 2**64}):
        with pytest.raises(ValidationError):
            AIQBenchmarkSettings.model_validate(bad)
