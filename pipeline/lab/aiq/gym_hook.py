"""Make ``import gymnasium`` alone register gmeter's environments (``python -m`` this module).

Gymnasium 0.26–0.29 loaded third-party environments from the ``gymnasium.envs`` entry-point
group, which ``pyproject.toml`` declares (``pipeline.lab.aiq.gym_env:register_envs``).
Gymnasium 1.0 removed that plugin loader: there, a package's environments exist only after the
package is imported (``import pipeline.lab.aiq.gym_env``, or the id form
``gymnasium.make("pipeline.lab.aiq.gym_env:gmeter/BF-v0")``).

So that ``import gymnasium; gymnasium.make("gmeter/BF-v0", ...)`` works in any interpreter of
the environment gmeter is installed in, ``make install`` runs this module once: it writes a
startup hook into the environment's ``site-packages`` — ``gmeter_gymnasium.pth`` and the tiny
module ``_gmeter_gymnasium_hook.py`` — which waits for ``gymnasium.envs`` to be imported and
then registers the two ids with *string* entry points (nothing of gmeter is imported until an
environment is made). ``--uninstall`` removes both files. The hook imports nothing at startup
besides :mod:`sys` and :mod:`importlib`.
"""

from __future__ import annotations

import argparse
import sys
import sysconfig
from pathlib import Path

PTH = "gmeter_gymnasium.pth"
MODULE = "_gmeter_gymnasium_hook"

_ENTRY = "pipeline.lab.aiq.gym_env"
HOOK_SOURCE = f'''"""Registers gmeter's Gymnasium environments once gymnasium.envs is imported.

Written by `python -m pipeline.lab.aiq.gym_hook` (gmeter's `make install`); remove with
`python -m pipeline.lab.aiq.gym_hook --uninstall`.
"""

import sys
from importlib.abc import MetaPathFinder
from importlib.util import find_spec

IDS = {{
    "gmeter/BF-v0": ("{_ENTRY}:BFEnv", "{_ENTRY}:BFVectorEnv"),
    "gmeter/AIQ-v0": ("{_ENTRY}:AIQEnv", "{_ENTRY}:AIQVectorEnv"),
}}


def register():
    try:
        from gymnasium.envs.registration import register as reg, registry
    except Exception:
        return
    for env_id, (entry, vector_entry) in IDS.items():
        if env_id not in registry:
            reg(id=env_id, entry_point=entry, vector_entry_point=vector_entry)


class _Finder(MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name != "gymnasium.envs":
            return None
        sys.meta_path.remove(self)
        spec = find_spec(name)
        loader = getattr(spec, "loader", None)
        if loader is None or not hasattr(loader, "exec_module"):
            return spec
        run = loader.exec_module

        def exec_module(module):
            run(module)
            register()

        loader.exec_module = exec_module
        return spec


if "gymnasium.envs" in sys.modules:
    register()
else:
    sys.meta_path.insert(0, _Finder())
'''


def site_dir() -> Path:
    """The ``site-packages`` folder of the running interpreter (the venv's)."""
    return Path(sysconfig.get_paths()["purelib"])


def install(folder: Path | None = None) -> list[Path]:
    """Write the startup hook into ``folder`` (default: :func:`site_dir`); return the files."""
    folder = folder or site_dir()
    module = folder / f"{MODULE}.py"
    pth = folder / PTH
    module.write_text(HOOK_SOURCE, encoding="utf-8")
    pth.write_text(f"import {MODULE}\n", encoding="utf-8")
    return [module, pth]


def uninstall(folder: Path | None = None) -> list[Path]:
    """Remove the hook files; return those that existed."""
    folder = folder or site_dir()
    gone = []
    for path in (folder / PTH, folder / f"{MODULE}.py"):
        if path.exists():
            path.unlink()
            gone.append(path)
    return gone


def main(argv: list[str] | None = None) -> int:
    """``python -m pipeline.lab.aiq.gym_hook [--uninstall]``."""
    parser = argparse.ArgumentParser(prog="python -m pipeline.lab.aiq.gym_hook",
                                     description=__doc__.splitlines()[0])  # fmt: skip
    parser.add_argument("--uninstall", action="store_true", help="remove the hook")
    args = parser.parse_args(argv)
    paths = uninstall() if args.uninstall else install()
    for path in paths:
        sys.stdout.write(f"{'removed' if args.uninstall else 'wrote'} {path}\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
