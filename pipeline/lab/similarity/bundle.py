"""Write the AIQ families experiment as a similarity bundle (and, if needed, its benchmark).

``gmeter similarity run --out submissions/aiq-families/<bundle>`` calls :func:`run_and_write`:
the experiment of :mod:`pipeline.lab.similarity.experiment` runs, ``runs.csv`` and a
``submission.toml`` holding every setting are written into the bundle folder, and the parent
folder gets a ``benchmark.toml`` declaring the tests (unless it already has one, which must
then declare them). Rerunning with ``--from <submission.toml>`` reproduces ``runs.csv``.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pipeline import __version__
from pipeline.errors import UsageError
from pipeline.lab.similarity.experiment import (
    FAMILIES,
    ExperimentResult,
    ExperimentSettings,
    run_experiment,
    runs_csv,
)
from pipeline.toml_writer import toml_multiline, toml_table, toml_value
from pipeline.tracks.similarity.runs import RunRow, RunsReport, analyse_runs, canonical

AGENT_TITLES = {
    "q-lambda": "Q(λ)",
    "hlq-lambda": "HLQ(λ)",
    "q0": "Q(0)",
    "freq": "Freq",
    "random": "Random",
}
DESIGN_KEYS = (
    "tests",
    "symbols",
    "episode_length",
    "programs",
    "seeds",
    "root_seed",
    "p",
    "block",
    "max_blocks",
)

BENCHMARK_DESCRIPTION = """\
Pairwise similarity (Pereyda & Holder 2020, eq. 3) of families of AIQ environments, the tests: \
BF({symbols}) programs of the AIQ sampler grouped by behaviour stratum or by length \
({families}). A reference agent is scored on each family (V_A, V_B: mean reward per cycle over \
{programs} programs x 2 antithetic runs, episode length {episode_length}) and on the merge of \
two families (V_AB): one agent lifetime in which every cycle is answered by the environment of \
family A with probability p = {p} and by the paired environment of family B otherwise (a \
sampling merge of interaction cycles; the agent is not told which environment answered). The \
same programs, machine seeds, agent seeds and schedules are used in all conditions (common \
random numbers); {seeds} independent replicates give the intervals.

What it shows: how much interleaving two families in one lifetime costs a tabular learner, on \
eq. 3's scale (S = 1: the merge is as hard as the harder family; 0: the average of the two; \
-1: as easy as the easier), which pairs interfere so much that the agent is insufficient \
(V_AB below both families: S saturates at 1 and is flagged), and the diversity and 2-D map of \
the suite as this agent sees it. A bundle run with merge_unit = "episode" is a control: \
merging whole environments gives S = 1 - 2p = 0 up to noise, because a fresh agent meets each \
environment.

What it does not show: similarity independent of the agent (every number is for the named \
agent and its parameters), transfer in the paper's train-then-test sense (AIQ agents learn only \
within a lifetime), a property of BF machines with other alphabets (not merged: their action \
sets differ), or a distance between families (1 - S is not a metric; insufficient pairs get \
dissimilarity 0). Numbers depend on the cycle-level schedule, the episode length (half the \
lifetime per family in a merge) and the program samples. Rerun any bundle with \
`gmeter similarity run --from submissions/{bench}/<bundle>/submission.toml --out DIR`.
"""


def _display(settings: ExperimentSettings) -> str:
    return AGENT_TITLES.get(settings.agent_name(), settings.agent_name())


def submission_toml(result: ExperimentResult, *, contact: str, licence: str, today: dt.date) -> str:
    """Return the bundle's ``submission.toml`` (every setting under ``[similarity.experiment]``)."""
    s = result.settings
    unit = (
        "one lifetime per merge, cycles drawn from the two environments"
        if s.merge_unit == "cycle"
        else "control: whole environments drawn from the two families, fresh agent each"
    )
    desc = (
        f"gmeter similarity run: {_display(s)} ({s.spec().text}) on BF({s.symbols}) families "
        f"{', '.join(s.tests)}; {s.programs} programs per family and replicate, {s.seeds} "
        f"replicates, episode length {s.episode_length}, sampling merge at p = {s.p} "
        f"({unit}). Runs: {result.total_runs}, failed at the step limit: {result.failed_runs} "
        f"(their program pairs left out); programs drawn by the sampler: {result.drawn}.\n"
    )
    head = (
        f"submitted = {today.isoformat()}\ncontact = {toml_value(contact)}\n"
        f"licence = {toml_value(licence)}\ndescription = {toml_multiline(desc)}\n\n"
    )
    control = ", episode-merge control" if s.merge_unit == "episode" else ""
    system = {
        "name": f"{_display(s)} (AIQ reference agent{control})",
        "version": f"gmeter {__version__}",
    }
    baseline = {"baseline": f"{_display(s)}, {s.spec().text}, fresh agent per run"}
    return (
        head
        + toml_table("system", system)
        + "\n"
        + toml_table("similarity", baseline)
        + "\n"
        + toml_table("similarity.experiment", s.to_dict())
    )


def benchmark_toml(
    bench_id: str, settings: ExperimentSettings, *, licence: str, today: dt.date
) -> str:
    """Return a ``benchmark.toml`` declaring the families as the suite's tests."""
    d = settings.to_dict()
    families = "; ".join(f"{f}: {FAMILIES[f].description}" for f in settings.tests)
    desc = BENCHMARK_DESCRIPTION.format(bench=bench_id, families=families, **d)
    tests = ",\n".join(
        f"  {{ id = {toml_value(f)}, title = {toml_value(FAMILIES[f].title)}, "
        f"description = {toml_value(FAMILIES[f].description)} }}"
        for f in settings.tests
    )
    return (
        f"id = {toml_value(bench_id)}\n"
        f'title = "Similarity of AIQ environment families (BF({settings.symbols}))"\n'
        f'track = "similarity"\nversion = "1.0.0"\ndescription = {toml_multiline(desc)}\n'
        f"licence = {toml_value(licence)}\ncreated = {today.isoformat()}\n\n"
        "[origin]\n"
        'paper = "C. Pereyda and L. Holder, Measuring the Relative Similarity and Difficulty '
        "Between AI Benchmark Problems (2020); S. Legg and J. Veness, An Approximation of the "
        'Universal Intelligence Measure (2013)"\n'
        'notes = "Generated by gmeter similarity run; see docs/similarity.md."\n\n'
        f'[similarity]\ntests = [\n{tests},\n]\nmerges = ["sampling"]\nconvention = "paper"\n'
        "scale = [-100.0, 100.0]  # AIQ in percent\n\n"
        + toml_table("similarity.experiment", {k: d[k] for k in DESIGN_KEYS})
    )


def check_benchmark_file(
    path: Path, tests: Sequence[str], merges: Sequence[str] = ("sampling",)
) -> None:
    """Check that ``path`` is a similarity ``benchmark.toml`` declaring ``tests`` and ``merges``.

    A benchmark without ``merges`` accepts both methods (the track's default).
    """
    from pipeline.limits import read_toml_file

    data = read_toml_file(path, error=UsageError)
    if data.get("track") != "similarity":
        raise UsageError(
            f"{path} is not a similarity benchmark",
            hint="write the bundle into a similarity benchmark folder",
        )
    declared = {t.get("id") for t in data.get("similarity", {}).get("tests", [])}
    missing = [t for t in tests if t not in declared]
    if missing:
        raise UsageError(
            f"{path} does not declare the test(s) {', '.join(missing)}",
            hint="add them to [similarity].tests or choose another benchmark",
        )
    accepted = data.get("similarity", {}).get("merges", ["sampling", "stitching"])
    refused = [m for m in merges if m not in accepted]
    if refused:
        raise UsageError(
            f"{path}: [similarity].merges does not accept {', '.join(refused)}",
            hint="add it to [similarity].merges or write the bundle elsewhere",
        )


_ID = r"^[a-z0-9][a-z0-9._-]{0,63}$"


def benchmark_id_of(bench_dir: Path) -> str:
    """The benchmark id to write for a bundle's parent folder.

    The folder's name when it is an id (always so inside ``submissions/``, see
    :func:`check_out`), else a neutral id: the user chose the folder, not the benchmark name.
    """
    return bench_dir.name if re.match(_ID, bench_dir.name) else "similarity-local"


def check_out(out: Path, force: bool) -> Path:
    """Check the bundle folder ``out`` and return its benchmark folder.

    Raises
    ------
    UsageError
        If ``out`` lies in ``submissions/<benchmark>/`` and the bundle or benchmark folder
        name is not an id, or ``out`` holds files and
        ``force`` is not set.
    """
    bench_dir = out.resolve().parent
    # Only a bundle placed in a submissions/ folder becomes part of a benchmark and must be
    # named by ids; any other folder (a temporary one, a user's scratch space) is the user's.
    in_submissions = bench_dir.parent.name == "submissions"
    if in_submissions and (
        not re.match(_ID, out.resolve().name) or not re.match(_ID, bench_dir.name)
    ):
        raise UsageError(
            f"{out}: bundle and benchmark folder names inside submissions/ must be ids",
            hint="lower-case letters, digits, '.', '_' and '-'; or write outside submissions/",
        )
    if out.exists() and not out.is_dir():
        raise UsageError(f"{out} is a file", hint="give a folder for the bundle")
    if out.exists() and any(out.iterdir()) and not force:
        raise UsageError(f"{out} already holds files", hint="choose a new folder or --force")
    return bench_dir


@dataclass(frozen=True)
class WriteReport:
    """What :func:`run_and_write` produced."""

    written: list[Path]
    result: ExperimentResult
    analysis: RunsReport


def run_and_write(
    settings: ExperimentSettings,
    out: Path,
    *,
    contact: str = "gmeter similarity run (see docs/similarity.md)",
    licence: str = "CC0-1.0",
    force: bool = False,
    today: dt.date | None = None,
    executor: Any = None,
    progress: Callable[[str, int, int], None] | None = None,
) -> WriteReport:
    """Run the experiment and write the bundle ``out`` (+ the parent benchmark.toml if absent).

    Raises
    ------
    UsageError
        ``out`` already holds files (without ``force``), its parent is not a usable benchmark
        folder, or a setting is invalid.
    """
    today = today or dt.date.today()
    settings.spec()
    bench_dir = check_out(out, force)
    bench_file = bench_dir / "benchmark.toml"
    if bench_file.exists():
        check_benchmark_file(bench_file, settings.tests)
    result = run_experiment(settings, executor=executor, progress=progress)
    out.mkdir(parents=True, exist_ok=True)
    files = {
        out / "runs.csv": runs_csv(result.rows),
        out / "submission.toml": submission_toml(
            result, contact=contact, licence=licence, today=today
        ),
    }
    if not bench_file.exists():
        files[bench_file] = benchmark_toml(
            benchmark_id_of(bench_dir), settings, licence=licence, today=today
        )
    written, analysis = write_and_analyse(files, result.rows, settings.tests)
    return WriteReport(written, result, analysis)


def write_and_analyse(
    files: Mapping[Path, str], rows: Sequence[Mapping[str, Any]], tests: Sequence[str]
) -> tuple[list[Path], RunsReport]:
    """Write a bundle's files, then analyse its runs as ``gmeter score`` will (same seed).

    Shared by every experiment's writer (AIQ families here, the scikit-learn and Gymnasium
    suites in :mod:`pipeline.lab.similarity.suite_bundle`).
    """
    written = []
    for path, text in files.items():
        path.write_text(text, encoding="utf-8")
        written.append(path)
    canon = [
        canonical(RunRow(r["test_a"], r["test_b"], r["p"], r["merge"], r["agent"], r["v_a"],
                         r["v_b"], r["v_ab"], r["seed"]))
        for r in rows
    ]  # fmt: skip
    return written, analyse_runs(canon, tests=list(tests), seed=20211)  # = score default
