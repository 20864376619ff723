"""Architecture rules: the wings of pipeline/, pure metrics, no import cycles, SQL in the store.

Also one home per heavy library and a thin CLI.
"""

from __future__ import annotations

import ast
import functools
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

HOMES = {
    "duckdb": {"pipeline/store/__init__.py"},
    "jinja2": {"pipeline/site/render.py"},
    "altair": {"pipeline/site/charts.py"},
    "sklearn": {"pipeline/lab/similarity/sklearn_suite.py"},
    # one home per paper that uses it: AIQ as environments, the similarity track's Gym suite
    "gymnasium": {"pipeline/lab/aiq/gym_env.py", "pipeline/lab/aiq/gym_hook.py",
                  "pipeline/lab/similarity/gym_suite.py"},
    # the JavaScript bundle, and the SVG renderer of the build
    "vl_convert": {"pipeline/site/assets.py", "pipeline/site/svgrender.py"},
    "pagefind": {"pipeline/site/search.py"},
    "markdown_it": {"pipeline/site/markdown.py"},
}
CLI_ONLY = {"typer", "rich"}


@functools.cache
def _text(path: Path) -> str:
    return path.read_text(encoding="utf-8")


@functools.cache
def _tree(path: Path) -> ast.Module:
    """Each source parsed once for the whole module (the tests only read the trees)."""
    return ast.parse(_text(path))


@functools.cache
def _imports(path: Path) -> frozenset[str]:
    tree = _tree(path)
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names |= {a.name.split(".")[0] for a in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module.split(".")[0])
    return frozenset(names)


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
        text = _text(path).lower()
        rel = path.relative_to(ROOT).as_posix()
        for marker in ("create table", "insert into", "{% ", "{{ "):
            assert marker not in text, f"{rel} contains {marker!r}; move it into pipeline/"


# --------------------------------------------------------------------------- the layout

PAPERS = ("gindex", "generality", "aiq", "similarity")
METRICS_MAY_NOT_IMPORT = {"subprocess", "importlib", "duckdb", "jinja2", "altair", "typer", "rich"}
SQL = re.compile(
    r"\b(select\b[\s\S]+\bfrom\b|insert\s+into\b|create\s+(or\s+replace\s+)?(table|view|index)\b"
    r"|update\s+\w+\s+set\b|delete\s+from\b|copy\s*\(|pragma\s+\w|attach\s+'|export\s+database\b)",
    re.IGNORECASE,
)


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


@functools.cache
def _package_modules() -> dict[str, Path]:
    return {_module_name(p): p for p in _sources("pipeline") + _sources("cli")}


def _imported_modules(path: Path, known: dict[str, Path]) -> set[str]:
    """Every project module ``path`` imports, at any level (function bodies, TYPE_CHECKING)."""
    me = _module_name(path)
    package = me if path.name == "__init__.py" else me.rpartition(".")[0]
    tree = _tree(path)
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found |= {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - (node.level - 1)]
                base = ".".join([*anchor, base] if base else anchor)
            found.add(base)
            found |= {f"{base}.{a.name}" for a in node.names}
    return {m for m in found if m in known and m != me}


def test_top_of_pipeline_is_small_and_has_no_prefix_families():
    top = sorted(p.stem for p in (ROOT / "pipeline").glob("*.py") if p.stem != "__init__")
    assert len(top) <= 14, f"pipeline/ holds {len(top)} modules: give the new ones a wing"
    for family in ("aiq", "similarity", "site", "check", "executor", "gindex", "generality"):
        members = [m for m in top if m.startswith(family + "_")]
        assert not members, f"{members}: a family of modules belongs in a package of its own"
    for wing in ("site", "check", "executor", "store"):
        assert (ROOT / "pipeline" / wing / "__init__.py").is_file(), f"pipeline/{wing}/ is missing"
    for paper in PAPERS:
        for wing in ("metrics", "tracks"):
            assert (ROOT / "pipeline" / wing / paper / "__init__.py").is_file(), (
                f"pipeline/{wing}/{paper}/ is missing")


def test_metrics_are_pure():
    known = _package_modules()
    for path in _sources("pipeline/metrics"):
        rel = path.relative_to(ROOT).as_posix()
        bad = _imports(path) & METRICS_MAY_NOT_IMPORT
        assert not bad, f"{rel} imports {sorted(bad)}: metrics are pure maths"
        for mod in _imported_modules(path, known):
            ok = mod.startswith("pipeline.metrics") or mod in ("pipeline", "pipeline.errors")
            assert ok, f"{rel} imports {mod}: metrics import only metrics/** and errors"


def test_no_import_cycles_between_modules():
    """Package faces (``__init__`` that only re-export) aside, imports form a DAG."""
    import networkx as nx

    known = _package_modules()
    faces = {m for m, p in known.items() if p.name == "__init__.py"}
    graph = nx.DiGraph()
    for mod, path in known.items():
        graph.add_node(mod)
        for dep in _imported_modules(path, known):
            if dep not in faces and mod not in faces:
                graph.add_edge(mod, dep)
    cycles = [sorted(c) for c in nx.strongly_connected_components(graph) if len(c) > 1]
    assert not cycles, f"import cycles: {cycles}"


def test_package_faces_only_re_export_tracks():
    for paper in PAPERS:
        face = ROOT / "pipeline" / "tracks" / paper / "__init__.py"
        tree = _tree(face)
        defs = [n for n in tree.body if isinstance(n, ast.FunctionDef | ast.ClassDef)]
        assert not defs, f"{face.relative_to(ROOT)} defines code; it should only expose TRACK"
        text = _text(face)
        assert f"from pipeline.tracks.{paper}.track import TRACK" in text


def _docstring_ids(tree: ast.AST) -> set[int]:
    """``id()`` of every docstring node of a module, class or function."""
    return {
        id(n.body[0].value)
        for n in ast.walk(tree)
        if isinstance(n, ast.Module | ast.FunctionDef | ast.ClassDef | ast.AsyncFunctionDef)
        and n.body and isinstance(n.body[0], ast.Expr)
        and isinstance(n.body[0].value, ast.Constant)
    }


def test_sql_lives_only_in_the_store():
    for path in _sources("pipeline") + _sources("cli"):
        rel = path.relative_to(ROOT).as_posix()
        if rel.startswith("pipeline/store/"):
            continue
        tree = _tree(path)
        docstrings = _docstring_ids(tree)
        for node in ast.walk(tree):
            if isinstance(node, ast.Constant) and isinstance(node.value, str) \
                    and id(node) not in docstrings and SQL.search(node.value):
                raise AssertionError(
                    f"{rel}:{node.lineno} holds SQL ({node.value[:60]!r}); add a typed read to "
                    "pipeline/store/")


def test_one_toml_writer():
    """Bundle, log and release writers format values through pipeline/toml_writer.py."""
    for path in _sources("pipeline") + _sources("cli"):
        rel = path.relative_to(ROOT).as_posix()
        if rel == "pipeline/toml_writer.py":
            continue
        text = _text(path)
        for name in ("def _toml_value", "def _toml_str", "def _toml_string", "import tomli_w"):
            assert name not in text, f"{rel} has its own TOML writer ({name}); use toml_writer"


# --------------------------------------------------------------------------- tracks and lab
def test_tracks_never_import_the_lab():
    """Scoring must not depend on how a bundle was produced: tracks/ and metrics/ import no lab/."""
    known = _package_modules()
    for folder in ("pipeline/tracks", "pipeline/metrics"):
        for path in _sources(folder):
            rel = path.relative_to(ROOT).as_posix()
            bad = sorted(m for m in _imported_modules(path, known) if m.startswith("pipeline.lab"))
            assert not bad, f"{rel} imports {bad}; producers may use tracks, not the reverse"


def _calls(tree: ast.AST) -> set[str]:
    """Names of called functions and methods (``open``, ``read_text``, ``loads`` …)."""
    out: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            f = node.func
            out.add(f.attr if isinstance(f, ast.Attribute) else getattr(f, "id", ""))
    return out


FILE_CALLS = {"open", "read_text", "read_bytes", "write_text", "write_bytes", "iterdir", "glob",
              "rglob", "mkdir", "unlink", "is_file", "is_dir", "exists", "stat"}


def test_track_modules_never_open_files():
    """What a track sees is in memory (tracks/base.py says so): files are the use cases' job."""
    for path in _sources("pipeline/tracks"):
        rel = path.relative_to(ROOT).as_posix()
        tree = _tree(path)
        bad = sorted(_calls(tree) & FILE_CALLS)
        assert not bad, f"{rel} calls {bad}; read files in a use case or lab/ and pass a FileSet"
        assert not {"pathlib", "os", "shutil", "tempfile"} & _imports(path), (
            f"{rel} imports a file-system module")


def test_only_a_tracks_settings_module_parses_toml():
    for path in _sources("pipeline/tracks"):
        rel = path.relative_to(ROOT).as_posix()
        if path.name == "settings.py":
            continue
        assert "tomllib" not in _imports(path), (
            f"{rel} parses TOML; settings are parsed once, in the track's settings.py")


ROLE_MODULES = ("settings", "validate", "score", "charts", "integrity", "track")


def test_every_track_folder_has_the_same_role_modules():
    for paper in PAPERS:
        folder = ROOT / "pipeline" / "tracks" / paper
        missing = [m for m in ROLE_MODULES if not (folder / f"{m}.py").is_file()]
        assert not missing, f"pipeline/tracks/{paper}/ lacks {missing}"


# --------------------------------------------------------------------------- parts of pipeline/


def _part(module: str) -> str | None:
    """The first-level part of ``pipeline/`` a module belongs to (``pipeline.site.build`` → site).

    ``pipeline`` itself (its ``__init__``: the version) is the part ``pipeline``; modules outside
    ``pipeline/`` (``cli``) belong to no part.
    """
    names = module.split(".")
    if names[0] != "pipeline":
        return None
    return names[1] if len(names) > 1 else "pipeline"


def _dynamic_imports(path: Path) -> set[str]:
    """Modules named by ``importlib.import_module("pipeline....")`` (f-strings by their prefix)."""
    found: set[str] = set()
    for node in ast.walk(_tree(path)):
        if not (isinstance(node, ast.Call) and node.args
                and isinstance(node.func, ast.Attribute | ast.Name)
                and getattr(node.func, "attr", getattr(node.func, "id", "")) == "import_module"):
            continue
        arg = node.args[0]
        head = arg.values[0] if isinstance(arg, ast.JoinedStr) and arg.values else arg
        if isinstance(head, ast.Constant) and isinstance(head.value, str) \
                and head.value.startswith("pipeline."):
            found.add(head.value.rstrip("."))
    return found


@functools.cache
def _part_edges() -> dict[tuple[str, str], list[str]]:
    """(importing part, imported part) → the module imports that make the edge.

    Every import counts: module level, inside functions, under ``TYPE_CHECKING`` and through
    ``importlib.import_module`` with a literal ``pipeline.`` prefix. A function-level import
    defers the loading, not the dependency: two parts that reach each other that way are one
    knot however the imports are placed (store↔site and bundles↔manifest↔tracks hid so). A
    ``TYPE_CHECKING`` import is the same dependency for a reader and for mypy: the importing
    code is written in the other part's types, so it counts too.
    """
    known = _package_modules()
    edges: dict[tuple[str, str], list[str]] = {}
    for mod, path in known.items():
        mine = _part(mod)
        if mine is None:
            continue
        deps = _imported_modules(path, known) | _dynamic_imports(path)
        for dep in sorted(deps):
            theirs = _part(dep)
            if theirs is not None and theirs != mine:
                edges.setdefault((mine, theirs), []).append(f"{mod} → {dep}")
    return edges


def _reaches(part: str, forbidden: str) -> list[str]:
    """The imports by which the part ``part`` of ``pipeline/`` reaches the part ``forbidden``."""
    return _part_edges().get((part, forbidden), [])


def test_parts_of_pipeline_import_each_other_as_a_dag():
    """The first-level modules and packages of ``pipeline/`` form a DAG of imports.

    Within a part, modules may import each other freely (the module-level DAG test above still
    forbids file cycles); between parts every dependency points one way, so each part can be
    read, tested and replaced knowing only the parts below it.
    """
    import networkx as nx

    edges = _part_edges()
    graph = nx.DiGraph(list(edges))
    loops = []
    for cycle in nx.simple_cycles(graph):
        steps = list(zip(cycle, cycle[1:] + cycle[:1], strict=True))
        loops.append(" → ".join([*cycle, cycle[0]]) + ": "
                     + "; ".join(edges[s][0] for s in steps))
    assert not loops, "parts of pipeline/ import each other in a loop:\n" + "\n".join(loops)


def test_pipeline_never_imports_the_cli():
    known = _package_modules()
    for mod, path in known.items():
        if _part(mod) is not None:
            bad = {d for d in _imported_modules(path, known) if d.split(".")[0] == "cli"}
            assert not bad, f"{mod} imports {sorted(bad)}; cli/ sits above pipeline/"


def test_store_and_check_import_nothing_from_the_site():
    for part in ("store", "check"):
        bad = _reaches(part, "site")
        assert not bad, f"pipeline/{part} imports the site: {bad}; move the shared code below both"


def test_bundles_import_nothing_from_the_tracks():
    """bundles.py reads folders into :mod:`pipeline.inputs`, which needs no track."""
    for part in ("bundles", "inputs"):
        bad = _reaches(part, "tracks")
        assert not bad, f"pipeline/{part} imports tracks: {bad}"


GROUND_FLOOR = {"pipeline", "errors", "limits", "inputs", "ranking", "toml_writer", "untrusted"}
"""Parts every other part may use: they import only each other (and never a paper)."""


def test_the_ground_floor_and_the_store_stand_on_the_ground_floor_only():
    """Types sit below the code that makes them: the ground floor and the store reach no higher.

    The store (SQL and its typed rows) is read by the site, ``check`` and the use cases; like
    the ground floor it may import nothing above it, or a loop waits for the next reader.
    """
    edges = _part_edges()
    for part in sorted(GROUND_FLOOR | {"store"}):
        above = {b: lines[0] for (a, b), lines in edges.items()
                 if a == part and b not in GROUND_FLOOR}
        assert not above, f"pipeline/{part} imports parts above the ground floor: {above}"


def _papers() -> list[str]:
    """The track packages under ``pipeline/tracks/`` (a new paper is a new folder)."""
    found = sorted(p.parent.name for p in (ROOT / "pipeline" / "tracks").glob("*/__init__.py"))
    assert set(PAPERS) <= set(found), f"tracks/ lost a paper: {sorted(set(PAPERS) - set(found))}"
    return found


def test_site_names_no_paper():
    """No module under ``pipeline/site/`` imports a paper's package or names a paper in a string.

    A paper's name counts as a word of its own, ``_`` being a separator (``"aiq_curve"`` names
    one), in any case; docstrings count too: the site's documentation is generic like its code
    (what a track shows is in its ``charts.py``).
    """
    papers = _papers()
    word = re.compile(r"(?<![A-Za-z])(" + "|".join(papers) + r")(?![A-Za-z])", re.IGNORECASE)
    known = _package_modules()
    bad: list[str] = []
    for path in _sources("pipeline/site"):
        rel = path.relative_to(ROOT).as_posix()
        for dep in sorted(_imported_modules(path, known) | _dynamic_imports(path)):
            names = dep.split(".")
            if names[:1] == ["pipeline"] and len(names) > 2 \
                    and names[1] in ("tracks", "metrics", "lab") and names[2] in papers:
                bad.append(f"{rel} imports {dep}")
        for node in ast.walk(_tree(path)):
            if isinstance(node, ast.Constant) and isinstance(node.value, str) \
                    and word.search(node.value):
                bad.append(f"{rel}:{node.lineno} names a paper in {node.value[:50]!r}")
    assert not bad, "the site knows a paper:\n" + "\n".join(bad)


ROLE_MODULES_SHARED = 5


def test_track_folders_share_their_role_modules():
    folders = [ROOT / "pipeline" / "tracks" / p for p in _papers()]
    shared = set.intersection(*({f.stem for f in d.glob("*.py")} - {"__init__"} for d in folders))
    assert len(shared) >= ROLE_MODULES_SHARED, (
        f"the track folders share only {sorted(shared)}; give each the same role modules")


CLI_MODULE_MAX_LINES = 300


def test_cli_modules_are_thin():
    """Option parsing and printing only: file reading and option assembly live in use cases."""
    long = {p.relative_to(ROOT).as_posix(): n for p in _sources("cli")
            if (n := len(p.read_text(encoding="utf-8").splitlines())) > CLI_MODULE_MAX_LINES}
    assert not long, f"cli modules over {CLI_MODULE_MAX_LINES} lines (option parsing only): {long}"


# --------------------------------------------------------------------------- papers stay home


def _in_paper_folder(rel: str, papers: list[str]) -> bool:
    parts = rel.split("/")
    return len(parts) > 3 and parts[1] in ("tracks", "metrics", "lab") and parts[2] in papers


def test_no_paper_is_listed_outside_its_folders():
    """Tracks are discovered: no module outside a paper's folders spells a paper's name."""
    papers = _papers()
    for path in _sources("pipeline"):
        rel = path.relative_to(ROOT).as_posix()
        if _in_paper_folder(rel, papers):
            continue
        for node in ast.walk(_tree(path)):
            if isinstance(node, ast.Constant) and node.value in papers:
                raise AssertionError(
                    f"{rel}:{node.lineno} lists the paper {node.value!r}; let the registry "
                    "(pipeline/tracks/__init__.py) find it")


def test_the_registry_finds_every_paper():
    from pipeline.tracks import track_names

    assert sorted(track_names()) == _papers()


def test_a_tracks_presentation_comes_from_its_charts_module():
    import importlib

    from pipeline.tracks import get_track

    for paper in PAPERS:
        charts = importlib.import_module(f"pipeline.tracks.{paper}.charts")
        assert get_track(paper).presentation is charts.PRESENTATION, paper
