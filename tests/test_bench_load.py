"""CI runs the multi-process load test tiny (2 processes x 3 conversations x 2 turns) against
PostgreSQL and checks its verification passed; the verification itself is shown to catch a
lost write, and a PostgreSQL restart mid-run is survived without restarting the processes."""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path
from typing import Any

import pytest

from memory_plugin import MemoryContext, connect
from memory_plugin.scoped import ScopedMemory
from tests.benches import run_bench
from tests.conftest import url_for
from tests.pgrestart import restartable_postgres

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "bench"))

import load_test  # noqa: E402
from load_worker import context_of  # noqa: E402

pytestmark = [pytest.mark.bench, pytest.mark.slow]

IN_CI = os.environ.get("CI", "").lower() in ("1", "true", "yes")


def _args(url: str, conversations: int, turns: int, **extra: Any) -> argparse.Namespace:
    values = dict(postgres=url, conversations=conversations, turns=turns, warmup=3.0)
    values |= dict(timeout=300.0, restart_after=None, restart_cmd=None, max_attempts=1)
    values |= dict(keep_ratio=0.3, **extra)
    return argparse.Namespace(**values)


@pytest.mark.parametrize("kind", ["postgres", "pgbouncer"])
def test_load_test_runs_tiny_and_verifies(
    kind: str, request: pytest.FixtureRequest, tmp_path: Path
) -> None:
    url = url_for(kind, request, tmp_path)
    args = ["--processes", "2", "--conversations", "3", "--turns", "2", "--postgres", url]
    done = run_bench("load_test.py", args)
    assert done.returncode == 0, done.stdout + done.stderr
    (line,) = [line for line in done.stdout.splitlines() if line.startswith("RESULT ")]
    row = json.loads(line.removeprefix("RESULT "))
    check = row["verification"]
    assert check["ok"] and check["problems"] == []
    assert (row["processes"], row["turns"], row["failed_turns"]) == (2, 12, [])
    assert check["notes"] == 12 and check["versions"] >= 1
    assert 2 <= row["connections_max"] <= 2 * 10 + 1
    assert 0 < row["p50_ms"] <= row["p95_ms"] <= row["p99_ms"]
    assert "| 2 | 6 | 12 |" in done.stdout


def test_verification_catches_a_lost_note_and_a_lost_profile_fact(postgres_url: str) -> None:
    args = _args(postgres_url, conversations=2, turns=1)
    row = load_test.run_once(args, 1)
    assert row["verification"]["ok"], row["verification"]
    outs, specs = row["outs"], row["specs"]
    name, _day, _position, text = outs[0]["notes"][0]
    conv = next(c for per in specs for c in per if c["name"] == name)
    ctx = MemoryContext(**context_of(conv))
    with connect(postgres_url) as backend:
        memory = ScopedMemory(backend.store)
        (note,) = [n for n in memory.list_notes(ctx) if text in n.text]
        memory.delete_note(ctx, note.key)
    check = load_test.verify(postgres_url, specs, outs, 1)
    assert not check["ok"]
    assert any(text in problem and "stored 0 times" in problem for problem in check["problems"])
    outs[0]["completed"].append([name, 2, 1])
    check = load_test.verify(postgres_url, specs, outs, 2)
    assert any(f"lacks turn 2 of {name}" in problem for problem in check["problems"])


def test_a_postgres_restart_mid_run_costs_turns_at_most_the_pool_timeout(
    tmp_path: Path,
) -> None:
    try:
        server_context = restartable_postgres(tmp_path)
        server = server_context.__enter__()
    except RuntimeError as exc:
        if IN_CI:
            pytest.fail(f"a restartable PostgreSQL is required in CI: {exc}")
        pytest.skip(f"no restartable PostgreSQL: {exc}")
    try:
        url = f"{server.url}?pool_timeout=3"
        args = _args(url, conversations=3, turns=16, restart_after=0.5, max_attempts=5)
        row = load_test.run_once(args, 2, server.restart)
    finally:
        server_context.__exit__(None, None, None)
    restart = row["restart"]
    assert row["verification"]["ok"], row["verification"]
    assert restart["turns_before"] > 0 and restart["turns_after"] > 0
    assert restart["processes_serving_after"] == 2
    assert restart["first_success_after_s"] is not None
    assert restart["first_success_after_s"] < 10
    assert all(failed["seconds"] <= 3 + 1 for failed in row["failed_turns"])
    assert row["turns"] == 2 * 3 * 16
    assert row["verification"]["masked"] > 0 and row["verification"]["dividers"] > 0
