"""Generate the command reference (Markdown) from the CLI itself, so docs cannot drift.

``python -m cli.reference`` prints it; ``python -m cli.reference --write README.md`` replaces
the block between the ``<!-- commands:start -->`` and ``<!-- commands:end -->`` markers.
A test fails when the README's block differs from what this prints.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

START = "<!-- commands:start -->"
END = "<!-- commands:end -->"


def _walk(cmd: Any, path: list[str]) -> list[tuple[list[str], Any]]:
    out = [(path, cmd)]
    for name in sorted(getattr(cmd, "commands", {}) or {}):
        sub = cmd.commands[name]
        if getattr(sub, "hidden", False):
            continue
        out += _walk(sub, [*path, name])
    return out


def reference() -> str:
    """The Markdown command reference of every (non-hidden) command."""
    from typer.main import get_command

    from cli.app import app

    root = get_command(app)
    lines: list[str] = []
    for path, cmd in _walk(root, ["gmeter"]):
        ctx_cls = type(root.make_context("gmeter", [], resilient_parsing=True))
        ctx = ctx_cls(cmd, info_name=" ".join(path))
        usage = " ".join(cmd.collect_usage_pieces(ctx))
        first = (cmd.help or "").strip().splitlines()[0] if cmd.help else ""
        lines.append(f"### `{' '.join(path)}`\n")
        if first:
            lines.append(f"{first}\n")
        lines.append(f"```\n{' '.join(path)} {usage}\n```\n")
        rows = []
        for p in cmd.get_params(ctx):
            rec = p.get_help_record(ctx)
            if rec is None or p.name == "help":
                continue
            names, text = rec
            rows.append(f"| `{names.replace('|', '/')}` | {text.replace('|', '/')} |")
        if rows:
            lines.append("| option | meaning |\n|---|---|")
            lines.extend(rows)
            lines.append("")
    return "\n".join(lines).rstrip() + "\n"


def write_into(readme: Path) -> bool:
    """Replace the marked block of ``readme``; return whether it changed."""
    text = readme.read_text(encoding="utf-8")
    head, _, rest = text.partition(START)
    _, _, tail = rest.partition(END)
    new = f"{head}{START}\n{reference()}{END}{tail}"
    if new != text:
        readme.write_text(new, encoding="utf-8")
        return True
    return False


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "--write":
        write_into(Path(sys.argv[2]))
    else:
        sys.stdout.write(reference())
