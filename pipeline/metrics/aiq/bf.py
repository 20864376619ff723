"""The BF reference machine of AIQ, in plain Python: the specification every faster version matches.

A BF program is a string over ``< > + - , . [ ] % #``. It is run once per *interaction cycle*:
the agent's action is pushed onto the input tape, the program restarts from its first
instruction (the work tape and its pointer persist), and the output tape then holds the reward
cell and the observation cells. This module is deliberately simple; :mod:`bf_fast` compiles the
same loops with numba and the tests check that both agree cycle by cycle.

References
----------
Legg, S. & Veness, J. (2013). An Approximation of the Universal Intelligence Measure. In
*Algorithmic Probability and Friends*, LNCS 7070, 236–249. The semantics follow the authors'
code (``refmachines/BF.py`` of github.com/mathemajician/AIQ), paraphrased in
``specs/aiq-spec.md`` §2; where code and paper differ we follow the code.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

#: Program symbols in opcode order (the numba kernels use these indices).
OPCODES = "<>+-,.%[]#"
(OP_LEFT, OP_RIGHT, OP_INC, OP_DEC, OP_READ, OP_WRITE, OP_RAND, OP_OPEN, OP_CLOSE, OP_HALT) = range(
    10
)
#: The sampler's alphabet in the original order; ``#`` is drawn as ``]`` (spec §2.5).
SAMPLER_ALPHABET = "<>+-,.[]#%"
_MASK64 = (1 << 64) - 1
#: The version of the machine's semantics (cycles, rewards, observations, the ``%`` stream).
#: Raise it with any change a replay could notice: verifications stored under another version
#: are redone (:mod:`pipeline.tracks.aiq.verify`), never reused.
MACHINE_VERSION = 1


class BFProgramError(ValueError):
    """A program that is not valid BF (unknown symbol, unbalanced brackets)."""


@dataclass(frozen=True)
class BFConfig:
    r"""Settings of the BF reference machine (spec §2.1); defaults are the paper's BF(5).

    Attributes
    ----------
    num_symbols : int
        Alphabet size :math:`n \ge 2`; symbols are ``0 … n-1``; the blank is ``(n-1)//2``.
    obs_cells : int
        Observation cells on the output tape (the reward cell is extra).
    reverse_output : bool
        Read the reward from the last output cell and the observation from the cells before it.
    work_tape_len : int
        Cells of the circular work tape (100 000 in the original).
    input_tape_len : int
        Cells of the action-history tape (25); only the first ``input_tape_len - 1`` are readable.
    max_steps : int
        A cycle that *reaches* this many executed instructions is a failure.
    """

    num_symbols: int = 5
    obs_cells: int = 1
    reverse_output: bool = False
    work_tape_len: int = 100_000
    input_tape_len: int = 25
    max_steps: int = 1000

    def __post_init__(self) -> None:
        checks = (
            (2 <= self.num_symbols <= 127, "num_symbols must be in 2..127"),
            (0 <= self.obs_cells <= 64, "obs_cells must be in 0..64"),
            (self.work_tape_len >= 1, "work_tape_len must be >= 1"),
            (self.input_tape_len >= 1, "input_tape_len must be >= 1"),
            (self.max_steps >= 1, "max_steps must be >= 1"),
        )
        for ok, message in checks:
            if not ok:
                raise ValueError(message)

    @property
    def blank(self) -> int:
        r"""The blank symbol :math:`\lfloor (n-1)/2 \rfloor` every tape starts with."""
        return (self.num_symbols - 1) // 2

    @property
    def output_len(self) -> int:
        """Cells on the output tape: one reward cell plus the observation cells."""
        return 1 + self.obs_cells

    @property
    def num_obs(self) -> int:
        r"""Number of distinct observations, :math:`n^{\text{obs\_cells}}`."""
        return int(self.num_symbols**self.obs_cells)

    @property
    def reward_cell(self) -> int:
        """Index of the reward cell on the output tape."""
        return self.obs_cells if self.reverse_output else 0

    def reward_of(self, symbol: int) -> float:
        r"""Return the reward of a reward-cell symbol.

        .. math:: r = \frac{100\,(c - m)}{m}, \qquad m = \frac{n-1}{2}

        with :math:`c` the reward cell. For odd :math:`n` the blank scores 0; for even
        :math:`n` the blank lies below :math:`m` and scores :math:`-100/(n-1)` (as in the
        original, whose comment admits the imbalance).
        """
        mid = (self.num_symbols - 1) / 2
        return 100 * (symbol - mid) / mid

    def to_dict(self) -> dict[str, int | bool]:
        """Return the settings as the JSON ``config`` object of ``gmeter aiq replay --batch``."""
        return {
            "num_symbols": self.num_symbols,
            "obs_cells": self.obs_cells,
            "reverse_output": self.reverse_output,
            "work_tape_len": self.work_tape_len,
            "input_tape_len": self.input_tape_len,
            "max_steps": self.max_steps,
        }


# --------------------------------------------------------------------------- randomness
class SplitMix64:
    """The explicit random stream of the machine's ``%`` and of the reference agents.

    SplitMix64 (Steele, Lea & Flood 2014) is tiny, fast in compiled code and easy to restate
    exactly in pure Python, so the plain and the numba versions draw identical numbers.

    Notes
    -----
    The original draws from Python's unseeded global ``random``; we seed one stream per run
    (spec §9.16) so every run can be replayed.
    """

    __slots__ = ("state",)

    def __init__(self, seed: int) -> None:
        self.state = seed & _MASK64

    def next(self) -> int:
        """Return the next 64-bit output."""
        self.state = (self.state + 0x9E3779B97F4A7C15) & _MASK64
        z = self.state
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & _MASK64
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & _MASK64
        return z ^ (z >> 31)

    def uniform(self) -> float:
        """Return a float in :math:`[0, 1)` from the top 53 bits."""
        return (self.next() >> 11) * 1.1102230246251565e-16

    def below(self, n: int) -> int:
        r"""Return an integer in ``0 … n-1``: :math:`\lfloor u n \rfloor` (bias < 2^-50)."""
        return int(self.uniform() * n)


# --------------------------------------------------------------------------- programs
@dataclass(frozen=True)
class CompiledProgram:
    """A program as opcodes plus a jump table.

    ``jump[i]`` is, for ``[``, the index just past its matching ``]``; for ``]``, the index of the
    first instruction of the loop body; ``-1`` elsewhere.
    """

    text: str
    ops: tuple[int, ...]
    jump: tuple[int, ...]


def compile_program(program: str) -> CompiledProgram:
    """Translate a BF program into opcodes and a bracket jump table.

    Raises
    ------
    BFProgramError
        On a symbol outside ``< > + - , . [ ] % #`` or unbalanced brackets.
    """
    ops: list[int] = []
    jump = [-1] * len(program)
    stack: list[int] = []
    for i, ch in enumerate(program):
        op = OPCODES.find(ch)
        if op < 0:
            raise BFProgramError(
                f"symbol {ch!r} at position {i} is not a BF instruction (use only {OPCODES})"
            )
        ops.append(op)
        if op == OP_OPEN:
            stack.append(i)
        elif op == OP_CLOSE:
            if not stack:
                raise BFProgramError(f"']' at position {i} has no matching '['")
            j = stack.pop()
            jump[j] = i + 1
            jump[i] = j + 1
    if stack:
        raise BFProgramError(f"'[' at position {stack[-1]} has no matching ']'")
    return CompiledProgram(program, tuple(ops), tuple(jump))


_POINTLESS = ("+-", "-+", "<>", "><", "[]")


def simplify_program(program: str, *, iterated: bool = False) -> str:
    """Remove pointless code: ``+-``, ``-+``, ``<>``, ``><``, ``[]`` (spec §2.6).

    Parameters
    ----------
    program : str
        A BF program.
    iterated : bool
        ``False`` (the original): one pass of non-overlapping left-to-right replacement of each
        pattern in that fixed order, so ``++--`` keeps ``+-`` and ``[[]]`` keeps ``[]``.
        ``True`` (the Vadinský fork): repeat the pass until nothing changes (``++--`` → empty).

    Notes
    -----
    Removing ``[]`` changes behaviour (an endless loop on a non-blank cell becomes a no-op);
    the original does it, and so do we.
    """
    while True:
        out = program
        for pattern in _POINTLESS:
            out = out.replace(pattern, "")
        if not iterated or out == program:
            return out
        program = out


def random_program(rng: SplitMix64, *, iterated: bool = False) -> tuple[str, str]:
    r"""Draw one program as the original sampler does (spec §2.5); return (raw, simplified).

    Each symbol is uniform over ``< > + - , . [ ] # %`` with ``#`` read as ``]``; ``[`` opens
    and ``]`` closes a loop; a ``]`` at depth 0 becomes the final ``#``. Programs are therefore
    balanced and end with exactly one ``#``; :math:`P(\texttt{]}) = 0.2`.
    """
    chars: list[str] = []
    depth = 0
    while True:
        ch = SAMPLER_ALPHABET[rng.below(10)]
        if ch == "#":
            ch = "]"
        if ch == "[":
            depth += 1
        elif ch == "]":
            depth -= 1
            if depth < 0:
                chars.append("#")
                break
        chars.append(ch)
    raw = "".join(chars)
    return raw, simplify_program(raw, iterated=iterated)


# --------------------------------------------------------------------------- the machine
@dataclass(frozen=True)
class Cycle:
    """The outcome of one interaction cycle.

    ``steps == max_steps`` means the cycle failed (the step limit was reached).
    """

    reward: float
    observation: tuple[int, ...]
    output: tuple[int, ...]
    steps: int


class BFMachine:
    """One BF environment: a program, its tapes and the ``%`` random stream.

    The interpreter, before every instruction: stops if ``step >= max_steps``; stops if the
    output tape is full; otherwise counts a step and executes. ``[`` skips past its ``]`` when
    the cell is blank; ``]`` jumps back to the body when it is not; both cost one step.

    Notes
    -----
    * The loop test is against the blank :math:`(n-1)//2`, not 0, and all tapes start blank.
    * The cycle ends as soon as the output tape is full (one instruction before the paper's
      "attempt to write excess cells"); cells not written in a cycle keep their old value.
    * ``,`` reads the history (cell 0 = current action); past cell ``input_tape_len - 2`` it
      yields the blank without advancing.
    * The work pointer runs over ``-L … L-1`` and addresses cell ``ptr mod L``; ``>`` at
      ``L-1`` and ``<`` at ``-L`` both go to 0 (so moving left from logical ``-L`` stays on
      cell 0), exactly as the original's Python negative indexing does.
    * A program that runs off its end (no ``#``) ends the cycle there at no cost.
    """

    def __init__(self, program: str | CompiledProgram, config: BFConfig, seed: int = 0) -> None:
        self.program = program if isinstance(program, CompiledProgram) else compile_program(program)
        self.config = config
        self.seed = seed
        self.reset()

    def reset(self) -> tuple[float, tuple[int, ...]]:
        """Blank every tape, rewind the ``%`` stream; return the initial percept (0, blanks)."""
        c = self.config
        self.tape = [c.blank] * c.work_tape_len
        self.ptr = 0
        self.inputs = [c.blank] * c.input_tape_len
        self.output = [c.blank] * c.output_len
        self.rng = SplitMix64(self.seed)
        return 0.0, (c.blank,) * c.obs_cells

    def act(self, action: int) -> Cycle:
        """Run one cycle with ``action``; raise ``ValueError`` if it is not in ``0 … n-1``."""
        c = self.config
        n = c.num_symbols
        if not 0 <= action < n:
            raise ValueError(f"action {action} is not in 0..{n - 1}")
        self.inputs.pop()
        self.inputs.insert(0, action)
        steps = self._run()
        out = self.output
        if c.reverse_output:
            reward_symbol, obs = out[c.obs_cells], tuple(out[: c.obs_cells])
        else:
            reward_symbol, obs = out[0], tuple(out[1:])
        return Cycle(c.reward_of(reward_symbol), obs, tuple(out), steps)

    def _run(self) -> int:
        c = self.config
        n, blank, max_steps = c.num_symbols, c.blank, c.max_steps
        ops, jump = self.program.ops, self.program.jump
        tape, inputs, output = self.tape, self.inputs, self.output
        tape_len, readable, out_len = c.work_tape_len, c.input_tape_len - 1, c.output_len
        ptr = self.ptr
        step = ip = in_ptr = out_ptr = 0
        while ip < len(ops):
            if step >= max_steps or out_ptr == out_len:
                break
            step += 1
            op = ops[ip]
            ip += 1
            if op == OP_RIGHT:
                ptr += 1
                if ptr >= tape_len:
                    ptr = 0
            elif op == OP_LEFT:
                ptr -= 1
                if ptr < -tape_len:
                    ptr = 0
            elif op == OP_INC:
                tape[ptr] = (tape[ptr] + 1) % n
            elif op == OP_DEC:
                tape[ptr] = (tape[ptr] - 1) % n
            elif op == OP_WRITE:
                output[out_ptr] = tape[ptr]
                out_ptr += 1
            elif op == OP_READ:
                if in_ptr >= readable:
                    tape[ptr] = blank
                else:
                    tape[ptr] = inputs[in_ptr]
                    in_ptr += 1
            elif op == OP_RAND:
                tape[ptr] = self.rng.below(n)
            elif op == OP_OPEN:
                if tape[ptr] == blank:
                    ip = jump[ip - 1]
            elif op == OP_CLOSE:
                if tape[ptr] != blank:
                    ip = jump[ip - 1]
            else:  # OP_HALT
                break
        self.ptr = ptr
        return step


@dataclass(frozen=True)
class ReplayResult:
    """Per-cycle record of one run (the JSON of ``gmeter aiq replay``).

    ``failure`` is the 0-based index of the first cycle that reached the step limit; that cycle
    is the last one recorded (the run stops there, as an AIQ run does), else ``None``.
    """

    rewards: tuple[float, ...]
    observations: tuple[tuple[int, ...], ...]
    outputs: tuple[tuple[int, ...], ...]
    steps: tuple[int, ...]
    failure: int | None

    def to_json(self) -> dict[str, object]:
        """Return the documented JSON shape."""
        return {
            "rewards": list(self.rewards),
            "observations": [list(o) for o in self.observations],
            "outputs": [list(o) for o in self.outputs],
            "steps": list(self.steps),
            "failure": None if self.failure is None else {"cycle": self.failure},
        }


def replay(
    program: str | CompiledProgram, actions: Sequence[int], config: BFConfig, seed: int = 0
) -> ReplayResult:
    """Feed ``actions`` to a fresh machine running ``program``; record every cycle.

    Parameters
    ----------
    program : str or CompiledProgram
        The BF program.
    actions : sequence of int
        One action per cycle, each in ``0 … n-1``.
    config : BFConfig
        Machine settings.
    seed : int
        Seed of the ``%`` stream.

    Returns
    -------
    ReplayResult
        Rewards (unflipped), observations, output tapes and step counts per cycle; the run
        stops after the first failing cycle.
    """
    machine = BFMachine(program, config, seed)
    rewards: list[float] = []
    observations: list[tuple[int, ...]] = []
    outputs: list[tuple[int, ...]] = []
    steps: list[int] = []
    failure: int | None = None
    for k, a in enumerate(actions):
        cyc = machine.act(int(a))
        rewards.append(cyc.reward)
        observations.append(cyc.observation)
        outputs.append(cyc.output)
        steps.append(cyc.steps)
        if cyc.steps >= config.max_steps:
            failure = k
            break
    return ReplayResult(tuple(rewards), tuple(observations), tuple(outputs), tuple(steps), failure)
