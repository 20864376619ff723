"""``gmeter init``: write a new benchmark repository of one's own.

The repository holds ``gmeter.toml`` (the site configuration), ``submissions/`` with an empty
``releases.toml``, two GitHub workflows (the pull-request check and the publication to GitHub
Pages) that install *this* gmeter version, pinned, and run gmeter commands directly, a README
with the repository's two commands, and a ``.gitignore``. The files come from the package data
in ``pipeline/repository/templates/`` (read through :mod:`importlib.resources`).
"""

from __future__ import annotations

import shutil
import string
import subprocess
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

from pipeline import __version__
from pipeline.errors import GmeterError, UsageError
from pipeline.site.config import CONFIG_FILE, parse_config
from pipeline.toml_writer import toml_table

FILES = {
    CONFIG_FILE: None,  # written from the options, through the TOML writer
    "submissions/releases.toml": "releases.toml",
    ".github/workflows/check-submission.yml": "check-submission.yml",
    ".github/workflows/publish.yml": "publish.yml",
    "README.md": "README.md",
    ".gitignore": "gitignore",
}
"""Every file ``gmeter init`` writes (repository path → template in ``templates/``)."""


@dataclass(frozen=True)
class InitReport:
    """What ``gmeter init`` did."""

    root: Path
    written: tuple[str, ...]
    git_initialised: bool


def _template(name: str) -> str:
    return resources.files("pipeline.repository").joinpath("templates", name).read_text("utf-8")


def init_repository(
    root: Path,
    *,
    title: str,
    licence: str,
    url: str,
    repository: str = "",
    description: str = "",
    force: bool = False,
) -> InitReport:
    """Write a benchmark repository at ``root`` (created if missing).

    Raises
    ------
    UsageError
        When ``root`` is a non-empty folder and ``force`` is not set, or ``root`` is a file.
    ValidationFailed
        When the title, licence or URLs would not make a valid ``gmeter.toml``.
    """
    root = Path(root)
    if root.exists() and not root.is_dir():
        raise UsageError(f"{root} is a file", hint="give a folder for the new repository")
    if root.is_dir() and any(p.name != ".git" for p in root.iterdir()) and not force:
        raise UsageError(
            f"{root} is not empty",
            hint="choose an empty or new folder, or add --force to write the gmeter files into it",
        )
    values: dict[str, object] = {"title": title}
    if description:
        values["description"] = description
    values |= {"url": url, "licence": licence}
    if repository:
        values["repository"] = repository
    config_text = (
        "# The site configuration (see `gmeter init --help`): used by every page of the site.\n"
        + toml_table("site", values)
    )
    config = parse_config(config_text.encode("utf-8"), CONFIG_FILE)  # refuse bad values first
    fill = {
        "version": __version__,
        "title": config.title,
        "description": config.description,
        "url": config.url,
        "licence": config.licence,
    }
    root.mkdir(parents=True, exist_ok=True)
    written = []
    for rel, template in FILES.items():
        text = config_text if template is None else \
            string.Template(_template(template)).substitute(fill)
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        written.append(rel)
    return InitReport(root, tuple(written), _git_init(root))


def _git_init(root: Path) -> bool:
    """Run ``git init`` unless ``root`` is already inside a git work tree; True if it ran."""
    git = shutil.which("git")
    if git is None:
        return False
    inside = subprocess.run(
        [git, "-C", str(root), "rev-parse", "--is-inside-work-tree"],
        capture_output=True, text=True, check=False,
    )
    if inside.returncode == 0 and inside.stdout.strip() == "true":
        return False
    # main, the branch the publish workflow runs on
    done = subprocess.run([git, "init", "-q", "--initial-branch=main", str(root)],
                          capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise GmeterError(f"git init failed in {root}: {done.stderr.strip()}",
                          hint="run `git init` yourself; the files are written")
    return True
