"""Import of the published g-index experiments (the companion code's ``experiments/*.json``).

Parsing an experiment file (:func:`parse_maya_experiment`), recomputing its g-index as the
companion code does (:func:`experiment_g_index`) and converting it into the files of a
*reported* gindex bundle (:func:`maya_experiment_bundle`), used by ``gmeter gindex`` and
``gmeter import maya-experiment``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from pydantic import BaseModel, ConfigDict

from pipeline.toml_writer import toml_string
from pipeline.tracks.gindex.settings import COMPUTE, CURRICULUM, DIVERGENCES

MAYA_URL = "https://github.com/mayahq/g-index-benchmark"
MAYA_COMMIT = "41aa8291c8bebb88b0c05a10ee4974dbaec09c05"
#: The directory order of ``domains/`` on the authors' machine (spec §10.13); the only order
#: that reproduces the companion code's published output.
MAYA_DOMAIN_ORDER: tuple[str, ...] = (
    "template-slider", "template-form", "url-skill", "cron-schedule", "gmail-send",
    "telegram-3-reply", "telegram-2-reply", "youtube-pause", "youtube-resume", "http",
    "cron-reminder", "google-search", "twitter", "youtube-play", "facebook",
    "googlesearch-to-csv",
)
#: Display names of the published models.
MAYA_SYSTEMS = {
    "gpt2-medium": "GPT2-345M",
    "gpt2-large": "GPT2-774M",
    "gpt2-xl": "GPT2-1.5B",
    "EleutherAI/gpt-neo-2.7B": "GPT-Neo-2.7B",
}
PAPER = ("G. Venkatasubramanian, S. Kar, A. Singh, S. Mishra, D. Yadav, S. Chandak, \"Towards "
         "a Measure of General Machine Intelligence\", arXiv:2109.12075 (2021)")


class MayaExperiment(BaseModel):
    """The fields of a published experiment file (companion code's ``experiments/*.json``)."""

    model_config = ConfigDict(frozen=True)

    model_name: str
    model_family: str
    train: list[tuple[str, int]]
    test: list[tuple[str, int]]
    compute: float
    train_seconds: float | None
    domains: list[tuple[str, float, int | None, float | None]]
    divergence: float | None


def parse_maya_experiment(obj: Any) -> MayaExperiment:
    """Read a published experiment object; ``ValueError`` names the first missing field."""

    def get(path: str) -> Any:
        cur = obj
        for part in path.split("."):
            if not isinstance(cur, dict) or part not in cur:
                raise ValueError(f"the experiment has no {path}")
            cur = cur[part]
        return cur

    def pairs(path: str) -> list[tuple[str, int]]:
        out = []
        for k, x in enumerate(get(path)):
            if not isinstance(x, dict) or not isinstance(x.get("name"), str):
                raise ValueError(f"{path}[{k}] has no name")
            n = x.get("num_samples")
            if not isinstance(n, int) or isinstance(n, bool):
                raise ValueError(f"{path}[{k}].num_samples is not a whole number")
            out.append((x["name"], n))
        return out

    compute = get("train_cost.compute")
    if not isinstance(compute, int | float) or isinstance(compute, bool):
        raise ValueError("train_cost.compute is not a number")
    doms = []
    for k, x in enumerate(get("performance.domains")):
        div = x.get("divergence") if isinstance(x, dict) else None
        if not isinstance(x, dict) or not isinstance(x.get("name"), str) or \
                not isinstance(div, int | float) or isinstance(div, bool):
            raise ValueError(f"performance.domains[{k}] needs a name and a divergence")
        doms.append((x["name"], float(div), x.get("num_samples"), x.get("perfects")))
    perf = obj.get("performance", {})
    ts = obj.get("train_cost", {}).get("time")
    model = obj.get("model", {}) if isinstance(obj.get("model"), dict) else {}
    return MayaExperiment(
        model_name=str(get("model.train_params.model_name")),
        model_family=str(model.get("name", "")),
        train=pairs("train_set.data"),
        test=pairs("test_set.data"),
        compute=float(compute),
        train_seconds=float(ts) if isinstance(ts, int | float) else None,
        domains=doms,
        divergence=perf.get("divergence") if isinstance(perf.get("divergence"), float) else None,
    )


def experiment_tasks(exp: MayaExperiment) -> list[tuple[str, float]]:
    """(task domain, divergence) in test-set order, the first matching divergence (spec §4)."""
    first: dict[str, float] = {}
    for name, div, _, _ in exp.domains:
        first.setdefault(name, div)
    missing = [t for t, _ in exp.test if t not in first]
    if missing:
        raise ValueError(f"performance.domains lacks the test domain(s) {', '.join(missing)}")
    return [(t, first[t]) for t, _ in exp.test]


def experiment_g_index(
    obj: Any,
    domains: dict[str, list[Any]],
    order: Sequence[str],
    convention: str = "reference",
    *,
    rho: float = 1e-4,
    executor: Any = None,
) -> tuple[MayaExperiment, Any]:
    """The companion code's g-index of a published experiment file (spec §4).

    Returns the parsed experiment and the :class:`~pipeline.metrics.gindex.index.GIndexResult`
    (per-domain form; Ω from ``domains`` symmetrised in ``order``).

    Raises
    ------
    ValueError
        A malformed experiment, a domain order that does not match the domains, or a task or
        curriculum domain without reference programs.
    """
    from pipeline.metrics.gindex.index import companion_g_index
    from pipeline.metrics.gindex.omega import domain_distance_matrix

    exp = parse_maya_experiment(obj)
    tasks = experiment_tasks(exp)
    unknown = sorted({t for t, _ in tasks} | {c for c, _ in exp.train} - set(domains))
    unknown = [d for d in unknown if d not in domains]
    if unknown:
        raise ValueError(f"no reference programs for domain(s) {', '.join(unknown)}")
    dd = domain_distance_matrix(
        domains, order, convention, map_fn=executor.map if executor is not None else None
    )
    return exp, companion_g_index(tasks, exp.train, exp.compute, dd.as_mapping(), rho)



def maya_experiment_bundle(
    obj: Any, *, source: str, system: str, version: str = "", submitted: str = "2021-09-30"
) -> dict[str, bytes]:
    """Convert a published experiment into the files of a *reported* gindex bundle.

    Numbers are written with ``repr`` so they read back as the same doubles: scoring the
    bundle gives the companion code's value bit for bit.
    """
    exp = parse_maya_experiment(obj)
    tasks = experiment_tasks(exp)
    extra = {name: (n, pf) for name, _, n, pf in exp.domains}
    div = ["domain,divergence,num_samples,perfects"]
    for t, d in tasks:
        n, pf = extra.get(t, (None, None))
        div.append(f"{t},{d!r},{'' if n is None else n},{'' if pf is None else repr(pf)}")
    cur = ["domain,num_samples"] + [f"{c},{n}" for c, n in exp.train]
    comp = ["domain,compute,seconds"]
    comp.append(f",{exp.compute!r},{'' if exp.train_seconds is None else repr(exp.train_seconds)}")
    total = sum(n for _, n in exp.train)
    desc = (f"{exp.model_name} fine-tuned on {total} samples of {len(exp.train)} domains "
            f"({exp.compute!r} PFLOP·s of training compute), tested on {len(tasks)} task "
            "domains. Mean divergences as published; the programs are not published.")
    notes = (f"Converted by gmeter import maya-experiment from {source} (commit {MAYA_COMMIT}); "
             "one row of the paper's Table 1.")
    toml = [
        f"submitted = {submitted}",
        f"contact = {toml_string(MAYA_URL)}",
        'licence = "MIT"',
        f"description = {toml_string(desc)}",
        "",
        "[system]",
        f"name = {toml_string(system)}",
        f"version = {toml_string(version)}",
        'organisation = "Dotmaya (Maya)"',
        f"url = {toml_string(MAYA_URL)}",
        "",
        "[origin]",
        f"paper = {toml_string(PAPER)}",
        f"url = {toml_string(MAYA_URL)}",
        f"notes = {toml_string(notes)}",
        'licence_note = "MIT, Copyright (c) 2021 Dotmaya Private Limited"',
        "",
        "[gindex]",
        f"model = {toml_string(exp.model_name)}",
        f"compute = {exp.compute!r}",
    ]
    if exp.divergence is not None:
        toml.append(f"average_divergence = {exp.divergence!r}")
    return {
        "submission.toml": ("\n".join(toml) + "\n").encode(),
        DIVERGENCES: ("\n".join(div) + "\n").encode(),
        CURRICULUM: ("\n".join(cur) + "\n").encode(),
        COMPUTE: ("\n".join(comp) + "\n").encode(),
    }
