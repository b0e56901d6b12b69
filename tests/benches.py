"""Running a benchmark script of bench/ as its user would, for the tests that keep it working."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def run_bench(script: str, args: list[str], timeout: int = 300) -> subprocess.CompletedProcess[str]:
    """`python bench/<script> <args>` from the repository root, output captured."""
    return subprocess.run(
        [sys.executable, str(ROOT / "bench" / script), *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        cwd=ROOT,
        check=False,
    )
