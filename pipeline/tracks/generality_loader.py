"""The folder loader of ``gmeter generality --benchmark``: a benchmark folder, no store.

Both functions stand on the shared, hostile-input-safe reader and validator
(:mod:`pipeline.bundles`, :mod:`pipeline.validate`), so the ad-hoc command checks a folder
exactly as ``gmeter validate`` and ``gmeter ingest`` do. Re-exported by
:mod:`pipeline.tracks.generality`.
"""

from __future__ import annotations

from pathlib import Path

from pipeline.errors import GmeterError, Problem, ValidationFailed
from pipeline.tracks.base import BenchmarkInput, BundleInput, FileSet


def _fail(problems: list[Problem], what: str) -> ValidationFailed:
    errors = [p for p in problems if p.severity == "error"]
    return ValidationFailed(errors, f"{what}: " + "; ".join(str(p) for p in errors))


def load_folder(root: Path) -> tuple[FileSet, list[FileSet]]:
    """Read a benchmark folder into memory: its own files and one FileSet per bundle.

    Files are read by :func:`pipeline.bundles.read_folder` (regular files only: symbolic
    links, special files and oversized files are refused); bundles are the immediate
    sub-folders holding ``submission.toml``. Manifests are not checked here.

    Raises
    ------
    GmeterError
        No ``benchmark.toml``, or a file that may not be read (the message names it).
    """
    from pipeline.bundles import display, is_bundle_dir, read_folder

    root = root.resolve()
    if not (root / "benchmark.toml").is_file():
        raise GmeterError(f"{root} has no benchmark.toml", hint="give a benchmark folder")
    bundle_dirs = sorted(p for p in root.iterdir()
                         if p.is_dir() and not p.is_symlink() and is_bundle_dir(p))
    label = display(root)
    bench = read_folder(root, label, skip_dirs=[p.name for p in bundle_dirs])
    bundles = [read_folder(p, f"{label}/{p.name}") for p in bundle_dirs]
    problems = bench.problems + [q for b in bundles for q in b.problems]
    if problems:
        raise _fail(problems, f"{root.name} cannot be read")
    return (FileSet(label, bench.files),
            [FileSet(f"{label}/{p.name}", b.files)
             for p, b in zip(bundle_dirs, bundles, strict=True)])


def benchmark_inputs(root: Path) -> tuple[BenchmarkInput, list[BundleInput]]:
    """Load and fully validate a generality benchmark folder (no store involved).

    Raises
    ------
    GmeterError
        No ``benchmark.toml``, or not a generality benchmark.
    ValidationFailed
        Every problem of the benchmark and its bundles, at once.
    """
    from pipeline.validate import load_benchmark

    root = root.resolve()
    if not (root / "benchmark.toml").is_file():
        raise GmeterError(f"{root} has no benchmark.toml", hint="give a benchmark folder")
    loaded = load_benchmark(root)
    if loaded.track is not None and loaded.track != "generality":
        raise GmeterError(
            f"{root.name} is not a generality benchmark",
            hint='give a folder whose benchmark.toml says track = "generality"',
        )
    problems = loaded.problems + [p for b in loaded.bundles for p in b.problems]
    if any(p.severity == "error" for p in problems) or loaded.input is None:
        raise _fail(problems, f"{root.name}: the benchmark has problems")
    bundles = [b.input for b in loaded.bundles if b.input is not None]
    return loaded.input, bundles
