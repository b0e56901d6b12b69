"""CI runs the recall-at-scale benchmark once on tiny sizes, so it keeps working."""

from __future__ import annotations

import re

import pytest

from tests.benches import run_bench

pytestmark = [pytest.mark.bench, pytest.mark.slow]


def test_recall_scale_runs_on_tiny_sizes() -> None:
    args = ["--sizes", "30,60", "--queries", "4", "--recall-queries", "2", "--appends", "5"]
    args += ["--append-sizes", "3,40", "--backends", "memory,sqlite"]
    done = run_bench("recall_scale.py", args)
    assert done.returncode == 0, done.stderr
    rows = [line for line in done.stdout.splitlines() if re.match(r"\| (memory|sqlite) \|", line)]
    scale = [row for row in rows if re.match(r"\| \w+ \| \d", row)]
    assert [row.split("|")[1:3] for row in scale] == [
        [" memory ", " 30 "],
        [" memory ", " 60 "],
        [" sqlite ", " 30 "],
        [" sqlite ", " 60 "],
    ]
    for row in scale:
        timings = re.findall(r"(\d+\.\d+) / (\d+\.\d+)", row)
        assert len(timings) == 3
        assert all(0 <= float(p50) <= float(p95) for p50, p95 in timings)
    appends = [row for row in rows if "claim" in row or "remember()" in row]
    assert len(appends) == 5 and all("(1.00x)" in row for row in appends)
