"""What a trained policy's bundle records about its training (``[training]`` in ``aiq.toml``).

A ``gym:`` or ``vec:`` policy is usually trained elsewhere (Stable-Baselines3, CleanRL, …) and
loaded from a checkpoint named in its settings. The bundle keeps what a reader needs to judge
and reproduce the row: the training seed and steps the submitter declares (settings
``train_seed`` and ``train_steps``), the checkpoint's file name and SHA-256 (any text setting
naming an existing file), and the versions of the learning libraries installed.
"""

from __future__ import annotations

import hashlib
from importlib import metadata
from pathlib import Path
from typing import Any

from pipeline.metrics.aiq.agent_specs import AgentSpec

#: Distributions whose installed versions are recorded (those present).
LIBRARIES = ("gymnasium", "numpy", "torch", "stable-baselines3", "sb3-contrib", "jax",
             "tensorflow", "cleanrl", "rliable")  # fmt: skip
#: A checkpoint larger than this is hashed anyway, in chunks (no limit on what is read).
_CHUNK = 1 << 20


def _sha256(path: Path) -> str:
    h = hashlib.sha256()
    with path.open("rb") as fh:
        while chunk := fh.read(_CHUNK):
            h.update(chunk)
    return h.hexdigest()


def installed_libraries() -> str:
    """``name version`` of each of :data:`LIBRARIES` that is installed, comma-separated."""
    out = []
    for name in LIBRARIES:
        try:
            out.append(f"{name} {metadata.version(name)}")
        except metadata.PackageNotFoundError:
            continue
    return ", ".join(out)


def training_metadata(spec: AgentSpec) -> dict[str, Any]:
    """The ``[training]`` table of a ``gym:``/``vec:`` agent (empty for other agents)."""
    if spec.kind not in ("gym", "vec"):
        return {}
    params = dict(spec.params)
    out: dict[str, Any] = {}
    for key, field in (("train_seed", "seed"), ("train_steps", "steps")):
        value = params.get(key)
        if isinstance(value, float) and value.is_integer() and value >= 0:
            out[field] = int(value)
    for key, value in params.items():
        if isinstance(value, str) and Path(value).is_file():
            out["checkpoint_setting"] = key
            out["checkpoint"] = Path(value).name
            out["checkpoint_sha256"] = _sha256(Path(value))
            break
    out["libraries"] = installed_libraries()
    return out
