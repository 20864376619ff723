"""Pieces every track module shares: the strict base of the settings models."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict


class StrictSettings(BaseModel):
    """Base of a track's ``[<track>]`` settings models: unknown keys are errors.

    Strings are stripped of surrounding whitespace; every field of a subclass has a default
    and a ``Field(description=...)`` (they become the published JSON Schema).
    """

    model_config = ConfigDict(extra="forbid", str_strip_whitespace=True)
