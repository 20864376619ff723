"""The g-index cannot be gamed or used to exhaust the machine.

* The benchmark owns ρ: a bundle's own priors change nothing in its rank, are marked in its
  details and the board's notes, and ``check`` flags them (``own-priors``).
* ρ ≥ 0 and ρ + E > 0 are validated, so no g-index is NaN or unbounded.
* The cycle check is linear; Δ refuses oversized pairs before allocating ("too large for exact
  Δ"), and the integrity check reports them as not compared.
"""

from __future__ import annotations

import json
import tracemalloc

import pytest

from pipeline.metrics.gindex.delta import DeltaTooLarge, delta
from pipeline.tracks.base import ScoreContext
from pipeline.tracks.gindex.integrity import TOO_LARGE, own_priors, same_program
from pipeline.tracks.gindex.track import TRACK
from pipeline.tracks.gindex.validate import _cycle
from pipeline.tracks.review import IntegrityContext
from tests.test_gindex_track import BENCH, _files, bench_input, bundle_input


@pytest.fixture(scope="module")
def bench():  # type: ignore[no-untyped-def]
    return bench_input()


def _with(extra: str, compute: str | None = None) -> dict[str, bytes]:
    files = _files(BENCH / "gpt2-345m-1")
    files["submission.toml"] = files["submission.toml"] + extra.encode()
    if compute is not None:
        files["compute.csv"] = f"domain,compute\n,{compute}\n".encode()
        files["submission.toml"] = files["submission.toml"].replace(
            b"compute = 74.75", f"compute = {compute}".encode()
        )
    return files


def test_own_priors_do_not_move_the_score(bench) -> None:  # type: ignore[no-untyped-def]
    honest = bundle_input("gpt2-345m-1", _files(BENCH / "gpt2-345m-1"))
    gamed = bundle_input("gamed", _with("priors = 0.0\n"))
    assert TRACK.validate_bundle(gamed, bench) == []
    res = TRACK.score(bench, [honest, gamed], ScoreContext())
    g = {r.bundle: r for r in res.rows if r.metric == "g_index"}
    assert g["gamed"].value == g["gpt2-345m-1"].value == 4424.42
    assert g["gamed"].details["marks"] == ["own-priors"]
    assert g["gamed"].details["declared_priors"] == 0.0
    assert "marks" not in g["gpt2-345m-1"].details
    assert any(n.startswith("⚑ GPT2-345M (gamed) declares its own priors") for n in res.notes)


def test_own_priors_are_flagged_by_check(bench) -> None:  # type: ignore[no-untyped-def]
    gamed = bundle_input("gamed", _with("priors = 1e-9\n"))
    ctx = IntegrityContext(benchmark=bench, targets=[gamed])
    (f,) = list(own_priors(ctx))
    assert (f.severity, f.check, f.field) == ("warning", "own-priors", "gindex.priors")
    assert "ranked with ρ = 0.0001" in f.message


@pytest.mark.parametrize(
    "priors,msg",
    [
        ("-6.2", "greater than or equal to 0"),
        ("{ cron-reminder = -1.0 }", "greater than or equal to 0"),
    ],
)
def test_negative_priors_are_refused(bench, priors: str, msg: str) -> None:  # type: ignore[no-untyped-def]
    from pipeline.manifest import load_submission_manifest

    files = _with(f"priors = {priors}\n")
    _, _, problems = load_submission_manifest("s.toml", files["submission.toml"], "gindex")
    assert any(p.field.startswith("gindex.priors") and msg in p.message for p in problems)


@pytest.mark.parametrize("compute", ["0.5", "1e-3", "0.999"])
def test_compute_below_one_unit_is_refused(bench, compute: str) -> None:  # type: ignore[no-untyped-def]
    b = bundle_input("small", _with("", compute=compute))
    problems = TRACK.validate_bundle(b, bench)
    assert [(p.field, "ρ + E > 0" in p.message) for p in problems] == [("compute", True)]


def test_compute_at_the_benchmarks_floor_is_the_edge(bench) -> None:  # type: ignore[no-untyped-def]
    import math

    floor = 2 ** (1.0 - 1e-4)  # default min_experience 1, ρ = 1e-4: ρ + E >= 1
    b = bundle_input("one", _with("", compute=repr(floor * (1 + 1e-9))))
    assert TRACK.validate_bundle(b, bench) == []
    res = TRACK.score(bench, [b], ScoreContext())
    (g,) = [r for r in res.rows if r.metric == "g_index"]
    assert math.isfinite(g.value) and g.value > 0
    for below in ("1", "1.5", repr(floor * 0.999)):  # just above the pole: g-index explodes
        problems = TRACK.validate_bundle(bundle_input("near", _with("", compute=below)), bench)
        assert [(p.field, "compute floor" in p.message) for p in problems] == [("compute", True)]


def test_cycle_check_is_iterative_on_deep_chains() -> None:
    # 60,000 nodes in one chain overflow any recursive check, and a quadratic one would take
    # minutes here; no wall-clock assertion, which a shared machine's load makes flaky.
    n = 60_000
    chain = [{"id": f"n{i}", "wires": [[f"n{i + 1}"]] if i + 1 < n else []} for i in range(n)]
    assert _cycle(chain) == []
    chain[-1]["wires"] = [["n0"]]
    cyc = _cycle(chain)
    assert cyc[0] == cyc[-1] and len(cyc) == n + 1


def _same_type(n: int, k: int) -> list[dict[str, object]]:
    return [
        {
            "id": f"n{i}",
            "type": "function",
            "func": f"x{(i * k) % 7}",
            "wires": [[f"n{i + 1}"]] if i + 1 < n else [],
        }
        for i in range(n)
    ]


# 1500 nodes is the scaling case (memory stays bounded as the pair grows): slow, make test-all
@pytest.mark.parametrize("n", [300, pytest.param(1500, marks=pytest.mark.slow)])
def test_oversized_pairs_are_refused_in_bounded_memory(n: int) -> None:
    tracemalloc.start()
    try:
        with pytest.raises(DeltaTooLarge, match="too large for exact Δ"):
            delta(_same_type(n, 3), _same_type(n, 5))
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 400 * 2**20


def test_copied_programs_reports_an_oversized_pair_as_not_compared() -> None:
    a = json.dumps(_same_type(300, 3)).encode()
    b = json.dumps(_same_type(300, 5)).encode()
    assert same_program(a, b) is TOO_LARGE
    assert same_program(a, a) is True


@pytest.mark.parametrize(
    "extra",
    ["priors = 1e-9\n", "priors = 0.0\n", "priors = { http = 0.0 }\n", "rho = 1e-9\n",
     'convention = "paper"\n', 'form = "task"\n', "min_experience = 1e-9\n",
     "resamples = 100\n"],
)  # fmt: skip
def test_gaming_every_bundle_field_is_refused_or_harmless(bench, extra: str) -> None:  # type: ignore[no-untyped-def]
    """Issue 20 item 12: a field a bundle sets never lifts its g-index (refused or unchanged)."""
    from pipeline.manifest import load_submission_manifest

    files = _with(extra)
    _, _, problems = load_submission_manifest("s.toml", files["submission.toml"], "gindex")
    if any(p.severity == "error" for p in problems):
        return  # a rule given in a bundle: refused
    honest = bundle_input("gpt2-345m-1", _files(BENCH / "gpt2-345m-1"))
    gamed = bundle_input("gamed", files)
    if any(p.severity == "error" for p in TRACK.validate_bundle(gamed, bench)):
        return
    res = TRACK.score(bench, [honest, gamed], ScoreContext())
    g = {r.bundle: r.value for r in res.rows if r.metric == "g_index"}
    assert g["gamed"] == g["gpt2-345m-1"]


@pytest.mark.parametrize(("form", "floor"),
                         [("domain", 0.25), ("domain", 10.0), ("task", 1.0), ("task", 3.0)])
def test_the_benchmarks_compute_floor_caps_the_g_index(floor: float, form: str) -> None:
    """Item 4(c): whatever floor a benchmark declares, compute below it is refused and at or
    above it the g-index is finite and never larger than at the floor (more compute, a
    smaller g-index): the pole of eq. 9 (ρ + E → 0) is out of the submitter's reach."""
    import math

    b = bench_input(min_experience=floor, form=form, resamples=100)
    rho = b.settings["rho"]
    edge = 2 ** (floor - rho)  # ρ + log2(edge) = floor

    def g_of(compute: float) -> float | None:
        gb = bundle_input("c", _with("", compute=repr(compute)))
        if any(p.severity == "error" for p in TRACK.validate_bundle(gb, b)):
            return None
        res = TRACK.score(b, [gb], ScoreContext())
        (g,) = [r.value for r in res.rows if r.metric == "g_index"]
        return g

    for below in (edge * (1 - 1e-6), edge / 2, 2 ** (-rho) * (1 + 1e-9)):
        if below < edge:
            assert g_of(below) is None, (floor, below)  # refused, naming compute
    values = [g_of(edge * k) for k in (1 + 1e-9, 2.0, 1e3)]
    assert all(v is not None and math.isfinite(v) and v > 0 for v in values), values
    assert values == sorted(values, reverse=True), values  # capped at the floor
