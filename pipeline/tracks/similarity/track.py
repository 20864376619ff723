"""The ``similarity`` track: relative similarity of benchmark problems (Pereyda & Holder 2020).

A benchmark declares its **tests**; a bundle brings ``runs.csv``: a baseline agent's scores on
pairs of tests and on their merges (see :mod:`pipeline.tracks.similarity.runs`). Scoring gives, per
bundle and configuration (agent, merge, p):

* one row per pair, ``agent = "<first>|<second>"`` (tests in **name** order, so the key is
  stable across releases even if the easier test changes), metrics ``similarity`` (primary,
  eq. 3, with a Fieller interval over seeds) and ``dissimilarity`` (``1 - S``);
* one row ``agent = "suite"`` with ``diversity`` (mean pairwise dissimilarity, bootstrap
  interval over seeds).

A bundle with several configurations suffixes each row's agent with `` [agent, merge, p=…]``.
Charts: ``similarity_heatmap`` (the paper's Table 2 / Fig. 5) and ``similarity_map`` (the
classical-MDS map of the tests, as the paper's Fig. 4). Numbers come from the submitter's
scores, so rows are *reported* (not verified).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any, Literal

from pydantic import Field, field_validator, model_validator

from pipeline.errors import Problem, ScoringError
from pipeline.tracks.base import (
    BenchmarkInput,
    BundleInput,
    ScoreContext,
    ScoreRow,
    TrackResult,
    TrackSpec,
)
from pipeline.tracks.filecheck import Column, check_csv
from pipeline.tracks.settings import StrictSettings

TEST_ID = r"^[A-Za-z0-9][A-Za-z0-9._()+-]{0,63}$"
Merge = Literal["sampling", "stitching"]


def _all_merges() -> list[Merge]:
    return ["sampling", "stitching"]


_Strict = StrictSettings


class DeclaredTest(_Strict):
    """One test (problem, dataset, environment family) of a similarity benchmark."""

    id: str = Field(pattern=TEST_ID, description="Name used in runs.csv (test_a, test_b).")
    title: str = Field("", max_length=200, description="Human name shown on the site.")
    description: str = Field("", max_length=5000, description="What the test is.")


class BenchmarkSettings(_Strict):
    """The ``[similarity]`` section of ``benchmark.toml``."""

    tests: list[DeclaredTest] = Field(
        min_length=2, description="The suite: every test a bundle may name, in display order."
    )
    merges: list[Merge] = Field(
        default_factory=_all_merges,
        min_length=1,
        description="Merge methods accepted in runs.csv: sampling (set-wise) or stitching "
        "(element-wise).",
    )
    convention: Literal["paper", "mixture"] = Field(
        "paper",
        description="paper: eq. 3 as published (p only labels the merge); mixture: the scale "
        "re-centred on p·V_A + (1−p)·V_B (equal to eq. 3 at p = 0.5). See docs/similarity.md.",
    )
    confidence: float = Field(
        0.95,
        gt=0.5,
        lt=1.0,
        description="Level of the intervals (Fieller per pair, bootstrap for the diversity).",
    )
    published: str = Field(
        "",
        description="Optional path (under reference/) of a CSV of published similarities "
        "(test_a,test_b,similarity[,merge,p,note]) shown next to the bundles for comparison.",
    )
    experiment: dict[str, Any] | None = Field(
        None,
        description="Settings of the `gmeter similarity run` experiment whose bundles this "
        "benchmark holds (see docs/similarity.md); enough to rerun it.",
    )

    @field_validator("tests")
    @classmethod
    def _unique_ids(cls, tests: list[DeclaredTest]) -> list[DeclaredTest]:
        ids = [t.id for t in tests]
        dup = sorted({i for i in ids if ids.count(i) > 1})
        if dup:
            raise ValueError(f"test ids must be unique; repeated: {', '.join(dup)}")
        return tests


class SubmissionSettings(_Strict):
    """The ``[similarity]`` section of ``submission.toml``."""

    baseline: str = Field(
        "", max_length=2000, description="The baseline agent π and how it was trained/run."
    )
    experiment: dict[str, Any] | None = Field(
        None,
        description="When produced by `gmeter similarity run`: every setting of the run "
        "(tests, agent, episode length, programs, seeds), enough to reproduce runs.csv.",
    )
    reported: str = Field(
        "",
        max_length=500,
        description="Set when runs.csv transcribes published numbers rather than runs (e.g. "
        "'Pereyda & Holder 2020, Tables 1 and 2'): every score row says so and cannot be "
        "recomputed.",
    )
    digits: int | None = Field(
        None,
        ge=1,
        le=12,
        description="Only with `reported`: the number of decimals the publication gives S to; "
        "each S recomputed by eq. 3 is rounded to it (the transcribed V_AB reproduce the "
        "published S only up to rounding).",
    )

    @model_validator(mode="after")
    def _digits_need_reported(self) -> SubmissionSettings:
        if self.digits is not None and not self.reported:
            raise ValueError("digits applies to reported numbers only: set reported too")
        return self


# --------------------------------------------------------------------------- validation
def _test_ids(bench: BenchmarkInput) -> list[str]:
    return [t["id"] for t in bench.settings.get("tests", [])]


PUBLISHED_COLUMNS = (
    Column("test_a"),
    Column("test_b"),
    Column("similarity", "float", low=-1.0, high=1.0),
    Column("merge", required=False, allow_empty=True, choices=("sampling", "stitching")),
    Column("p", "float", required=False, allow_empty=True, low=0.0, high=1.0),
    Column("note", required=False, allow_empty=True),
)


def validate_benchmark(bench: BenchmarkInput) -> list[Problem]:
    """Check the benchmark's optional published-values file against its declared tests."""
    path = str(bench.settings.get("published", "") or "")
    if not path:
        return []
    fs = bench.files
    if not path.startswith("reference/"):
        return [
            Problem(
                fs.where("benchmark.toml"),
                "similarity.published",
                f"{path!r} is not under reference/",
                "put the file in reference/",
            )
        ]
    rows, problems = check_csv(fs, path, PUBLISHED_COLUMNS, unique=("test_a", "test_b", "merge"))
    known = set(_test_ids(bench))
    for n, r in enumerate(rows, start=1):
        for col in ("test_a", "test_b"):
            if r[col] not in known:
                problems.append(
                    Problem(
                        fs.where(path),
                        f"row {n}: {col}",
                        f"unknown test {r[col]!r}",
                        "declare it under [similarity].tests",
                    )
                )
    return problems


def validate_bundle(bundle: BundleInput, bench: BenchmarkInput) -> list[Problem]:
    """Check ``runs.csv``: columns, finite numbers, ``0 < p < 1``, declared tests, duplicates."""
    from pipeline.tracks.similarity.runs import RUNS_FILE, read_runs

    _, problems = read_runs(
        bundle.files,
        RUNS_FILE,
        tests=_test_ids(bench),
        merges=tuple(bench.settings.get("merges", ("sampling", "stitching"))),
    )
    return problems


# --------------------------------------------------------------------------- scoring
def _agent_labels(bundles: Sequence[BundleInput]) -> dict[str, str]:
    """Per bundle, the suffix that keeps score-row names unique on the board.

    The site names a row ``<system> · <agent>``; two bundles of one system (e.g. an experiment
    and its control) would give two rows called ``… · suite``. Such bundles get their id
    appended to every agent label (`` (q-lambda-episode-control)``); a system name used once
    needs nothing.
    """
    names: dict[str, int] = {}
    for b in bundles:
        names[b.system] = names.get(b.system, 0) + 1
    return {b.id: (f" ({b.id})" if names[b.system] > 1 else "") for b in bundles}


def score(bench: BenchmarkInput, bundles: Sequence[BundleInput], ctx: ScoreContext) -> TrackResult:
    """Score every bundle: pair similarities, dissimilarities, suite diversity and charts.

    Rows: ``<first>|<second>`` (``similarity`` with its interval, ``dissimilarity``) and
    ``suite`` (``diversity``), suffixed with the configuration when a bundle has several and
    with the bundle id when two bundles share a system name. A bundle whose
    ``[similarity].reported`` is set transcribes published numbers: its rows carry
    ``details.reported`` and, with ``digits``, S rounded to the published precision.
    """
    from pipeline.tracks.similarity import board
    from pipeline.tracks.similarity.runs import RUNS_FILE, analyse_runs, pair_record, read_runs

    convention = str(ctx.options.get("convention", bench.settings.get("convention", "paper")))
    if convention not in ("paper", "mixture"):
        raise ScoringError(
            f"unknown similarity convention {convention!r}",
            hint="use --option convention=paper or convention=mixture",
        )
    confidence = float(bench.settings.get("confidence", 0.95))
    tests = _test_ids(bench)
    result = TrackResult(
        notes=[
            f"similarity convention: {convention}; intervals at "
            f"{confidence:.0%} (Fieller per pair mapped through eq. 3, bootstrap for diversity)"
        ]
    )
    charts: dict[str, list[dict[str, Any]]] = {
        k: [] for k in ("similarity_heatmap", "similarity_map", "similarity_flags",
                        "similarity_suites", "similarity_vs_published", "similarity_sweep")
    }  # fmt: skip
    published_rows = _published_rows(bench)
    suffixes = _agent_labels(bundles)
    for bundle in sorted(bundles, key=lambda b: b.id):
        rows, problems = read_runs(
            bundle.files,
            RUNS_FILE,
            tests=tests,
            merges=tuple(bench.settings.get("merges", ())) or ("sampling", "stitching"),
        )
        if not rows:
            result.notes.append(
                f"{bundle.id}: skipped, runs.csv has no usable rows ({len(problems)} problems)"
            )
            continue
        source = str(bundle.settings.get("reported", "") or "")
        digits = bundle.settings.get("digits") if source else None
        report = analyse_runs(
            rows, tests=tests, convention=convention, confidence=confidence, seed=ctx.seed
        )
        many = len(report.configs) > 1
        result.notes += [f"{bundle.id}: {n}" for n in report.notes]
        if source:
            result.notes.append(
                f"{bundle.id}: reported numbers ({source}); they cannot be recomputed"
            )
        for cfg in report.configs:
            suffix = (f" [{cfg.config.label()}]" if many else "") + suffixes[bundle.id]
            for pr in cfg.pairs:
                e = pr.estimate
                details = pair_record(pr)
                if e.point.status == "undefined":
                    details["why"] = e.point.reason
                value = e.point.value
                if source:
                    details["reported"] = source
                    if digits is not None and math.isfinite(value):
                        value = round(value, int(digits))
                        details["rounded_to"] = int(digits)
                label = pr.key + suffix
                result.rows.append(
                    ScoreRow(bundle.id, label, "similarity", value, e.ci_low, e.ci_high,
                             False, details)
                )  # fmt: skip
                result.rows.append(
                    ScoreRow(
                        bundle.id,
                        label,
                        "dissimilarity",
                        1.0 - value,
                        None if e.ci_high is None else 1.0 - e.ci_high,
                        None if e.ci_low is None else 1.0 - e.ci_low,
                        False,
                        details,
                    )
                )
            d = cfg.diversity
            result.rows.append(
                ScoreRow(
                    bundle.id,
                    "suite" + suffix,
                    "diversity",
                    d.value,
                    cfg.diversity_ci[0] if cfg.diversity_ci else None,
                    cfg.diversity_ci[1] if cfg.diversity_ci else None,
                    False,
                    {
                        "tests": list(cfg.tests),
                        "n_pairs": d.n_pairs,
                        "n_missing": d.n_missing,
                        "agent": cfg.config.agent,
                        "merge": cfg.config.merge,
                        "p": cfg.config.p,
                        "convention": convention,
                        **({"reported": source} if source else {}),
                        **({"why": "no measured pair"} if math.isnan(d.value) else {}),
                    },
                )
            )
            who = bundle.system
            charts["similarity_heatmap"] += board.matrix_records(bundle.id, who, cfg, bool(source))
            charts["similarity_map"] += board.map_records(bundle.id, who, cfg)
            charts["similarity_flags"] += board.flag_records(bundle.id, who, cfg)
            charts["similarity_suites"].append(
                board.suite_record(bundle.id, who, cfg, bool(source))
            )
            if many:
                charts["similarity_sweep"] += board.sweep_records(bundle.id, who, cfg)
            if published_rows and not source:
                charts["similarity_vs_published"] += board.versus_published(
                    bundle.id, who, cfg, published_rows
                )
    for name, data in charts.items():
        if name in ("similarity_flags", "similarity_suites", "similarity_sweep"):
            # tables, not plots: wrapped so that a generic chart drawer finds nothing to draw
            if data or name != "similarity_sweep":
                result.charts[name] = {name.removeprefix("similarity_"): data}
        elif data or name in ("similarity_heatmap", "similarity_map"):
            result.charts[name] = data
    if published_rows:
        result.charts["similarity_published"] = board.published_matrix(published_rows)
    return result


def _published_rows(bench: BenchmarkInput) -> list[dict[str, Any]]:
    path = str(bench.settings.get("published", "") or "")
    if not path or not bench.files.has(path):
        return []
    rows, _ = check_csv(bench.files, path, PUBLISHED_COLUMNS)
    return [{k: (v if v != "" else None) for k, v in r.items()} for r in rows]


def bundle_template() -> dict[str, str]:
    """Return the files ``gmeter new`` writes into a new similarity bundle."""
    return {
        "submission.toml": (
            "\n[similarity]\n"
            'baseline = "TODO: the baseline agent and how it was trained and scored"\n'
        ),
        "runs.csv": "test_a,test_b,p,merge,agent,v_a,v_b,v_ab,seed\n"
        "TODO: first test,TODO: second test,0.5,sampling,TODO: agent,0,0,0,1\n",
    }


def benchmark_template() -> dict[str, str]:
    """Return the ``[similarity]`` section ``gmeter new`` writes into a new benchmark."""
    return {
        "benchmark.toml": (
            "\n[similarity]\n"
            "# the suite: every test a bundle may name in runs.csv\n"
            "tests = [\n"
            '  { id = "TODO: first test", title = "" },\n'
            '  { id = "TODO: second test", title = "" },\n'
            "]\n"
            'convention = "paper"  # or "mixture"; see docs/similarity.md\n'
        ),
    }


TRACK = TrackSpec(
    name="similarity",
    title="Test similarity",
    paper="C. Pereyda and L. Holder, Measuring the Relative Similarity and Difficulty Between "
    "AI Benchmark Problems, AAAI 2020 Workshop on Evaluating Evaluation of AI Systems",
    primary_metric="similarity",
    secondary_metrics=("dissimilarity", "diversity"),
    benchmark_settings=BenchmarkSettings,
    submission_settings=SubmissionSettings,
    validate_benchmark=validate_benchmark,
    validate_bundle=validate_bundle,
    score=score,
    bundle_template=bundle_template,
    benchmark_template=benchmark_template,
)
