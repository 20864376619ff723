"""The array trace decoder gives exactly the reference decoder's actions and errors."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pipeline.metrics.aiq.runs import ACTION_DIGITS, decode_actions, encode_actions
from pipeline.metrics.aiq.traces import decode_actions_array, decode_each

# Alphabet letters, their neighbours, separators, NUL, letters that look alike, characters
# outside ASCII and the BMP, and lone and paired surrogates (possible in decoded text).
ODD = ["\x00", ".", ",", " ", "\n", "-", "+", "é", "０", "٣", "ß", "😀", "\ud800", "\udfff",
       "\ud83d\ude00", "\x7f", "\x80", "\uffff"]  # fmt: skip
PIECES = st.one_of(st.sampled_from(ACTION_DIGITS), st.sampled_from(ODD), st.characters())
TEXTS = st.lists(st.lists(PIECES, max_size=40).map("".join), max_size=12)
SYMBOLS = st.integers(2, 127)


def reference(text: str, n: int) -> tuple[list[int] | None, str]:
    try:
        return decode_actions(text, n), ""
    except ValueError as exc:
        return None, str(exc)


def observed(texts: list[str], n: int, chunk: int) -> list[tuple[list[int] | None, str]]:
    out = []
    for got in decode_each(texts, n, chunk_chars=chunk):
        if got.actions is None:
            out.append((None, got.error))
        else:
            assert got.actions.dtype == np.int8
            out.append((got.actions.tolist(), ""))
    return out


@settings(max_examples=300, deadline=None)
@given(TEXTS, SYMBOLS, st.integers(1, 64))
def test_hostile_traces_decode_like_the_reference(texts, n, chunk):
    assert observed(texts, n, chunk) == [reference(t, n) for t in texts]


@settings(max_examples=100, deadline=None)
@given(st.lists(st.lists(st.integers(0, 126), max_size=30), max_size=8), SYMBOLS,
       st.integers(1, 100))  # fmt: skip
def test_encoded_actions_round_trip(runs, n, chunk):
    runs = [[a % n for a in run] for run in runs]
    texts = [encode_actions(run, n) for run in runs]
    assert observed(texts, n, chunk) == [(run, "") for run in runs]


@pytest.mark.parametrize("n", [2, 5, 62, 63, 127])
def test_one_trace_function_raises_the_reference_error(n):
    good = encode_actions(list(range(n)) * 3, n)
    assert decode_actions_array(good, n).tolist() == decode_actions(good, n)
    bad = good[:-1] + "\ud800" if n <= len(ACTION_DIGITS) else good + ".999"
    with pytest.raises(ValueError) as ref:
        decode_actions(bad, n)
    with pytest.raises(ValueError) as new:
        decode_actions_array(bad, n)
    assert str(new.value) == str(ref.value)


def test_every_trace_of_a_long_group_is_decoded_in_order():
    rng = np.random.default_rng(5)
    runs = [rng.integers(0, 5, int(rng.integers(0, 300))).tolist() for _ in range(400)]
    texts = [encode_actions(r, 5) for r in runs]
    texts[123] = texts[123][:7] + "z" + texts[123][7:]  # outside a 5-symbol alphabet
    got = observed(texts, 5, chunk=1000)
    assert got[123] == reference(texts[123], 5)
    assert [g for i, g in enumerate(got) if i != 123] == [
        (r, "") for i, r in enumerate(runs) if i != 123
    ]
