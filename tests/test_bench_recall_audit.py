"""CI runs the recall-audit benchmark once on a tiny LoCoMo slice, so it keeps working."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_recall_audit_bench_runs_on_a_tiny_slice() -> None:
    args = ["--conversations", "1", "--turns", "40", "--questions", "4", "--per-scope", "4"]
    args += ["--embeddings", "hashed", "--candidates", "100,3", "--evidence"]
    done = subprocess.run(
        [sys.executable, str(ROOT / "bench" / "recall_audit.py"), *args],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=ROOT,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    audit, evidence = done.stdout.strip().split("\n\n")
    rows = [line.split("|")[1:-1] for line in audit.splitlines()[2:]]
    assert [(r[0].strip(), r[1].strip(), r[2].strip()) for r in rows] == [
        ("questions", "100", "4"),
        ("sampled", "100", "4"),
        ("questions", "3", "4"),
        ("sampled", "3", "4"),
    ]
    wide = [float(cell) for r in rows[:2] for cell in r[3:6]]
    narrow = [float(cell) for r in rows[2:] for cell in r[3:6]]
    assert wide == [1.0] * 6
    assert all(0.0 <= value <= 1.0 for value in narrow) and min(narrow) < 1.0
    orders = [line.split("|")[1:-1] for line in evidence.splitlines()[2:]]
    assert [(r[0].strip(), r[1].strip()) for r in orders] == [
        ("recall (fused)", "4"),
        ("exact search", "4"),
    ]
    assert all(0.0 <= float(cell) <= 100.0 for r in orders for cell in r[2:])
