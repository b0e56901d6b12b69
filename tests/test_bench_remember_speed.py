"""bench/remember_speed.py runs on tiny sizes and reports remember's, the screen's and recall's
times on both sets of notes, for this tree and a baseline tree, with the ratio and the host's
load."""

from __future__ import annotations

import pytest

from tests.benches import ROOT, run_bench

pytestmark = [pytest.mark.bench, pytest.mark.slow]


def test_remember_speed_reports_both_trees_with_ratios() -> None:
    done = run_bench("remember_speed.py", ["--notes", "3", "--baseline", str(ROOT)], timeout=180)
    assert done.returncode == 0, done.stderr[-3000:]
    rows = [
        [cell.strip() for cell in line.strip("|").split("|")]
        for line in done.stdout.splitlines()
        if line.startswith("| this tree") or line.startswith("| baseline")
    ]
    assert [(row[0].split()[0], row[1]) for row in rows] == [
        ("this", "docs"),
        ("this", "near misses"),
        ("baseline", "docs"),
        ("baseline", "near misses"),
    ]
    for row in rows:
        refused, total = map(int, row[2].split("/"))
        assert total == 3 and 0 <= refused <= 3
        p50, p90, screen = float(row[3]), float(row[4]), float(row[5])
        assert 0 < p50 <= p90 and screen > 0
        assert row[6].endswith("%")
        assert float(row[7]) > 0  # remember's CPU time
        assert float(row[8]) > 0  # recall's, in the scope just written
    docs = [row for row in rows if row[1] == "docs"]
    assert all(row[2] == "0/3" for row in docs)  # docs notes are pieces the screen passes
    assert "docs: remember p50" in done.stdout and "near misses: remember p50" in done.stdout
    assert "host: " in done.stdout and "load" in done.stdout
