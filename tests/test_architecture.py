"""Architecture rules: one home per heavy library; the CLI stays a thin skin."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

HOMES = {
    "duckdb": {"pipeline/store/__init__.py"},
    "jinja2": {"pipeline/site/render.py"},
    "altair": {"pipeline/site/charts.py"},
}
CLI_ONLY = {"typer", "rich"}


def _imports(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names |= {a.name.split(".")[0] for a in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module.split(".")[0])
    return names


def _sources(folder: str) -> list[Path]:
    return sorted((ROOT / folder).rglob("*.py"))


def test_heavy_libraries_live_in_one_module():
    for path in _sources("pipeline") + _sources("cli"):
        rel = path.relative_to(ROOT).as_posix()
        for lib, homes in HOMES.items():
            if lib in _imports(path):
                assert rel in homes, f"{rel} imports {lib}; only {sorted(homes)} may"


def test_pipeline_does_not_import_the_cli_toolkit():
    for path in _sources("pipeline"):
        rel = path.relative_to(ROOT).as_posix()
        bad = _imports(path) & CLI_ONLY
        assert not bad, f"{rel} imports {sorted(bad)}; typer/rich belong in cli/"


def test_cli_contains_no_sql_and_no_templates():
    for path in _sources("cli"):
        text = path.read_text(encoding="utf-8").lower()
        rel = path.relative_to(ROOT).as_posix()
        for marker in ("create table", "insert into", "{% ", "{{ "):
            assert marker not in text, f"{rel} contains {marker!r}; move it into pipeline/"
