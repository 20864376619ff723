r"""AIQ program sampler and strata (spec §2.5, §3): draw, filter and classify BF programs.

A program is drawn symbol by symbol (:func:`bf.random_program`), simplified, then tested:

1. no ``,`` or no ``.`` → rejected (``no_io``);
2. run 5 times for 200 cycles with uniformly random actions on a fresh machine; a cycle that
   reaches the step limit → rejected (``overtime``);
3. the reward-cell symbols of cycles 4…199 (0-based) identical in all 5 runs → rejected
   (``passive``);
4. otherwise the stratum is the behaviour class (1…10) all 5 runs agree on, else a length
   bucket 11…20 by :math:`|\text{program}|` (``#`` included).

Behaviour classes compare the raw reward symbol :math:`r_i` with the actions
:math:`a_i, a_{i-1}, a_{i-2}, a_{i-3}` for every cycle :math:`i > 5`; the first that holds
throughout wins: 1 :math:`r=a_i`; 2 :math:`r=a_{i-1}`; 3 :math:`r=a_{i-2}`; 4
:math:`r=a_{i-3}`; 5 :math:`r=a_i+1`; 6 :math:`r=a_i-1`; 7 :math:`r=a_{i-1}+1`; 8
:math:`r=a_{i-1}-1` (mod :math:`n`); 9 :math:`r=a_i` whenever :math:`a_i\ne` blank; 10
:math:`r=a_{i-1}` whenever :math:`a_{i-1}\ne` blank.

The stratum probabilities :math:`p_i` of the estimator are the frequencies of the strata among
the accepted programs of the sample.

References
----------
Legg, S. & Veness, J. (2013). An Approximation of the Universal Intelligence Measure, §3.5,
§4.3; the authors' ``BF_sampler.py`` (spec §3).

Notes
-----
* Randomness is one SplitMix64 stream per block of programs (program symbols, random actions
  and the ``%`` instruction share it, as the original's global ``random`` does), so a sample is
  reproducible from its seed and independent of the number of workers.
* A program is declared overtime as soon as one cycle reaches the limit (the original finishes
  all 5 runs first); the verdict is the same, only fewer random numbers are drawn.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from pipeline.metrics.aiq.bf import BFConfig, BFMachine, SplitMix64, compile_program, random_program

#: Upper bounds of the length strata 11…19 (``len < bound``); longer programs are stratum 20.
LENGTH_BOUNDS = (8, 10, 13, 16, 20, 24, 31, 43, 60)
NUM_STRATA = 21  # index 0 = rejected/passive (probability 0), 1…20 accepted
CLASS_RUNS = 5
CLASS_CYCLES = 200
#: Program lengths at or above this are pooled in the last histogram bin.
HIST_BINS = 101
REJECT_REASONS = ("no_io", "overtime", "passive")


def length_stratum(program: str) -> int:
    """Return the length stratum 11…20 of a program (length counts the final ``#``)."""
    n = len(program)
    for k, bound in enumerate(LENGTH_BOUNDS):
        if n < bound:
            return 11 + k
    return 20


def behaviour_class(actions: Sequence[int], rewards: Sequence[int], n: int, blank: int) -> int:
    """Return the behaviour class 1…10 of one run, or 99 ("other")."""
    idx = range(6, len(actions))
    a = actions
    r = rewards
    tests = (
        lambda i: r[i] == a[i],
        lambda i: r[i] == a[i - 1],
        lambda i: r[i] == a[i - 2],
        lambda i: r[i] == a[i - 3],
        lambda i: r[i] == (a[i] + 1) % n,
        lambda i: r[i] == (a[i] - 1) % n,
        lambda i: r[i] == (a[i - 1] + 1) % n,
        lambda i: r[i] == (a[i - 1] - 1) % n,
        lambda i: a[i] == blank or r[i] == a[i],
        lambda i: a[i - 1] == blank or r[i] == a[i - 1],
    )
    for cls, test in enumerate(tests, start=1):
        if all(test(i) for i in idx):
            return cls
    return 99


def classify(program: str, config: BFConfig, rng: SplitMix64) -> tuple[int, str]:
    """Classify one program; return ``(stratum, reason)``.

    ``stratum`` is 1…20 for an accepted program with ``reason == "accepted"``; 0 with reason
    ``no_io``/``passive``, or -1 with reason ``overtime``, for a rejected one.
    """
    if "," not in program or "." not in program:
        return 0, "no_io"
    compiled = compile_program(program)
    n, blank, cell = config.num_symbols, config.blank, config.reward_cell
    runs: list[tuple[list[int], list[int]]] = []
    for _ in range(CLASS_RUNS):
        machine = BFMachine(compiled, config)
        machine.rng = rng  # one shared stream, like the original's global random
        acts: list[int] = []
        syms: list[int] = []
        for _ in range(CLASS_CYCLES):
            a = rng.below(n)
            cyc = machine.act(a)
            if cyc.steps >= config.max_steps:
                return -1, "overtime"
            acts.append(a)
            syms.append(cyc.output[cell])
        runs.append((acts, syms))
    if all(r[4:] == runs[0][1][4:] for _, r in runs):
        return 0, "passive"
    classes = {behaviour_class(a, r, n, blank) for a, r in runs}
    if len(classes) == 1 and (cls := classes.pop()) != 99:
        return cls, "accepted"
    return length_stratum(program), "accepted"


@dataclass
class SampleBlock:
    """The accepted programs of one seeded block, with the sampler's statistics.

    Attributes
    ----------
    programs : list of str
        Accepted programs in draw order.
    strata : list of int
        Their strata (1…20).
    drawn : int
        Programs drawn (accepted + rejected).
    rejected : dict
        Rejections by reason (``no_io``, ``overtime``, ``passive``).
    hist_drawn, hist_accepted : list of int
        Counts of simplified program lengths 0…99 and ≥ 100 (last bin), all drawn vs accepted.
    """

    programs: list[str] = field(default_factory=list)
    strata: list[int] = field(default_factory=list)
    drawn: int = 0
    rejected: dict[str, int] = field(default_factory=lambda: dict.fromkeys(REJECT_REASONS, 0))
    hist_drawn: list[int] = field(default_factory=lambda: [0] * HIST_BINS)
    hist_accepted: list[int] = field(default_factory=lambda: [0] * HIST_BINS)


def sample_block(seed: int, count: int, config: BFConfig, *, iterated: bool = False) -> SampleBlock:
    """Draw programs from one SplitMix64 stream until ``count`` are accepted (plain Python).

    The compiled twin :func:`pipeline.metrics.aiq.sampler_fast.sample_block_fast` gives the same
    result; this one is the reference for tests.
    """
    rng = SplitMix64(seed)
    out = SampleBlock()
    while len(out.programs) < count:
        _, prog = random_program(rng, iterated=iterated)
        out.drawn += 1
        out.hist_drawn[min(len(prog), HIST_BINS - 1)] += 1
        stratum, reason = classify(prog, config, rng)
        if reason != "accepted":
            out.rejected[reason] += 1
            continue
        out.programs.append(prog)
        out.strata.append(stratum)
        out.hist_accepted[min(len(prog), HIST_BINS - 1)] += 1
    return out


def stratum_probabilities(strata: Sequence[int]) -> list[float]:
    r"""Return :math:`p_i = \#\{j: s_j = i\} / N` for :math:`i = 0…20` (:math:`p_0 = 0`)."""
    counts = [0] * NUM_STRATA
    for s in strata:
        counts[s] += 1
    total = len(strata)
    return [c / total if total else 0.0 for c in counts]
