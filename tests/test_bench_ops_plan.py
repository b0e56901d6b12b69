"""CI runs the operations-plan benchmark's phases once on tiny sizes, so they keep working."""

from __future__ import annotations

import re

import psycopg
import pytest

from tests.benches import run_bench

pytestmark = [pytest.mark.bench, pytest.mark.slow]

NUM = r"[\d,]+"


def test_ops_plan_phases_run_on_tiny_sizes(scratch_postgres_url: str) -> None:
    base = ["--postgres", scratch_postgres_url, "--notes", "600", "--scopes", "12"]
    loaded = run_bench("ops_plan.py", [*base, "load"])
    assert loaded.returncode == 0, loaded.stderr
    assert "loaded 600 notes in 12 scopes" in loaded.stdout

    fast = ["--stats-wait", "0"]  # the WAL counters' columns are not checked here
    wal = run_bench("ops_plan.py", [*base, *fast, "--remember", "6", "--fold", "3", "wal"])
    assert wal.returncode == 0, wal.stderr
    out = wal.stdout
    cells = rf"{NUM} \| [\d.]+ \| [\d.]+ \| [\d.]+ \|"
    for label in ("remember\\(\\), after a CHECKPOINT", "remember\\(\\), same scopes again"):
        assert re.search(rf"\| {label} \| 6 \| {cells}", out)
    assert re.search(rf"\| mark consolidated, after a CHECKPOINT \| 6 \| {cells}", out)
    # 3 fresh scopes of 5 notes each, two nights: every note folded once, every scope each night
    for night in ("1 \\(writes the document\\)", "2 \\(rewrites it\\)"):
        assert re.search(rf"\| nightly job {night}, per folded note \| 15 \| {cells}", out)
    for night in "12":
        assert re.search(rf"\| nightly job {night}, per scope \| 3 \| {cells}", out)

    turns = run_bench(
        "ops_plan.py", [*base, *fast, "--threads", "2", "--turns", "2", "--every", "1", "turns"]
    )
    assert turns.returncode == 0, turns.stderr
    rows = re.findall(r"^\| (chat|tools) \| (\d) \| ([\d,]+) \(", turns.stdout, re.M)
    assert [(kind, turn) for kind, turn, _ in rows] == [
        ("chat", "1"),
        ("chat", "2"),
        ("tools", "1"),
        ("tools", "2"),
    ]
    assert all(int(size.replace(",", "")) > 0 for _, _, size in rows)

    pruned = run_bench("ops_plan.py", [*base, "prune"])
    assert pruned.returncode == 0, pruned.stderr
    found = re.search(r"delete_thread: 4 threads, ([\d,]+) rows deleted", pruned.stdout)
    assert found and int(found[1].replace(",", "")) > 0
    with psycopg.connect(scratch_postgres_url) as conn:
        assert conn.execute("SELECT count(*) FROM checkpoints").fetchone() == (0,)

    churn = run_bench("ops_plan.py", [*base, "--rounds", "1", "--append", "0.02", "churn"])
    assert churn.returncode == 0, churn.stderr
    assert re.search(r"\| as loaded \(VACUUM ANALYZE\) \| 6\d\d \|", churn.stdout)
    assert re.search(
        r"\| round 1: \+1\d appended and folded, -\d forgotten \| 6\d\d \|", churn.stdout
    )
    assert "REINDEX INDEX CONCURRENTLY memory_note_terms_pkey" in churn.stdout
    assert "| after REINDEX CONCURRENTLY |" in churn.stdout
