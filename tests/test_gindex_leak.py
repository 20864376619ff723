"""Copies of public reference programs are caught, and stripping attributes never pays.

Issue 20, items 4a/4b. The class: every public reference of maya-fbp-16, submitted as its
task's program after any mix of renumbered ids (configuration references included), moved
coordinates, reordered nodes and stripped attributes or wires. Each variant is a
``program-leak`` error, and under the board's convention (the one θ is scored with) a
stripped copy is never a perfect answer. Negative controls keep the check honest: a program
with one attribute value of its own is not a copy.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

from pipeline.metrics.gindex.delta import delta
from pipeline.metrics.gindex.flows import SKIP_PAPER
from pipeline.tracks.base import ScoreContext
from pipeline.tracks.gindex.integrity import program_leak, same_program
from pipeline.tracks.gindex.settings import BOARD_CONVENTION
from pipeline.tracks.gindex.track import TRACK
from pipeline.tracks.review import IntegrityContext
from tests.test_gindex_track import _reference, _verified_files, bench_input, bundle_input

Flow = list[dict[str, Any]]
STRUCTURE = {"id", "type", "wires"}


@pytest.fixture(scope="module")
def bench():  # type: ignore[no-untyped-def]
    return bench_input()


@pytest.fixture(scope="module")
def refs(bench) -> dict[str, Flow]:  # type: ignore[no-untyped-def]
    return _reference(bench)


# ----------------------------------------------------------------------------- variations
def renumber(flow: Flow, rng: np.random.Generator) -> Flow:
    """New node ids everywhere an id is named: ``id``, wires and attribute values."""
    ids = {n["id"]: f"x{int(rng.integers(1 << 40)):x}" for n in flow}

    def sub(v: Any) -> Any:
        if isinstance(v, str):
            return ids.get(v, v)
        if isinstance(v, list):
            return [sub(x) for x in v]
        if isinstance(v, dict):
            return {k: sub(x) for k, x in v.items()}
        return v

    return [{k: sub(v) for k, v in n.items()} for n in flow]


def move(flow: Flow, rng: np.random.Generator) -> Flow:
    """Other coordinates (or none at all)."""
    out = copy.deepcopy(flow)
    for n in out:
        if rng.random() < 0.2:
            n.pop("x", None), n.pop("y", None)
        else:
            n["x"] = int(rng.integers(-5000, 5000))
            n["y"] = int(rng.integers(-5000, 5000))
    return out


def reorder(flow: Flow, rng: np.random.Generator) -> Flow:
    """The nodes in another order."""
    return [copy.deepcopy(flow[i]) for i in rng.permutation(len(flow))]


def strip_all(flow: Flow, rng: np.random.Generator) -> Flow:
    """Only the structure left: ids, types and wires."""
    del rng
    return [{k: v for k, v in n.items() if k in STRUCTURE} for n in flow]


def strip_some(flow: Flow, rng: np.random.Generator) -> Flow:
    """Every attribute kept or dropped by a coin, at least one dropped in all."""
    out = [{k: v for k, v in n.items() if k in STRUCTURE or rng.random() < 0.5} for n in flow]
    if out == flow:
        out = strip_all(flow, rng)
    return out


def strip_names(flow: Flow, rng: np.random.Generator) -> Flow:
    """Names and labels dropped (the companion code's convention never compares them)."""
    del rng
    return [{k: v for k, v in n.items() if k not in ("name", "label")} for n in flow]


def strip_wires(flow: Flow, rng: np.random.Generator) -> Flow:
    """Wires dropped."""
    del rng
    return [{k: v for k, v in n.items() if k != "wires"} for n in flow]


def everything(flow: Flow, rng: np.random.Generator) -> Flow:
    """Renumbered, moved, reordered and stripped at once."""
    return reorder(move(renumber(strip_some(flow, rng), rng), rng), rng)


def pad(flow: Flow, rng: np.random.Generator) -> Flow:
    """Attributes of its own on every node (keys no reference node of that type has)."""
    out = copy.deepcopy(flow)
    for n in out:
        for k in range(int(rng.integers(1, 4))):
            n[f"note{k}_{int(rng.integers(1 << 20)):x}"] = f"padding {k}"
    return out


def pad_and_strip(flow: Flow, rng: np.random.Generator) -> Flow:
    """Padded, stripped, renumbered and reordered at once."""
    return reorder(renumber(pad(strip_some(flow, rng), rng), rng), rng)


Variation = Callable[[Flow, np.random.Generator], Flow]
VARIATIONS: dict[str, Variation] = {
    "renumbered": renumber, "moved": move, "reordered": reorder,
    "renumbered+moved+reordered": lambda f, r: reorder(move(renumber(f, r), r), r),
    "stripped-all": strip_all, "stripped-some": strip_some, "stripped-names": strip_names,
    "stripped-wires": strip_wires, "everything": everything,
    "padded": pad, "padded+stripped+renumbered+reordered": pad_and_strip,
}  # fmt: skip
STRIPPING = {"stripped-all", "stripped-some", "stripped-names", "stripped-wires", "everything"}


def _leaked(bench, progs: dict[str, Flow]) -> int:  # type: ignore[no-untyped-def]
    """How many programs the program-leak check calls public reference solutions."""
    b = bundle_input("copier", _verified_files(progs))
    findings = list(program_leak(IntegrityContext(benchmark=bench, targets=[b])))
    assert all(f.severity == "error" and f.check == "program-leak" for f in findings)
    return sum(int(f.message.split()[0]) for f in findings)


# ----------------------------------------------------------------------------- the class
@pytest.mark.parametrize("name", sorted(VARIATIONS))
@pytest.mark.parametrize("seed", [0, 1])
def test_every_public_reference_copied_is_a_leak(bench, refs, name: str, seed: int) -> None:  # type: ignore[no-untyped-def]
    """All 32 references × a variation: every task is named by a program-leak error."""
    rng = np.random.default_rng([seed, len(name)])
    progs = {t: VARIATIONS[name](f, rng) for t, f in sorted(refs.items())}
    assert _leaked(bench, progs) == len(refs) == 32


@pytest.mark.parametrize("name", sorted(STRIPPING - {"everything"}))
def test_stripping_never_scores_a_perfect_answer(refs, name: str) -> None:  # type: ignore[no-untyped-def]
    """Under the board's convention, dropping a compared attribute always costs."""
    rng = np.random.default_rng(7)
    for t, ref in sorted(refs.items()):
        v = VARIATIONS[name](ref, rng)
        dropped = any(set(a) - SKIP_PAPER - set(b) for a, b in zip(ref, v, strict=True))
        if name == "stripped-wires":  # the wiring is the structure: dropping it costs
            dropped = any(n.get("wires") and any(n["wires"]) for n in ref)
        board = delta(v, ref, BOARD_CONVENTION).delta
        assert (board > 0) == dropped, t
        # what the companion convention made of it: a perfect answer — the reason it is no
        # longer the board's (and why the copy check asks it)
        if name == "stripped-all":
            assert delta(v, ref, "reference").delta == 0.0


def test_the_board_scores_stripped_copies_below_the_references(bench, refs) -> None:  # type: ignore[no-untyped-def]
    """θ of a bundle of stripped copies is below 1, whatever Δ convention the operator asks."""
    rng = np.random.default_rng(3)
    stripped = bundle_input("stripped", _verified_files(
        {t: strip_all(f, rng) for t, f in refs.items()}))
    copies = bundle_input("copies", _verified_files(refs))
    for options in ({}, {"convention": "reference"}, {"convention": "paper"}):
        res = TRACK.score(bench, [stripped, copies], ScoreContext(seed=1, options=options))
        theta = {r.bundle: r.value for r in res.rows if r.metric == "theta_mean"}
        g = {r.bundle: r for r in res.rows if r.metric == "g_index"}
        assert theta["copies"] == 1.0
        assert theta["stripped"] < 0.5
        assert g["stripped"].value < g["copies"].value
        assert g["stripped"].details["program_convention"] == BOARD_CONVENTION


# ----------------------------------------------------------------------------- controls
def test_a_program_of_its_own_is_not_a_copy(bench, refs) -> None:  # type: ignore[no-untyped-def]
    """One attribute value of its own per program (the rest renumbered, moved, reordered)."""
    rng = np.random.default_rng(11)
    progs = {}
    for t, f in sorted(refs.items()):
        own = renumber(f, rng)
        own[int(rng.integers(len(own)))]["module"] = f"my-module-{t}"
        progs[t] = reorder(move(own, rng), rng)
    assert _leaked(bench, progs) == 0


def test_a_node_dropped_or_added_is_not_a_copy(refs) -> None:  # type: ignore[no-untyped-def]
    for t, f in sorted(refs.items()):
        ref = json.dumps(f).encode()
        fewer = [n for n in f if n is not f[-1]]
        more = [*f, {"id": "extra", "type": "debug", "wires": []}]
        assert same_program(json.dumps(fewer).encode(), ref) is False, t
        assert same_program(json.dumps(more).encode(), ref) is False, t
