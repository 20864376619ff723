"""The g-index baselines: honest curriculum, reproducible bundles, verified rows (issue 25, item 2).

The class: the committed baseline bundles of maya-fbp-16 are what the shipped systems write
from the shipped curriculum generator (byte for byte), their curriculum holds no program of
the test set, the copy checks stay silent for them, and the board scores them as verified.
"""

from __future__ import annotations

import json
import random
import sys
from pathlib import Path

import pytest

from pipeline.lab.gindex.baselines import PER_DOMAIN, ModeNode, Retrieval, Tfidf
from pipeline.lab.gindex.curriculum import DOMAINS, curriculum, read_curriculum, write_curriculum
from pipeline.tracks.gindex.integrity import copied_programs, program_leak, same_program
from pipeline.tracks.review import IntegrityContext

ROOT = Path(__file__).resolve().parents[1]
BENCH = ROOT / "submissions/maya-fbp-16"
BASELINES = {"tfidf-retrieval": "retrieval", "mode-node": "mode-node"}


def _refs() -> dict[str, list[bytes]]:
    out: dict[str, list[bytes]] = {}
    for p in sorted(BENCH.glob("reference/domains/*/*.json")):
        out.setdefault(p.parent.name, []).append(p.read_bytes())
    return out


def _inputs():  # type: ignore[no-untyped-def]
    from pipeline.validate import benchmark_inputs

    return benchmark_inputs(BENCH, track="gindex")


def test_the_curriculum_covers_every_test_domain_and_is_deterministic() -> None:
    assert set(DOMAINS) == set(_refs())
    a, b = curriculum(3, seed=7), curriculum(3, seed=7)
    assert a == b and a != curriculum(3, seed=8)
    assert all(len(v) == 3 and all(s["prompt"] and len(s["program"]) >= 2 for s in v)
               for v in a.values())  # fmt: skip


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_no_curriculum_program_is_a_reference_program(seed: int) -> None:
    refs = [r for rs in _refs().values() for r in rs]
    for samples in curriculum(PER_DOMAIN, seed).values():
        for s in samples:
            prog = json.dumps({"flow": s["program"]}).encode()
            assert not any(same_program(prog, r) for r in refs)


def test_own_tfidf_equals_scikit_learn() -> None:
    text = pytest.importorskip("sklearn.feature_extraction.text")
    docs = [s["prompt"] for v in curriculum(4, seed=3).values() for s in v]
    queries = [json.loads(p.read_text())["text"] for p in BENCH.glob("reference/domains/*/*.json")]
    rng = random.Random(0)
    queries += [" ".join(rng.choice(docs).split()[:3]) for _ in range(20)] + ["", "zz qq"]
    own = Tfidf(docs)
    vec = text.TfidfVectorizer()
    matrix = vec.fit_transform(docs)
    for q in queries:
        want = (matrix @ vec.transform([q]).T).toarray().ravel()
        assert own.similarities(q) == pytest.approx(list(want), abs=1e-12)


def test_retrieval_returns_the_nearest_sample_and_mode_node_one_node() -> None:
    samples = [(d, s) for d, v in curriculum(4, seed=5).items() for s in v]
    r = Retrieval(samples)
    for k, (_, s) in enumerate(samples):
        # a training prompt retrieves itself (or an identical earlier prompt)
        got = r.answer({"prompt": s["prompt"]})
        first = next(j for j, (_, t) in enumerate(samples) if t["prompt"] == s["prompt"])
        assert got == samples[first][1]["program"], k
    m = ModeNode(samples)
    for d in DOMAINS:
        [node] = m.answer({"domain": d, "prompt": "anything"})
        assert node["id"] == "n1" and all(not w for w in node["wires"])
    assert m.answer({"domain": "unknown"}) == []


@pytest.mark.parametrize("bundle", sorted(BASELINES))
def test_the_committed_bundle_is_what_the_shipped_system_writes(tmp_path, bundle) -> None:  # type: ignore[no-untyped-def]
    from pipeline.lab.gindex.harness import run_system

    committed = BENCH / bundle
    cur = tmp_path / "curriculum"
    csv = write_curriculum(cur, PER_DOMAIN, 0)
    for f in sorted((committed / "curriculum").glob("*.jsonl")):
        assert (cur / f.name).read_bytes() == f.read_bytes(), f.name
    assert csv.read_bytes() == (committed / "curriculum.csv").read_bytes()
    system = (f"cmd:{sys.executable} -m pipeline.lab.gindex.baselines {BASELINES[bundle]} "
              f"--samples {cur}")  # fmt: skip
    out = tmp_path / bundle
    run_system(system, BENCH, csv, 2.0, out, curriculum_samples=cur)
    got = sorted((out / "programs").glob("*.json"))
    assert len(got) == 32
    for p in got:
        assert p.read_bytes() == (committed / "programs" / p.name).read_bytes(), p.name


def test_the_copy_checks_are_silent_for_the_baselines() -> None:
    bench, bundles = _inputs()
    mine = [b for b in bundles if b.id in BASELINES]
    others = [b for b in bundles if b.id not in BASELINES]
    assert len(mine) == 2
    ctx = IntegrityContext(benchmark=bench, targets=mine, peers=others)
    assert list(program_leak(ctx)) == []
    assert list(copied_programs(ctx)) == []


def test_the_board_scores_the_baselines_as_verified() -> None:
    from pipeline.tracks.base import ScoreContext
    from pipeline.tracks.gindex.track import TRACK

    bench, bundles = _inputs()
    res = TRACK.score(bench, [b for b in bundles if b.id in BASELINES], ScoreContext())
    rows = {r.bundle: r for r in res.rows if r.metric == "g_index"}
    assert set(rows) == set(BASELINES)
    for r in rows.values():
        details = dict(r.details or {})
        assert r.verified is True and details["curriculum"]["verified"] is True
        assert details["training_samples"] == PER_DOMAIN * len(DOMAINS)


def test_curriculum_samples_read_back(tmp_path) -> None:  # type: ignore[no-untyped-def]
    write_curriculum(tmp_path, 2, 1)
    got = read_curriculum(tmp_path)
    assert len(got) == 2 * len(DOMAINS)
    assert [d for d, _ in got][:2] == [sorted(DOMAINS)[0]] * 2
