"""The package a newcomer walks (issue 25): a root that is a table of contents, each memory
kind in its own folder whose `__init__` says what it offers, no kind borrowing another kind's
helpers, and the offline model loaded only when asked for."""

from __future__ import annotations

import ast
import importlib
import subprocess
import sys
from pathlib import Path

import pytest

import memory_plugin
from memory_plugin.base import MemoryService
from memory_plugin.kinds import KINDS

ROOT = Path(memory_plugin.__file__).parent
MAX_ROOT_MODULES = 20
KIND_FOLDERS = {
    "scoped_memory": "scoped",
    "profile": "profile",
    "agent_memory": "agent",
    "bounded_memory": "bounded",
    "context_management": "context_management",
}


def _imports(path: Path) -> set[str]:
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module:
            found.add(node.module)
        elif isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
    return found


def test_the_root_keeps_at_most_twenty_modules() -> None:
    modules = sorted(path.name for path in ROOT.glob("*.py"))
    assert len(modules) <= MAX_ROOT_MODULES, modules


def test_every_folder_says_what_it_offers() -> None:
    for init in sorted(ROOT.rglob("__init__.py")):
        tree = ast.parse(init.read_text(encoding="utf-8"))
        assert ast.get_docstring(tree), f"{init.relative_to(ROOT)} has no docstring"


def test_every_kind_in_the_registry_has_one_folder_exporting_its_service() -> None:
    assert {kind.name for kind in KINDS} == set(KIND_FOLDERS)
    for switch, folder in KIND_FOLDERS.items():
        package = importlib.import_module(f"memory_plugin.{folder}")
        services = [
            name
            for name in package.__all__
            if isinstance(value := getattr(package, name), type)
            and issubclass(value, MemoryService)
        ]
        assert len(services) == 1, (switch, folder, services)


@pytest.mark.parametrize("folder", ["agent", "bounded", "profile"])
def test_a_kind_does_not_borrow_helpers_from_scoped_memory(folder: str) -> None:
    for path in sorted((ROOT / folder).glob("*.py")):
        borrowed = {name for name in _imports(path) if name.startswith("memory_plugin.scoped")}
        assert not borrowed, f"{folder}/{path.name} imports {sorted(borrowed)}"


def test_no_folder_holds_a_module_beside_its_plural() -> None:
    for folder in [ROOT, *(path for path in ROOT.iterdir() if path.is_dir())]:
        stems = {path.stem for path in folder.glob("*.py")}
        twins = sorted(stem for stem in stems if f"{stem}s" in stems)
        assert not twins, f"{folder.relative_to(ROOT.parent)}: {twins} beside their plurals"


@pytest.mark.slow
def test_importing_the_library_loads_no_offline_module() -> None:
    code = (
        "import sys, memory_plugin, memory_plugin.langgraph_server, memory_plugin.cli;"
        "print(sorted(m for m in sys.modules if m.startswith('memory_plugin.offline')))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
    lazy = "from memory_plugin import OfflineModel; print(OfflineModel.__module__)"
    out = subprocess.run([sys.executable, "-c", lazy], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "memory_plugin.offline.model"


@pytest.mark.slow
def test_the_privacy_commands_need_no_server_extra(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'memory.db'}"
    code = f"""
import sys
import memory_plugin
from memory_plugin import MemoryContext, ScopedMemory
with memory_plugin.connect({url!r}) as backend:
    ScopedMemory(backend.store).remember(MemoryContext(user_id="ann"), "Ann's dog is Rex")
sys.modules["fastapi"] = None
from memory_plugin.cli import main
assert main(["forget", "--user", "ann", "Rex", "--yes", "--threads", "--url", {url!r}]) == 0
assert main(["delete-user", "ann", "--threads", "--url", {url!r}]) == 0
print(sorted(m for m in sys.modules if m.startswith("memory_plugin.server")))
"""
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip().splitlines()[-1] == "[]"
