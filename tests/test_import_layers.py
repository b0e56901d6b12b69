"""The package's import layers (issue 25): the plan driver at the bottom, backends and settings
on it, neither importing the other's way up.

Every module of memory_plugin is parsed with `ast`, so an import counts wherever it is written:
at the top of the module, under `if TYPE_CHECKING:`, or inside a function. The cycle check
uses the imports that run when a module is imported (those outside any function).
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import memory_plugin

PACKAGE = "memory_plugin"
ROOT = Path(memory_plugin.__file__).parent
LAYERS = ("settings", "plans", "backends")


@dataclass(frozen=True)
class Import:
    """One imported module: who imports it, where, and whether at import time."""

    importer: str
    target: str
    line: int
    text: str
    top_level: bool

    def __str__(self) -> str:
        return f"{self.importer} (line {self.line}: {self.text!r}) imports {self.target}"


def module_names(root: Path) -> dict[str, Path]:
    """Every module of the package under `root`, by dotted name."""
    names = {}
    for path in sorted(root.rglob("*.py")):
        parts = [PACKAGE, *path.relative_to(root).with_suffix("").parts]
        if parts[-1] == "__init__":
            parts.pop()
        names[".".join(parts)] = path
    return names


def _is_package(path: Path) -> bool:
    return path.name == "__init__.py"


def _function_nodes(tree: ast.AST) -> set[int]:
    """The ids of the import nodes written inside a function."""
    inside: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda):
            inside.update(
                id(sub) for sub in ast.walk(node) if isinstance(sub, ast.Import | ast.ImportFrom)
            )
    return inside


def _base(importer: str, is_package: bool, node: ast.ImportFrom) -> str:
    if not node.level:
        return node.module or ""
    parts = importer.split(".")
    if not is_package:
        parts = parts[:-1]
    parts = parts[: len(parts) - (node.level - 1)]
    return ".".join([*parts, node.module] if node.module else parts)


def imports_of(name: str, path: Path, known: set[str]) -> Iterator[Import]:
    """The package modules `name` imports, at any depth: `from memory_plugin import plans`
    imports memory_plugin.plans as well as the package."""
    source = path.read_text(encoding="utf-8")
    tree = ast.parse(source, filename=str(path))
    in_function = _function_nodes(tree)
    lines = source.splitlines()
    for node in ast.walk(tree):
        targets: list[str] = []
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = _base(name, _is_package(path), node)
            targets = [base]
            targets += [f"{base}.{a.name}" for a in node.names if f"{base}.{a.name}" in known]
        else:
            continue
        text = lines[node.lineno - 1].strip()
        for target in targets:
            if target == PACKAGE or target.startswith(PACKAGE + "."):
                yield Import(name, target, node.lineno, text, id(node) not in in_function)


def all_imports(root: Path = ROOT) -> list[Import]:
    """Every import of a package module by a package module under `root`."""
    modules = module_names(root)
    known = set(modules)
    return [found for name, path in modules.items() for found in imports_of(name, path, known)]


def _within(module: str, prefix: str) -> bool:
    return module == prefix or module.startswith(prefix + ".")


def component(module: str) -> str | None:
    """The package's subpackage or module a module belongs to (None: the package itself)."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else None


def backends_importing_settings(imports: list[Import]) -> list[Import]:
    return [
        i
        for i in imports
        if _within(i.importer, "memory_plugin.backends")
        and _within(i.target, "memory_plugin.settings")
    ]


def plans_importing_upward(imports: list[Import]) -> list[Import]:
    return [
        i
        for i in imports
        if i.importer == "memory_plugin.plans"
        and (
            _within(i.target, "memory_plugin.backends")
            or _within(i.target, "memory_plugin.settings")
        )
    ]


def settings_importing_backends(imports: list[Import]) -> list[Import]:
    return [
        i
        for i in imports
        if _within(i.importer, "memory_plugin.settings")
        and _within(i.target, "memory_plugin.backends")
    ]


def schema_importing_values(imports: list[Import]) -> list[Import]:
    return [
        i
        for i in imports
        if i.importer == "memory_plugin.settings.schema"
        and _within(i.target, "memory_plugin.settings.values")
    ]


def component_edges(imports: list[Import]) -> dict[str, dict[str, Import]]:
    """The import-time edges between the package's components, each with an import making it."""
    edges: dict[str, dict[str, Import]] = {}
    for i in imports:
        here, there = component(i.importer), component(i.target)
        if i.top_level and here and there and here != there:
            edges.setdefault(here, {}).setdefault(there, i)
    return edges


def import_path(imports: list[Import], start: str, goal: str) -> list[Import] | None:
    """The imports of a shortest import-time path from component start to component goal
    (through any other components), None if there is none."""
    edges = component_edges(imports)
    seen, frontier = {start}, [(start, list[Import]())]
    while frontier:
        following = []
        for node, walked in frontier:
            for nxt, edge in sorted(edges.get(node, {}).items()):
                if nxt == goal:
                    return [*walked, edge]
                if nxt not in seen:
                    seen.add(nxt)
                    following.append((nxt, [*walked, edge]))
        frontier = following
    return None


def layer_cycles(imports: list[Import]) -> list[str]:
    """Each cycle through a layer of LAYERS in the graph of import-time edges between the
    package's components (through any other component too), named edge by edge."""
    cycles = []
    for layer in LAYERS:
        cycle = import_path(imports, layer, layer)
        if cycle is not None:
            cycles.append(f"{layer} imports itself back: " + "; ".join(map(str, cycle)))
    return cycles


def _named(found: list[Import]) -> str:
    return "\n".join(map(str, found))


def test_backends_never_import_settings() -> None:
    found = backends_importing_settings(all_imports())
    assert not found, "memory_plugin.backends takes its timeout as a value:\n" + _named(found)


def test_the_plan_driver_imports_neither_backends_nor_settings() -> None:
    found = plans_importing_upward(all_imports())
    assert not found, "memory_plugin.plans is the bottom layer:\n" + _named(found)


def test_settings_never_import_backends() -> None:
    imports = all_imports()
    found = settings_importing_backends(imports)
    assert not found, "memory_plugin.settings must not import the backends:\n" + _named(found)
    through = import_path(imports, "settings", "backends")
    assert through is None, "importing memory_plugin.settings loads the backends: " + "; ".join(
        map(str, through or [])
    )


def test_the_schema_does_not_import_the_value_checks() -> None:
    found = schema_importing_values(all_imports())
    assert not found, "settings/values.py imports the schema, not the other way:\n" + _named(found)


def test_no_import_cycle_among_settings_plans_and_backends() -> None:
    cycles = layer_cycles(all_imports())
    assert not cycles, "\n".join(cycles)


def test_the_parser_sees_function_level_and_from_package_imports(tmp_path: Path) -> None:
    package = tmp_path / PACKAGE
    (package / "backends").mkdir(parents=True)
    (package / "settings").mkdir()
    for init in ("__init__.py", "backends/__init__.py", "settings/__init__.py"):
        (package / init).write_text("")
    (package / "plans.py").write_text("from memory_plugin.backends import x\n")
    (package / "settings" / "schema.py").write_text(
        "def f():\n    from memory_plugin.settings import values\n"
    )
    (package / "settings" / "values.py").write_text("from . import schema\n")
    (package / "backends" / "timeout.py").write_text(
        "def g():\n    from memory_plugin import settings\n"
    )
    imports = all_imports(package)
    assert [i.importer for i in backends_importing_settings(imports)] == [
        "memory_plugin.backends.timeout"
    ]
    assert [i.target for i in plans_importing_upward(imports)] == ["memory_plugin.backends"]
    assert [i.line for i in schema_importing_values(imports)] == [2]
    assert layer_cycles(imports) == [], "function-level imports make no import-time cycle"
    (package / "settings" / "__init__.py").write_text("import memory_plugin.plans\n")
    (package / "backends" / "__init__.py").write_text("from memory_plugin.settings import y\n")
    cycles = layer_cycles(all_imports(package))
    assert [cycle.split()[0] for cycle in cycles] == list(LAYERS), cycles
    assert "memory_plugin.backends (line 1: 'from memory_plugin.settings import y')" in cycles[0]
