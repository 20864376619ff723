"""The safe folder loader of ``gmeter generality --benchmark``: a benchmark folder, no store.

:func:`load_folder` reads a benchmark folder into memory (regular files only, nothing
outside the folder) and :func:`benchmark_inputs` parses its manifests into track inputs.
Re-exported by :mod:`pipeline.tracks.generality`.
"""

from __future__ import annotations

from pathlib import Path

from pipeline.errors import GmeterError
from pipeline.tracks.base import BenchmarkInput, BundleInput, FileSet
from pipeline.tracks.generality_settings import BenchmarkSettings


def load_folder(root: Path) -> tuple[FileSet, list[FileSet]]:
    """Read a benchmark folder into memory: its own files and one FileSet per bundle.

    Minimal and safe: regular files only (symbolic links are refused), nothing outside the
    folder, bundles are the immediate sub-folders holding ``submission.toml``. The shared
    loader :mod:`pipeline.bundles` replaces this in the main pipeline.
    """
    root = root.resolve()
    if not (root / "benchmark.toml").is_file():
        raise GmeterError(f"{root} has no benchmark.toml", hint="give a benchmark folder")

    def read(folder: Path, label: str, skip: set[str]) -> FileSet:
        files: dict[str, bytes] = {}
        stack = [folder]
        while stack:
            cur = stack.pop()
            for entry in sorted(cur.iterdir()):
                if entry.is_symlink():
                    raise GmeterError(f"{entry} is a symbolic link", hint="replace it by a copy")
                rel = entry.relative_to(folder).as_posix()
                if entry.is_dir():
                    if cur == folder and entry.name in skip:
                        continue
                    stack.append(entry)
                elif entry.is_file():
                    files[rel] = entry.read_bytes()
        return FileSet(label, files)

    bundle_dirs = sorted(
        p
        for p in root.iterdir()
        if p.is_dir() and not p.is_symlink() and (p / "submission.toml").is_file()
    )
    bench = read(root, root.name, {p.name for p in bundle_dirs})
    return bench, [read(p, f"{root.name}/{p.name}", set()) for p in bundle_dirs]


def benchmark_inputs(root: Path) -> tuple[BenchmarkInput, list[BundleInput]]:
    """Parse a benchmark folder's manifests into track inputs (no store involved)."""
    import tomllib

    bench_fs, bundle_fs = load_folder(root)
    try:
        manifest = tomllib.loads(bench_fs.text("benchmark.toml"))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise GmeterError(f"{bench_fs.where('benchmark.toml')}: {exc}") from exc
    if manifest.get("track") != "generality":
        raise GmeterError(
            f"{root.name} is not a generality benchmark",
            hint='give a folder whose benchmark.toml says track = "generality"',
        )
    try:
        settings = BenchmarkSettings.model_validate(manifest.get("generality", {}))
    except Exception as exc:
        raise GmeterError(f"{bench_fs.where('benchmark.toml')}: [generality]: {exc}") from exc
    bench = BenchmarkInput(
        id=str(manifest.get("id", root.name)),
        track="generality",
        version=str(manifest.get("version", "")),
        manifest=manifest,
        settings=settings.model_dump(mode="json"),
        files=bench_fs,
    )
    bundles = []
    for fs in bundle_fs:
        sub = tomllib.loads(fs.text("submission.toml"))
        bundles.append(
            BundleInput(
                id=fs.label.rsplit("/", 1)[-1],
                benchmark=bench.id,
                manifest=sub,
                settings=dict(sub.get("generality", {})),
                files=fs,
            )
        )
    return bench, bundles
