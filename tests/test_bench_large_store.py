"""CI runs the large-store benchmark once on tiny sizes, so it keeps working."""

from __future__ import annotations

import re

import pytest

from tests.benches import run_bench

pytestmark = [pytest.mark.bench, pytest.mark.slow]

CELL = r"\d+\.\d / \d+\.\d"


def test_large_store_runs_on_tiny_sizes(scratch_postgres_url: str) -> None:
    args = ["--postgres", scratch_postgres_url, "--notes", "3000", "--scopes", "30"]
    args += ["--samples", "5", "--largest", "2"]
    done = run_bench("large_store.py", args)
    assert done.returncode == 0, done.stderr
    out = done.stdout
    assert "loaded 3,000 notes" in out
    assert re.search(r"\| store_vectors \| table \| [\d,]+ \|", out)
    assert re.search(r"HNSW build: \d+ s", out)
    for phase in ("flat", "hnsw"):
        for draw in ("uniform \\(5\\)", "largest \\(40\\)"):
            assert re.search(rf"\| {phase} \| {draw} \| {CELL} \| {CELL} \| {CELL} \|", out)
        assert re.search(rf"\| {phase} \| 5 \| {CELL} \|", out)
        assert re.search(rf"\| {phase}: mark consolidated \| 5 \| {CELL} \|", out)
    assert (
        len(re.findall(rf"\| load_memory node \| 5 \| {CELL} \| [\d.]+ \| 2\.0 blocks", out)) == 2
    )
