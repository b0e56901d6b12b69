"""The recipes in examples/ run as their docstrings say."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow

EXAMPLES = Path(__file__).parent.parent / "examples"


def test_scoped_memory_recipe_persists_across_runs(tmp_path: Path) -> None:
    def run() -> list[str]:
        done = subprocess.run(
            [sys.executable, str(EXAMPLES / "scoped_memory.py")],
            cwd=tmp_path,
            capture_output=True,
            text=True,
            timeout=120,
            check=True,
        )
        return done.stdout.splitlines()

    assert run() == ["ann, private: visit 1", "ann, team: visit 1", "bob, team: visit 2"]
    assert run() == ["ann, private: visit 2", "ann, team: visit 3", "bob, team: visit 4"]
    assert (tmp_path / ".memory" / "memory.db").is_file()
