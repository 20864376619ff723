r"""Decoding logged AIQ traces many at a time, with array operations instead of a loop per action.

A trace is the text :func:`pipeline.metrics.aiq.runs.encode_actions` wrote: for an alphabet of
:math:`n \le 62` symbols one character per action, the character of action :math:`a` being
``ACTION_DIGITS[a]``; for larger alphabets the actions in decimal, joined by ``.``. Decoding is
the inverse map

.. math::

    a_k = \operatorname{index}(c_k) \quad (k = 0, \dots, |t|-1), \qquad
    \text{valid iff } 0 \le a_k < n,

where :math:`c_k` is the :math:`k`-th character of the trace :math:`t` and
:math:`\operatorname{index}` is the position in ``ACTION_DIGITS`` (undefined, hence invalid,
for any other character).

Here the texts of many runs are joined and decoded at once: a 256-entry table maps every byte
of the ASCII text to its action (255 for a character outside the alphabet) in one
``bytes.translate``, the result is viewed as a NumPy array, and its maximum tells whether any
action is :math:`\ge n` (only then are the invalid positions looked for). Text with other
characters takes a wider path: one 32-bit code point per character, the same table. The result
for each trace is exactly :func:`~pipeline.metrics.aiq.runs.decode_actions`'s (same actions,
same error message for the first invalid character, counted in characters, not bytes); the
tests compare the two on hostile text (non-ASCII letters, lone surrogates, NUL, separators).

Work is cut into chunks of about :data:`CHUNK_CHARS` characters so memory stays bounded for a
bundle of long episodes (10,000 runs × 10,000 cycles is 100 million actions).

References
----------
Legg, S. & Veness, J. (2013). An Approximation of the Universal Intelligence Measure, §4 (the
runs whose actions are logged).
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Iterator
from typing import NamedTuple

import numpy as np

from pipeline.metrics.aiq.runs import ACTION_DIGITS, decode_actions

#: About this many characters are decoded per array pass (bounded memory, few passes).
CHUNK_CHARS = 1 << 22
_INVALID = 255
_LUT = np.full(128, _INVALID, np.uint8)
_LUT[np.frombuffer(ACTION_DIGITS.encode("ascii"), np.uint8)] = np.arange(
    len(ACTION_DIGITS), dtype=np.uint8
)
_TABLE = bytes(_LUT.tolist() + [_INVALID] * 128)  # the same map as a bytes.translate table


class DecodedTrace(NamedTuple):
    """One decoded trace: its actions (``int8``), or ``None`` and the decoder's error message."""

    actions: np.ndarray | None
    error: str = ""


def decode_actions_array(text: str, num_symbols: int) -> np.ndarray:
    """Decode one trace to an ``int8`` array; raise ValueError like ``decode_actions``."""
    out = next(decode_each([text], num_symbols))
    if out.actions is None:
        raise ValueError(out.error)
    return out.actions


def decode_each(
    texts: Iterable[str], num_symbols: int, *, chunk_chars: int = CHUNK_CHARS
) -> Iterator[DecodedTrace]:
    """Yield one :class:`DecodedTrace` per text, in order.

    Parameters
    ----------
    texts : iterable of str
        Traces, untrusted (any Unicode, any length).
    num_symbols : int
        The alphabet size :math:`n` (2..127 for the BF machine).
    chunk_chars : int
        Texts are decoded in groups of about this many characters.

    Notes
    -----
    The arrays of a group are views of one buffer; keeping one keeps its group alive, so a
    caller holding every result holds every action once (one byte each), never more.
    """
    if num_symbols > len(ACTION_DIGITS):
        # "."-joined decimals: rare (n > 62); the reference parser decides.
        yield from _decode_one_by_one(texts, num_symbols)
        return
    group: list[str] = []
    size = 0
    for text in texts:
        group.append(text)
        size += len(text)
        if size >= chunk_chars:
            yield from _decode_group(group, num_symbols)
            group, size = [], 0
    if group:
        yield from _decode_group(group, num_symbols)


def _decode_group(texts: list[str], num_symbols: int) -> Iterator[DecodedTrace]:
    """Decode one group of one-character-per-action traces with a few array passes."""
    joined = "".join(texts)
    if joined.isascii():
        # translate applies the table at memory speed (no index array, unlike _LUT[codes]); a
        # bytearray keeps the actions writable, the array type the compiled replay is built for
        values = np.frombuffer(bytearray(joined.encode("ascii")).translate(_TABLE), np.uint8)
    else:
        # One 32-bit code point per character keeps positions in characters; lone surrogates
        # (possible in decoded hostile text) are carried through, then rejected like any other.
        wide = np.frombuffer(joined.encode("utf-32-le", "surrogatepass"), np.uint32)
        if wide.size != len(joined):  # a codec that merged characters: decode one by one
            yield from _decode_one_by_one(texts, num_symbols)
            return
        values = np.where(wide < 128, _LUT[wide & 127], np.uint8(_INVALID))
    starts = np.zeros(len(texts) + 1, np.int64)
    np.cumsum([len(t) for t in texts], out=starts[1:])
    first_bad: dict[int, int] = {}
    if values.size and int(values.max()) >= num_symbols:  # one pass when all is well
        bad = np.flatnonzero(values >= num_symbols)
        owners = np.searchsorted(starts, bad, side="right") - 1
        # np.unique keeps the first occurrence of each owner: the first invalid position.
        owner_ids, first = np.unique(owners, return_index=True)
        first_bad = {int(o): int(bad[f] - starts[o]) for o, f in zip(owner_ids, first, strict=True)}
    actions = values.view(np.int8)
    bounds = starts.tolist()
    for i, (lo, hi) in enumerate(itertools.pairwise(bounds)):
        pos = first_bad.get(i) if first_bad else None
        if pos is None:
            yield DecodedTrace(actions[lo:hi])
        else:
            text = texts[i]
            yield DecodedTrace(
                None, f"action {text[pos]!r} at position {pos} is not in the alphabet"
            )


def _decode_one_by_one(texts: Iterable[str], num_symbols: int) -> Iterator[DecodedTrace]:
    """The reference decoder, text by text (large alphabets and the unexpected)."""
    for text in texts:
        try:
            yield DecodedTrace(np.asarray(decode_actions(text, num_symbols), np.int8))
        except ValueError as exc:
            yield DecodedTrace(None, str(exc))
