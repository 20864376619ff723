"""Files on disk for the g-index commands (``delta``, ``omega``, ``gindex``, ``import``).

Reading flow programs (:func:`read_json`), a folder of domain folders (:func:`read_domains`),
the order that symmetrises the domain distances (:func:`choose_domain_order`), a JSON-lines
file of pairs (:func:`read_pairs`), and writing a published experiment as a reported bundle
(:func:`write_maya_bundle`). Every failure is a :class:`~pipeline.errors.GmeterError` or
:class:`~pipeline.errors.UsageError` naming the file; the maths is :mod:`pipeline.metrics.gindex`.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path
from typing import Any, NamedTuple

from pipeline.errors import GmeterError, UsageError
from pipeline.lab.gindex.published import (
    MAYA_DOMAIN_ORDER,
    MAYA_SYSTEMS,
    maya_experiment_bundle,
    parse_maya_experiment,
)
from pipeline.limits import loads_bounded


def read_json(path: Path) -> Any:
    """The JSON value of ``path`` (bounded in size and depth)."""
    from pipeline.bundles import read_file_bounded

    data = read_file_bounded(path, str(path))  # a regular file within the per-file limit
    try:
        return loads_bounded(data.decode("utf-8"))
    except UnicodeDecodeError as exc:
        raise GmeterError(f"{path}: encoding: is not UTF-8 text (byte {exc.start})",
                          hint="save the file as UTF-8") from None
    except ValueError as exc:
        raise GmeterError(f"{path} is not JSON: {exc}", hint="fix the JSON syntax") from exc


def read_domains(folder: Path) -> dict[str, list[Any]]:
    """Domain name → flows of ``folder/<domain>/*.json`` (files sorted by name)."""
    from pipeline.metrics.gindex.flows import FlowError, load_flow

    out: dict[str, list[Any]] = {}
    for sub in sorted(p for p in folder.iterdir() if p.is_dir() and not p.name.startswith(".")):
        files = sorted(sub.glob("*.json"))
        if files:
            try:
                out[sub.name] = [load_flow(read_json(f)) for f in files]
            except FlowError as exc:
                raise GmeterError(f"{sub}: {exc}") from exc
    if not out:
        raise GmeterError(f"no <domain>/*.json programs under {folder}",
                          hint="point --domains at a folder of domain folders")
    return out


class DomainOrder(NamedTuple):
    """The domain order and where it came from (a line for the user)."""

    order: list[str]
    source: str


def choose_domain_order(order_file: Path | None, folder: Path, names: list[str]) -> DomainOrder:
    """``--domain-order``, else ``domain-order.txt`` in or next to ``folder``, else a default.

    The default is the authors' order for the 16 published domains, else sorted names.
    """
    found = order_file
    if found is None:
        for cand in (folder / "domain-order.txt", folder.parent / "domain-order.txt"):
            if cand.is_file():
                found = cand
                break
    if found is not None:
        order = [ln.strip() for ln in found.read_text(encoding="utf-8").splitlines()
                 if ln.strip() and not ln.strip().startswith("#")]
        if sorted(order) != sorted(names) or len(set(order)) != len(order):
            raise UsageError(f"{found} must list every domain of the folder exactly once",
                             hint=f"the domains are: {', '.join(names)}")
        return DomainOrder(order, f"domain order: {found}")
    if sorted(names) == sorted(MAYA_DOMAIN_ORDER):
        return DomainOrder(list(MAYA_DOMAIN_ORDER),
                           "domain order: the authors' (published maya-fbp-16 domains)")
    return DomainOrder(sorted(names), "domain order: sorted by name")


class PairLines(NamedTuple):
    """A pairs file read: the items to compute and, by output position, the unreadable lines."""

    items: list[tuple[Any, Any, Any, str]]
    bad: dict[int, dict[str, Any]]


def read_pairs(path: Path, convention: str) -> PairLines:
    """The lines of a JSON-lines pairs file (``-``: standard input) as (id, a, b, convention).

    A line that is not an object with ``a`` and ``b`` keeps its place in the output as an
    error record, so the output has one line per input line.
    """
    text = sys.stdin.read() if str(path) == "-" else path.read_text(encoding="utf-8")
    items: list[tuple[Any, Any, Any, str]] = []
    bad: dict[int, dict[str, Any]] = {}
    for n, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            rec = loads_bounded(line)
            if not isinstance(rec, dict) or "a" not in rec or "b" not in rec:
                raise ValueError('a line needs "id", "a" and "b"')
        except ValueError as exc:
            bad[len(items) + len(bad)] = {"id": None, "error": f"line {n}: {exc}"}
            continue
        items.append((rec.get("id", n), rec["a"], rec["b"], str(rec.get("convention", convention))))
    return PairLines(items, bad)


def write_maya_bundle(file: Path, out: Path | None, bundle_id: str | None,
                           system: str | None, force: bool) -> tuple[Path, int]:
    """Write the published experiment ``file`` as a reported gindex bundle; (folder, files)."""
    obj = read_json(file)
    try:
        exp = parse_maya_experiment(obj)
    except ValueError as exc:
        raise GmeterError(f"{file}: {exc}") from exc
    bid = bundle_id or re.sub(r"[^a-z0-9]+", "-", file.stem.lower()).strip("-")
    if not re.fullmatch(r"[a-z0-9][a-z0-9-]*", bid):
        raise UsageError(f"bundle id {bid!r} is not of the form [a-z0-9][a-z0-9-]*")
    target = out or Path(bid)
    if target.exists() and any(target.iterdir()) and not force:
        raise GmeterError(f"{target} exists and is not empty", hint="use --force to overwrite")
    total = sum(n for _, n in exp.train)
    files = maya_experiment_bundle(
        obj, source=f"experiments/{file.name}",
        system=system or MAYA_SYSTEMS.get(exp.model_name, exp.model_name),
        version=f"{total} training samples",
    )
    target.mkdir(parents=True, exist_ok=True)
    for name, data in files.items():
        (target / name).write_bytes(data)
    return target, len(files)
