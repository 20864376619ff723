"""numba kernels of the AIQ program sampler: the compiled twin of :mod:`aiq_sampler`.

Programs are built as opcode arrays (see :data:`bf.OPCODES`), simplified, classified and
returned concatenated with offsets. The random stream and every decision follow
:func:`aiq_sampler.sample_block` exactly; ``tests/test_aiq_sampler.py`` checks equality.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from pipeline.metrics.aiq.bf import OPCODES, BFConfig
from pipeline.metrics.aiq.bf_fast import bf_cycle, rng_below, seed64
from pipeline.metrics.aiq.sampler import HIST_BINS, SampleBlock

# sampler alphabet "<>+-,.[]#%" as opcodes, with '#' drawn as ']'
_DRAW_OPS = np.array([0, 1, 2, 3, 4, 5, 7, 8, 8, 6], np.int8)
_LEN_BOUNDS = np.array([8, 10, 13, 16, 20, 24, 31, 43, 60], np.int64)


@njit(cache=True)
def _draw(rng: np.ndarray, draw_ops: np.ndarray) -> np.ndarray:  # pragma: no cover - compiled
    buf = np.empty(32, np.int8)
    size = 0
    depth = 0
    while True:
        op = draw_ops[rng_below(rng, 10)]
        if op == 7:
            depth += 1
        elif op == 8:
            depth -= 1
            if depth < 0:
                op = 9
        if size == buf.shape[0]:
            bigger = np.empty(2 * size, np.int8)
            bigger[:size] = buf
            buf = bigger
        buf[size] = op
        size += 1
        if op == 9:
            return buf[:size].copy()


@njit(cache=True)
def _remove_pair(prog: np.ndarray, x: int, y: int) -> np.ndarray:  # pragma: no cover
    out = np.empty(prog.shape[0], np.int8)
    size = 0
    i = 0
    while i < prog.shape[0]:
        if i + 1 < prog.shape[0] and prog[i] == x and prog[i + 1] == y:
            i += 2
        else:
            out[size] = prog[i]
            size += 1
            i += 1
    return out[:size].copy()


@njit(cache=True)
def _simplify(prog: np.ndarray, iterated: bool) -> np.ndarray:  # pragma: no cover - compiled
    # +- , -+ , <> , >< , []  (opcodes: < 0, > 1, + 2, - 3, [ 7, ] 8)
    while True:
        before = prog.shape[0]
        prog = _remove_pair(prog, 2, 3)
        prog = _remove_pair(prog, 3, 2)
        prog = _remove_pair(prog, 0, 1)
        prog = _remove_pair(prog, 1, 0)
        prog = _remove_pair(prog, 7, 8)
        if not iterated or prog.shape[0] == before:
            return prog


@njit(cache=True)
def _jumps(prog: np.ndarray) -> np.ndarray:  # pragma: no cover - compiled
    jump = np.full(prog.shape[0], -1, np.int32)
    stack = np.empty(prog.shape[0], np.int64)
    top = 0
    for i in range(prog.shape[0]):
        if prog[i] == 7:
            stack[top] = i
            top += 1
        elif prog[i] == 8:
            top -= 1
            j = stack[top]
            jump[j] = i + 1
            jump[i] = j + 1
    return jump


@njit(cache=True)
def _behaviour(acts: np.ndarray, syms: np.ndarray, n: int, blank: int) -> int:  # pragma: no cover
    for cls in range(1, 11):
        ok = True
        for i in range(6, acts.shape[0]):
            r = syms[i]
            a = acts[i]
            oa = acts[i - 1]
            if cls == 1:
                ok = r == a
            elif cls == 2:
                ok = r == oa
            elif cls == 3:
                ok = r == acts[i - 2]
            elif cls == 4:
                ok = r == acts[i - 3]
            elif cls == 5:
                ok = r == (a + 1) % n
            elif cls == 6:
                ok = r == (a - 1) % n
            elif cls == 7:
                ok = r == (oa + 1) % n
            elif cls == 8:
                ok = r == (oa - 1) % n
            elif cls == 9:
                ok = a == blank or r == a
            else:
                ok = oa == blank or r == oa
            if not ok:
                break
        if ok:
            return cls
    return 99


@njit(cache=True)
def _classify(
    prog: np.ndarray,
    rng: np.ndarray,
    n: int,
    obs_cells: int,
    reverse: bool,
    tape_len: int,
    in_len: int,
    max_steps: int,
    runs: int,
    cycles: int,
    len_bounds: np.ndarray,
) -> int:  # pragma: no cover - compiled
    """Return the stratum 1…20, or 0 (no_io), -2 (passive), -1 (overtime)."""
    has_read = False
    has_write = False
    for op in prog:
        has_read |= op == 4
        has_write |= op == 5
    if not (has_read and has_write):
        return 0
    jump = _jumps(prog)
    blank = (n - 1) // 2
    cell = obs_cells if reverse else 0
    acts = np.empty((runs, cycles), np.int64)
    syms = np.empty((runs, cycles), np.int64)
    for r in range(runs):
        tape = np.full(tape_len, blank, np.int8)
        regs = np.zeros(1, np.int64)
        inputs = np.full(in_len, blank, np.int8)
        output = np.full(1 + obs_cells, blank, np.int8)
        for k in range(cycles):
            a = rng_below(rng, n)
            steps = bf_cycle(prog, jump, tape, regs, inputs, output, a, n, blank, max_steps, rng)
            if steps >= max_steps:
                return -1
            acts[r, k] = a
            syms[r, k] = output[cell]
    passive = True
    for r in range(1, runs):
        for k in range(4, cycles):
            if syms[r, k] != syms[0, k]:
                passive = False
                break
        if not passive:
            break
    if passive:
        return -2
    cls = _behaviour(acts[0], syms[0], n, blank)
    for r in range(1, runs):
        if _behaviour(acts[r], syms[r], n, blank) != cls:
            cls = 99
            break
    if cls != 99:
        return cls
    length = prog.shape[0]
    for k in range(len_bounds.shape[0]):
        if length < len_bounds[k]:
            return 11 + k
    return 20


@njit(cache=True)
def sample_kernel(
    seed: np.uint64,
    count: int,
    n: int,
    obs_cells: int,
    reverse: bool,
    tape_len: int,
    in_len: int,
    max_steps: int,
    iterated: bool,
    runs: int,
    cycles: int,
    draw_ops: np.ndarray,
    len_bounds: np.ndarray,
    hist_bins: int,
) -> tuple[
    np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray
]:  # pragma: no cover - compiled
    """Return (ops, offsets, strata, reasons[no_io, overtime, passive], hist_drawn, hist_acc)."""
    rng = np.empty(1, np.uint64)
    rng[0] = seed
    ops = np.empty(1024, np.int8)
    used = 0
    offsets = np.zeros(count + 1, np.int64)
    strata = np.empty(count, np.int64)
    reasons = np.zeros(3, np.int64)
    hist_drawn = np.zeros(hist_bins, np.int64)
    hist_acc = np.zeros(hist_bins, np.int64)
    got = 0
    while got < count:
        prog = _simplify(_draw(rng, draw_ops), iterated)
        length = prog.shape[0]
        hist_drawn[min(length, hist_bins - 1)] += 1
        s = _classify(
            prog, rng, n, obs_cells, reverse, tape_len, in_len, max_steps, runs, cycles, len_bounds
        )
        if s == 0:
            reasons[0] += 1
        elif s == -1:
            reasons[1] += 1
        elif s == -2:
            reasons[2] += 1
        else:
            while used + length > ops.shape[0]:
                bigger = np.empty(2 * ops.shape[0], np.int8)
                bigger[:used] = ops[:used]
                ops = bigger
            ops[used : used + length] = prog
            used += length
            strata[got] = s
            got += 1
            offsets[got] = used
            hist_acc[min(length, hist_bins - 1)] += 1
    return ops[:used].copy(), offsets, strata, reasons, hist_drawn, hist_acc


def sample_block_fast(
    seed: int, count: int, config: BFConfig, *, iterated: bool = False
) -> SampleBlock:
    """Compiled :func:`aiq_sampler.sample_block`: same programs, strata and statistics."""
    from pipeline.metrics.aiq.sampler import CLASS_CYCLES, CLASS_RUNS

    c = config
    ops, offsets, strata, reasons, hist_drawn, hist_acc = sample_kernel(
        seed64(seed),
        count,
        c.num_symbols,
        c.obs_cells,
        c.reverse_output,
        c.work_tape_len,
        c.input_tape_len,
        c.max_steps,
        iterated,
        CLASS_RUNS,
        CLASS_CYCLES,
        _DRAW_OPS,
        _LEN_BOUNDS,
        HIST_BINS,
    )
    chars = np.frombuffer(OPCODES.encode(), np.uint8)[ops].tobytes().decode()
    off = offsets.tolist()
    out = SampleBlock()
    out.programs = [chars[off[i] : off[i + 1]] for i in range(count)]
    out.strata = [int(s) for s in strata.tolist()]
    out.rejected = {
        "no_io": int(reasons[0]),
        "overtime": int(reasons[1]),
        "passive": int(reasons[2]),
    }
    out.drawn = count + int(reasons.sum())
    out.hist_drawn = [int(x) for x in hist_drawn.tolist()]
    out.hist_accepted = [int(x) for x in hist_acc.tolist()]
    return out
