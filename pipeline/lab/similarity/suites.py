"""The passive (classification) and active (Gym) experiments of ``gmeter similarity run``.

``--experiment classification`` runs the paper's image experiment on scikit-learn's bundled
data sets (:mod:`~pipeline.lab.similarity.sklearn_suite`), ``--experiment gym`` its Gym
experiment on Gymnasium's built-in environments (:mod:`~pipeline.lab.similarity.gym_suite`).
Both share one plan:

* replicate ``k`` (a ``seed`` of ``runs.csv``) scores the baseline on every test alone and on
  the merge of every pair, for every proportion in ``p`` (the paper's Fig. 3 sweep when there
  are several) and, for classification, every network width in ``hidden`` (Fig. 2);
* each of those scores is one work item of the executor: a pure function of the settings and
  its keys, its seeds derived from ``root_seed`` (:func:`pipeline.metrics.seeds.derive_seed`),
  so local processes, Dask and one process give identical numbers;
* ``alone = "matched"`` (default) scores A and B alone on exactly what the merge takes from
  them (the elements it drew, or their share ``p``/``1 − p`` of the step budget), so a pair
  that does not interact gives ``V_AB = p V_A + (1 − p) V_B`` and eq. 3's reference point
  holds; ``alone = "whole"`` scores each test alone on all of it, as the paper (whose 50,000
  element sets made the two agree), which also counts the smaller share as interference;
* a test keeps its seeds (data subset, environment resets) in all runs of a replicate, alone
  or merged: common random numbers;
* ``merge`` lists the merge methods: ``sampling`` (the paper's method) and ``stitching`` (the
  paper's Fig. 2 contrast; for Gym two environments side by side, one of them driven): the
  stitched pair ``AB`` is compared with each test stitched with itself, ``V_A = V_AA`` and
  ``V_B = V_BB`` (so ``alone`` does not apply to it).

No heavy library is imported here: the suites' modules are imported inside the work items.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator, Mapping
from dataclasses import asdict, dataclass, fields
from typing import Any, Literal

from pipeline.errors import UsageError

Experiment = Literal["classification", "gym"]
EXPERIMENTS: tuple[str, ...] = ("classification", "gym")
MAX_TESTS = 12
MAX_SEEDS = 64
MAX_P = 19
MERGES: tuple[str, ...] = ("sampling", "stitching")


def _tests_known(experiment: str) -> dict[str, tuple[str, str]]:
    """``{test id: (title, description)}`` of an experiment (cheap: no heavy import)."""
    if experiment == "classification":
        from pipeline.lab.similarity.sklearn_suite import DATASETS

        return {t.id: (t.title, t.description) for t in DATASETS.values()}
    from pipeline.lab.similarity.gym_suite import ENVS

    return {t.id: (t.title, t.description) for t in ENVS.values()}


DEFAULT_TESTS: dict[str, tuple[str, ...]] = {
    "classification": ("digits", "digits-inverted", "digits-rotated", "iris", "wine",
                       "breast-cancer"),
    "gym": ("CartPole-v0", "CartPole-v1", "MountainCar-v0", "Acrobot-v1", "FrozenLake-v1",
            "FrozenLake8x8", "Taxi", "CliffWalking"),
}  # fmt: skip


@dataclass(frozen=True)
class SuiteSettings:
    """Everything that determines a suite experiment's ``runs.csv`` (recorded in the bundle).

    Domains (checked on construction, every problem reported at once): ``2 … 12`` distinct
    known tests; ``seeds`` in ``1 … 64``; ``root_seed`` in ``0 … 2**63 − 1``; ``p`` one to 19
    distinct values in ``(0, 1)``; ``alone`` ``matched`` or ``whole``; ``merge`` sampling
    and/or stitching. Classification:
    ``hidden`` one to 8 widths in ``1 … 1024``, ``layers`` ``1 … 4``, ``max_iter``
    ``1 … 2000``, ``size`` ``20 … 5000``, ``test_fraction`` ``[0.1, 0.5]``. Gym: ``steps``
    ``100 … 1,000,000``, ``eval_episodes`` ``1 … 1000``, ``bins`` ``2 … 20``, ``alpha``
    ``(0, 1]``, ``gamma`` ``[0, 1)``, ``epsilon_end`` ``[0, 1]``, ``explore`` ``(0, 1]``.
    """

    experiment: str = "classification"
    tests: tuple[str, ...] = ()
    seeds: int = 3
    root_seed: int = 2020
    p: tuple[float, ...] = (0.5,)
    alone: str = "matched"
    merge: tuple[str, ...] = ("sampling",)
    # classification (scikit-learn MLPClassifier)
    hidden: tuple[int, ...] = (32,)
    layers: int = 1
    max_iter: int = 100
    size: int = 1000
    test_fraction: float = 0.3
    # gym (tabular Q-learning)
    steps: int = 30_000
    eval_episodes: int = 30
    bins: int = 6
    alpha: float = 0.5
    gamma: float = 0.99
    epsilon_end: float = 0.05
    explore: float = 0.5

    def __post_init__(self) -> None:
        problems: list[str] = []
        if self.alone not in ("matched", "whole"):
            problems.append(f"alone is {self.alone!r}: use matched or whole")
        if self.experiment not in EXPERIMENTS:
            raise UsageError(
                f"unknown experiment {self.experiment!r}",
                hint="use aiq-families, classification or gym",
            )
        if not self.tests:
            object.__setattr__(self, "tests", DEFAULT_TESTS[self.experiment])
        if self.experiment == "gym":
            from pipeline.lab.similarity.gym_suite import canonical_env

            object.__setattr__(self, "tests", tuple(canonical_env(t) for t in self.tests))
        known = _tests_known(self.experiment)
        unknown = [t for t in self.tests if t not in known]
        if unknown:
            problems.append(f"unknown test(s) {', '.join(unknown)}: use {', '.join(known)}")
        if len(set(self.tests)) != len(self.tests) or not 2 <= len(self.tests) <= MAX_TESTS:
            problems.append(f"tests: give 2 to {MAX_TESTS} distinct tests")
        merges = tuple(str(x) for x in self.merge)
        object.__setattr__(self, "merge", merges)
        if not merges or len(set(merges)) != len(merges) or any(x not in MERGES for x in merges):
            problems.append(f"merge: give sampling, stitching or both, got {', '.join(merges)}")
        ps = tuple(float(x) for x in self.p)
        object.__setattr__(self, "p", ps)
        if not 1 <= len(ps) <= MAX_P or len(set(ps)) != len(ps):
            problems.append(f"p: give 1 to {MAX_P} distinct proportions")
        if any(not (math.isfinite(x) and 0.0 < x < 1.0) for x in ps):
            problems.append("p: every proportion must lie strictly between 0 and 1")
        object.__setattr__(self, "hidden", tuple(int(h) for h in self.hidden))
        ints = {
            "seeds": (1, MAX_SEEDS),
            "root_seed": (0, 2**63 - 1),
            "layers": (1, 4),
            "max_iter": (1, 2000),
            "size": (20, 5000),
            "steps": (100, 1_000_000),
            "eval_episodes": (1, 1000),
            "bins": (2, 20),
        }
        for name, (lo, hi) in ints.items():
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, int) or not lo <= v <= hi:
                problems.append(f"{name} must be an integer in [{lo}, {hi}], got {v!r}")
        if not 1 <= len(self.hidden) <= 8 or any(not 1 <= h <= 1024 for h in self.hidden):
            problems.append("hidden: give 1 to 8 layer widths in [1, 1024]")
        if len(set(self.hidden)) != len(self.hidden):
            problems.append("hidden: widths must be distinct")
        floats: dict[str, tuple[float, float, bool]] = {
            "test_fraction": (0.1, 0.5, True),
            "alpha": (0.0, 1.0, False),
            "gamma": (0.0, 1.0, False),
            "epsilon_end": (0.0, 1.0, True),
            "explore": (0.0, 1.0, False),
        }
        for name, (flo, fhi, closed) in floats.items():
            fv = getattr(self, name)
            ok = isinstance(fv, int | float) and not isinstance(fv, bool) and math.isfinite(fv)
            if ok and name == "alpha":
                ok = 0.0 < fv <= 1.0
            elif ok and name == "gamma":
                ok = 0.0 <= fv < 1.0
            elif ok and name == "explore":
                ok = 0.0 < fv <= 1.0
            elif ok:
                ok = flo <= fv <= fhi if closed else flo < fv < fhi
            if not ok:
                problems.append(f"{name} is {fv!r}, outside its domain (see docs/similarity.md)")
        if problems:
            raise UsageError("; ".join(problems), hint="see docs/similarity.md")

    # ------------------------------------------------------------------ recording
    def relevant(self) -> tuple[str, ...]:
        """The settings that matter for this experiment (what the bundle records)."""
        common = ("experiment", "tests", "seeds", "root_seed", "p", "alone", "merge")
        own = (
            ("hidden", "layers", "max_iter", "size", "test_fraction")
            if self.experiment == "classification"
            else ("steps", "eval_episodes", "bins", "alpha", "gamma", "epsilon_end", "explore")
        )
        return common + own

    def to_dict(self) -> dict[str, Any]:
        """Return the relevant settings as recorded in TOML."""
        d = asdict(self)
        out = {k: d[k] for k in self.relevant()}
        if self.experiment == "gym" and self.merge == ("sampling",):
            del out["merge"]  # the default, left out so the bundles made before stitching keep
            # their recorded settings (and the keys of their work items) unchanged
        for k in ("tests", "p", "hidden", "merge"):
            if k in out:
                out[k] = list(out[k])
        return out

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> SuiteSettings:
        """Rebuild settings from :meth:`to_dict` output; unknown keys are an error."""
        known = {f.name for f in fields(cls)}
        extra = sorted(set(data) - known)
        if extra:
            raise UsageError(f"unknown experiment setting(s): {', '.join(extra)}")
        d = dict(data)
        for k in ("tests", "p", "hidden", "merge"):
            if k in d:
                v = d[k]
                d[k] = tuple(v) if isinstance(v, list | tuple) else (v,)
        try:
            return cls(**d)
        except TypeError as exc:
            raise UsageError(f"bad experiment settings: {exc}") from None

    def agent_name(self, width: int) -> str:
        """The ``agent`` column of ``runs.csv``."""
        if self.experiment == "classification":
            return f"mlp-{'x'.join([str(width)] * self.layers)}"
        return "q-learning"


@dataclass(frozen=True)
class RunItem:
    """One score to compute: test(s), proportion and width of replicate ``k``."""

    settings: dict[str, Any]
    k: int
    tests: tuple[str, ...]
    p: float
    width: int
    part: str = "AB"
    merge: str = "sampling"


def _seeds(
    s: SuiteSettings, k: int, tests: tuple[str, ...], p: float, merge: str = "sampling"
) -> dict[str, int]:
    from pipeline.metrics.seeds import derive_seed

    out = {t: derive_seed(s.root_seed, s.experiment, k, "test", t) for t in tests}
    pair = "|".join(tests)
    # sampling keeps its historical key, so adding stitching changes no committed number
    tag = "merge" if merge == "sampling" else merge
    out["merge"] = derive_seed(s.root_seed, s.experiment, k, tag, pair, repr(p))
    out["schedule"] = out["merge"]
    out["mate"] = derive_seed(s.root_seed, s.experiment, k, "mate", pair, repr(p))
    out["noise"] = derive_seed(s.root_seed, s.experiment, k, "noise", pair, repr(p))
    out["model"] = derive_seed(s.root_seed, s.experiment, k, "model")
    out["agent"] = derive_seed(s.root_seed, s.experiment, k, "agent")
    return out


def run_item(item: RunItem) -> float:
    """Compute one item's ``V`` (picklable; imports its heavy library itself)."""
    s = SuiteSettings.from_dict(item.settings)
    seeds = _seeds(s, item.k, item.tests, item.p, item.merge)
    from threadpoolctl import threadpool_limits

    with threadpool_limits(1):  # BLAS threads fight on a shared machine; one is faster
        if s.experiment == "classification":
            from pipeline.lab.similarity.sklearn_suite import MLPSettings, run_data_test

            m = MLPSettings(item.width, s.layers, s.max_iter, s.test_fraction)
            return run_data_test(item.tests, item.p, m, s.size, seeds, item.part, item.merge)
        from pipeline.lab.similarity.gym_suite import (
            AgentSettings,
            run_env_test,
            run_stitched_env_test,
        )

        if item.merge == "stitching":
            a = AgentSettings(s.steps, s.eval_episodes, s.bins, s.alpha, s.gamma,
                              s.epsilon_end, s.explore)  # fmt: skip
            return run_stitched_env_test((item.tests[0], item.tests[1]), item.part, item.p, a,
                                         seeds)  # fmt: skip
        steps = s.steps
        tests = item.tests
        if item.part != "AB":  # matched reference: one env, its share of the merged budget
            share = item.p if item.part == "A" else 1.0 - item.p
            steps = max(1, math.floor(share * s.steps + 0.5))
            tests = (tests[0],) if item.part == "A" else (tests[1],)
        a = AgentSettings(steps, s.eval_episodes, s.bins, s.alpha, s.gamma, s.epsilon_end,
                          s.explore)  # fmt: skip
        return run_env_test(tests, item.p, a, seeds)


def _parts(s: SuiteSettings, merge: str) -> tuple[str, ...]:
    if merge == "stitching":
        return ("AA", "BB", "AB")
    return ("A", "B", "AB") if s.alone == "matched" else ("AB",)


@dataclass(frozen=True)
class Cell:
    """One row of ``runs.csv`` to be: replicate ``k``, width, merge, pair and proportion."""

    k: int
    width: int
    merge: str
    a: str
    b: str
    p: float


def cells(s: SuiteSettings) -> Iterator[Cell]:
    """Yield every cell of the experiment in the order of ``runs.csv``.

    Seed, width, merge, pair, ``p``: the one loop :func:`plan` and :func:`run_suite` share.
    """
    widths = s.hidden if s.experiment == "classification" else (0,)
    for k in range(s.seeds):
        for w in widths:
            for merge in s.merge:
                for i, a in enumerate(s.tests):
                    for b in s.tests[i + 1 :]:
                        for p in s.p:
                            yield Cell(k, w, merge, a, b, p)


def plan(s: SuiteSettings) -> list[RunItem]:
    """Every work item of the experiment, in a fixed order.

    Per replicate and width: with ``alone = "whole"``, each test alone once (sampling's
    references), then every cell's parts (:func:`_parts`).
    """
    d = s.to_dict()
    items = []
    started: set[tuple[int, int]] = set()
    for c in cells(s):
        if (c.k, c.width) not in started:
            started.add((c.k, c.width))
            if s.alone == "whole" and "sampling" in s.merge:
                items += [RunItem(d, c.k, (t,), 0.5, c.width) for t in s.tests]
        items += [RunItem(d, c.k, (c.a, c.b), c.p, c.width, part, c.merge)
                  for part in _parts(s, c.merge)]  # fmt: skip
    return items


@dataclass(frozen=True)
class SuiteResult:
    """All rows of one suite experiment."""

    settings: SuiteSettings
    rows: list[dict[str, Any]]
    versions: dict[str, str]


def library_versions(experiment: str) -> dict[str, str]:
    """The versions of the libraries whose behaviour the numbers depend on."""
    from pipeline.lab.similarity.gym_suite import gym_version

    out = {"gymnasium": gym_version()}
    if experiment == "classification":
        from pipeline.lab.similarity.sklearn_suite import sklearn_version

        out["scikit-learn"] = sklearn_version()
    return out


def run_suite(
    settings: SuiteSettings,
    *,
    executor: Any = None,
    progress: Callable[[str, int, int], None] | None = None,
) -> SuiteResult:
    """Run every item (in parallel through ``executor``) and assemble the ``runs.csv`` rows."""
    from pipeline.executor import InProcessExecutor

    items = plan(settings)
    ex = executor or InProcessExecutor()
    values = ex.map(run_item, items, label=f"{settings.experiment} runs", progress=progress)
    v = {(it.k, it.tests, it.p, it.width, it.part, it.merge): val
         for it, val in zip(items, values, strict=True)}  # fmt: skip
    rows: list[dict[str, Any]] = []
    for c in cells(settings):
        key = (c.k, (c.a, c.b), c.p, c.width)
        if c.merge == "stitching":
            va, vb = v[(*key, "AA", c.merge)], v[(*key, "BB", c.merge)]
        elif settings.alone == "matched":
            va, vb = v[(*key, "A", c.merge)], v[(*key, "B", c.merge)]
        else:
            va = v[(c.k, (c.a,), 0.5, c.width, "AB", "sampling")]
            vb = v[(c.k, (c.b,), 0.5, c.width, "AB", "sampling")]
        rows.append({
            "test_a": c.a, "test_b": c.b, "p": c.p, "merge": c.merge,
            "agent": settings.agent_name(c.width), "v_a": va, "v_b": vb,
            "v_ab": v[(*key, "AB", c.merge)], "seed": str(c.k + 1),
        })  # fmt: skip
    return SuiteResult(settings, rows, library_versions(settings.experiment))
