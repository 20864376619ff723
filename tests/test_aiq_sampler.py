"""AIQ program sampler and strata (spec §2.5, §3)."""

from __future__ import annotations

import pytest

from pipeline.metrics.aiq.bf import BFConfig, SplitMix64
from pipeline.metrics.aiq.sampler import (
    behaviour_class,
    classify,
    length_stratum,
    sample_block,
    stratum_probabilities,
)
from pipeline.metrics.aiq.sampler_fast import sample_block_fast

BF5 = BFConfig()


def test_length_strata_boundaries() -> None:
    # <8 ->11, <10 ->12, <13 ->13, <16 ->14, <20 ->15, <24 ->16, <31 ->17, <43 ->18, <60 ->19
    cases = {7: 11, 8: 12, 9: 12, 10: 13, 12: 13, 13: 14, 19: 15, 20: 16, 23: 16, 24: 17}
    cases |= {30: 17, 31: 18, 42: 18, 43: 19, 59: 19, 60: 20, 200: 20}
    for n, s in cases.items():
        assert length_stratum("+" * (n - 1) + "#") == s, n


def test_behaviour_classes_by_hand() -> None:
    acts = [0, 1, 2, 3, 4, 0, 1, 2, 3, 4, 2, 1, 0, 3]
    n, blank = 5, 2
    assert behaviour_class(acts, acts, n, blank) == 1  # copy
    assert behaviour_class(acts, [0, *acts[:-1]], n, blank) == 2  # previous action
    assert behaviour_class(acts, [0, 0, *acts[:-2]], n, blank) == 3
    assert behaviour_class(acts, [0, 0, 0, *acts[:-3]], n, blank) == 4
    assert behaviour_class(acts, [(a + 1) % 5 for a in acts], n, blank) == 5
    assert behaviour_class(acts, [(a - 1) % 5 for a in acts], n, blank) == 6
    prev = [0, *acts[:-1]]
    assert behaviour_class(acts, [(a + 1) % 5 for a in prev], n, blank) == 7
    assert behaviour_class(acts, [(a - 1) % 5 for a in prev], n, blank) == 8
    # copies the action except when it is blank (then anything but the blank)
    nine = [a if a != blank else 0 for a in acts]
    assert behaviour_class(acts, nine, n, blank) == 9
    ten = [a if a != blank else 4 for a in prev]
    assert behaviour_class(acts, ten, n, blank) == 10
    assert behaviour_class(acts, [1] * len(acts), n, blank) == 99
    # cycles 0..5 are not tested
    assert behaviour_class(acts, [4] * 6 + acts[6:], n, blank) == 1


def test_classify_rules() -> None:
    rng = SplitMix64(0)
    assert classify("+.#", BF5, rng) == (0, "no_io")  # no read
    assert classify(",+#", BF5, rng) == (0, "no_io")  # no write
    assert classify(",.#", BF5, rng) == (1, "accepted")  # copies the action
    assert classify(",>.#", BF5, rng) == (0, "passive")  # always writes the blank
    assert classify(",[].#", BF5, rng) == (-1, "overtime")  # loops on a non-blank action
    assert classify(",+.#", BF5, rng) == (5, "accepted")  # action + 1
    assert classify(",-.#", BF5, rng) == (6, "accepted")
    s, why = classify("%.,#", BF5, rng)  # random rewards: active, no class -> length 3 -> 11
    assert (s, why) == (11, "accepted")


def test_plain_and_compiled_sampler_agree() -> None:
    for iterated in (False, True):
        for seed in (0, 1, 2):
            assert sample_block(seed, 15, BF5, iterated=iterated) == sample_block_fast(
                seed, 15, BF5, iterated=iterated
            )
    cfg = BFConfig(num_symbols=3, obs_cells=2, reverse_output=True)
    assert sample_block(9, 15, cfg) == sample_block_fast(9, 15, cfg)


def test_sampler_statistics_match_the_original() -> None:
    # spec §8.3: 73.4% no_io, 11.0% passive, 1.5% overtime, 14.1% accepted; mean length ~21;
    # spec §3: p1 = .179, p2 = .102 (24 000 programs of the original sampler)
    blk = sample_block_fast(6, 4000, BF5)
    assert blk.drawn == 4000 + sum(blk.rejected.values())
    assert sum(blk.hist_drawn) == blk.drawn and sum(blk.hist_accepted) == 4000
    frac = {k: v / blk.drawn for k, v in blk.rejected.items()}
    assert frac["no_io"] == pytest.approx(0.734, abs=0.02)
    assert frac["passive"] == pytest.approx(0.110, abs=0.015)
    assert frac["overtime"] == pytest.approx(0.015, abs=0.006)
    p = stratum_probabilities(blk.strata)
    assert p[0] == 0 and sum(p) == pytest.approx(1.0)
    assert p[1] == pytest.approx(0.179, abs=0.02)
    assert p[2] == pytest.approx(0.102, abs=0.02)
    assert 19 < sum(map(len, blk.programs)) / 4000 < 23
    assert all(prog.endswith("#") and "," in prog and "." in prog for prog in blk.programs)


def test_sampler_is_reproducible() -> None:
    assert sample_block_fast(42, 100, BF5) == sample_block_fast(42, 100, BF5)
    assert sample_block_fast(42, 100, BF5).programs != sample_block_fast(43, 100, BF5).programs


def test_fast_program_check_accepts_exactly_what_compile_program_accepts():
    """The sample's C-speed well-formedness check and the BF compiler agree on every input."""
    import itertools

    from pipeline.metrics.aiq.bf import BFProgramError, compile_program
    from pipeline.tracks.aiq.programs import _well_formed

    alphabet = "<>+-,.%[]#x "
    for n in range(6):
        for chars in itertools.product(alphabet, repeat=n):
            prog = "".join(chars)
            try:
                compile_program(prog)
                ok = True
            except BFProgramError:
                ok = False
            assert _well_formed(prog) == ok, prog


def test_deeply_nested_programs_are_checked_in_linear_time():
    """A hostile 60,000-deep program is decided by the compiler, not by quadratic passes."""
    from pipeline.tracks.aiq.programs import parse_programs

    deep = "[" * 60_000 + "]" * 60_000
    parsed = parse_programs(f"id,stratum,program\n0,1,{deep}\n1,1,{deep}]\n")
    assert parsed.programs == [deep]
    assert [e[0] for e in parsed.errors] == [3] and "no matching" in parsed.errors[0][1]


def test_a_cell_beyond_the_csv_limit_is_an_error_not_a_crash():
    from pipeline.tracks.aiq.programs import parse_programs

    parsed = parse_programs("id,stratum,program\n0,1,+.#\n1,1," + "+" * 200_000 + "\n")
    assert parsed.programs == ["+.#"]
    assert parsed.errors[0][0] == 3 and parsed.errors[0][1].startswith("not CSV: field larger")
