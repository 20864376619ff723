"""Flow programs (Node-RED style DAGs): normalisation, node similarity and wiring.

A *flow* is a JSON list of node objects (``id``, ``type``, ``wires`` and free attributes), or a
JSON string encoding one. This module turns a flow into a :class:`NormalFlow` (unique ids,
per-node attributes prepared for comparison, and the adjacency matrix) under one of two
conventions:

``reference``
    Exactly what the companion code of Venkatasubramanian et al. (2021) does
    (``node_utils.py``; spec ``gindex-spec.md`` §2.1–§2.2): the later of two nodes with the
    same id replaces the earlier one but keeps its position, ``wires`` are flattened only when
    the first port is a list, the node similarity iterates over the *first* node's keys minus
    a fixed skip list, Python ``==`` decides equality (``1 == 1.0 == True``), a missing key
    equals ``None``, and a node without ``type`` matches nothing.
``paper``
    The paper's definition (§2.4.2 and Appendix C): a symmetric similarity over the union of
    both nodes' attributes, strict JSON equality (``true`` is not ``1``, ``NaN`` equals
    ``NaN``), a missing key differs from ``null``, and typeless nodes form one type.

References
----------
.. [1] G. Venkatasubramanian et al., "Towards a Measure of General Machine Intelligence",
   arXiv:2109.12075, 2021. Companion code: github.com/mayahq/g-index-benchmark (MIT).
"""

from __future__ import annotations

import json
import math
from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass
from functools import cached_property
from typing import Any, NamedTuple

import numpy as np
import numpy.typing as npt

CONVENTIONS: tuple[str, ...] = ("reference", "paper")

#: Keys the companion code never compares (``node_utils.py``; spec §2.2).
SKIP_REFERENCE: frozenset[str] = frozenset(
    {"id", "x", "y", "z", "wires", "type", "endpointUrl", "name", "group", "tab", "label"}
)

#: Keys the ``paper`` convention does not compare as attributes: identity, editor layout,
#: wiring (compared through the edge rule) and container references whose values are node ids
#: (``z``, ``tab``, ``group``), so that renaming ids leaves a program unchanged.
SKIP_PAPER: frozenset[str] = frozenset({"id", "x", "y", "z", "wires", "type", "tab", "group"})


class FlowError(ValueError):
    """A flow the reference code would crash on (missing id, ``wires: null``, not a list)."""


@dataclass(frozen=True)
class NormalFlow:
    """A flow prepared for Δ under one convention.

    Attributes
    ----------
    convention : str
        ``reference`` or ``paper``.
    ids : tuple
        Unique node ids in order of first appearance.
    nodes : tuple of dict
        The node kept for each id (the last definition wins).
    type_keys : tuple
        A hashable stand-in for each node's type with the convention's equality, or ``None``
        when the node can match nothing (reference: no ``type``; a NaN type).
    attrs : tuple of NodeAttrs
        Per node, the compared attributes prepared for fast similarity.
    n_edges : int
        Total length of the flattened wires lists (duplicates and dangling targets included).
    succ : tuple of frozenset of int
        ``succ[i]``: the indices ``j`` of the nodes whose id is among node ``i``'s
        (flattened) wires.
    by_type : dict
        Node indices by type key (nodes that match nothing are left out).
    """

    convention: str
    ids: tuple[Any, ...]
    nodes: tuple[Mapping[str, Any], ...]
    type_keys: tuple[Hashable | None, ...]
    attrs: tuple[NodeAttrs, ...]
    n_edges: int
    succ: tuple[frozenset[int], ...]
    by_type: Mapping[Hashable, tuple[int, ...]]

    @property
    def n(self) -> int:
        """The number of unique node ids (``tab`` and configuration nodes included)."""
        return len(self.ids)

    @cached_property
    def adj(self) -> npt.NDArray[np.bool_]:
        """Adjacency matrix: ``adj[i, j]`` is True when ``j in succ[i]``."""
        out = np.zeros((self.n, self.n), dtype=bool)
        for i, js in enumerate(self.succ):
            out[i, list(js)] = True
        return out

    @cached_property
    def keysets(self) -> dict[Hashable, frozenset[frozenset[str]]]:
        """Per type key, the distinct sets of compared keys of its nodes."""
        out: dict[Hashable, set[frozenset[str]]] = {}
        for t, idx in self.by_type.items():
            out[t] = {self.attrs[i].keys for i in idx}
        return {t: frozenset(v) for t, v in out.items()}

    @property
    def edges(self) -> list[tuple[int, int]]:
        """All edges ``(i, j)``, ``i != j``, in row order."""
        return [(i, j) for i, js in enumerate(self.succ) for j in sorted(js) if j != i]


class NodeAttrs(NamedTuple):
    """The compared attributes of one node.

    Attributes
    ----------
    items : tuple of (key, value)
        Compared keys and their values (reference: raw values; paper: :func:`canonical`).
    iset : frozenset or None
        The items with hashable values of the same equality, for set intersection; None when
        a value defeats hashing (a NaN, whose ``==`` is not reflexive).
    none_keys : frozenset of str
        Keys whose value is ``None`` (reference: they match a missing key).
    keys : frozenset of str
        All compared keys.
    """

    items: tuple[tuple[str, Any], ...]
    iset: frozenset[tuple[str, Hashable]] | None
    none_keys: frozenset[str]
    keys: frozenset[str]


# --------------------------------------------------------------------------- helpers
def _is_nan(v: Any) -> bool:
    return isinstance(v, float) and math.isnan(v)


_SCALARS = (str, int, bool, type(None))


def _hkey_reference(v: Any) -> Hashable:
    """Return a hashable stand-in with Python ``==`` semantics (lists/dicts: tagged tuples).

    Raises
    ------
    _NaNFound
        If ``v`` holds a NaN (``nan != nan``, which hashing cannot express).
    """
    if type(v) in _SCALARS:
        return v  # type: ignore[no-any-return]
    if isinstance(v, float):
        if math.isnan(v):
            raise _NaNFound
        return v
    if isinstance(v, list):
        return ("\x00list", tuple(_hkey_reference(x) for x in v))
    if isinstance(v, dict):
        return ("\x00dict", frozenset((k, _hkey_reference(x)) for k, x in v.items()))
    return v  # type: ignore[no-any-return]


class _NaNFound(Exception):
    """A NaN inside a value."""


def _type_key_reference(node: Mapping[str, Any]) -> Hashable | None:
    if "type" not in node:
        return None
    try:
        return _hkey_reference(node["type"])
    except _NaNFound:
        return None  # nan != nan: this node's type equals no type, not even its own


def _attrs_reference(node: Mapping[str, Any]) -> NodeAttrs:
    kept = {k: v for k, v in node.items() if k not in SKIP_REFERENCE}
    items = tuple(kept.items())
    iset: frozenset[tuple[str, Hashable]] | None
    try:
        iset = frozenset(items)  # plain JSON scalars hash with their == semantics
        for v in kept.values():
            if v.__class__ is float and v != v:
                iset = None  # NaN: not even equal to itself
                break
    except TypeError:  # a list or object value
        try:
            iset = frozenset([(k, _hkey_reference(v)) for k, v in items])
        except _NaNFound:
            iset = None
    return NodeAttrs(
        items,
        iset,
        frozenset([k for k, v in items if v is None]),
        frozenset(kept),
    )


def canonical(v: Any) -> Hashable:
    """Return a hashable stand-in for ``v`` with the ``paper`` convention's strict equality.

    Booleans differ from numbers, ``1`` equals ``1.0``, ``NaN`` equals ``NaN``, ``null`` is a
    value of its own, and lists and objects compare element by element.
    """
    if v is None:
        return ("z",)
    if isinstance(v, bool):
        return ("b", v)
    if isinstance(v, int | float):
        return ("n", "nan") if _is_nan(v) else ("n", v)
    if isinstance(v, str):
        return ("s", v)
    if isinstance(v, list | tuple):
        return ("l", tuple(canonical(x) for x in v))
    if isinstance(v, dict):
        return ("d", frozenset((str(k), canonical(x)) for k, x in v.items()))
    return ("o", repr(v))


def _attrs_paper(node: Mapping[str, Any]) -> NodeAttrs:
    items = tuple((k, canonical(v)) for k, v in node.items() if k not in SKIP_PAPER)
    return NodeAttrs(items, frozenset(items), frozenset(), frozenset(k for k, _ in items))


def load_flow(obj: Any) -> list[Any]:
    """Return the node list of ``obj``: a flow list, a JSON string, or an object with ``flow``.

    Raises
    ------
    FlowError
        If no node list can be found.
    """
    if isinstance(obj, str):
        try:
            obj = json.loads(obj)
        except ValueError as exc:
            raise FlowError(f"the flow string is not JSON ({exc})") from exc
        except RecursionError as exc:
            raise FlowError("the flow string nests too deep to be a program") from exc
    if isinstance(obj, dict) and "flow" in obj:
        return load_flow(obj["flow"])
    if not isinstance(obj, list):
        raise FlowError(f"a flow must be a list of node objects, not {type(obj).__name__}")
    return obj


def _flat_wires_reference(wires: Any, node_id: Any) -> list[Any]:
    """Flatten ``wires`` as the reference does (spec §2.1)."""
    if wires is None:
        raise FlowError(f"node {node_id!r}: 'wires' is null (the reference crashes)")
    if isinstance(wires, str):
        return [wires]  # kept as a string: the reference then tests substrings (see below)
    if not isinstance(wires, list):
        raise FlowError(f"node {node_id!r}: 'wires' must be a list")
    if wires and isinstance(wires[0], list):
        out: list[Any] = []
        for port in wires:
            if not isinstance(port, list):
                raise FlowError(
                    f"node {node_id!r}: 'wires' mixes ports and ids (the reference crashes)"
                )
            out.extend(port)
        return out
    return list(wires)


def _flat_wires_paper(wires: Any) -> list[Any]:
    """Flatten ports of any depth; anything that is not a list of ids is ignored."""
    out: list[Any] = []
    stack = [wires] if isinstance(wires, list) else []
    while stack:
        cur = stack.pop()
        for x in reversed(cur):
            if isinstance(x, list):
                stack.append(x)
            else:
                out.append(x)
    out.reverse()
    return out


def normalise_flow(flow: Any, convention: str = "reference") -> NormalFlow:
    """Normalise a flow under ``convention`` (spec §2.1).

    Parameters
    ----------
    flow : list, str or dict
        The node list, a JSON string of it, or a domain file's object with a ``flow`` key.
    convention : {"reference", "paper"}
        Which semantics to use (see the module docstring).

    Returns
    -------
    NormalFlow

    Raises
    ------
    FlowError
        Where the reference crashes: a node that is not an object, a missing or unhashable
        ``id``, ``wires: null``, a wires list that mixes ports and ids.
    """
    if convention not in CONVENTIONS:
        raise ValueError(f"unknown convention {convention!r}")
    nodes_in = load_flow(flow)
    index: dict[Any, int] = {}
    nodes: list[dict[str, Any]] = []
    wires: list[list[Any]] = []
    raw_wires: list[Any] = []
    for node in nodes_in:
        if not isinstance(node, dict):
            raise FlowError(f"a node must be an object, not {type(node).__name__}")
        if "id" not in node:
            raise FlowError("a node has no 'id' (the reference crashes with KeyError)")
        nid = node["id"]
        try:
            hash(nid)
        except TypeError as exc:
            raise FlowError(f"node id {nid!r} is not a string or number") from exc
        w = node.get("wires", [])
        if convention == "reference":
            flat = _flat_wires_reference(w, nid)
        else:
            flat = _flat_wires_paper(w)
        if nid in index:  # duplicate id: the later node replaces the earlier, keeps its place
            k = index[nid]
            nodes[k] = node
            wires[k] = flat
            raw_wires[k] = w
        else:
            index[nid] = len(nodes)
            nodes.append(node)
            wires.append(flat)
            raw_wires.append(w)
    succ: list[set[int]] = [set() for _ in nodes]
    n_edges = 0
    for i, flat in enumerate(wires):
        n_edges += len(flat)
        row = succ[i]
        if convention == "reference" and isinstance(raw_wires[i], str):
            # ``id in "some string"`` is a substring test in Python.
            text = raw_wires[i]
            row.update(j for j, nid in enumerate(index) if isinstance(nid, str) and nid in text)
            continue
        for target in flat:
            try:
                j = index.get(target)
            except TypeError:  # unhashable (a nested list): never equal to an id
                continue
            if j is not None:
                row.add(j)
        if convention == "paper":
            row.discard(i)  # self-loops carry no structure under the paper's rule
    if convention == "reference":
        type_keys = tuple(_type_key_reference(nd) for nd in nodes)
        attrs = tuple(_attrs_reference(nd) for nd in nodes)
    else:
        type_keys = tuple(canonical(nd.get("type")) for nd in nodes)
        attrs = tuple(_attrs_paper(nd) for nd in nodes)
    tkeys: tuple[Hashable | None, ...] = type_keys
    by_type: dict[Hashable, list[int]] = {}
    for i, t in enumerate(tkeys):
        if t is not None:
            by_type.setdefault(t, []).append(i)
    return NormalFlow(
        convention=convention,
        ids=tuple(index),
        nodes=tuple(nodes),
        type_keys=tkeys,
        attrs=attrs,
        n_edges=n_edges,
        succ=tuple(frozenset(r) for r in succ),
        by_type={t: tuple(v) for t, v in by_type.items()},
    )


# --------------------------------------------------------------------------- node similarity
def w_reference(a1: NodeAttrs, a2: NodeAttrs, node2: Mapping[str, Any]) -> float:
    r"""Node similarity of the companion code (asymmetric), given the same type.

    .. math::

        w(n_1, n_2) = \frac{|\{k \in K_1 : n_1[k] = n_2[k]\}|}{|K_1|},
        \qquad K_1 = \operatorname{keys}(n_1) \setminus \mathrm{SKIP}

    where a key missing from :math:`n_2` reads as ``None`` and equality is Python ``==``.
    :math:`|K_1| = 0` gives :math:`w = 1` (against any node of the same type).

    Parameters
    ----------
    a1, a2 : NodeAttrs
        The compared attributes of :math:`n_1` and :math:`n_2`.
    node2 : mapping
        The node :math:`n_2` itself (used when a value is not hashable).

    Returns
    -------
    float
        In [0, 1]; 1 exactly when all of :math:`n_1`'s compared keys match.
    """
    den = len(a1.items)
    if den == 0:
        return 1.0
    if a1.iset is not None and a2.iset is not None:
        # (v1 is None) != (v2 is None) or v1 != v2  <=>  not (v1 == v2) for JSON values, and
        # a None value also matches a missing key.
        num = len(a1.iset & a2.iset) + len(a1.none_keys - a2.keys)
    else:
        num = 0
        get = node2.get
        for k, v1 in a1.items:
            v2 = get(k)
            if (v1 is None) != (v2 is None):
                continue
            if v1 != v2:
                continue
            num += 1
    return 1.0 if num == den else num / den


def w_paper(a1: NodeAttrs, a2: NodeAttrs) -> float:
    r"""Symmetric node similarity of the ``paper`` convention, given the same type.

    .. math::

        w(n_1, n_2) = \frac{|\{k \in K : k \in n_1, k \in n_2, n_1[k] \equiv n_2[k]\}|}{|K|},
        \qquad K = (\operatorname{keys}(n_1) \cup \operatorname{keys}(n_2)) \setminus
        \mathrm{SKIP}_\mathrm{paper}

    with strict JSON equality :math:`\equiv` (:func:`canonical`). :math:`K = \emptyset` gives
    1 (two attribute-free nodes of one type are the same node).
    """
    assert a1.iset is not None and a2.iset is not None
    den = len(a1.keys | a2.keys)
    if den == 0:
        return 1.0
    num = len(a1.iset & a2.iset)
    return 1.0 if num == den else num / den


# --------------------------------------------------------------------------- synthetic flows
def compose_flows(parts: Sequence[Any], *, chain: bool = True) -> list[dict[str, Any]]:
    """Concatenate flows into one larger flow (for benchmarks, tests and simulation).

    Node ids (and ``z``/``wires`` references) of part ``k`` get the prefix ``"k:"``, so the
    parts stay disjoint. With ``chain``, the first wired node of each part also feeds the
    first node of the next part, so the parts are connected.
    """
    out: list[dict[str, Any]] = []
    prev_first: dict[str, Any] | None = None
    for k, part in enumerate(parts):
        nodes = load_flow(part)
        ids = {n.get("id") for n in nodes if isinstance(n, dict)}

        def ren(x: Any, k: int = k, ids: set[Any] = ids) -> Any:
            return f"{k}:{x}" if isinstance(x, str) and x in ids else x

        first: dict[str, Any] | None = None
        for node in nodes:
            new = dict(node)
            new["id"] = ren(node.get("id"))
            if "z" in new:
                new["z"] = ren(new["z"])
            w = node.get("wires")
            if isinstance(w, list):
                new["wires"] = [
                    [ren(t) for t in port] if isinstance(port, list) else ren(port) for port in w
                ]
                if first is None and w and isinstance(w[0], list):
                    first = new
            out.append(new)
        if chain and prev_first is not None and first is not None:
            ports = prev_first["wires"]
            prev_first["wires"] = [*ports[:-1], [*ports[-1], first["id"]]]
        prev_first = first if first is not None else prev_first
    return out


def mutate_flow(
    flow: Any, rng: np.random.Generator, n_mutations: int = 3
) -> list[dict[str, Any]]:
    """Apply ``n_mutations`` random edits to a copy of ``flow`` (deterministic given ``rng``).

    Edits: change an attribute value, drop a node, duplicate a node under a new id, reverse
    an edge, add an edge, drop an edge. Used to generate test and benchmark pairs.
    """
    nodes = [dict(n) for n in load_flow(flow)]
    for n in nodes:
        if isinstance(n.get("wires"), list):
            n["wires"] = [list(p) if isinstance(p, list) else p for p in n["wires"]]
    counter = 0
    for _ in range(n_mutations):
        if not nodes:
            break
        op = int(rng.integers(6))
        i = int(rng.integers(len(nodes)))
        node = nodes[i]
        wired = [n for n in nodes if n.get("wires") and isinstance(n["wires"][0], list)]
        if op == 0:
            keys = [k for k in node if k not in SKIP_REFERENCE]
            if keys:
                k = keys[int(rng.integers(len(keys)))]
                node[k] = f"mutated-{int(rng.integers(1000))}"
        elif op == 1 and len(nodes) > 1:
            gone = nodes.pop(i).get("id")
            for n in nodes:
                if isinstance(n.get("wires"), list):
                    n["wires"] = [
                        [t for t in p if t != gone] if isinstance(p, list) else p
                        for p in n["wires"]
                    ]
        elif op == 2:
            counter += 1
            new = dict(node)
            new["id"] = f"{node.get('id')}~{counter}"
            if isinstance(node.get("wires"), list):
                new["wires"] = [list(p) if isinstance(p, list) else p for p in node["wires"]]
            nodes.append(new)
        elif op in (3, 4, 5) and wired:
            src = wired[int(rng.integers(len(wired)))]
            targets = [t for p in src["wires"] for t in p]
            by_id = {n.get("id"): n for n in nodes}
            if op == 3 and targets:
                t = targets[int(rng.integers(len(targets)))]
                dst = by_id.get(t)
                if dst is not None:
                    src["wires"] = [[x for x in p if x != t] for p in src["wires"]]
                    if isinstance(dst.get("wires"), list) and dst["wires"]:
                        dst["wires"][0].append(src["id"])
                    else:
                        dst["wires"] = [[src["id"]]]
            elif op == 4:
                t = nodes[int(rng.integers(len(nodes)))].get("id")
                if t != src.get("id"):
                    src["wires"][0].append(t)
            elif op == 5 and targets:
                t = targets[int(rng.integers(len(targets)))]
                src["wires"] = [[x for x in p if x != t] for p in src["wires"]]
    return nodes
