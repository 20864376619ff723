"""Optional dependencies: a command that needs a missing one says which gmeter extra installs it.

The names of the extras are the ``[project.optional-dependencies]`` of pyproject.toml.
"""

from __future__ import annotations

from pipeline.errors import GmeterError

EXTRAS = {
    "numba": "aiq",
    "gymnasium": "aiq",
    "sklearn": "similarity",
    "dask": "dask",
    "distributed": "dask",
}
"""The optional dependency → the gmeter extra that installs it (``pip install "gmeter[aiq]"``)."""


def missing_extra(exc: ImportError) -> GmeterError | None:
    """The error to show when an optional dependency is not installed (``None`` if not one)."""
    name = (exc.name or "").split(".")[0]
    extra = EXTRAS.get(name)
    if extra is None:
        return None
    return GmeterError(
        f"this needs {name}, which is not installed (an optional part of gmeter)",
        hint=f'install it with: pip install "gmeter[{extra}]" (or "gmeter[all]")',
    )
