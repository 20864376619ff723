"""A light core: without the optional extras gmeter still runs, and a missing one is named."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from cli.extras import EXTRAS, missing_extra

ROOT = Path(__file__).resolve().parents[1]
BLOCK = (
    "import sys\n"
    f"for m in {sorted(EXTRAS)!r}: sys.modules[m] = None\n"
    "from cli.app import main\n"
    "sys.argv = ['gmeter', *sys.argv[1:]]\n"
    "main()\n"
)


def _gmeter_without_extras(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-c", BLOCK, *args], cwd=cwd, capture_output=True,
                          text=True, timeout=600, env={"PYTHONPATH": str(ROOT), "PATH": ""})


@pytest.mark.parametrize("module", sorted(EXTRAS))
def test_every_optional_module_names_its_extra(module: str) -> None:
    err = missing_extra(ModuleNotFoundError(f"No module named {module!r}", name=module))
    assert err is not None and f"gmeter[{EXTRAS[module]}]" in err.hint


def test_an_unrelated_missing_module_is_not_an_extra() -> None:
    assert missing_extra(ModuleNotFoundError("x", name="not_a_gmeter_extra")) is None


def test_the_core_validates_without_any_extra(tmp_path: Path) -> None:
    done = _gmeter_without_extras("validate", str(ROOT / "submissions" / "ale-human-ref"),
                                  cwd=tmp_path)
    assert done.returncode == 0, done.stderr


def test_a_command_missing_an_extra_names_it(monkeypatch: pytest.MonkeyPatch) -> None:
    import typer
    from typer.testing import CliRunner

    from cli.app import _GmeterGroup

    monkeypatch.setitem(sys.modules, "numba", None)
    app = typer.Typer(cls=_GmeterGroup)

    @app.command()
    def fast() -> None:
        import numba  # noqa: F401

    @app.command()
    def other() -> None:
        pass

    result = CliRunner().invoke(app, ["fast"])
    assert result.exit_code == 1
    assert 'pip install "gmeter[aiq]"' in result.output
    assert "Traceback" not in result.output
