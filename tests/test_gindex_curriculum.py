"""The curriculum size is counted, never self-declared (issue 20, item 4d).

The class: an honest verified bundle brings its curriculum's samples; a twin with the same
programs declares any other curriculum (every size from 1 to 10 240, more or fewer domains)
without samples, or with samples that disagree. Each twin is refused by ``validate`` or
*reported*, so it never ranks above the honest entry; a twin whose samples match its
declaration is verified (its curriculum is then an observation, as the paper means it).
"""

from __future__ import annotations

import numpy as np
import pytest

from pipeline.metrics.gindex.flows import mutate_flow
from pipeline.ranking import ranked_pool
from pipeline.tracks.base import ScoreContext
from pipeline.tracks.gindex.track import TRACK
from pipeline.tracks.gindex.validate import _cycle
from tests.test_gindex_track import (
    _reference,
    _verified_files,
    bench_input,
    bundle_input,
    curriculum_samples,
)

HONEST = {"http": 10, "twitter": 20}


@pytest.fixture(scope="module")
def bench():  # type: ignore[no-untyped-def]
    return bench_input()


@pytest.fixture(scope="module")
def honest_files(bench) -> dict[str, bytes]:  # type: ignore[no-untyped-def]
    rng = np.random.default_rng(4)
    progs = {}
    for t, f in sorted(_reference(bench).items()):
        m = mutate_flow(f, rng, 3)
        progs[t] = f if _cycle(m) else m
    return _verified_files(progs)


def _curriculum(sizes: dict[str, int]) -> bytes:
    return ("domain,num_samples\n" + "".join(f"{d},{n}\n" for d, n in sizes.items())).encode()


def _twin(honest: dict[str, bytes], sizes: dict[str, int], samples: str) -> dict[str, bytes]:
    """The honest bundle declaring ``sizes``; samples ``none``, ``stale`` or ``matching``."""
    files = {k: v for k, v in honest.items() if not k.startswith("curriculum/")}
    files["curriculum.csv"] = _curriculum(sizes)
    if samples == "stale":
        files.update(curriculum_samples(HONEST))
    elif samples == "matching":
        files.update(curriculum_samples(sizes))
    return files


ALL_DOMAINS = ["cron-reminder", "facebook", "google-search", "http", "twitter", "youtube-play"]
DECLARED = [
    {"http": 1, "twitter": 1}, {"http": 2, "twitter": 3}, {"http": 9, "twitter": 19},
    {"http": 10, "twitter": 20}, {"http": 70, "twitter": 140}, {"http": 10240},
    {"http": 1}, {d: 1 for d in ALL_DOMAINS}, {d: 10 for d in ALL_DOMAINS},
]  # fmt: skip


@pytest.mark.parametrize("samples", ["none", "stale"])
@pytest.mark.parametrize("sizes", DECLARED, ids=lambda s: "-".join(f"{k}{v}" for k, v in s.items()))
def test_a_declared_curriculum_never_lifts_a_verified_rank(bench, honest_files, sizes, samples):  # type: ignore[no-untyped-def]
    honest = bundle_input("honest", honest_files)
    twin = bundle_input("twin", _twin(honest_files, sizes, samples))
    assert TRACK.validate_bundle(honest, bench) == []
    errors = [p for p in TRACK.validate_bundle(twin, bench) if p.severity == "error"]
    if samples == "stale" and sizes != HONEST:
        assert errors, "samples that disagree with curriculum.csv are refused"
        assert any("curriculum" in p.file for p in errors)
        return
    assert errors == []
    res = TRACK.score(bench, [honest, twin], ScoreContext(seed=2))
    g = {r.bundle: r for r in res.rows if r.metric == "g_index"}
    assert g["honest"].verified and g["honest"].details["curriculum"]["verified"]
    if samples == "none":
        assert not g["twin"].verified  # reported: ranked apart, never above
        assert any("(twin): reported" in n for n in res.notes)
    pool = ranked_pool([g["honest"].verified, g["twin"].verified])
    if pool[1] and not pool[0]:
        pytest.fail("a reported twin ranked while the honest entry was not")
    if pool[0] and pool[1]:  # both verified: the same observation scores the same
        assert g["twin"].value == g["honest"].value


@pytest.mark.parametrize("sizes", DECLARED, ids=lambda s: "-".join(f"{k}{v}" for k, v in s.items()))
def test_matching_samples_make_the_curriculum_an_observation(bench, honest_files, sizes):  # type: ignore[no-untyped-def]
    twin = bundle_input("twin", _twin(honest_files, sizes, "matching"))
    assert TRACK.validate_bundle(twin, bench) == []
    res = TRACK.score(bench, [twin], ScoreContext(seed=2))
    (g,) = [r for r in res.rows if r.metric == "g_index"]
    assert g.verified and g.details["training_samples"] == sum(sizes.values())
    assert sorted(g.details["curriculum"]["sha256"]) == sorted(sizes)


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (lambda f: f.pop("curriculum/twitter.jsonl"), "is missing"),
        (lambda f: f.__setitem__("curriculum/mars.jsonl", b'{"a": 1}\n'), "not curriculum/"),
        (lambda f: f.__setitem__("curriculum/http.jsonl", b'{"a": 1}\n[1]\n'), "JSON object"),
        (lambda f: f.__setitem__("curriculum/http.jsonl", b"\xff\n"), "JSON object"),
        (lambda f: f.__setitem__("curriculum/http.jsonl", f["curriculum/http.jsonl"] * 2),
         "holds 20"),
    ],
)  # fmt: skip
def test_sample_files_that_contradict_the_curriculum_are_refused(bench, honest_files, edit,  # type: ignore[no-untyped-def]
                                                                 message):
    files = dict(honest_files)
    edit(files)
    problems = TRACK.validate_bundle(bundle_input("bad", files), bench)
    assert any(p.severity == "error" and message in p.message for p in problems), problems
