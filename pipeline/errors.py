"""One exception hierarchy for gmeter, mapped by the CLI to exit codes.

* :class:`GmeterError` and subclasses are *user* errors: the CLI prints the message (no
  traceback) and exits with :attr:`GmeterError.exit_code` (1 for domain errors, 2 for usage).
* Anything else is a bug and keeps its traceback.

A :class:`Problem` is one finding about an input (a file, a field, what is wrong and what to
do); validation collects every problem first and raises :class:`ValidationFailed` once.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass


@dataclass(frozen=True, order=True)
class Problem:
    """One thing wrong with an input, precise enough for a stranger to fix it.

    Attributes
    ----------
    file : str
        The file, relative to the submissions root where possible (``bench/sub/x.csv``).
    field : str
        The manifest field (``system.name``), the CSV cell (``row 12: value``) or ``-``.
    message : str
        What is wrong.
    fix : str
        What to do about it.
    severity : str
        ``error`` (rejects the bundle) or ``warning`` (reported, not fatal).
    """

    file: str
    field: str
    message: str
    fix: str = ""
    severity: str = "error"

    def __str__(self) -> str:
        text = f"{self.file}: {self.field}: {self.message}"
        return f"{text} — {self.fix}" if self.fix else text

    def as_dict(self) -> dict[str, str]:
        """The problem as a JSON-ready mapping."""
        return asdict(self)


class GmeterError(Exception):
    """Base of every error a user can cause; the CLI shows the message without a traceback."""

    exit_code = 1

    def __init__(self, message: str, *, hint: str = "") -> None:
        super().__init__(message)
        self.message = message
        self.hint = hint

    def __str__(self) -> str:
        return f"{self.message} — {self.hint}" if self.hint else self.message


class UsageError(GmeterError):
    """The command was called wrongly (bad option value, missing file argument)."""

    exit_code = 2


class ValidationFailed(GmeterError):
    """One or more inputs are invalid; :attr:`problems` lists every one of them."""

    def __init__(self, problems: Sequence[Problem], message: str = "") -> None:
        self.problems = list(problems)
        n = sum(p.severity == "error" for p in self.problems)
        super().__init__(message or f"{n} problem{'s' * (n != 1)} found")


class StoreError(GmeterError):
    """The DuckDB store is missing, locked, corrupt or from a newer gmeter."""


class ReleaseError(GmeterError):
    """A release could not be recorded (duplicate name, immutable release, bad file)."""


class ScoringError(GmeterError):
    """A metric could not be computed for a benchmark or bundle."""


class BuildError(GmeterError):
    """The site could not be built; the previous site is left untouched."""


class AgentProtocolError(GmeterError):
    """An external agent broke the documented protocol (bad reply, timeout, crash)."""


def errors_only(problems: Iterable[Problem]) -> list[Problem]:
    """Return the problems whose severity is ``error``."""
    return [p for p in problems if p.severity == "error"]
