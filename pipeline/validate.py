"""The ``validate`` use case: check benchmarks and bundles without touching the store.

Every problem is collected — generic (layout, manifests, file safety) and track-specific (the
track's ``validate_benchmark`` / ``validate_bundle``) — and reported at once. ``ingest`` and
``check`` load bundles through the same functions, so what validates is what gets ingested.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from pipeline import __version__
from pipeline.bundles import (
    BENCHMARK_OWNED_DIRS,
    RELEASES_DIR,
    LoadedBenchmark,
    LoadedBundle,
    content_hash,
    display,
    is_benchmark_dir,
    is_bundle_dir,
    read_folder,
)
from pipeline.errors import GmeterError, Problem, UsageError, ValidationFailed
from pipeline.inputs import BenchmarkInput, BundleInput, FileSet
from pipeline.limits import (
    MAX_NAME_CHARS,
    MAX_PROBLEMS_PER_FILE,
    bad_name,
    bad_text,
    cap_per_file,
    gzip_problem,
    printable,
    skeleton,
)
from pipeline.manifest import bad_id, load_benchmark_manifest, load_submission_manifest
from pipeline.tracks import get_track, track_names
from pipeline.tracks.filecheck import CONTROL_FIX, iter_json_problems

VALIDATOR = f"bundle checks gmeter {__version__}"
"""The verifier name under which the store keeps bundle versions that passed every check."""


BENCHMARK_CONTEXT = "benchmark"
"""The context of a benchmark version's own entry among the clean versions (a bundle's is its
benchmark's content hash)."""


class CleanVersions(Protocol):
    """Versions known to pass every check of this gmeter.

    The content checks of a bundle are a function of its files, its benchmark's files and the
    code, so a (bundle content hash, benchmark content hash) pair that passed them once passes
    them again, and so does a (benchmark content hash, :data:`BENCHMARK_CONTEXT`) pair: their
    content checks are skipped. Reading the files, the manifests, the folder names and the
    checks across bundles always run.
    """

    def __contains__(self, key: object) -> bool:
        """Whether the (content hash, context) pair passed every check."""
        ...

    def get(self, key: tuple[str, str]) -> Any:
        """What was kept with it (for a bundle: ``{"agents": [...]}``), or ``None``."""
        ...


def clean_versions(db: Path) -> dict[tuple[str, str], Any]:
    """The bundle versions the store at ``db`` knows passed every check (opened read-only).

    Empty without a usable store (none yet, an older schema, a store being written).
    """
    from pipeline.errors import StoreError
    from pipeline.store import open_store

    if not Path(db).is_file():
        return {}
    try:
        with open_store(Path(db), read_only=True) as store:
            return store.verified_results(VALIDATOR)
    except StoreError:
        return {}


@dataclass
class ValidationReport:
    """What ``validate`` found.

    Attributes
    ----------
    benchmarks : list of LoadedBenchmark
        Every benchmark looked at, with its selected bundles.
    problems : list of Problem
        Every problem, benchmark-level and bundle-level, in a stable order.
    """

    benchmarks: list[LoadedBenchmark] = field(default_factory=list)
    problems: list[Problem] = field(default_factory=list)
    agents: dict[str, list[str]] = field(default_factory=dict)  # content hash → agent names

    @property
    def errors(self) -> list[Problem]:
        """Problems of severity ``error``."""
        return [p for p in self.problems if p.severity == "error"]

    @property
    def bundle_count(self) -> int:
        """How many bundles were checked."""
        return sum(len(b.bundles) for b in self.benchmarks)


def _track_problems(kind: str, fn: object, *args: object) -> list[Problem]:
    """Run a track's checker; a crash in it is reported, not raised (the input is hostile)."""
    try:
        result = fn(*args)  # type: ignore[operator]
    except Exception as exc:
        label = getattr(args[0], "files", None)
        where = label.label if isinstance(label, FileSet) else "-"
        return [Problem(where, "-", f"the {kind} check failed on this input "
                        f"({type(exc).__name__}: {exc})",
                        "check the files against docs/submitting.md; report a gmeter bug if "
                        "they are right")]
    return list(result)


def json_problems(fs: FileSet) -> list[Problem]:
    """A problem for every ``.json``/``.jsonl`` file that is not strict JSON."""
    paths = sorted(p for p in fs.files if p.lower().endswith((".json", ".jsonl")))
    # read_folder has already reported files that are not UTF-8.
    return [p for p in iter_json_problems(fs, paths) if p.field != "encoding"]


def gzip_problems(fs: FileSet) -> list[Problem]:
    """A problem for every ``.gz`` file that is not one complete gzip member (bounded)."""
    out = []
    for p in sorted(fs.files):
        if p.lower().endswith(".gz"):
            why = gzip_problem(bytes(fs.files[p]))
            if why:
                out.append(Problem(fs.where(p), "gzip", why,
                                   "compress the file again with `gzip -n` (one member)"))
    return out


def toml_problems(fs: FileSet) -> list[Problem]:
    """Problems of every ``.toml`` data file besides the manifest (every track gets them).

    The bounded reader of the manifests applies (nesting, control characters, NaN/inf),
    with integers up to 2^64 − 1 (a seed), so no track's own TOML reader meets a hostile file.
    """
    from pipeline.bundles import MAX_FILE_BYTES
    from pipeline.limits import MAX_CELL_INT, parse_toml

    out: list[Problem] = []
    for p in sorted(fs.files):
        if p.lower().endswith(".toml") and p not in ("submission.toml", "benchmark.toml"):
            _, probs = parse_toml(fs.where(p), bytes(fs.files[p]), max_int=MAX_CELL_INT,
                                  max_bytes=MAX_FILE_BYTES)
            out += [q for q in probs if q.field != "encoding"]
    return out


def csv_problems(fs: FileSet) -> list[Problem]:
    """A problem for every CSV/TSV cell with a control or invisible character (every track).

    The text is scanned first (fast); only a file that holds such a character is parsed to
    name the line and column. At most :data:`~pipeline.limits.MAX_PROBLEMS_PER_FILE` per file.
    """
    import csv
    import io

    out: list[Problem] = []
    for p in sorted(fs.files):
        low = p.lower()
        if not low.endswith((".csv", ".tsv")):
            continue
        try:
            text = bytes(fs.files[p]).decode("utf-8")
        except UnicodeDecodeError:
            continue  # read_folder reports the encoding
        if not bad_text(text.lstrip("\ufeff")):
            continue
        reader = csv.reader(io.StringIO(text.lstrip("\ufeff"), newline=""),
                            delimiter="\t" if low.endswith(".tsv") else ",")
        header: list[str] = []
        found = 0
        try:
            for row in reader:
                for i, cell in enumerate(row):
                    why = bad_text(cell)
                    if not why:
                        continue
                    found += 1
                    if found > MAX_PROBLEMS_PER_FILE:
                        break
                    if not header:
                        field = "header"
                        why = f"a column name {why}"
                    else:
                        col = header[i].strip() if i < len(header) else f"column {i + 1}"
                        field = f"line {reader.line_num}: {printable(col)}"
                    out.append(Problem(fs.where(p), field, why, CONTROL_FIX))
                if not header:
                    header = row
        except csv.Error:
            continue  # the track's reader reports malformed CSV
    return out


def _default_settings(track: str | None, which: str) -> dict[str, Any] | None:
    """A track's settings with every default (to check content when the manifest is bad)."""
    if track is None:
        return None
    try:
        spec = get_track(track)
        model: Any = spec.submission_settings if which == "submission" else \
            spec.benchmark_settings
        return dict(model.model_validate({}).model_dump(mode="json"))
    except Exception:  # a section with required fields has no defaults
        return None


def load_bundle(
    bench: LoadedBenchmark,
    path: Path,
    *,
    today: dt.date | None = None,
    clean: CleanVersions | None = None,
) -> LoadedBundle:
    """Read and check one bundle folder of ``bench``.

    Manifest and content are both checked, whatever is wrong with the other: when the
    manifest does not parse or its track section is invalid, the content is checked with the
    track's default settings, so one run lists every problem of the bundle. A version in
    ``clean`` (it passed every check before) skips the content checks.
    """
    label = f"{bench.label}/{path.name}"
    problems: list[Problem] = []
    why = bad_id(path.name)
    if why:
        problems.append(Problem(label, "bundle id", why,
                                "rename the folder: lower-case letters, digits, '.', '_', '-'"))
    read = read_folder(path, label)
    problems += read.problems
    files = read.files
    manifest: dict[str, Any] | None = None
    settings: dict[str, Any] = {}
    mprobs: list[Problem] = []
    if "submission.toml" in files:
        manifest, settings, mprobs = load_submission_manifest(
            f"{label}/submission.toml", files["submission.toml"], bench.track, today
        )
    else:
        mprobs = [Problem(f"{label}/submission.toml", "file", "is missing",
                          "add a submission.toml (`gmeter new` writes one)")]
    problems += mprobs
    if set(files) <= {"submission.toml"}:
        problems.append(Problem(label, "files", "bundle is empty: only a submission.toml",
                                "add the track's result files (see docs/submitting.md)"))
    fs = FileSet(label, files)
    chash = content_hash(files)
    bundle_input = None
    if manifest is not None:
        bundle_input = BundleInput(id=path.name, benchmark=bench.id, manifest=manifest,
                                   settings=settings, files=fs, content_hash=chash)
    known = (clean is not None and not problems and bundle_input is not None
             and bench.input is not None and (chash, bench.input.content_hash) in clean)
    if known:
        return LoadedBundle(path.name, path, label, bundle_input, [])
    problems += json_problems(fs)
    problems += gzip_problems(fs)
    problems += csv_problems(fs)
    problems += toml_problems(fs)
    track_ok = manifest is not None and not any(
        p.field.startswith(f"{bench.track}.") or p.field == bench.track for p in mprobs)
    probe = bundle_input if track_ok else None
    if probe is None and files.keys() - {"submission.toml"}:
        defaults = _default_settings(bench.track, "submission")
        if defaults is not None:
            probe = BundleInput(id=path.name, benchmark=bench.id, manifest=manifest or {},
                                settings=defaults, files=fs, content_hash=chash)
    if probe is not None and bench.input is not None and bench.track is not None:
        spec = get_track(bench.track)
        problems += _track_problems("bundle", spec.validate_bundle, probe, bench.input)
    return LoadedBundle(path.name, path, label, bundle_input,
                        cap_per_file(sorted(set(problems))))


def load_benchmark(
    path: Path,
    *,
    only: Sequence[str] | None = None,
    today: dt.date | None = None,
    clean: CleanVersions | None = None,
) -> LoadedBenchmark:
    """Read and check a benchmark folder and its bundles (all, or those named in ``only``)."""
    label = display(path)
    bundle_dirs = sorted(
        p for p in path.iterdir()
        if p.is_dir() and not p.is_symlink() and p.name not in BENCHMARK_OWNED_DIRS
        and not p.name.startswith(".")
    )
    problems: list[Problem] = []
    for p in bundle_dirs:
        if not is_bundle_dir(p):
            problems.append(Problem(f"{label}/{p.name}", "submission.toml",
                                    "folder has no submission.toml",
                                    "add one (`gmeter new`) or move the folder under reference/"))
    bundle_names = [p.name for p in bundle_dirs]
    read = read_folder(path, label, skip_dirs=bundle_names)
    problems += read.problems
    chash = content_hash(read.files)
    manifest, settings, mprobs = load_benchmark_manifest(
        f"{label}/benchmark.toml", read.files.get("benchmark.toml", b""), path.name
    )
    known = (clean is not None and not read.problems and not mprobs
             and (chash, BENCHMARK_CONTEXT) in clean)
    if not known:
        problems += json_problems(FileSet(label, read.files))
        problems += gzip_problems(FileSet(label, read.files))
        problems += csv_problems(FileSet(label, read.files))
        problems += toml_problems(FileSet(label, read.files))
    problems += mprobs
    track = manifest.get("track") if manifest else None
    track = track if isinstance(track, str) and track in track_names() else None
    bench_input = None
    section_ok = track is not None and not any(
        p.field.startswith(f"{track}.") or p.field == track for p in mprobs)
    if manifest is not None and section_ok:
        # Generic manifest problems do not stop the content checks: all are reported at
        # once (the benchmark is still rejected by ingest while any error remains).
        bench_input = BenchmarkInput(
            id=path.name,
            track=str(track),
            version=str(manifest.get("version", "")),
            manifest=manifest,
            settings=settings,
            files=FileSet(label, read.files),
            content_hash=chash,
        )
        if not known:
            problems += _track_problems(
                "benchmark", get_track(str(track)).validate_benchmark, bench_input
            )
    bench = LoadedBenchmark(path.name, path, label, track, bench_input,
                            cap_per_file(sorted(set(problems))), [], complete=only is None)
    seen: dict[str, str] = {}
    for p in bundle_dirs:
        if not is_bundle_dir(p) or (only is not None and p.name not in only):
            continue
        folded = p.name.casefold()
        if folded in seen:
            bench.problems.append(Problem(f"{label}/{p.name}", "bundle id",
                                          f"duplicates bundle {seen[folded]!r} (ids ignore case)",
                                          "rename one of the two folders"))
        seen[folded] = p.name
        bench.bundles.append(load_bundle(bench, p, today=today, clean=clean))
    return bench


def collect(
    paths: Sequence[Path],
    *,
    today: dt.date | None = None,
    clean: CleanVersions | None = None,
) -> ValidationReport:
    """Resolve paths (submissions root, benchmark folders, bundle folders) and check them all.

    ``clean`` (the store's record, :data:`VALIDATOR`) names bundle versions that passed every
    check before: their content checks are skipped, with the same report as a result. It is
    ignored when ``today`` is given (a date check may then differ).

    Raises
    ------
    UsageError
        When a path does not exist or holds nothing gmeter recognises.
    """
    wanted: dict[Path, list[str] | None] = {}
    report = ValidationReport()
    for raw in paths:
        path = Path(raw)
        if not path.exists():
            raise UsageError(f"{raw}: no such file or folder", hint="check the path")
        path = path.resolve() if path.is_symlink() is False else path
        if path.is_file():
            path = path.parent
        if is_benchmark_dir(path):
            wanted[path] = None
        elif is_bundle_dir(path):
            parent = path.parent
            if not is_benchmark_dir(parent):
                report.problems.append(
                    Problem(display(path), "benchmark",
                            f"unknown benchmark: {display(parent)} has no benchmark.toml",
                            "put the bundle inside submissions/<benchmark-id>/")
                )
                continue
            if wanted.get(parent, []) is not None:
                wanted.setdefault(parent, [])
                selected = wanted[parent]
                assert selected is not None
                selected.append(path.name)
        else:
            subs = sorted(p for p in path.iterdir() if p.is_dir() and is_benchmark_dir(p))
            for p in sorted(path.iterdir()):
                if p.is_dir() and not p.name.startswith(".") and not is_benchmark_dir(p) \
                        and p.name != RELEASES_DIR:
                    report.problems.append(
                        Problem(display(p), "benchmark",
                                "unknown benchmark: the folder has no benchmark.toml",
                                "move bundles into submissions/<benchmark-id>/ or add the "
                                "benchmark's benchmark.toml")
                    )
            if not subs:
                raise UsageError(
                    f"{raw}: neither a submissions folder, a benchmark nor a bundle",
                    hint="give submissions/, submissions/<benchmark> or a bundle folder",
                )
            for s in subs:
                wanted[s] = None
    for path in sorted(wanted):
        bench = load_benchmark(path, only=wanted[path], today=today,
                               clean=clean if today is None else None)
        report.benchmarks.append(bench)
    lookalikes = lookalike_problems(report.benchmarks)
    kept_agents = {k[0]: v["agents"] for k, v in clean.items()
                   if isinstance(v, Mapping) and isinstance(v.get("agents"), list)} \
        if isinstance(clean, Mapping) else {}  # fmt: skip
    for key, found in agent_name_problems(report.benchmarks, kept_agents,
                                          report.agents).items():  # fmt: skip
        lookalikes.setdefault(key, []).extend(found)
    for bench in report.benchmarks:
        report.problems += bench.problems
        for b in bench.bundles:
            b.problems = sorted(set(b.problems + lookalikes.get((bench.id, b.id), [])))
            report.problems += b.problems
    return report


def lookalike_problems(
    benchmarks: Sequence[LoadedBenchmark],
) -> dict[tuple[str, str], list[Problem]]:
    """Bundles whose system name looks like another's without being equal to it.

    Names are compared by their confusable skeleton (:func:`pipeline.limits.skeleton`:
    NFKC, case, Unicode TR 39 confusables, separators). Bundles that use *exactly* the same
    name are the same system (several runs); two different names with one skeleton are an
    impersonation or a typo. Within a group the name most bundles use stands; every bundle
    using another spelling gets an error (all of them on a tie).
    """
    groups: dict[str, list[tuple[str, str, str, str]]] = {}
    for bench in benchmarks:
        for b in bench.bundles:
            if b.input is None:
                continue
            name = b.input.system
            groups.setdefault(skeleton(name), []).append((bench.id, b.id, name, b.label))
    out: dict[tuple[str, str], list[Problem]] = {}
    for members in groups.values():
        names = sorted({m[2] for m in members})
        if len(names) < 2:
            continue
        counts = {n: sum(m[2] == n for m in members) for n in names}
        top = max(counts.values())
        winners = [n for n in names if counts[n] == top]
        standing = winners[0] if len(winners) == 1 else None
        for bench_id, bundle_id, name, label in members:
            if name == standing:
                continue
            others = sorted({f"{m[0]}/{m[1]} ({m[2]!r})" for m in members if m[2] != name})
            out.setdefault((bench_id, bundle_id), []).append(Problem(
                f"{label}/submission.toml", "system.name",
                f"{name!r} looks like the system name of {', '.join(others[:3])} "
                "(same letters after Unicode confusable folding) without being equal",
                "use exactly the same name if it is the same system, or a clearly different "
                "one"))
    return out


def agent_name_problems(
    benchmarks: Sequence[LoadedBenchmark],
    known: Mapping[str, Sequence[str]] | None = None,
    found_out: dict[str, list[str]] | None = None,
) -> dict[tuple[str, str], list[Problem]]:
    """Agent names held to the rules of system names, per bundle.

    Every name in an ``agent`` column must be a display name (:func:`bad_name`: NFKC form, no
    control, bidi or zero-width character), at most :data:`MAX_NAME_CHARS` characters, and
    must not look like another name on the same board — any bundle's system name or agent —
    without being equal to it (Unicode TR 39 skeleton).

    ``known`` gives the agent names of bundle versions (by content hash) read before (the
    store keeps them with the clean versions), so their files are not parsed again;
    ``found_out`` receives every bundle version's names.
    """
    from pipeline.tracks.review import agent_names

    out: dict[tuple[str, str], list[Problem]] = {}
    for bench in benchmarks:
        names: dict[str, set[str]] = {}
        per_bundle: list[tuple[LoadedBundle, list[str]]] = []
        for b in bench.bundles:
            if b.input is None:
                continue
            chash = b.input.content_hash
            agents = [str(a) for a in known[chash]] if known and chash in known else \
                agent_names(b.input)  # fmt: skip
            if found_out is not None:
                found_out[chash] = list(agents)
            per_bundle.append((b, agents))
            for n in [b.input.system, *agents]:
                names.setdefault(skeleton(n), set()).add(n)
        for b, agents in per_bundle:
            where = b.label
            found: list[Problem] = []
            for name in agents:
                why = bad_name(name)
                if not why and len(name) > MAX_NAME_CHARS:
                    why = f"is {len(name)} characters long, over {MAX_NAME_CHARS}"
                if why:
                    found.append(Problem(where, f"agent {printable(name[:60])!r}",
                                         f"agent name {why}",
                                         "write the name in plain, visible letters (NFKC)"))
                    continue
                twins = sorted(n for n in names.get(skeleton(name), ()) if n != name)
                if twins:
                    found.append(Problem(
                        where, f"agent {name!r}",
                        f"looks like {', '.join(repr(t) for t in twins[:3])} on this board "
                        "(same letters after Unicode confusable folding) without being equal",
                        "use exactly the same name if it is the same agent, or a clearly "
                        "different one"))
            if found:
                out[(bench.id, b.id)] = found[:50]
    return out


# --------------------------------------------------------------------------- one folder


def _folder_failure(problems: list[Problem], what: str) -> ValidationFailed:
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
        raise _folder_failure(problems, f"{root.name} cannot be read")
    return (FileSet(label, bench.files),
            [FileSet(f"{label}/{p.name}", b.files)
             for p, b in zip(bundle_dirs, bundles, strict=True)])


def benchmark_inputs(
    root: Path, track: str
) -> tuple[BenchmarkInput, list[BundleInput]]:
    """Load and fully validate one benchmark folder of ``track`` (no store involved).

    The ad-hoc commands (``gmeter generality --benchmark``) check a folder exactly as
    ``gmeter validate`` and ``gmeter ingest`` do.

    Raises
    ------
    GmeterError
        No ``benchmark.toml``, or not a benchmark of ``track``.
    ValidationFailed
        Every problem of the benchmark and its bundles, at once.
    """
    root = root.resolve()
    if not (root / "benchmark.toml").is_file():
        raise GmeterError(f"{root} has no benchmark.toml", hint="give a benchmark folder")
    loaded = load_benchmark(root)
    if loaded.track is not None and loaded.track != track:
        raise GmeterError(
            f"{root.name} is not a {track} benchmark",
            hint=f'give a folder whose benchmark.toml says track = "{track}"',
        )
    problems = loaded.problems + [p for b in loaded.bundles for p in b.problems]
    if any(p.severity == "error" for p in problems) or loaded.input is None:
        raise _folder_failure(problems, f"{root.name}: the benchmark has problems")
    bundles = [b.input for b in loaded.bundles if b.input is not None]
    return loaded.input, bundles
