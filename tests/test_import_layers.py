"""The package's import layers: no import cycle anywhere in memory_plugin, and no component
(a subpackage or top-level module, or a module LAYERS places apart from its package) importing
one above it in LAYERS.

Every module is parsed with `ast`, so an import counts wherever it is written: at the top of a
module, under `if TYPE_CHECKING:`, in a `try`, or inside a function. A function-level import
counts for both rules like any other: putting it in a function changes when it loads, not what
needs what, so it hides neither a cycle nor an upward import. `from memory_plugin.x import y`
imports the module memory_plugin.x.y where there is one, else memory_plugin.x (y is a name it
defines); importing a module runs its packages' `__init__`s first, so it imports those too
(but those of the importer's own packages, which are running already).
"""

from __future__ import annotations

import ast
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from functools import cache
from pathlib import Path

import pytest

import memory_plugin

PACKAGE = "memory_plugin"
ROOT = Path(memory_plugin.__file__).parent
LAYERS = (
    # the leaves: values, the plan driver, errors, text
    "storable",
    "daemon_workers",
    "plans",
    "errors",
    "text",
    "compat",
    "serde",
    "tokens",
    "events",
    # who and where, settings, storage
    "scope",
    "tooling",
    "settings",
    "background",
    "backends",
    "connection",
    # what every kind shares: screening, models, provenance, the privacy hooks' vocabulary,
    # prompt blocks, the service contract
    "safety",
    "models",
    "provenance",
    "holdings",
    "graphnode",
    "blocks",
    "base",
    # the kinds (context_management records agent lessons and notes; profile reads journals)
    "agent",
    "scoped",
    "bounded",
    "context_management",
    "profile",
    "kinds",
    # the offline model answers every kind's own prompts
    "offline",
    # what assembles the kinds, and the doors
    "privacy",
    "prebuilt",
    "server",
    "mcp_gateway",
    "offline.chat",
    "langgraph_server",
    "cli",
    PACKAGE,
)
"""Every component, bottom first: each may import only those listed before it. A dotted entry
(offline.chat: the example chatbot, a door) places a module apart from its package."""


@dataclass(frozen=True)
class Import:
    """One module importing another: where, and as written (an implicit import of a package's
    `__init__` names the import that caused it)."""

    importer: str
    target: str
    line: int
    text: str

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


def _base(importer: str, is_package: bool, node: ast.ImportFrom) -> str:
    if not node.level:
        return node.module or ""
    parts = importer.split(".")
    if not is_package:
        parts = parts[:-1]
    parts = parts[: len(parts) - (node.level - 1)]
    return ".".join([*parts, node.module] if node.module else parts)


def _written(name: str, is_package: bool, known: set[str], node: ast.ImportFrom) -> list[str]:
    """The modules a `from` import names: its submodules, and the module it imports names of."""
    base = _base(name, is_package, node)
    modules = [f"{base}.{alias.name}" for alias in node.names]
    found = [module for module in modules if module in known]
    return found + ([base] if len(found) < len(modules) else [])


def _packages(module: str) -> list[str]:
    parts = module.split(".")
    return [".".join(parts[:n]) for n in range(1, len(parts))]


def imports_of(name: str, path: Path, known: set[str]) -> Iterator[Import]:
    """The package modules `name` imports: each statement's own, and the packages' `__init__`s
    they run."""
    source = path.read_text(encoding="utf-8")
    lines = source.splitlines()
    running = {*_packages(name), name}
    for node in ast.walk(ast.parse(source, filename=str(path))):
        if isinstance(node, ast.Import):
            written = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            written = _written(name, path.name == "__init__.py", known, node)
        else:
            continue
        text = lines[node.lineno - 1].strip()
        for module in written:
            run = [package for package in _packages(module) if package not in running]
            for target in [*run, module]:
                if target in known and target != name:
                    yield Import(name, target, node.lineno, text)


def all_imports(root: Path) -> list[Import]:
    """Every import of a package module by a package module under `root`."""
    modules = module_names(root)
    known = set(modules)
    return [found for name, path in modules.items() for found in imports_of(name, path, known)]


@cache
def package_imports() -> tuple[Import, ...]:
    """The imports of memory_plugin, parsed once (about half a second: the tests reading them
    are slow)."""
    return tuple(all_imports(ROOT))


def component(module: str, layers: Sequence[str]) -> str:
    """The component a module belongs to: the longest entry of `layers` naming it or a package
    above it, else its top-level module or subpackage (the package's own `__init__`: PACKAGE)."""
    parts = module.split(".")
    for end in range(len(parts), 1, -1):
        if ".".join(parts[1:end]) in layers:
            return ".".join(parts[1:end])
    return parts[1] if len(parts) > 1 else PACKAGE


def unplaced(root: Path, layers: Sequence[str]) -> tuple[list[str], list[str]]:
    """The components `layers` does not place, and its entries that name no module."""
    modules = module_names(root)
    components = {component(module, layers) for module in modules}
    names = {module.removeprefix(PACKAGE + ".") for module in modules} | {PACKAGE}
    return sorted(components - set(layers)), [name for name in layers if name not in names]


def upward(imports: Sequence[Import], layers: Sequence[str]) -> list[Import]:
    """The imports of a component by one not above it (both placed in `layers`)."""
    rank = {name: n for n, name in enumerate(layers)}
    found = []
    for i in imports:
        here, there = component(i.importer, layers), component(i.target, layers)
        if here != there and here in rank and there in rank and rank[there] > rank[here]:
            found.append(i)
    return found


def _strongly_connected(edges: dict[str, dict[str, Import]]) -> list[list[str]]:
    """The graph's strongly connected components of more than one module (Tarjan's)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        for nxt in sorted(edges.get(node, {})):
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            group: list[str] = []
            while not group or group[-1] != node:
                group.append(stack.pop())
            if len(group) > 1:
                found.append(sorted(group))

    for node in sorted(edges):
        if node not in index:
            visit(node)
    return found


def _loop(edges: dict[str, dict[str, Import]], start: str) -> list[Import]:
    """The imports of a shortest cycle from `start` back to it."""
    seen, frontier = {start}, [(start, list[Import]())]
    while frontier:
        following = []
        for node, walked in frontier:
            for nxt, edge in sorted(edges.get(node, {}).items()):
                if nxt == start:
                    return [*walked, edge]
                if nxt not in seen:
                    seen.add(nxt)
                    following.append((nxt, [*walked, edge]))
        frontier = following
    raise AssertionError(f"{start} is on no cycle")


def cycles(imports: Sequence[Import]) -> list[tuple[list[str], list[Import]]]:
    """Each group of modules that import each other (through one another), with one import
    cycle through it, edge by edge."""
    edges: dict[str, dict[str, Import]] = {}
    for i in imports:
        edges.setdefault(i.importer, {}).setdefault(i.target, i)
    return [(group, _loop(edges, group[0])) for group in _strongly_connected(edges)]


def _named(found: Sequence[Import]) -> str:
    return "\n".join(map(str, found))


def test_layers_place_every_component() -> None:
    missing, stale = unplaced(ROOT, LAYERS)
    assert not missing, f"place each new component in LAYERS (bottom first): {missing}"
    assert not stale, f"LAYERS names what is no component of {PACKAGE}: {stale}"


@pytest.mark.slow
def test_no_component_imports_one_above_it() -> None:
    found = upward(package_imports(), LAYERS)
    assert not found, (
        "a component imports one above it in LAYERS (move what both need down):\n" + _named(found)
    )


@pytest.mark.slow
def test_no_import_cycle() -> None:
    found = cycles(package_imports())
    assert not found, "import cycles (move what both need down):\n" + "\n".join(
        f"{', '.join(group)} import each other, as in: " + "; ".join(map(str, cycle))
        for group, cycle in found
    )


def _write(package: Path, files: dict[str, str]) -> None:
    for name, source in files.items():
        path = package / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(source)


def test_the_checks_see_every_kind_of_import(tmp_path: Path) -> None:
    package = tmp_path / PACKAGE
    _write(
        package,
        {
            "__init__.py": "from memory_plugin.top import run\n",
            "low.py": "",
            "top.py": "from . import low\n\ndef run():\n    from memory_plugin import low\n",
            "safety/__init__.py": "from memory_plugin.safety.words import Word\n",
            "safety/words.py": "from memory_plugin.safety import Staged\n",
            "safety/judge.py": (
                "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n"
                "    from memory_plugin.safety.staged import Staged\n"
            ),
            "safety/staged.py": "def f():\n    from .judge import Judge\n",
            "models/__init__.py": "",
            "models/local.py": (
                "import memory_plugin.low\n\ndef g():\n    import memory_plugin.top\n"
            ),
            "models/a.py": "from memory_plugin.models.sub.b import x\n",
            "models/sub/__init__.py": "from memory_plugin.models import a\n",
            "models/sub/b.py": "",
        },
    )
    layers = ("low", "safety", "models", "top", PACKAGE)
    imports = all_imports(package)
    assert unplaced(package, layers) == ([], [])
    assert unplaced(package, ("low", "safety", "elsewhere")) == (
        ["memory_plugin", "models", "top"],
        ["elsewhere"],
    )
    assert [str(i) for i in upward(imports, layers)] == [
        "memory_plugin.models.local (line 4: 'import memory_plugin.top') imports memory_plugin.top"
    ]
    groups = cycles(imports)
    assert sorted(group for group, _ in groups) == [
        ["memory_plugin.models.a", "memory_plugin.models.sub"],
        ["memory_plugin.safety", "memory_plugin.safety.words"],
        ["memory_plugin.safety.judge", "memory_plugin.safety.staged"],
    ]
    found = sorted("; ".join(map(str, cycle)) for _, cycle in groups)
    assert found == [
        "memory_plugin.models.a (line 1: 'from memory_plugin.models.sub.b import x') imports "
        "memory_plugin.models.sub; memory_plugin.models.sub (line 1: 'from memory_plugin.models "
        "import a') imports memory_plugin.models.a",
        "memory_plugin.safety (line 1: 'from memory_plugin.safety.words import Word') imports "
        "memory_plugin.safety.words; memory_plugin.safety.words (line 1: 'from memory_plugin."
        "safety import Staged') imports memory_plugin.safety",
        "memory_plugin.safety.judge (line 3: 'from memory_plugin.safety.staged import Staged') "
        "imports memory_plugin.safety.staged; memory_plugin.safety.staged (line 2: 'from .judge "
        "import Judge') imports memory_plugin.safety.judge",
    ]
