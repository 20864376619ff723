"""Write a classification or Gym suite experiment as a similarity bundle (and its benchmark).

``gmeter similarity run --experiment classification|gym --out submissions/<bench>/<bundle>``
calls :func:`run_and_write_suite`: the experiment of :mod:`pipeline.lab.similarity.suites`
runs, ``runs.csv`` and a ``submission.toml`` recording every setting (and the library versions)
are written into the bundle folder, and the parent folder gets a ``benchmark.toml`` declaring
the tests unless it has one (which must then declare them). ``--from <submission.toml>``
reproduces ``runs.csv``.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pipeline import __version__
from pipeline.lab.similarity.bundle import (
    benchmark_id_of,
    check_benchmark_file,
    check_out,
    write_and_analyse,
)
from pipeline.lab.similarity.experiment import runs_csv
from pipeline.lab.similarity.suites import SuiteResult, SuiteSettings, _tests_known, run_suite
from pipeline.toml_writer import toml_multiline, toml_table, toml_value
from pipeline.tracks.similarity.runs import RunsReport

TITLES = {
    "classification": "Similarity of scikit-learn's bundled classification data sets",
    "gym": "Similarity of Gymnasium's built-in control and toy-text environments",
}

DESCRIPTIONS = {
    "classification": """\
Pereyda & Holder's passive experiment (2020, Tables 2-3, Figs. 2-3) run for real on data sets \
that ship with scikit-learn, so nothing is downloaded: {tests}. The baseline agent is \
scikit-learn's MLPClassifier ({layers} hidden layer(s) of {hidden} ReLU units, Adam, {max_iter} \
epochs); V is its held-out accuracy ({test_fraction:.0%} of each set held out, stratified). Each \
test is cut to at most {size} elements and standardised per feature. The merged test is the \
paper's sampling merge at p = {p}: the larger set cut to the smaller, that proportion from A, \
inputs zero-padded to the wider test, B's classes after A's.{stitch_text} {seeds} \
replicates give the intervals.

What it shows: which pairs a small network confuses when it must learn both (S near 1: the \
merge is as hard as the harder test), which it keeps apart (S near 0: the average of the two), \
the pairs on which the baseline is insufficient (V_AB outside [V_B, V_A], flagged: S saturates \
at ±1), and the map and diversity of the suite. digits-inverted and digits-rotated are the same \
images as digits under a known transformation.

What it does not show: similarity for other agents or training budgets, or the paper's image \
data sets. The merged test has min(|A|, |B|) elements; with alone = {alone} V_A and V_B are \
measured on {alone_text}. Rerun any bundle with \
`gmeter similarity run --from submissions/{bench}/<bundle>/submission.toml --out DIR`.
""",
    "gym": """\
Pereyda & Holder's active experiment (2020, Fig. 5) run for real on Gymnasium's built-in \
environments: {tests}. The baseline agent is tabular Q-learning (alpha = {alpha}, gamma = \
{gamma}, epsilon falling from 1 to {epsilon_end} over the first {explore:.0%} of the budget) on \
one padded observation vector (Box coordinates clipped and scaled to [0, 1], Discrete states \
one-hot, each feature cut into {bins} bins); it trains for a fixed budget of {steps} steps per \
run and is then scored greedily on {eval_episodes} episodes: V is the mean episode return \
normalised to [0, 1] by each environment's documented bounds (docs/similarity.md). A merged test \
draws each training episode from A with probability p = {p}; the agent has as many actions as \
the larger action space (a mod n in the smaller).{stitch_text} {seeds} replicates give the \
intervals.

What it shows: which environments share enough structure in this encoding that training on \
both costs little (S near 0) and which interfere (S near 1), the pairs on which the baseline is \
insufficient (flagged), and the suite's map and diversity. What it does not show: similarity \
for a deep agent (the paper's network) or other budgets. With alone = {alone} V_A and V_B are \
measured on {alone_text}. Rerun any bundle with \
`gmeter similarity run --from submissions/{bench}/<bundle>/submission.toml --out DIR`.
""",
}


ALONE = {
    ("classification", "matched"): "exactly the elements the merge drew from each test, so an "
    "unrelated pair scores S = 0 at p = 0.5",
    ("classification", "whole"): "each whole test (the paper's choice), so the smaller share "
    "each test has in a merge also counts as interference",
    ("gym", "matched"): "each environment's share of the merged step budget, so an unrelated "
    "pair scores S = 0 at p = 0.5",
    ("gym", "whole"): "the whole budget per environment (the paper's choice), so the halved "
    "budget of a merge also counts as interference",
}


def _fmt(d: dict[str, Any]) -> dict[str, Any]:
    out = dict(d)
    out["alone_text"] = ALONE[(d["experiment"], d["alone"])]
    out["tests"] = ", ".join(d["tests"])
    out["p"] = ", ".join(f"{x:g}" for x in d["p"])
    merges = d.get("merge", ["sampling"])
    if "stitching" not in merges:
        out["stitch_text"] = ""
    elif d["experiment"] == "gym":
        out["stitch_text"] = (
            " The stitching merge (the paper's Fig. 2 contrast) is run too: the agent sees A and "
            "B side by side, its action drives A in a share p of the episodes and B otherwise "
            "(it is not told which; the other one moves at random), and the stitched pair AB is "
            "compared with each environment stitched with a copy of itself (V_A = V_AA, "
            "V_B = V_BB)."
        )
    else:
        out["stitch_text"] = (
            " The stitching merge (the paper's Fig. 2 contrast) is run too: each element puts an "
            "item of A beside an item of B, labelled by A's item for a share p of the elements "
            "and by B's otherwise, and the stitched pair AB is compared with each test stitched "
            "with itself (V_A = V_AA, V_B = V_BB)."
        )
    if "hidden" in d:
        out["hidden"] = "/".join(str(h) for h in d["hidden"])
    return out


def _system(s: SuiteSettings) -> str:
    if s.experiment == "classification":
        widths = "/".join(str(h) for h in s.hidden)
        return f"MLPClassifier {widths} units (scikit-learn baseline)"
    return f"Tabular Q-learning, {s.steps:,} steps (Gymnasium baseline)"


def submission_toml(result: SuiteResult, *, contact: str, licence: str, today: dt.date) -> str:
    """Return the bundle's ``submission.toml`` (every setting under ``[similarity.experiment]``)."""
    s = result.settings
    versions = ", ".join(f"{k} {v}" for k, v in sorted(result.versions.items()))
    desc = (
        f"gmeter similarity run --experiment {s.experiment}: {_system(s)} on "
        f"{', '.join(s.tests)}; {', '.join(s.merge)} merge; {s.seeds} replicate(s), p = "
        f"{', '.join(f'{x:g}' for x in s.p)}; {len(result.rows)} rows. Libraries: {versions}.\n"
    )
    head = (
        f"submitted = {today.isoformat()}\ncontact = {toml_value(contact)}\n"
        f"licence = {toml_value(licence)}\ndescription = {toml_multiline(desc)}\n\n"
    )
    system = {"name": _system(s), "version": f"gmeter {__version__}; {versions}"}
    baseline = {"baseline": _system(s) + "; see the benchmark description"}
    return (
        head
        + toml_table("system", system)
        + "\n"
        + toml_table("similarity", baseline)
        + "\n"
        + toml_table("similarity.experiment", s.to_dict())
    )


def benchmark_toml(bench_id: str, s: SuiteSettings, *, licence: str, today: dt.date) -> str:
    """Return a ``benchmark.toml`` declaring the experiment's tests."""
    d = s.to_dict()
    desc = DESCRIPTIONS[s.experiment].format(bench=bench_id, **_fmt(d))
    known = _tests_known(s.experiment)
    tests = ",\n".join(
        f"  {{ id = {toml_value(t)}, title = {toml_value(known[t][0])}, "
        f"description = {toml_value(known[t][1])} }}"
        for t in s.tests
    )
    return (
        f"id = {toml_value(bench_id)}\ntitle = {toml_value(TITLES[s.experiment])}\n"
        f'track = "similarity"\nversion = "1.0.0"\ndescription = {toml_multiline(desc)}\n'
        f"licence = {toml_value(licence)}\ncreated = {today.isoformat()}\n\n"
        "[origin]\n"
        'paper = "C. Pereyda and L. Holder, Measuring the Relative Similarity and Difficulty '
        'Between AI Benchmark Problems (2020)"\n'
        'notes = "Generated by gmeter similarity run; see docs/similarity.md."\n\n'
        f"[similarity]\ntests = [\n{tests},\n]\nmerges = {toml_value(list(s.merge))}\n"
        'convention = "paper"\n\n' + toml_table("similarity.experiment", d)
    )


@dataclass(frozen=True)
class SuiteWriteReport:
    """What :func:`run_and_write_suite` produced."""

    written: list[Path]
    result: SuiteResult
    analysis: RunsReport


def run_and_write_suite(
    settings: SuiteSettings,
    out: Path,
    *,
    contact: str = "gmeter similarity run (see docs/similarity.md)",
    licence: str = "CC0-1.0",
    force: bool = False,
    today: dt.date | None = None,
    executor: Any = None,
    progress: Callable[[str, int, int], None] | None = None,
) -> SuiteWriteReport:
    """Run the suite experiment and write the bundle ``out`` (+ the parent benchmark.toml).

    Raises
    ------
    UsageError
        ``out`` already holds files (without ``force``), its parent is not a usable benchmark
        folder, or a setting is invalid.
    """
    today = today or dt.date.today()
    bench_dir = check_out(out, force)
    bench_file = bench_dir / "benchmark.toml"
    if bench_file.exists():
        check_benchmark_file(bench_file, settings.tests, settings.merge)
    result = run_suite(settings, executor=executor, progress=progress)
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
    return SuiteWriteReport(written, result, analysis)
