"""Writing an AIQ bundle: what ``gmeter aiq run`` produced, as the files the track reads.

The files and their format are the track's (:mod:`pipeline.tracks.aiq.bundle` for
``samples.csv`` and the traces, :mod:`pipeline.tracks.aiq.settings` for ``aiq.toml``); this
module only writes them.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from pipeline.lab.aiq.engine import AIQRun
from pipeline.toml_writer import toml_value
from pipeline.tracks.aiq.bundle import SAMPLE_COLUMNS, SAMPLES, STATUS_OK, TRACES, SampleRow
from pipeline.tracks.aiq.programs import gzip_bytes
from pipeline.tracks.aiq.settings import LOG, MACHINE_KEYS


def log_toml(
    run: AIQRun, *, program_count: int, programs_sha256: str, simplify: str, traces: str
) -> str:
    """Return the text of ``aiq.toml`` for a finished run."""
    from pipeline import __version__

    m = run.settings.machine
    e = run.estimate
    top: dict[str, Any] = {
        "gmeter_version": __version__,
        "agent": run.agent.text,
        "agent_kind": run.agent.kind,
        "method": run.method,
        "samples": run.budget,
        "seed": run.seed,
        "episode_length": run.settings.episode_length,
        "discount": run.settings.discount,
        **{k: getattr(m, k) for k in MACHINE_KEYS},
        "simplify": simplify,
        "program_count": program_count,
        "programs_sha256": programs_sha256,
        "traces": traces,
    }
    if run.agent.preset is not None:
        top["preset_episode_length"] = run.agent.preset
    result = {
        "aiq": e.value,
        "half_ci": e.half_ci,
        "ci_low": e.ci_low,
        "ci_high": e.ci_high,
        "legacy_half_ci": e.legacy_half_ci,
        "se_p": e.se_p,
        "pairs": e.pairs,
        "runs": len(run.rows),
        "failed_runs": sum(r.status != STATUS_OK for r in run.rows),
        "stages": run.stages,
    }
    lines = ["# AIQ run written by `gmeter aiq run`; do not edit (gmeter aiq verify replays it)"]
    lines += [f"{k} = {toml_value(v)}" for k, v in top.items()]
    lines += ["", "[result]"] + [f"{k} = {toml_value(v)}" for k, v in result.items()]
    from pipeline.lab.aiq.training import training_metadata

    training = training_metadata(run.agent)
    if training:
        lines += ["", "[training]"] + [f"{k} = {toml_value(v)}" for k, v in training.items()]
    return "\n".join(lines) + "\n"


def samples_csv(rows: Sequence[SampleRow], weights: Sequence[float]) -> str:
    """Return the text of ``samples.csv`` (rewards and weights in full precision)."""
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow([c.name for c in SAMPLE_COLUMNS])
    for r, wt in zip(rows, weights, strict=True):
        reward = "" if r.status != STATUS_OK else repr(float(r.reward))
        w.writerow([r.program_id, r.program, r.stratum, r.sign, r.seed, reward, r.steps,
                    r.cycles, r.status, r.stage, repr(float(wt))])  # fmt: skip
    return buf.getvalue()


def weights_of(run: AIQRun) -> list[float]:
    """The weight of every logged run (:func:`pipeline.tracks.aiq.score.run_weights`)."""
    from pipeline.tracks.aiq.score import run_weights

    top = max((r.stratum for r in run.rows), default=0)
    p = [0.0] * (top + 1)
    for st in run.estimate.strata:
        p[st.stratum] = st.p
    return run_weights(run.method, run.rows, p)


def traces_csv(rows: Sequence[SampleRow]) -> str:
    """Return the text of the traces file (before compression)."""
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(["program_id", "sign", "actions"])
    for r in rows:
        w.writerow([r.program_id, r.sign, r.actions])
    return buf.getvalue()


def submission_template(system: str, description: str) -> str:
    """Return a ``submission.toml`` to complete (written only when the bundle has none)."""
    import datetime as dt

    today = dt.date.today().isoformat()
    return (
        f"submitted = {today}\n"
        'contact = "TODO: your name <you@example.org>"\n'
        'licence = "CC-BY-4.0"\n'
        f"description = {toml_value(description)}\n\n"
        "[system]\n"
        f"name = {toml_value(system)}\n"
    )


def write_bundle(
    run: AIQRun,
    out: Path,
    *,
    program_count: int,
    programs_sha256: str,
    simplify: str,
    traces: bool,
) -> list[Path]:
    """Write ``aiq.toml``, ``samples.csv`` (+ traces; + a submission.toml template if missing)."""
    out.mkdir(parents=True, exist_ok=True)
    written: list[Path] = []
    files: dict[str, bytes] = {
        LOG: log_toml(
            run, program_count=program_count, programs_sha256=programs_sha256,
            simplify=simplify, traces=TRACES if traces else "",
        ).encode(),
        SAMPLES: samples_csv(run.rows, weights_of(run)).encode(),
    }  # fmt: skip
    if traces:
        files[TRACES] = gzip_bytes(traces_csv(run.rows))
    elif (out / TRACES).exists():
        (out / TRACES).unlink()
    if not (out / "submission.toml").exists():
        files["submission.toml"] = submission_template(
            run.agent.text,
            f"AIQ of {run.agent.text} at episode length {run.settings.episode_length}, "
            f"{run.budget} runs ({run.method}), seed {run.seed}.",
        ).encode()
    for rel, data in files.items():
        path = out / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
        written.append(path)
    return written
