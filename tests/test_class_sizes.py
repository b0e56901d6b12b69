"""No room too big (issue 35): every class in memory_plugin stays within MAX_CLASS_LINES,
its decorators, docstring and blank lines included; a bigger one is split into step objects
it composes, the way ContextManager composes its steps."""

from __future__ import annotations

import ast
from pathlib import Path

import memory_plugin

ROOT = Path(memory_plugin.__file__).parent
MAX_CLASS_LINES = 300


def class_sizes(root: Path) -> list[tuple[str, int]]:
    """Every class under `root` (nested ones too) as "path:Name" with its length in lines."""
    found: list[tuple[str, int]] = []
    for path in sorted(root.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ClassDef) and node.end_lineno is not None:
                first = min([node.lineno, *(d.lineno for d in node.decorator_list)])
                name = f"{path.relative_to(root.parent)}:{node.name}"
                found.append((name, node.end_lineno - first + 1))
    return found


def test_no_class_in_memory_plugin_is_over_300_lines() -> None:
    offenders = [
        f"{name} ({lines} lines)" for name, lines in class_sizes(ROOT) if lines > MAX_CLASS_LINES
    ]
    assert not offenders, f"classes over {MAX_CLASS_LINES} lines: {', '.join(offenders)}"


def test_the_size_check_sees_a_class_over_the_limit(tmp_path: Path) -> None:
    package = tmp_path / "pkg"
    package.mkdir()
    body = "\n".join(f"    x{i} = {i}" for i in range(MAX_CLASS_LINES))
    (package / "big.py").write_text(
        f"@decorated\nclass Big:\n{body}\n\n\nclass Small:\n    y = 1\n"
    )
    assert dict(class_sizes(package)) == {
        "pkg/big.py:Big": MAX_CLASS_LINES + 2,
        "pkg/big.py:Small": 2,
    }
