"""End to end: a wheel built from the checkout, installed in a fresh environment, builds a site.

The fresh environment cannot import the checkout (the test runs outside it and checks where
``pipeline`` comes from). Its dependencies come from the test's own environment through a
``.pth`` line (installing numba & co. again would take minutes; ``GMETER_E2E_DEPS=1`` installs
them for real). Then the commands of docs/own-site.md run in order: ``gmeter init`` with a title,
``--licence CC-BY-4.0`` and a URL, a small generality board written by hand, ``gmeter site``,
a check, a release. Slow (a wheel build and a site build): ``.ci/run`` runs it after
``make test``.
"""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
import sysconfig
import venv
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
GUIDE = ROOT / "docs" / "own-site.md"
pytestmark = pytest.mark.slow


def _blocks(text: str) -> list[tuple[str, str, str]]:
    """Fenced blocks of the guide as (language, file path or "", body)."""
    out = []
    for m in re.finditer(r"^```(\w+)([^\n]*)\n(.*?)^```", text, re.MULTILINE | re.DOTALL):
        out.append((m.group(1), m.group(2).strip(), m.group(3)))
    return out


def _run(cmd: list[str], cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    done = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, f"{shlex.join(cmd)} failed:\n{done.stdout}\n{done.stderr}"
    return done


@pytest.fixture(scope="module")
def fresh(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A fresh virtual environment with the wheel of this checkout installed; its bin folder."""
    work = tmp_path_factory.mktemp("wheel")
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    _run([sys.executable, "-m", "pip", "wheel", str(ROOT), "--no-deps", "-q", "-w",
          str(work / "dist")], work, env)
    wheels = sorted((work / "dist").glob("gmeter-*.whl"))
    assert len(wheels) == 1, wheels
    target = work / "env"
    venv.EnvBuilder(with_pip=False).create(target)
    py = target / "bin" / "python"
    full = os.environ.get("GMETER_E2E_DEPS") == "1"
    _run([sys.executable, "-m", "pip", "--python", str(py), "install", "-q",
          *([] if full else ["--no-deps"]), str(wheels[0])], work, env)
    if not full:
        site = _run([str(py), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                    work, env).stdout.strip()
        Path(site, "zz_test_dependencies.pth").write_text(
            sysconfig.get_paths()["purelib"] + "\n", encoding="utf-8")
    where = _run([str(py), "-c", "import pipeline, cli; print(pipeline.__file__)"], work,
                 env).stdout.strip()
    assert str(target) in where and str(ROOT) not in where, where
    return target / "bin"


def test_a_wheel_in_a_fresh_environment_builds_a_configured_site(
    fresh: Path, tmp_path: Path
) -> None:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "GMETER_DB")}
    env |= {"PATH": f"{fresh}{os.pathsep}{env.get('PATH', '')}", "SOURCE_DATE_EPOCH": "1767312000",
            "GIT_AUTHOR_NAME": "T", "GIT_AUTHOR_EMAIL": "t@example.org",
            "GIT_COMMITTER_NAME": "T", "GIT_COMMITTER_EMAIL": "t@example.org",
            "GIT_CONFIG_GLOBAL": os.devnull, "GIT_CONFIG_NOSYSTEM": "1"}
    cwd = tmp_path
    ran: list[str] = []
    for lang, path, body in _blocks(GUIDE.read_text(encoding="utf-8")):
        if path:  # a file the guide has the reader write by hand
            (cwd / path).parent.mkdir(parents=True, exist_ok=True)
            (cwd / path).write_text(body, encoding="utf-8")
            continue
        if lang != "sh":
            continue
        for line in body.splitlines():
            line = line.split("  #")[0].strip()
            if line.startswith("cd "):
                cwd = cwd / line[3:].strip()
            elif line.startswith("gmeter "):
                _run([str(fresh / "gmeter"), *shlex.split(line)[1:]], cwd, env)
                ran.append(line.split()[1])
            elif line.startswith("git ") and "&&" in line:
                for part in line.split("&&"):
                    _run(shlex.split(part), cwd, env)
    assert {"init", "new", "site", "check", "release"} <= set(ran), ran

    site = cwd / "public"
    home = (site / "index.html").read_text(encoding="utf-8")
    assert "<title>Toy board</title>" in home and "<h1>Toy board</h1>" in home
    about = (site / "about" / "index.html").read_text(encoding="utf-8")
    assert "· Toy board</title>" in about and "CC-BY-4.0" in about
    cff = (site / "CITATION.cff").read_text(encoding="utf-8")
    assert "license: CC-BY-4.0" in cff and 'title: "Toy board"' in cff and "MIT" not in cff
    feed = (site / "feed.xml").read_text(encoding="utf-8")
    assert "<id>https://example.org/toy-board/feed.xml</id>" in feed
    assert "tag:gmeter,2024:feed" not in feed
    submit = (site / "submit" / "index.html").read_text(encoding="utf-8")
    assert "toy-gen" in submit and "ale-human-ref" not in submit
    assert "https://github.com/example/toy-board.git" in submit
    assert (site / "releases" / "2026.1" / "index.html").is_file()
    for name in ("check-submission.yml", "publish.yml"):
        flow = (cwd / ".github" / "workflows" / name).read_text(encoding="utf-8")
        version = _run([str(fresh / "gmeter"), "--version"], cwd, env).stdout.split()[-1]
        assert f'pip install "gmeter[aiq,similarity]=={version}"' in flow
        assert "make " not in flow and re.search(r"run: gmeter (site|check)", flow)
    assert "gmeter site" in (cwd / "README.md").read_text(encoding="utf-8")
