"""The import layers of docs/architecture.md hold: a module imports only from layers below its own.

The layers are read from the guide itself (its ```layers block, top layer first), so the map
and this test cannot drift apart. Every ``import`` and ``from ... import`` of surveykit is
read with :mod:`ast`, at module level, inside functions and under ``TYPE_CHECKING`` alike. A
unit is a top-level module or a subpackage (``store``, ``planning``); a module may import its
own unit and any unit of a lower layer, never a unit beside it or above it. The imports that
still break a rule are listed in ``KNOWN`` with the work that removes them; a listed import
that is gone fails too, so the list only shrinks.

Imports of the package also stand at the top of a module: outside ``cli/``, only the lazy
loaders the guide lists (its ```lazy block) import part of the package inside a function, each
to keep a heavy library off the commands that do not need it; a listed loader that no longer
imports lazily fails too, so that list only shrinks as well.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterable, Mapping
from pathlib import Path

import pytest

from surveykit.guides import TOPICS, guide_text

ROOT = Path(__file__).resolve().parent.parent
GUIDE = ROOT / "docs" / "architecture.md"

#: importing module -> units it imports against the layers today, and why they stay for now.
KNOWN: Mapping[str, set[str]] = {}


def read_layers(text: str) -> list[tuple[str, ...]]:
    """The units of each layer, top first, from the guide's ```layers block."""
    found = re.search(r"^```layers\n(.*?)^```", text, re.DOTALL | re.MULTILINE)
    assert found, "docs/architecture.md has no ```layers block"
    return [tuple(line.split("#")[0].split()) for line in found.group(1).splitlines()
            if line.split("#")[0].strip()]


def module_name(path: Path, root: Path) -> str:
    parts = list(path.relative_to(root).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def imports_of(path: Path, module: str, package: str) -> set[str]:
    """Every module of ``package`` that the file imports (a name imported from a package may be
    a submodule: both are returned; only the package's own names count)."""
    is_package = path.name == "__init__.py"
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = module.split(".")
                base = base[:len(base) - node.level + (1 if is_package else 0)]
                source = ".".join(base + ([node.module] if node.module else []))
            else:
                source = node.module or ""
            found.add(source)
            found |= {f"{source}.{alias.name}" for alias in node.names}
    return {name for name in found if name == package or name.startswith(package + ".")}


def import_graph(root: Path, package: str) -> dict[str, set[str]]:
    """module -> modules of ``package`` it imports, for every .py file under root/package."""
    return {module_name(path, root): imports_of(path, module_name(path, root), package)
            for path in sorted((root / package).rglob("*.py"))}


def unit_of(module: str, package: str) -> str | None:
    """``store`` for ``surveykit.store.database``; None for the package's face itself."""
    parts = module.split(".")
    return parts[1] if parts[0] == package and len(parts) > 1 else None


def violations(graph: Mapping[str, Iterable[str]], layers: list[tuple[str, ...]],
               package: str) -> dict[str, set[str]]:
    """importing module -> the units it imports against the layers (or that no layer holds)."""
    rank = {unit: depth for depth, units in enumerate(layers) for unit in units}
    known_modules = set(graph)
    broken: dict[str, set[str]] = {}
    for module, targets in graph.items():
        unit = unit_of(module, package)
        if unit is None:
            continue  # the package's face re-exports names; it is no layer
        for target in targets:
            if target not in known_modules:
                continue  # a name imported from a module, not a module
            other = unit_of(target, package)
            if other is None or other == unit:
                continue
            if unit not in rank or other not in rank or rank[other] <= rank[unit]:
                broken.setdefault(module, set()).add(other)
    return broken


def read_lazy_loaders(text: str) -> dict[str, str]:
    """Module -> what it keeps off start-up, from the guide's ```lazy block: a loader's dotted
    name at the start of a line, then what it keeps off (indented lines go on with it)."""
    found = re.search(r"^```lazy\n(.*?)^```", text, re.DOTALL | re.MULTILINE)
    assert found, "docs/architecture.md has no ```lazy block"
    loaders: dict[str, str] = {}
    module = ""
    for line in found.group(1).splitlines():
        if line[:1].isspace() and module:
            loaders[module] = f"{loaders[module]} {line.strip()}".strip()
        elif line.strip():
            module, _, keeps_off = line.partition(" ")
            loaders[module] = keeps_off.strip()
    return loaders


def _imports_the_package(node: ast.AST, package: str) -> bool:
    """Whether ``node`` imports a module of ``package``: an ``import`` naming it, any relative
    import, or an ``import_module`` call (a PEP 562 ``__getattr__`` loads with it) whose
    target is not a constant naming another package."""
    if isinstance(node, ast.Import):
        return any(alias.name == package or alias.name.startswith(package + ".")
                   for alias in node.names)
    if isinstance(node, ast.ImportFrom):
        return bool(node.level) or (node.module or "").split(".")[0] == package
    if isinstance(node, ast.Call):
        called = node.func.attr if isinstance(node.func, ast.Attribute) else getattr(
            node.func, "id", None)
        if called != "import_module":
            return False
        target = node.args[0] if node.args else None
        return not (isinstance(target, ast.Constant) and isinstance(target.value, str)
                    and target.value.split(".")[0] not in (package, ""))
    return False


def function_level_imports(path: Path, package: str) -> list[int]:
    """The lines where a function of the file imports ``package`` or a part of it."""
    lines: list[int] = []

    def visit(node: ast.AST, in_function: bool) -> None:
        for child in ast.iter_child_nodes(node):
            inside = in_function or isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef))
            if inside and _imports_the_package(child, package):
                lines.append(child.lineno)
            visit(child, inside)

    visit(ast.parse(path.read_text(encoding="utf-8")), False)
    return sorted(lines)


def lazy_import_problems(root: Path, package: str, loaders: Iterable[str]
                         ) -> tuple[dict[str, list[int]], list[str]]:
    """Every module outside ``package.cli`` and the listed loaders that imports the package
    inside a function, with the lines; and the listed loaders that import nothing lazily."""
    found = {module_name(path, root): function_level_imports(path, package)
             for path in sorted((root / package).rglob("*.py"))}
    found = {module: lines for module, lines in found.items() if lines}
    cli = f"{package}.cli"
    unlisted = {module: lines for module, lines in found.items()
                if module not in loaders and module != cli and not module.startswith(cli + ".")}
    return unlisted, sorted(set(loaders) - set(found))


def test_every_unit_of_the_package_stands_in_one_layer():
    layers = read_layers(GUIDE.read_text(encoding="utf-8"))
    listed = [unit for units in layers for unit in units]
    assert len(listed) == len(set(listed)), "a unit stands in two layers"
    units = {path.stem if path.is_file() else path.name
             for path in (ROOT / "surveykit").iterdir()
             if (path.suffix == ".py" and path.name != "__init__.py")
             or (path.is_dir() and (path / "__init__.py").exists())}
    assert units == set(listed)


def test_imports_run_one_way_down_the_layers():
    layers = read_layers(GUIDE.read_text(encoding="utf-8"))
    broken = violations(import_graph(ROOT, "surveykit"), layers, "surveykit")
    new = {module: units - KNOWN.get(module, set()) for module, units in broken.items()}
    assert {module: units for module, units in new.items() if units} == {}
    gone = {module: units - broken.get(module, set()) for module, units in KNOWN.items()}
    assert {module: units for module, units in gone.items() if units} == {}, (
        "these imports are gone: strike them from KNOWN")


LAYERS = [("cli",), ("workflows",), ("store", "reporting"), ("estimation",), ("designs",),
          ("vocabulary",)]


@pytest.mark.parametrize(("graph", "expected"), [
    ({"pkg.cli.app": {"pkg.workflows.report"}, "pkg.workflows.report": {"pkg.store"},
      "pkg.store": {"pkg.designs.base"}, "pkg.designs.base": {"pkg.vocabulary"},
      "pkg.vocabulary": set()}, {}),
    # upward, sideways (two units of one layer), a unit that no layer holds
    ({"pkg.designs.base": {"pkg.store"}, "pkg.store": set()}, {"pkg.designs.base": {"store"}}),
    ({"pkg.store": {"pkg.reporting.text"}, "pkg.reporting.text": set()},
     {"pkg.store": {"reporting"}}),
    ({"pkg.designs.base": {"pkg.stray"}, "pkg.stray": set()}, {"pkg.designs.base": {"stray"}}),
    # names imported from a module are not modules; the face and a unit's own modules are free
    ({"pkg.designs.base": {"pkg.vocabulary", "pkg.vocabulary.DONT_KNOW"}, "pkg.vocabulary": set(),
      "pkg": {"pkg.store"}, "pkg.store": {"pkg.store.models"}, "pkg.store.models": set()}, {}),
])
def test_the_checker_finds_imports_against_the_layers(graph, expected):
    assert violations(graph, LAYERS, "pkg") == expected


def test_a_planted_upward_import_in_a_package_fails(tmp_path):
    package = tmp_path / "pkg"
    for folder in ("store", "designs"):
        (package / folder).mkdir(parents=True)
        (package / folder / "__init__.py").write_text("")
    (package / "__init__.py").write_text("")
    (package / "store" / "database.py").write_text("from pkg.designs import base\n")
    (package / "designs" / "base.py").write_text(
        "def matrix():\n    from ..store import database\n    return database\n")
    (package / "vocabulary.py").write_text("import pkg.designs.base\n")
    graph = import_graph(tmp_path, "pkg")
    assert violations(graph, LAYERS, "pkg") == {"pkg.designs.base": {"store"},
                                                "pkg.vocabulary": {"designs"}}


def test_only_the_listed_lazy_loaders_import_the_package_inside_a_function():
    loaders = read_lazy_loaders(GUIDE.read_text(encoding="utf-8"))
    assert all(loaders.values()), "a lazy loader in docs/architecture.md must say what it keeps off"
    unlisted, idle = lazy_import_problems(ROOT, "surveykit", loaders)
    assert unlisted == {}, (
        "import these at the top of the module; only a lazy loader of docs/architecture.md's "
        "lazy block (which says what it keeps off start-up) imports inside a function")
    assert idle == [], "these loaders import nothing lazily any more: strike them from the list"


def test_the_lazy_block_lists_a_loader_a_line():
    text = "Intro\n```lazy\npkg.a    pandas: one\n         and two\n\npkg.b    Jinja\n```\n"
    assert read_lazy_loaders(text) == {"pkg.a": "pandas: one and two", "pkg.b": "Jinja"}


def test_a_planted_function_level_import_fails_and_so_does_an_idle_loader(tmp_path):
    package = tmp_path / "pkg"
    for folder in ("cli", "store", "reporting"):
        (package / folder).mkdir(parents=True)
        (package / folder / "__init__.py").write_text("")
    (package / "__init__.py").write_text(
        "import importlib\n\n\ndef __getattr__(name):\n"
        "    return importlib.import_module('pkg.store')\n")
    (package / "cli" / "app.py").write_text("def main():\n    from pkg.store import database\n")
    (package / "store" / "database.py").write_text(
        "import importlib\n\n\ndef read():\n    import sqlite3\n"
        "    importlib.import_module('json')\n    from ..reporting import report\n")
    (package / "reporting" / "report.py").write_text(
        "def render():\n    from pkg import templating\n    return templating\n")
    (package / "reporting" / "text.py").write_text("from pkg.reporting import report\n")
    (package / "templating.py").write_text(
        "class Environment:\n    def load(self):\n        import pkg.reporting.text\n")
    loaders = ["pkg", "pkg.reporting.report", "pkg.reporting.text"]
    # the store's relative import and the method's import are planted violations; the CLI,
    # the listed face and report are free; text imports at module level only: an idle loader
    assert lazy_import_problems(tmp_path, "pkg", loaders) == (
        {"pkg.store.database": [7], "pkg.templating": [3]}, ["pkg.reporting.text"])
    # unlisted, the face's import_module is a function-level import like any other
    assert lazy_import_problems(tmp_path, "pkg", ["pkg.reporting.report"]) == (
        {"pkg": [5], "pkg.store.database": [7], "pkg.templating": [3]}, [])


def test_the_map_is_a_guide():
    assert "architecture" in TOPICS
    assert guide_text("architecture") == GUIDE.read_text(encoding="utf-8")
