"""Δ between flows: hand-derived cases, brute force, eq. (1) properties, shipped 32×32 pairs."""

from __future__ import annotations

import json
from pathlib import Path

import networkx as nx
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bench.gindex_baseline import reference_delta  # the independent oracle
from pipeline.metrics.gindex.clique import (
    assignment,
    conflict_matrix,
    max_weight_association_clique,
)
from pipeline.metrics.gindex.delta import (
    candidates,
    conflict_pairs,
    delta,
    delta_matrix,
    delta_matrix_map,
)
from pipeline.metrics.gindex.flows import (
    FlowError,
    compose_flows,
    mutate_flow,
    normalise_flow,
)

ROOT = Path(__file__).resolve().parents[1]
DOMAINS = ROOT / "submissions" / "maya-fbp-16" / "reference" / "domains"
FILES = sorted(DOMAINS.glob("*/*.json"))


def load(path: Path) -> list[dict]:
    return json.loads(path.read_text())["flow"]


FLOWS = [load(p) for p in FILES]




def node(i, t="t", wires=(), **attrs):
    return {"id": str(i), "type": t, "x": 0, "y": 0, "z": "tab", "wires": [list(wires)], **attrs}


# --------------------------------------------------------------------------- hand-derived
def test_identical_single_node_is_zero():
    a = [node(1, active=True)]
    assert delta(a, a).delta == 0.0


def test_added_edge_does_not_change_reference_delta():
    # a = {A -> B}, b = {A, B} without a wire: the loose rule maps both nodes, S = 2,
    # Δ = 1 - (2/2)(2/2) = 0 (spec §2.4). The paper's strict rule allows one of the two
    # only: S = 1, Δ = 1 - (1/2)(1/2) = 0.75.
    a = [node("A", "s", ["B"]), node("B", "t")]
    b = [node("A", "s"), node("B", "t")]
    assert delta(a, b).delta == 0.0
    assert delta(a, b, "paper").delta == pytest.approx(0.75)


def test_reversed_edge_blocks_the_mapping():
    # a: X(s) -> Y(t), b: Y'(t) -> X'(s). Both candidate pairs conflict (reversed edge), so the
    # clique holds one pair: S = 1, Δ = 1 - 1/4 = 0.75 under both conventions.
    a = [node("X", "s", ["Y"]), node("Y", "t")]
    b = [node("X2", "s"), node("Y2", "t", ["X2"])]
    r = delta(a, b)
    assert r.delta == pytest.approx(0.75)
    assert len(r.mapping) == 1
    assert delta(a, b, "paper").delta == pytest.approx(0.75)


def test_keyset_asymmetry_spec_example():
    # {type:t, p:1, q:2} vs {type:t, q:2}: w(a,b) = 1/2 (p missing in b) -> Δ = 1 - 1/4 = 0.75;
    # w(b,a) iterates only q -> 1 -> Δ = 0 (spec §2.8).
    a = [{"id": "1", "type": "t", "p": 1, "q": 2}]
    b = [{"id": "1", "type": "t", "q": 2}]
    assert delta(a, b).delta == pytest.approx(0.75)
    assert delta(b, a).delta == 0.0
    # paper: symmetric, K = {p, q}, one match -> w = 1/2 both ways
    assert delta(a, b, "paper").delta == delta(b, a, "paper").delta == pytest.approx(0.75)


def test_bare_node_matches_anything_of_its_type():
    # den = 0 gives w = 1 against any node of the type; the other way round num = 0.
    bare = [{"id": "d", "type": "debug", "name": "x", "x": 1, "y": 2, "z": "t", "wires": []}]
    full = [{"id": "e", "type": "debug", "active": True, "console": "false", "wires": []}]
    assert delta(bare, full).delta == 0.0
    assert delta(full, bare).delta == 1.0


def test_python_equality_semantics():
    # 1 == 1.0 == True match, "" != None (mismatch), None matches a missing key.
    a = [{"id": "1", "type": "t", "p": 1, "q": "", "r": None}]
    b = [{"id": "1", "type": "t", "p": True, "q": None}]
    # p matches, q does not, r matches (missing) -> w = 2/3 -> Δ = 1 - 4/9
    assert delta(a, b).delta == pytest.approx(1 - 4 / 9)
    # paper: p differs (true is not 1), q differs, r only in a -> 0 of 3
    assert delta(a, b, "paper").delta == 1.0


def test_nan_never_matches_under_reference():
    a = [{"id": "1", "type": "t", "p": float("nan")}]
    assert delta(a, a).delta == 1.0
    assert delta(a, a, "paper").delta == 0.0


def test_typeless_node_matches_nothing():
    # [{type a}, {no type}] against itself: only the typed node maps, S = 1, Δ = 1 - 1/4.
    f = [{"id": "1", "type": "a"}, {"id": "2"}]
    assert delta(f, f).delta == pytest.approx(0.75)
    assert delta(f, f, "paper").delta == 0.0


def test_duplicate_ids_last_definition_wins():
    # the second "1" replaces the first (type b); n counts unique ids: n = 1.
    a = [{"id": "1", "type": "a"}, {"id": "1", "type": "b"}]
    b = [{"id": "9", "type": "b"}]
    r = delta(a, b)
    assert (r.n_a, r.delta) == (1, 0.0)


def test_wires_flattening_and_dangling_targets():
    f = normalise_flow(
        [
            {"id": "a", "type": "t", "wires": [["b"], ["c", "zz"], []]},
            {"id": "b", "type": "t", "wires": ["c"]},
            {"id": "c", "type": "t", "wires": ["a", ["b"]]},
        ]
    )
    assert f.succ == (frozenset({1, 2}), frozenset({2}), frozenset({0}))
    assert f.n_edges == 3 + 1 + 2


def test_empty_flows():
    a = [node(1)]
    assert delta([], a).delta == 1.0
    assert delta(a, []).delta == 1.0
    assert delta([], []).delta == 1.0
    assert delta([], [], "paper").delta == 0.0
    assert delta([], a, "paper").delta == 1.0


def test_no_candidates():
    assert delta([node(1, "s")], [node(2, "t")]).delta == 1.0


def test_flow_inputs_string_and_object():
    a = [node(1, "s", ["2"]), node(2, "t")]
    assert delta(json.dumps(a), {"flow": a}).delta == 0.0


@pytest.mark.parametrize(
    "bad",
    [
        [{"type": "t"}],  # no id
        [{"id": "1", "type": "t", "wires": None}],
        [{"id": "1", "type": "t", "wires": [["a"], "b"]}],
        ["not a node"],
        {"not": "a flow"},
    ],
)
def test_reference_crashes_become_flow_errors(bad):
    with pytest.raises(FlowError):
        delta(bad, [node(1)])


def test_result_fields_and_json():
    a = [node(1, "s", ["2"]), node(2, "t", mode="x")]
    b = [node(7, "s", ["8"]), node(8, "t", mode="y")]
    r = delta(a, b)
    # w(s,s) = 1 (no compared keys), w(t,t) = 0 (mode differs) -> S = 1, Δ = 1 - 1/4
    assert r.sum_w == 1.0 and r.delta == pytest.approx(0.75)
    assert r.mapping == (("1", "7", 1.0),)
    d = r.as_dict(seconds=0.5)
    assert set(d) == {"delta", "sum_w", "n_a", "n_b", "mapping", "exact", "seconds"}
    assert d["mapping"] == [{"a": "1", "b": "7", "w": 1.0}]


# --------------------------------------------------------------------------- brute force
_types = st.sampled_from(["s", "t"])


@st.composite
def tiny_flow(draw, max_nodes=4):
    n = draw(st.integers(1, max_nodes))
    nodes = []
    for i in range(n):
        targets = draw(st.lists(st.integers(0, n - 1), max_size=2, unique=True))
        nd = {"id": f"n{i}", "type": draw(_types), "wires": [[f"n{j}" for j in targets]]}
        for k in draw(st.lists(st.sampled_from(["p", "q"]), max_size=2, unique=True)):
            nd[k] = draw(st.sampled_from([0, 1, None, "a"]))
        nodes.append(nd)
    return nodes


@settings(max_examples=150, deadline=None)
@given(tiny_flow(), tiny_flow())
def test_reference_equals_brute_force(a, b):
    assert delta(a, b).delta == pytest.approx(reference_delta(a, b, brute=True), abs=1e-12)


@settings(max_examples=60, deadline=None)
@given(tiny_flow(6), tiny_flow(6))
def test_reference_equals_networkx_find_cliques(a, b):
    assert delta(a, b).delta == pytest.approx(reference_delta(a, b), abs=1e-12)


def test_solver_equals_networkx_max_weight_clique_on_shipped_mutations():
    # networkx.max_weight_clique needs integer weights: scale by the lcm of denominators
    # (w = num/den with den <= 24 here, so 2*3*4*5*7*... = 5040*11*13*... -> use 720720).
    rng = np.random.default_rng(3)
    for k in range(12):
        a = FLOWS[k % 32]
        b = mutate_flow(FLOWS[(5 * k) % 32] if k % 3 else a, rng, 6)
        fa, fb = normalise_flow(a), normalise_flow(b)
        cu, cv, cw, _ = candidates(fa, fb)
        if len(cu) < 2:
            continue
        conf = conflict_matrix(
            np.asarray(cu), np.asarray(cv), fa.adj, fb.adj, strict=False
        )
        g = nx.Graph()
        for i in range(len(cu)):
            g.add_node(i, weight=round(cw[i] * 720720))
        for i in range(len(cu)):
            for j in range(i + 1, len(cu)):
                if cu[i] != cu[j] and cv[i] != cv[j] and not conf[i, j]:
                    g.add_edge(i, j)
        _, wmax = nx.max_weight_clique(g)
        res = max_weight_association_clique(
            np.asarray(cu), np.asarray(cv), np.asarray(cw), np.argwhere(np.triu(conf))
        )
        assert res.exact
        assert round(res.weight * 720720) == wmax


def test_conflict_pairs_python_and_numpy_paths_agree():
    rng = np.random.default_rng(11)
    a = compose_flows([FLOWS[i] for i in rng.integers(0, 32, 8)])
    b = mutate_flow(compose_flows([FLOWS[i] for i in rng.integers(0, 32, 8)]), rng, 20)
    for strict in (False, True):
        conv = "paper" if strict else "reference"
        fa, fb = normalise_flow(a, conv), normalise_flow(b, conv)
        cu, cv, _, _ = candidates(fa, fb)
        dense = conflict_matrix(np.asarray(cu), np.asarray(cv), fa.adj, fb.adj, strict=strict)
        expected = [tuple(x) for x in np.argwhere(np.triu(dense)).tolist()]
        assert conflict_pairs(fa, fb, cu, cv, strict=strict) == expected


@pytest.mark.parametrize("shape", [(1, 1), (2, 2), (2, 4), (4, 2), (3, 3), (3, 5), (6, 6)])
def test_assignment_is_optimal(shape):
    from scipy.optimize import linear_sum_assignment

    rng = np.random.default_rng(sum(shape))
    for _ in range(20):
        m = rng.random(shape) * (rng.random(shape) < 0.7)
        r, c = assignment(m)
        assert len(set(r)) == len(r) and len(set(c)) == len(c)
        rr, cc = linear_sum_assignment(m, maximize=True)
        assert m[r, c].sum() == pytest.approx(m[rr, cc].sum(), abs=1e-12)


def test_budget_reports_inexact_upper_bound():
    # random DAGs of one type under the strict rule: a hard maximum common subgraph
    rng = np.random.default_rng(2)

    def dag(n):
        nodes = [{"id": f"n{i}", "type": "t", "v": int(rng.integers(2)), "wires": [[]]}
                 for i in range(n)]
        for i in range(n):
            for j in range(i + 1, n):
                if rng.random() < 0.3:
                    nodes[i]["wires"][0].append(f"n{j}")
        return nodes

    a, b = dag(12), dag(12)
    full = delta(a, b, "paper")
    cut = delta(a, b, "paper", max_nodes=2)
    assert full.exact
    assert not cut.exact
    assert cut.delta >= full.delta - 1e-12


def test_integer_programme_fallback_agrees_with_branch_and_bound():
    rng = np.random.default_rng(4)

    def dag(n):
        nodes = [{"id": f"n{i}", "type": "t", "v": int(rng.integers(2)), "wires": [[]]}
                 for i in range(n)]
        for i in range(n):
            for j in range(i + 1, n):
                if rng.random() < 0.3:
                    nodes[i]["wires"][0].append(f"n{j}")
        return nodes

    fa, fb = normalise_flow(dag(11), "paper"), normalise_flow(dag(11), "paper")
    cu, cv, cw, _ = candidates(fa, fb)
    pairs = conflict_pairs(fa, fb, cu, cv, strict=True)
    args = (np.asarray(cu), np.asarray(cv), np.asarray(cw), pairs)
    bb = max_weight_association_clique(*args, fallback_nodes=None)
    ip = max_weight_association_clique(*args, fallback_nodes=2)
    assert bb.exact and ip.exact
    assert ip.weight == pytest.approx(bb.weight, abs=1e-9)
    assert ip.nodes < bb.nodes


# --------------------------------------------------------------------------- paper properties
@settings(max_examples=80, deadline=None)
@given(tiny_flow(5), tiny_flow(5))
def test_paper_bounded_and_symmetric(a, b):
    d1 = delta(a, b, "paper").delta
    d2 = delta(b, a, "paper").delta
    assert 0.0 <= d1 <= 1.0
    assert d1 == pytest.approx(d2, abs=1e-12)


@settings(max_examples=60, deadline=None)
@given(tiny_flow(5), st.randoms(use_true_random=False))
def test_paper_zero_for_same_program_up_to_ids_and_layout(a, rnd):
    # rename ids, shuffle node order, move nodes: Δ = 0
    ren = {n["id"]: f"r{k}" for k, n in enumerate(a)}
    b = []
    for n in a:
        m = dict(n, id=ren[n["id"]], x=rnd.random(), y=rnd.random())
        m["wires"] = [[ren[t] for t in port] for port in n["wires"]]
        b.append(m)
    rnd.shuffle(b)
    assert delta(a, b, "paper").delta == pytest.approx(0.0, abs=1e-12)


@settings(max_examples=60, deadline=None)
@given(tiny_flow(4), tiny_flow(4))
def test_paper_zero_only_for_the_same_program(a, b):
    r = delta(a, b, "paper")
    if r.delta == 0.0:
        # a perfect mapping of weight-1 pairs that preserves every edge (eq. 1)
        assert r.n_a == r.n_b == len(r.mapping)
        m = {x: y for x, y, _ in r.mapping}
        fa, fb = normalise_flow(a, "paper"), normalise_flow(b, "paper")
        ea = {(fa.ids[i], fa.ids[j]) for i, j in fa.edges}
        eb = {(fb.ids[i], fb.ids[j]) for i, j in fb.edges}
        assert {(m[x], m[y]) for x, y in ea} == eb


def test_paper_one_node_reduces_to_eq2():
    a = [{"id": "1", "type": "t", "p": 1, "q": 2, "r": 3}]
    b = [{"id": "2", "type": "t", "p": 1, "q": 5}]
    # K = {p, q, r}, one match: w = 1/3, Δ = 1 - w² (eq. 2)
    assert delta(a, b, "paper").delta == pytest.approx(1 - (1 / 3) ** 2)


def test_paper_one_when_nothing_in_common():
    a = [{"id": "1", "type": "t", "p": 1}, {"id": "2", "type": "s", "p": 1}]
    b = [{"id": "1", "type": "t", "p": 2}, {"id": "3", "type": "u"}]
    assert delta(a, b, "paper").delta == 1.0


# --------------------------------------------------------------------------- shipped data
def test_shipped_32x32_matrix_equals_reference_reimplementation():
    assert len(FLOWS) == 32
    ours = delta_matrix(FLOWS)
    for i, a in enumerate(FLOWS):
        for j, b in enumerate(FLOWS):
            assert ours[i][j] == pytest.approx(reference_delta(a, b), abs=1e-9), (i, j)


def test_shipped_matrix_properties():
    m = np.array(delta_matrix(FLOWS))
    assert np.all(np.diag(m) == 0.0)
    # all nodes of one type carry the same keys in this data: exactly symmetric (spec §2.8)
    assert np.array_equal(m, m.T)
    assert np.all((m >= 0) & (m <= 1))


def test_matrix_through_the_executor_is_identical():
    assert delta_matrix_map(FLOWS[:10], FLOWS, chunk=3) == delta_matrix(FLOWS[:10], FLOWS)


def test_template_slider_self_pair():
    # 11 nodes, 7 interchangeable sliders: 7! maximum cliques for the reference; Δ = 0.
    path = DOMAINS / "template-slider" / "template-slider-7e482b.json"
    r = delta(load(path), load(path))
    assert r.delta == 0.0 and r.sum_w == 11 and r.exact


def _milp_weight(cu, cv, cw, conf):
    """Independent exact optimum by integer programming (HiGHS): rows, columns <= 1, and
    x_i + x_j <= 1 for every conflicting pair."""
    from scipy.optimize import Bounds, LinearConstraint, milp
    from scipy.sparse import coo_matrix

    c = len(cu)
    na, nb = max(cu) + 1, max(cv) + 1
    pairs = np.argwhere(np.triu(conf))
    rows = list(cu) + [na + v for v in cv] + [na + nb + k for k in range(len(pairs))] * 2
    cols = list(range(c)) * 2 + pairs[:, 0].tolist() + pairs[:, 1].tolist()
    m = coo_matrix((np.ones(len(rows)), (rows, cols)), shape=(na + nb + len(pairs), c))
    res = milp(-np.asarray(cw), constraints=LinearConstraint(m.tocsr(), -np.inf, 1),
               integrality=np.ones(c), bounds=Bounds(0, 1))
    return -res.fun


@pytest.mark.parametrize("seed", [5, 6])
def test_composed_pairs_equal_integer_programme(seed):
    # ~40-100-node composed pairs, part order permuted (reversed chain links) and mutated
    rng = np.random.default_rng(seed)
    idx = rng.integers(0, 32, 10)
    a = compose_flows([FLOWS[i] for i in idx])
    b = mutate_flow(compose_flows([FLOWS[i] for i in rng.permutation(idx)]), rng, 25)
    fa, fb = normalise_flow(a), normalise_flow(b)
    cu, cv, cw, _ = candidates(fa, fb)
    conf = conflict_matrix(np.asarray(cu), np.asarray(cv), fa.adj, fb.adj, strict=False)
    r = delta(a, b)
    assert r.exact
    assert r.sum_w == pytest.approx(_milp_weight(cu, cv, cw, conf), abs=1e-7)
    assert r.delta == pytest.approx(1 - (r.sum_w / fa.n) * (r.sum_w / fb.n), abs=1e-12)
