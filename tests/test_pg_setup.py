"""Opening PostgreSQL behind a transaction-mode pooler, and a setup that cannot wedge the
database: statements are not prepared on the server through PgBouncer (detected, or asked
for in the URL), and a setup killed part-way, directly or through PgBouncer, never blocks
the next start nor leaves a half-built index behind."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import psycopg
import pytest

from memory_plugin import aconnect, connect
from memory_plugin.backends import parse_url
from memory_plugin.backends.pg_setup import MIGRATION_INDEXES, connect_error
from memory_plugin.errors import BackendError
from tests.conftest import child_pytest, through_pgbouncer

ROOT = Path(__file__).parent.parent
START = "import sys; from memory_plugin import connect; connect(sys.argv[1]).close()"
BUILDING = (
    "SELECT pid FROM pg_stat_activity WHERE datname = current_database() "
    "AND query ILIKE '%CREATE INDEX CONCURRENTLY%' AND pid <> pg_backend_pid()"
)
HALF_BUILT = (
    "SELECT c.relname FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid "
    "WHERE NOT i.indisvalid"
)


def _prepares(pool: Any) -> Any:
    with pool.connection() as conn:
        return conn.prepare_threshold


def test_statements_are_not_prepared_through_pgbouncer(
    postgres_url: str, request: pytest.FixtureRequest
) -> None:
    pooled = through_pgbouncer(postgres_url, request)
    with connect(postgres_url) as direct, connect(pooled) as behind:
        assert _prepares(direct.store.conn) == 0  # type: ignore[attr-defined]
        assert _prepares(behind.store.conn) is None  # type: ignore[attr-defined]
    with connect(f"{pooled}?prepared_statements=on") as forced:
        assert _prepares(forced.store.conn) == 0  # type: ignore[attr-defined]
    with connect(f"{postgres_url}?prepared_statements=off") as off:
        assert _prepares(off.store.conn) is None  # type: ignore[attr-defined]


async def test_aconnect_notices_pgbouncer_too(
    postgres_url: str, request: pytest.FixtureRequest
) -> None:
    async with aconnect(through_pgbouncer(postgres_url, request)) as behind:
        async with behind.store.conn.connection() as conn:  # type: ignore[attr-defined]
            assert conn.prepare_threshold is None
        await behind.store.aput(("pooled",), "k", {"text": "through the pooler"})
        item = await behind.store.aget(("pooled",), "k")
    assert item is not None and item.value["text"] == "through the pooler"


def test_a_bad_prepared_statements_value_is_refused() -> None:
    with pytest.raises(BackendError, match=r"prepared_statements=.sometimes.*auto, on, off"):
        parse_url("postgresql://ann:pw@db.example/app?prepared_statements=sometimes")


def test_startup_options_refused_by_the_pooler_are_named(
    postgres_url: str, request: pytest.FixtureRequest
) -> None:
    options = "options=-c%20work_mem%3D8MB"
    with pytest.raises(BackendError) as refused:
        connect(f"{through_pgbouncer(postgres_url, request)}?{options}")
    said = str(refused.value)
    assert "connection pooler" in said and "unsupported startup parameter" in said
    assert "ALTER ROLE" in said and "malformed" not in said


def _kill_mid_index(url: str, app_url: str) -> None:
    """Start a setup on `app_url`, hold it inside CREATE INDEX CONCURRENTLY (a snapshot held
    open makes the build wait), then kill the process and cancel its build."""
    with (
        psycopg.connect(url, autocommit=True) as holder,
        psycopg.connect(url, autocommit=True) as watcher,
    ):
        holder.execute("BEGIN ISOLATION LEVEL REPEATABLE READ")
        holder.execute("SELECT 1")
        setup = subprocess.Popen([sys.executable, "-c", START, app_url], cwd=ROOT)
        deadline = time.monotonic() + 120
        while not (building := watcher.execute(BUILDING).fetchall()):
            assert setup.poll() is None, "the setup ended before building an index"
            assert time.monotonic() < deadline, "the setup never reached an index build"
            time.sleep(0.05)
        os.kill(setup.pid, signal.SIGKILL)
        setup.wait(timeout=30)
        watcher.execute("SELECT pg_cancel_backend(%s)", building[0])
        holder.execute("ROLLBACK")


@pytest.mark.slow
@pytest.mark.parametrize("route", ["direct", "pgbouncer"])
def test_a_setup_killed_mid_migration_never_blocks_the_next_start(
    route: str, scratch_postgres_url: str, request: pytest.FixtureRequest
) -> None:
    url = scratch_postgres_url
    app_url = through_pgbouncer(url, request) if route == "pgbouncer" else url
    _kill_mid_index(url, app_url)
    with psycopg.connect(url, autocommit=True) as admin:
        assert admin.execute(HALF_BUILT).fetchall() != [], "the kill left no half-built index"
    again = subprocess.run(
        [sys.executable, "-c", START, app_url], cwd=ROOT, capture_output=True, text=True, timeout=60
    )
    assert again.returncode == 0, again.stderr
    assert "half-built" in again.stderr
    with psycopg.connect(url, autocommit=True) as admin:
        assert admin.execute(HALF_BUILT).fetchall() == []
        present = admin.execute(
            "SELECT count(*) FROM pg_class WHERE relname = ANY(%s)", (list(MIGRATION_INDEXES),)
        ).fetchone()
    with connect(app_url) as backend:
        backend.store.put(("after",), "k", {"text": "set up"})
        assert backend.store.get(("after",), "k") is not None
    assert present == (len(MIGRATION_INDEXES) - 1,), "every index but the vector one is built"


def test_an_error_the_server_sent_is_not_called_a_malformed_url() -> None:
    url = "postgresql://ann:s3cret-pw@db.example/app"
    sent = psycopg.errors.DuplicatePreparedStatement('prepared statement "_pg3_0" already exists')
    said = str(connect_error(sent, url, parse_url(url).display))
    assert said.startswith("PostgreSQL at postgresql://ann:***@db.example/app refused the setup")
    assert "malformed" not in said and "s3cret-pw" not in said
    with pytest.raises(BackendError, match="is malformed"):
        connect("postgresql://ann@127.0.0.1:1/app?bogus_option=1")


def _pgbouncer_test(ci: str) -> subprocess.CompletedProcess[str]:
    """Run one PgBouncer test in a child pytest where no pgbouncer can be found."""
    test = "tests/test_pg_setup.py::test_aconnect_notices_pgbouncer_too"
    return child_pytest(test, ci, "import shutil; shutil.which = lambda *args, **kwargs: None")


@pytest.mark.slow
def test_missing_pgbouncer_fails_in_ci_and_skips_elsewhere() -> None:
    in_ci = _pgbouncer_test("true")
    assert in_ci.returncode != 0
    assert "PgBouncer is required in CI" in in_ci.stdout
    local = _pgbouncer_test("")
    assert local.returncode == 0
    assert "1 skipped" in local.stdout
