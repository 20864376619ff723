"""Docs cannot drift: the README's command reference is what the CLI says about itself."""

from __future__ import annotations

from pathlib import Path

from cli.reference import END, START, reference

ROOT = Path(__file__).resolve().parents[1]


def test_readme_command_reference_is_current():
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    block = text.split(START, 1)[1].split(END, 1)[0]
    assert block.strip() == reference().strip(), (
        "README command reference is stale: run `.venv/bin/python -m cli.reference "
        "--write README.md`"
    )


def test_readme_starts_with_the_two_commands():
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    first_block = text.split("```sh", 1)[1].split("```", 1)[0]
    assert [ln.split()[0:2] for ln in first_block.strip().splitlines()] == [
        ["make", "site"], ["make", "test"]]


def test_docs_links_resolve():
    import re

    for md in [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]:
        for target in re.findall(r"\]\(([^)#]+)\)", md.read_text(encoding="utf-8")):
            if target.startswith(("http://", "https://", "mailto:")):
                continue
            assert (md.parent / target).exists(), f"{md.name} links to missing {target}"
