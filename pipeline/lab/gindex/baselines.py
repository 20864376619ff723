r"""Two baseline program-synthesis systems for ``gmeter gindex run`` (issue 25, item 2).

Both are programs speaking the harness's protocol — one JSON line ``{"task", "domain",
"prompt"}`` in, one line ``{"program": [...]}`` out — and learn only from a curriculum folder
of ``<domain>.jsonl`` samples ``{"prompt", "program"}`` (e.g. the one
:mod:`pipeline.lab.gindex.curriculum` writes)::

    python -m pipeline.lab.gindex.baselines curriculum --samples DIR   # write the samples
    python -m pipeline.lab.gindex.baselines retrieval --samples DIR
    python -m pipeline.lab.gindex.baselines mode-node --samples DIR

* ``retrieval`` answers with the program of the curriculum sample whose prompt is nearest
  to the task's prompt: cosine similarity of TF-IDF vectors (:class:`Tfidf`: scikit-learn's
  ``TfidfVectorizer`` defaults — lower-cased words of two or more characters, smoothed idf
  :math:`\ln\frac{1+n}{1+df}+1`, rows scaled to unit length — equal to scikit-learn's to
  1e-12, tested; built in because scikit-learn is an optional extra, kept to one module).
  Ties go to the earliest sample. The domain field is not used: the prompt alone chooses.
* ``mode-node`` (the trivial baseline) ignores the prompt: it answers with one node, the
  most frequent node type among the curriculum programs of the task's domain (ties by name),
  as it first appears there, unwired.

Neither sees a reference program: they are the test set.
"""

from __future__ import annotations

import argparse
import json
import math
import re
import sys
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from pipeline.lab.gindex.curriculum import read_curriculum, write_curriculum

#: Curriculum samples per domain of the committed baseline bundles.
PER_DOMAIN = 8

TOKEN = re.compile(r"(?u)\b\w\w+\b")
"""scikit-learn's default token pattern: words of two or more characters."""


class Tfidf:
    r"""TF-IDF with scikit-learn's ``TfidfVectorizer`` defaults, in plain Python.

    Term counts :math:`tf`, inverse document frequency :math:`idf(t) = \ln\frac{1 + n}{1 +
    df(t)} + 1` over the :math:`n` training documents, each row :math:`tf \cdot idf` scaled
    to unit Euclidean length; words unseen in training are dropped.
    """

    def __init__(self, docs: Sequence[str]) -> None:
        tokens = [TOKEN.findall(d.lower()) for d in docs]
        df = Counter(t for toks in tokens for t in set(toks))
        n = len(docs)
        self.idf = {t: math.log((1 + n) / (1 + c)) + 1 for t, c in df.items()}
        self.rows = [self.vector(toks) for toks in tokens]

    def vector(self, tokens: Sequence[str]) -> dict[str, float]:
        """The unit-length TF-IDF vector of a token list (as a sparse mapping)."""
        counts = Counter(t for t in tokens if t in self.idf)
        v = {t: c * self.idf[t] for t, c in counts.items()}
        norm = math.sqrt(sum(x * x for x in v.values()))
        return {t: x / norm for t, x in v.items()} if norm else {}

    def similarities(self, query: str) -> list[float]:
        """Cosine similarity of ``query`` to every training document."""
        q = self.vector(TOKEN.findall(query.lower()))
        return [sum(w * row.get(t, 0.0) for t, w in q.items()) for row in self.rows]


class Retrieval:
    """Answer with the program of the nearest curriculum prompt (TF-IDF cosine)."""

    def __init__(self, samples: list[tuple[str, dict[str, Any]]]) -> None:
        self.programs = [s["program"] for _, s in samples]
        self.index = Tfidf([str(s["prompt"]) for _, s in samples])

    def answer(self, request: dict[str, Any]) -> list[Any]:
        """The nearest sample's program (the earliest of equally near ones)."""
        sims = self.index.similarities(str(request.get("prompt", "")))
        best = max(range(len(sims)), key=lambda k: (sims[k], -k))
        return list(self.programs[best])


class ModeNode:
    """Answer with the single most frequent node type of the task's domain."""

    def __init__(self, samples: list[tuple[str, dict[str, Any]]]) -> None:
        self.first: dict[str, dict[str, dict[str, Any]]] = {}
        counts: dict[str, Counter[str]] = {}
        for domain, s in samples:
            for node in s["program"]:
                if isinstance(node, dict) and "x" in node:  # flow nodes, not config nodes
                    t = str(node.get("type"))
                    counts.setdefault(domain, Counter())[t] += 1
                    self.first.setdefault(domain, {}).setdefault(t, node)
        self.mode = {d: min(c, key=lambda t: (-c[t], t)) for d, c in counts.items()}

    def answer(self, request: dict[str, Any]) -> list[Any]:
        """One unwired node of the domain's most frequent type; ``[]`` for an unknown domain."""
        domain = str(request.get("domain", ""))
        if domain not in self.mode:
            return []
        node = dict(self.first[domain][self.mode[domain]])
        node.update(id="n1", wires=[[] for _ in node.get("wires", [[]])])
        return [node]


def serve(system: Any, stdin: Any = None, stdout: Any = None) -> int:
    """Answer one line per request until the input closes."""
    stdin = stdin or sys.stdin
    stdout = stdout or sys.stdout
    for line in stdin:
        if not line.strip():
            continue
        stdout.write(json.dumps({"program": system.answer(json.loads(line))}) + "\n")
        stdout.flush()
    return 0


def main(argv: list[str] | None = None) -> int:
    """``python -m pipeline.lab.gindex.baselines {retrieval,mode-node} --samples DIR``."""
    p = argparse.ArgumentParser(prog="python -m pipeline.lab.gindex.baselines",
                                description=__doc__.split("\n\n")[0])  # fmt: skip
    p.add_argument("system", choices=["retrieval", "mode-node", "curriculum"],
                   help="a baseline to serve, or curriculum: write the training samples")
    p.add_argument("--samples", type=Path, required=True,
                   help="folder of <domain>.jsonl curriculum samples {prompt, program} (read; "
                   "written by curriculum, with curriculum.csv)")
    p.add_argument("--per-domain", type=int, default=PER_DOMAIN,
                   help=f"curriculum: samples per domain ({PER_DOMAIN})")
    p.add_argument("--seed", type=int, default=0, help="curriculum: seed (0)")
    args = p.parse_args(argv)
    if args.system == "curriculum":
        write_curriculum(args.samples, args.per_domain, args.seed)
        return 0
    samples = read_curriculum(args.samples)
    if not samples:
        p.error(f"no <domain>.jsonl samples in {args.samples}")
    if args.system == "retrieval":
        return serve(Retrieval(samples))
    return serve(ModeNode(samples))


if __name__ == "__main__":
    sys.exit(main())
