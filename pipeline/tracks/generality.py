"""The ``generality`` track: capability, spread and generality of agent characteristic curves.

Hernández-Orallo et al. (2021). A benchmark declares its items (``reference/items.csv``) and
how difficulty is obtained (``[generality] transform``: intrinsic, ARef, Rnk, DRef or Opp);
a bundle brings ``responses.csv`` (long: ``agent,item,value``) for one or more agents and,
optionally, ``agents.csv`` (``agent,date``) for the temporal chart.

Scoring always recomputes the whole benchmark from all its bundles: with ARef, Rnk and Opp the
difficulties come from the population, so a new bundle changes everyone's numbers
(:func:`is_populational`). Per agent it stores ``capability`` (primary, with a bootstrap
interval), ``spread`` (with interval), ``generality``, ``normalised_generality`` and
``expected_difficulty``. The numbers are computed by gmeter from the raw responses, so rows
are *verified*.

See ``docs/generality.md`` for the formulas and conventions.
"""

from __future__ import annotations

import csv
import hashlib
import io
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import numpy as np
from pydantic import BaseModel, ConfigDict, Field, model_validator

from pipeline.errors import GmeterError, Problem, ScoringError
from pipeline.tracks.base import (
    BenchmarkInput,
    BundleInput,
    Column,
    FileSet,
    ScoreContext,
    ScoreRow,
    TrackResult,
    TrackSpec,
    check_csv,
)

Transform = Literal["intrinsic", "aref", "rnk", "dref", "opp"]
POPULATIONAL: frozenset[str] = frozenset({"aref", "rnk", "opp"})
METRICS = ("capability", "spread", "generality", "normalised_generality", "expected_difficulty")
RESPONSES = "responses.csv"
AGENTS = "agents.csv"


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", str_strip_whitespace=True)


class BenchmarkSettings(_Strict):
    """The ``[generality]`` section of ``benchmark.toml``."""

    transform: Transform = Field(
        "intrinsic",
        description="How items get a difficulty: intrinsic (reference/items.csv column "
        "`difficulty`), aref (a reference agent), rnk (rank percentiles on `columns` grid "
        "points), dref (a reference distribution per item: columns `ref_mean`, "
        "`ref_variance`), opp (a crosstable: items are the other agents).",
    )
    items_file: str = Field(
        "reference/items.csv",
        description="CSV with a column `item` listing every item (plus `difficulty`, `group`, "
        "`ref_mean`, `ref_variance` as the transform needs). Optional for aref/rnk/opp.",
    )
    pipeline: Literal["direct", "padded"] = Field(
        "direct",
        description="direct: the curves as given between kmin and kmax; padded: the reference "
        "code's full study (saturated and zero pads at quantile-based limits).",
    )
    kmin: float | None = Field(
        None,
        description="Left integration limit (direct pipeline). Absent: 0 when every "
        "difficulty is >= 0, else the smallest difficulty. Below the data it adds a saturated "
        "block; inside the data the segment up to the next point is dropped.",
    )
    kmax: float | None = Field(
        None,
        description="Right integration limit (direct pipeline); only a value below the largest "
        "difficulty has an effect (truncation). Absent: no truncation.",
    )
    normalisation: Literal["paper", "grid"] = Field(
        "paper",
        description="Normalised generality: paper (IRSS closed form per agent) or grid (the "
        "reference code's 100-point capability grid, which the published figures use).",
    )
    capability_range: tuple[float, float] | None = Field(
        None,
        description="[low, high] capability range q for normalised generality. Absent: [0, 1] "
        "for aref/rnk/dref, [0, n] for opp, [min, max] item difficulty for intrinsic.",
    )
    epsilon: float | None = Field(
        None,
        ge=0.0,
        lt=1.0,
        description="Intrinsic only: binarise responses as [value >= 1 - epsilon]. Absent: "
        "graded responses in [0, 1] are used as they are.",
    )
    clip_negative: bool = Field(
        False,
        description="Intrinsic only: responses may be below 0 and are clipped to 0 (e.g. "
        "average rewards in [-1, 1]).",
    )
    min_mean_response: float | None = Field(
        None,
        description="Leave out agents whose mean response (after clipping) is below this, "
        "before any transformation (e.g. 0.35 for near-random classifiers).",
    )
    difficulty_bins: int | None = Field(
        None,
        ge=2,
        description="Intrinsic only: replace difficulties by the reference's BinDifficulties "
        "labels with this many bins (its labelling quirk kept).",
    )
    reference_agent: str | None = Field(
        None, description="ARef: the agent whose scores are the reference."
    )
    aref_convention: Literal["greater_butequalhalf", "greater_or_equal", "greater"] = Field(
        "greater_butequalhalf",
        description="ARef tie rule: 1 above / 0.5 equal / 0 below the reference "
        "(greater_butequalhalf), or >= (greater_or_equal), or > (greater).",
    )
    columns: int = Field(
        100, ge=2, le=10000, description="Rnk/DRef: grid points c per item (100 in the paper)."
    )
    group_items: bool = Field(
        False,
        description="Rnk: average each agent's scores over the items of one `group` (items file) "
        "first, as R's rowMeans, and rank the group means.",
    )
    distribution: Literal["beta", "normal"] = Field(
        "beta",
        description="DRef reference distribution; normal passes ref_variance as the standard "
        "deviation, as the reference code does.",
    )
    bootstrap: int = Field(
        200, ge=0, le=10000, description="Bootstrap replicates over items (0: no intervals)."
    )
    confidence: float = Field(
        0.95, gt=0.0, lt=1.0, description="Level of the bootstrap percentile intervals."
    )

    @model_validator(mode="after")
    def _consistent(self) -> BenchmarkSettings:
        rng = self.capability_range
        if rng is not None and not (math.isfinite(rng[0]) and math.isfinite(rng[1])):
            raise ValueError("capability_range must be finite")
        if rng is not None and not rng[1] > rng[0]:
            raise ValueError("capability_range must be [low, high] with high > low")
        if self.transform == "aref" and not self.reference_agent:
            raise ValueError("transform 'aref' needs reference_agent")
        return self


class SubmissionSettings(_Strict):
    """The ``[generality]`` section of ``submission.toml`` (no facts are required)."""

    notes: str = Field(
        "", max_length=5000, description="How the responses were produced (free text)."
    )


def is_populational(settings: Mapping[str, Any]) -> bool:
    """Whether a new bundle changes other agents' scores (ARef, Rnk, Opp)."""
    return str(settings.get("transform", "intrinsic")) in POPULATIONAL


def settings_of(bench: BenchmarkInput) -> BenchmarkSettings:
    """Return the benchmark's settings as a model (defaults filled in)."""
    return BenchmarkSettings.model_validate(dict(bench.settings))


# --------------------------------------------------------------------------- reading
@dataclass(frozen=True)
class ItemTable:
    """The benchmark's item catalogue (``items_file``)."""

    items: tuple[str, ...]
    columns: Mapping[str, tuple[Any, ...]]

    def column(self, name: str) -> tuple[Any, ...] | None:
        """Return one optional column's values, or None when the file lacks it."""
        return self.columns.get(name)


def _item_columns(s: BenchmarkSettings) -> list[Column]:
    cols = [Column("item")]
    cols.append(Column("difficulty", "float", required=s.transform == "intrinsic"))
    cols.append(Column("group", required=s.group_items))
    dref = s.transform == "dref"
    cols.append(Column("ref_mean", "float", required=dref))
    cols.append(Column("ref_variance", "float", required=dref, low=0.0))
    return cols


def read_items(fs: FileSet, s: BenchmarkSettings) -> tuple[ItemTable | None, list[Problem]]:
    """Parse the items file; None (and no problem) when it is absent and optional."""
    needed = s.transform in ("intrinsic", "dref") or s.group_items
    if not fs.has(s.items_file):
        if needed:
            return None, [
                Problem(
                    fs.where(s.items_file),
                    "-",
                    f"transform {s.transform!r} needs the items file",
                    "add it with columns item and "
                    + ("difficulty" if s.transform == "intrinsic" else "ref_mean, ref_variance")
                    + (", group" if s.group_items else ""),
                )
            ]
        return None, []
    rows, problems = check_csv(
        fs, s.items_file, _item_columns(s), unique=("item",), allow_extra=True
    )
    if problems:
        return None, problems
    names = tuple(str(r["item"]) for r in rows)
    present = {k for r in rows for k in r}
    cols = {k: tuple(r.get(k) for r in rows) for k in present if k != "item"}
    return ItemTable(names, cols), []


@dataclass(frozen=True)
class BundleData:
    """One bundle's parsed responses (columns of ``responses.csv``, in file order)."""

    agent: tuple[str, ...]
    item: tuple[str, ...]
    value: np.ndarray
    dates: Mapping[str, str]

    @property
    def agents(self) -> tuple[str, ...]:
        """Distinct agents in order of first appearance."""
        return tuple(dict.fromkeys(self.agent))


def _value_rule(s: BenchmarkSettings) -> Column:
    if s.transform in ("aref", "rnk"):
        return Column("value", "float")
    if s.transform == "dref" and s.distribution == "normal":
        return Column("value", "float")
    low = None if (s.transform == "intrinsic" and s.clip_negative) else 0.0
    return Column("value", "float", low=low, high=1.0)


def _fast_responses(fs: FileSet, rule: Column) -> tuple[list[str], list[str], np.ndarray] | None:
    """Parse a clean ``responses.csv`` quickly; None at the first irregularity.

    The generic :func:`check_csv` then re-reads the file to name every problem precisely.
    """
    try:
        text = fs.text(RESPONSES)
    except (KeyError, UnicodeDecodeError):
        return None
    reader = csv.reader(io.StringIO(text.lstrip("\ufeff"), newline=""))
    try:
        header = [h.strip() for h in next(reader)]
        rows = [r for r in reader if r and any(x.strip() for x in r)]
    except (StopIteration, csv.Error):
        return None
    if sorted(header) != ["agent", "item", "value"] or not rows:
        return None
    if any(len(r) != 3 for r in rows):
        return None
    ia, ii, iv = header.index("agent"), header.index("item"), header.index("value")
    agents = [r[ia].strip() for r in rows]
    items = [r[ii].strip() for r in rows]
    if not all(agents) or not all(items):
        return None
    try:
        values = np.array([r[iv].strip() for r in rows], dtype=np.float64)
    except ValueError:
        return None
    if not np.isfinite(values).all():
        return None
    if (rule.low is not None and (values < rule.low).any()) or (
        rule.high is not None and (values > rule.high).any()
    ):
        return None
    if len(set(zip(agents, items, strict=True))) != len(rows):
        return None
    return agents, items, values


def read_bundle(fs: FileSet, s: BenchmarkSettings) -> tuple[BundleData | None, list[Problem]]:
    """Parse and check ``responses.csv`` (and ``agents.csv`` if present)."""
    rule = _value_rule(s)
    problems: list[Problem] = []
    fast = _fast_responses(fs, rule)
    if fast is None:
        rows, problems = check_csv(
            fs, RESPONSES, [Column("agent"), Column("item"), rule], unique=("agent", "item")
        )
        if problems:
            return None, problems
        fast = (
            [str(r["agent"]) for r in rows],
            [str(r["item"]) for r in rows],
            np.array([float(r["value"]) for r in rows]),
        )
    agent, item, value = fast
    if s.transform == "opp":
        for a, i, v in zip(agent, item, value, strict=True):
            if a == i and v != 0.5:
                problems.append(
                    Problem(
                        fs.where(RESPONSES),
                        f"agent {a}, item {i}",
                        f"a game against itself is {v}; Opp counts it as a draw",
                        "remove the row or give 0.5",
                    )
                )
    dates: dict[str, str] = {}
    if fs.has(AGENTS):
        arows, more = check_csv(
            fs,
            AGENTS,
            [Column("agent"), Column("date", "date", required=False, allow_empty=True)],
            unique=("agent",),
            allow_extra=True,
        )
        problems += more
        known = set(agent)
        for r in arows:
            if r["agent"] not in known:
                problems.append(
                    Problem(
                        fs.where(AGENTS),
                        f"agent {r['agent']}",
                        "has no responses in responses.csv",
                        "remove the row or add its responses",
                    )
                )
            elif r.get("date") is not None:
                dates[str(r["agent"])] = r["date"].isoformat()
    return BundleData(tuple(agent), tuple(item), value, dates), problems


# --------------------------------------------------------------------------- validation
def validate_benchmark(bench: BenchmarkInput) -> list[Problem]:
    """Check the settings against the reference files (items, difficulties, references)."""
    where = bench.files.where("benchmark.toml")
    try:
        s = settings_of(bench)
    except Exception as exc:
        return [Problem(where, "generality", str(exc), "correct the [generality] section")]
    problems: list[Problem] = []
    items, more = read_items(bench.files, s)
    problems += more
    if items is not None and s.transform == "dref" and s.distribution == "beta":
        from pipeline.metrics.transforms import beta_parameters

        mu = np.array(items.column("ref_mean"), dtype=float)
        var = np.array(items.column("ref_variance"), dtype=float)
        with np.errstate(divide="ignore", invalid="ignore"):
            a, b = beta_parameters(mu, var)
        for k in np.flatnonzero(~((a > 0) & (b > 0))):
            problems.append(
                Problem(
                    bench.files.where(s.items_file),
                    f"item {items.items[k]}",
                    "the Beta reference needs 0 < ref_mean < 1 and "
                    "0 < ref_variance < ref_mean (1 - ref_mean)",
                    "correct the reference mean or variance",
                )
            )
    if s.pipeline == "padded" and (s.kmin is not None or s.kmax is not None):
        problems.append(
            Problem(
                where,
                "generality.kmin",
                "kmin/kmax are ignored by the padded pipeline (its limits come from the "
                "difficulties)",
                "remove them",
                severity="warning",
            )
        )
    if s.transform != "intrinsic" and (
        s.epsilon is not None or s.clip_negative or s.difficulty_bins
    ):
        problems.append(
            Problem(
                where,
                "generality",
                "epsilon, clip_negative and difficulty_bins apply to intrinsic difficulty only",
                "remove them or use transform = 'intrinsic'",
            )
        )
    return problems


def validate_bundle(bundle: BundleInput, bench: BenchmarkInput) -> list[Problem]:
    """Check ``responses.csv``: columns, values, duplicates, unknown items; ``agents.csv``."""
    try:
        s = settings_of(bench)
    except Exception:
        return []  # the benchmark's own validation reports it
    data, problems = read_bundle(bundle.files, s)
    if data is not None:
        seen = set(data.item)
    else:  # report unknown items of the readable rows too: every problem at once
        rows, _ = check_csv(
            bundle.files, RESPONSES, [Column("item", required=False)], allow_extra=True
        )
        seen = {str(r["item"]) for r in rows if r.get("item")}
    items, _ = read_items(bench.files, s)
    if items is not None:
        known = set(items.items)
        unknown = sorted(seen - known)
        for i in unknown[:20]:
            problems.append(
                Problem(
                    bundle.files.where(RESPONSES),
                    f"item {i}",
                    "is not an item of this benchmark",
                    f"use the item names of {bench.files.where(s.items_file)}",
                )
            )
        if len(unknown) > 20:
            problems.append(
                Problem(
                    bundle.files.where(RESPONSES),
                    "item",
                    f"{len(unknown) - 20} more unknown items not shown",
                    "",
                )
            )
    return problems


# --------------------------------------------------------------------------- scoring
@dataclass(frozen=True)
class Population:
    """All agents of a benchmark as one matrix (rows: agents, columns: items)."""

    agents: tuple[str, ...]
    bundles: tuple[str, ...]
    items: tuple[str, ...]
    values: np.ndarray
    dates: Mapping[str, str]


def assemble(items: ItemTable | None, data: Sequence[tuple[str, BundleData]]) -> Population:
    """Stack the bundles' responses into one agents × items matrix (NaN = missing).

    Raises
    ------
    ScoringError
        The same agent name in two bundles.
    """
    owner: dict[str, str] = {}
    for bid, bd in data:
        for a in bd.agents:
            if a in owner:
                raise ScoringError(
                    f"agent {a!r} appears in bundles {owner[a]!r} and {bid!r}",
                    hint="give each agent one bundle (agent names are unique per benchmark)",
                )
            owner[a] = bid
    agents = tuple(owner)
    if items is not None:
        names = items.items
    else:
        names = tuple(dict.fromkeys(i for _, bd in data for i in bd.item))
    col = {n: k for k, n in enumerate(names)}
    row = {a: k for k, a in enumerate(agents)}
    values = np.full((len(agents), len(names)), np.nan)
    for _, bd in data:
        cols = np.array([col.get(i, -1) for i in bd.item], dtype=np.int64)
        rows = np.array([row[a] for a in bd.agent], dtype=np.int64)
        ok = cols >= 0
        values[rows[ok], cols[ok]] = bd.value[ok]
    dates = {a: d for _, bd in data for a, d in bd.dates.items()}
    return Population(agents, tuple(owner[a] for a in agents), names, values, dates)


def _seed(root: int, benchmark: str) -> int:
    digest = hashlib.sha256(benchmark.encode("utf-8")).digest()
    ss = np.random.SeedSequence([root, int.from_bytes(digest[:8], "little")])
    return int(ss.generate_state(1, np.uint64)[0])


@dataclass(frozen=True)
class Analysis:
    """A computed benchmark: who was scored, the study result and what was left out."""

    population: Population
    kept: np.ndarray
    points: Any
    result: Any
    notes: tuple[str, ...]


def analyse(
    s: BenchmarkSettings,
    items: ItemTable | None,
    pop: Population,
    *,
    seed: int = 0,
    executor: Any = None,
) -> Analysis:
    """Apply the declared transformation and compute every indicator (the use case)."""
    from pipeline.metrics import transforms as tf
    from pipeline.metrics.fullstudy import bin_difficulties
    from pipeline.metrics.study import StudyOptions, run_study

    notes: list[str] = []
    raw = pop.values.copy()
    if s.clip_negative:
        raw = np.where(raw < 0, 0.0, raw)
    kept = np.ones(len(pop.agents), dtype=bool)
    if s.min_mean_response is not None:
        with np.errstate(invalid="ignore"):
            means = np.nanmean(raw, axis=1)
        kept = means >= s.min_mean_response
        if (~kept).any():
            notes.append(
                f"{int((~kept).sum())} agent(s) with mean response below "
                f"{s.min_mean_response} left out"
            )
    raw = raw[kept]
    agents = [a for a, k in zip(pop.agents, kept, strict=True) if k]
    if not agents:
        raise ScoringError("no agent left to score", hint="check min_mean_response")
    try:
        if s.transform == "intrinsic":
            assert items is not None
            d = np.array(items.column("difficulty"), dtype=float)
            if s.difficulty_bins:
                d = bin_difficulties(d, s.difficulty_bins)
            pts = tf.intrinsic(raw, d, s.epsilon)
        elif s.transform == "aref":
            if s.reference_agent not in agents:
                raise ScoringError(
                    f"the reference agent {s.reference_agent!r} is in no bundle",
                    hint="add a bundle with its responses or fix reference_agent",
                )
            pts = tf.aref(raw, agents.index(s.reference_agent), s.aref_convention)
        elif s.transform == "rnk":
            scores = raw
            if s.group_items:
                assert items is not None
                groups: dict[str, list[int]] = {}
                for k, g in enumerate(items.column("group") or ()):
                    groups.setdefault(str(g), []).append(k)
                scores = tf.group_items(raw, list(groups.values()))
                notes.append(f"{len(groups)} item groups ranked on their mean scores")
            pts = tf.rnk(scores, s.columns)
        elif s.transform == "dref":
            assert items is not None
            pts = tf.dref(
                raw,
                np.array(items.column("ref_mean"), dtype=float),
                np.array(items.column("ref_variance"), dtype=float),
                s.columns,
                s.distribution,
            )
        else:
            pos = {a: k for k, a in enumerate(agents)}
            cols = [k for k, it in enumerate(pop.items) if it in pos]
            table = np.full((len(agents), len(agents)), np.nan)
            for k in cols:
                table[:, pos[pop.items[k]]] = raw[:, k]
            pts = tf.opp(table)
    except ValueError as exc:
        raise ScoringError(f"cannot apply transform {s.transform!r}: {exc}") from exc
    if s.kmin is not None or s.pipeline == "padded":
        kmin = s.kmin
    else:
        dmin = float(pts.difficulty.min())
        kmin = 0.0 if dmin >= 0 else dmin
    opts = StudyOptions(
        pipeline=s.pipeline,
        kmin=kmin,
        kmax=s.kmax,
        normalisation=s.normalisation,
        capability_range=s.capability_range,
        bootstrap=s.bootstrap,
        confidence=s.confidence,
        seed=seed,
    )
    result = run_study(pts, opts, executor=executor)
    return Analysis(pop, kept, pts, result, tuple(notes))


def _finite(x: float) -> float | None:
    return float(x) if math.isfinite(x) else None


def score(bench: BenchmarkInput, bundles: Sequence[BundleInput], ctx: ScoreContext) -> TrackResult:
    """Recompute the whole benchmark from all its bundles (see the module docstring)."""
    s = settings_of(bench)
    items, problems = read_items(bench.files, s)
    if problems:
        raise ScoringError(f"benchmark {bench.id}: {problems[0]}")
    result = TrackResult()
    data: list[tuple[str, BundleData]] = []
    for b in sorted(bundles, key=lambda x: x.id):
        bd, probs = read_bundle(b.files, s)
        errors = [p for p in probs if p.severity == "error"]
        if bd is None or errors:
            result.notes.append(f"bundle {b.id} skipped: {errors[0] if errors else 'unreadable'}")
            continue
        data.append((b.id, bd))
    if not data:
        result.notes.append("no bundle to score")
        return result
    seed = _seed(ctx.seed, bench.id)
    an = analyse(s, items, assemble(items, data), seed=seed, executor=ctx.executor)
    result.notes.extend(an.notes)
    result.rows.extend(_rows(s, an, seed))
    from pipeline.tracks.generality_charts import charts, summary_notes

    result.charts.update(charts(an))
    result.notes.extend(summary_notes(s, an))
    return result


def _rows(s: BenchmarkSettings, an: Analysis, seed: int) -> list[ScoreRow]:
    res = an.result
    ind = res.indicators
    norm = res.normalised
    rows: list[ScoreRow] = []
    pop = an.population
    idx = np.flatnonzero(an.kept)
    for j, k in enumerate(idx):
        agent, bundle = pop.agents[k], pop.bundles[k]
        details = {
            "transform": s.transform,
            "pipeline": s.pipeline,
            "normalisation": norm.mode,
            "capability_range": [norm.low, norm.high],
            "abstruse": bool(norm.abstruse[j]),
            "status": str(ind.status[j]),
        }
        if res.capability_ci is not None:
            details["bootstrap"] = {"replicates": s.bootstrap, "seed": seed}

        def ci(interval: Any, j: int = j) -> tuple[float | None, float | None]:
            if interval is None:
                return None, None
            return _finite(interval.low[j]), _finite(interval.high[j])

        values = {
            "capability": (float(ind.capability[j]), ci(res.capability_ci)),
            "spread": (float(ind.spread[j]), ci(res.spread_ci)),
            "generality": (float(ind.generality[j]), (None, None)),
            "normalised_generality": (float(norm.gamma[j]), (None, None)),
            "expected_difficulty": (float(ind.expected_difficulty[j]), (None, None)),
        }
        for metric in METRICS:
            v, (lo, hi) = values[metric]
            d = dict(details)
            if math.isnan(v):
                d["why"] = f"undefined ({ind.status[j]})"
            rows.append(ScoreRow(bundle, agent, metric, v, lo, hi, True, d))
    return rows


# --------------------------------------------------------------------------- folder use case
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


def bundle_template() -> dict[str, str]:
    """Return the files ``gmeter new`` writes into a new generality bundle."""
    return {
        "submission.toml": '\n[generality]\nnotes = "TODO: how the responses were produced"\n',
        "responses.csv": "agent,item,value\nTODO: agent name,TODO: item,1\n",
    }


def benchmark_template() -> dict[str, str]:
    """Return the ``[generality]`` section and items file of a new benchmark."""
    return {
        "benchmark.toml": (
            "\n[generality]\n"
            'transform = "intrinsic"   # intrinsic | aref | rnk | dref | opp\n'
            'normalisation = "paper"   # or "grid" (the reference code)\n'
            "# capability_range = [0.0, 1.0]\n"
        ),
        "reference/items.csv": "item,difficulty\nTODO: item,0.5\n",
    }


TRACK = TrackSpec(
    name="generality",
    title="Generality",
    paper="J. Hernández-Orallo, B. S. Loe, L. Cheke, F. Martínez-Plumed, S. Ó hÉigeartaigh, "
    "General intelligence disentangled via a generality metric for natural and artificial "
    "intelligence, Scientific Reports 11, 22822 (2021)",
    primary_metric="capability",
    secondary_metrics=("spread", "generality", "normalised_generality", "expected_difficulty"),
    benchmark_settings=BenchmarkSettings,
    submission_settings=SubmissionSettings,
    validate_benchmark=validate_benchmark,
    validate_bundle=validate_bundle,
    score=score,
    populational=True,
    bundle_template=bundle_template,
    benchmark_template=benchmark_template,
)
