"""bench/connections.py (issue 24) runs tiny, and what it reports holds: an idle process keeps
`pool_min` (1) connection open, a busy one never more than `pool_max` (10), a nightly worker
process holds one (two while it opens: the setup probe beside the pool), and a connection is
traced to the process that holds it."""

from __future__ import annotations

import json
import os
import re
import sys
from pathlib import Path
from typing import Any

import psycopg
import pytest

from tests.benches import run_bench
from tests.langgraph_server import require_tools

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "bench"))

import connections

pytestmark = pytest.mark.bench


def results(stdout: str) -> dict[str, dict[str, Any]]:
    """The RESULT rows of a run, by phase."""
    rows = [json.loads(line[7:]) for line in stdout.splitlines() if line.startswith("RESULT ")]
    return {row["phase"]: row for row in rows}


def test_tagged_sets_the_application_name_and_keeps_other_options() -> None:
    url = "postgresql://app@db/memory?pool_max=4&application_name=old&sslmode=disable"
    assert connections.tagged(url, "lg-server") == (
        "postgresql://app@db/memory?pool_max=4&sslmode=disable&application_name=lg-server"
    )


def test_a_connection_is_traced_to_its_process(postgres_url: str) -> None:
    with psycopg.connect(postgres_url) as conn:
        row = conn.execute(
            "SELECT client_port FROM pg_stat_activity WHERE pid = pg_backend_pid()"
        ).fetchone()
        assert row is not None
        server_port = int(postgres_url.split(":")[-1].split("/")[0])
        assert connections.port_owners({row[0]}, server_port) == {row[0]: os.getpid()}


SCOPES = 600
"""Scopes the nightly run folds: enough to keep each worker folding for seconds. With a
handful, the moment it opens (2 connections while its setup lock is held) was half its life on
a loaded CI host, and its typical count read 2."""


@pytest.mark.slow
def test_app_and_nightly_connections_per_process(postgres_url: str) -> None:
    args = ["--postgres", postgres_url, "--only", "app,nightly", "--processes", "2"]
    args += ["--conversations", "4", "--turns", "2", "--warmup", "12", "--workers", "2"]
    done = run_bench("connections.py", [*args, "--scopes", str(SCOPES)])
    assert done.returncode == 0, done.stdout + done.stderr
    assert '"LANGGRAPH_POSTGRES_POOL_MAX_SIZE": 150' in done.stdout
    found = results(done.stdout)
    assert {"app:idle", "app:load", "nightly:run"} <= set(found), (
        f"phases measured: {sorted(found)}; the bench said: {done.stdout[-3000:]}"
    )
    idle, load, nightly = found["app:idle"], found["app:load"], found["nightly:run"]
    assert (idle["processes"], idle["per_process_max"], idle["total_max"]) == (2, 1, 2)
    assert idle["per_process_typical"] == 1 and idle["states_max"] == {"idle": 2}
    assert not idle["unattributed"]
    assert load["processes"] == 2 and 1 <= load["per_process_max"] <= 10
    assert load["total_max"] <= 20
    assert (load["turns"], load["failed_turns"]) == (16, 0)
    # the two workers, and the coordinator while it checks the lease length
    assert 2 <= nightly["processes"] <= 3 and 1 <= nightly["per_process_max"] <= 2
    assert nightly["per_process_typical"] == 1
    folded = [re.search(r"Folded (\d+) notes", line) for line in nightly["summary"]]
    assert sum(int(found[1]) for found in folded if found) == SCOPES * 3
    assert "| app | load | 2 |" in done.stdout


@pytest.mark.slow
def test_langgraph_server_connections(postgres_url: str) -> None:
    require_tools()
    args = ["--postgres", postgres_url, "--only", "server", "--runs", "3", "--rounds", "1"]
    done = run_bench("connections.py", [*args, "--idle", "2"])
    assert done.returncode == 0, done.stdout + done.stderr
    found = results(done.stdout)
    idle, load = found["lg-server:idle"], found["lg-server:load"]
    assert (idle["processes"], idle["per_process_max"]) == (1, 1)
    assert load["processes"] == 1 and 1 <= load["per_process_max"] <= 10
    assert (load["runs"], load["failed_runs"]) == (3, 0)
    assert found["lg-server:idle after load"]["per_process_max"] >= 1
