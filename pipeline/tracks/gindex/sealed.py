r"""Sealed test sets of the ``gindex`` track (issue 20, item 4e).

A public reference program can be copied; a benchmark that must not be answerable from the
repository keeps its test references out of it. Only their **commitment** is committed:
``[gindex] sealed_sha256`` (and the task list ``sealed_tasks``, ``domain/task``, so bundles
can be validated and the tasks asked). The commitment is

.. math::

    C = \operatorname{SHA256}\Big(\textstyle\bigoplus_{p \in \text{sorted paths}}
        p \,\|\, \texttt{\\0} \,\|\, \operatorname{SHA256}(\text{content}_p) \,\|\,
        \texttt{\\n}\Big)

over the files ``<domain>/<task>.json`` of the sealed set. Scoring reads the sealed set from a
folder given at publish time — ``gmeter score --option sealed=DIR`` or the environment
variable ``GMETER_SEALED`` (the publish workflow fills it from a secret) — holding
``DIR/<benchmark id>/<domain>/<task>.json``, read by the use case
(:func:`pipeline.bundles.read_sealed`) into the option :data:`SEALED_FILES`. Without it
the benchmark's entries are left unscored with a note (never a failure); a set whose
commitment differs is refused the same way, naming it. Revealing the set later means
committing it under the benchmark's
``domains_dir``: ``validate`` then checks it against the commitment.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from dataclasses import replace
from typing import Any, NamedTuple

from pipeline.inputs import BenchmarkInput, FileSet

SEALED_FILES = "sealed_files"
"""The :class:`~pipeline.tracks.base.ScoreContext` option holding the sealed set read by the use
case (:func:`pipeline.bundles.read_sealed`): path → bytes, or why it could not be read."""


def commitment(files: Mapping[str, bytes]) -> str:
    """The SHA-256 commitment of a set of reference files (paths ``<domain>/<task>.json``)."""
    h = hashlib.sha256()
    for path in sorted(files):
        h.update(path.encode("utf-8") + b"\0" + hashlib.sha256(files[path]).digest() + b"\n")
    return h.hexdigest()


def is_sealed(bench: BenchmarkInput) -> bool:
    """Whether the benchmark declares a sealed test set."""
    return bool(bench.settings.get("sealed_sha256"))


def sealed_task_names(bench: BenchmarkInput) -> dict[str, list[str]]:
    """Domain → task ids of the sealed set, as ``sealed_tasks`` declares them."""
    out: dict[str, list[str]] = {}
    for item in bench.settings.get("sealed_tasks") or []:
        domain, _, task = str(item).partition("/")
        out.setdefault(domain, []).append(task)
    return {d: sorted(ts) for d, ts in sorted(out.items())}


def public_set(bench: BenchmarkInput) -> dict[str, bytes]:
    """The reference files committed under ``domains_dir``, keyed ``<domain>/<task>.json``."""
    base = str(bench.settings.get("domains_dir", "reference/domains")).rstrip("/")
    return {p[len(base) + 1:]: bench.files.files[p] for p in bench.files.under(base)
            if p.endswith(".json") and p[len(base) + 1:].count("/") == 1}  # fmt: skip


class Unsealed(NamedTuple):
    """The benchmark with its sealed set in place, or why it could not be opened."""

    bench: BenchmarkInput | None
    note: str


def unseal(bench: BenchmarkInput, options: Mapping[str, Any]) -> Unsealed:
    """The benchmark with the sealed set under ``domains_dir`` when it verifies.

    A benchmark that is not sealed, or whose set is already revealed in the repository
    (``validate`` holds it to the commitment), is returned as it is.
    """
    if not is_sealed(bench):
        return Unsealed(bench, "")
    want = str(bench.settings["sealed_sha256"])
    public = public_set(bench)
    if public and commitment(public) == want:
        return Unsealed(bench, "sealed test set revealed in the repository; its commitment "
                        "verifies")  # fmt: skip
    given = options.get(SEALED_FILES)
    unscored = "its entries are left unscored until the publish gives the set"
    if given is None:
        return Unsealed(None, f"{bench.id}: sealed test set not available (no "
                        f"--option sealed=DIR or GMETER_SEALED); {unscored}")  # fmt: skip
    if isinstance(given, str):
        return Unsealed(None, f"{bench.id}: sealed test set unreadable ({given}); {unscored}")
    files = dict(given)
    got = commitment(files)
    if got != want:
        return Unsealed(None, f"{bench.id}: the sealed test set given does not match "
                        f"the commitment (sha256 {got[:12]}…, benchmark.toml says "
                        f"{want[:12]}…); {unscored}")  # fmt: skip
    base = str(bench.settings.get("domains_dir", "reference/domains")).rstrip("/")
    merged = {p: d for p, d in bench.files.files.items() if not p.startswith(base + "/")}
    merged.update({f"{base}/{p}": d for p, d in files.items()})
    return Unsealed(replace(bench, files=FileSet(bench.files.label, merged)),
                    "scored against the sealed test set (commitment verified)")
