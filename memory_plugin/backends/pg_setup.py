"""Opening a PostgreSQL database safely, with or without a connection pooler in between.

Before the pool opens, a probe connection checks the server, notices a pooler (PgBouncer and
its kind answer the client with a cancel key of their own, so the backend pid the client was
told is not the server's), and takes the setup lock. The lock is transaction-scoped and held
by a transaction left open on the probe while the migrations run on the pool: it ends with
that transaction, whatever ends it (commit, a killed process, a pooler dropping the server
connection of a client that went away), so it never outlives a setup, even behind a
transaction-mode pooler where a session lock would stay on a pooled server connection. It is
polled with short statements: a waiting statement would stall the migrations' CREATE INDEX
CONCURRENTLY, which waits for every transaction holding a snapshot.

A setup killed while building an index CONCURRENTLY leaves that index invalid, and the
migration's IF NOT EXISTS would then skip it for good: the next setup drops such half-built
indexes of the migrations first, so they are built again.
"""

from __future__ import annotations

import logging
import math
import re
import time
from collections.abc import Iterable
from contextlib import ExitStack
from dataclasses import dataclass
from typing import Any

import psycopg
from langgraph.checkpoint.postgres.base import BasePostgresSaver
from langgraph.store.postgres.base import MIGRATIONS, VECTOR_MIGRATIONS

from memory_plugin.backends.index import log_once
from memory_plugin.backends.langgraph_tables import PG_STORED_DIMS
from memory_plugin.backends.steps import Steps, adrive, drive
from memory_plugin.backends.url import scrub
from memory_plugin.errors import BackendError, BackendUnavailableError

logger = logging.getLogger(__name__)

SETUP_LOCK_SQL = "SELECT pg_try_advisory_xact_lock(hashtext('memory_plugin.setup'))"
# The lock's transaction idles while the migrations run: a server-wide
# idle_in_transaction_session_timeout must not end it (and the lock) half-way.
_KEEP_IDLE = "SELECT set_config('idle_in_transaction_session_timeout', '0', true)"
SETUP_LOCK_POLL_SECONDS = 0.05
SETUP_LOCK_TIMEOUT_SECONDS = 120
_HAS_VECTOR = "SELECT count(*) FROM pg_available_extensions WHERE name = 'vector'"
_BACKEND_PID = "SELECT pg_backend_pid()"
_CONCURRENT_INDEX = re.compile(r"CREATE INDEX CONCURRENTLY IF NOT EXISTS (\w+)", re.I)
_HALF_BUILT = (
    "SELECT c.relname FROM unnest(%s::text[]) AS wanted(name) "
    "JOIN pg_index i ON i.indexrelid = to_regclass(wanted.name) "
    "JOIN pg_class c ON c.oid = i.indexrelid WHERE NOT i.indisvalid"
)
_POOLER_REFUSED = "unsupported startup parameter"


def _migration_indexes() -> tuple[str, ...]:
    """The indexes LangGraph's migrations build CONCURRENTLY (store and checkpointer)."""
    sqls: Iterable[str] = [
        *MIGRATIONS,
        *(migration.sql for migration in VECTOR_MIGRATIONS),
        *BasePostgresSaver.MIGRATIONS,
    ]
    return tuple(name for sql in sqls for name in _CONCURRENT_INDEX.findall(sql))


MIGRATION_INDEXES = _migration_indexes()


@dataclass(frozen=True)
class Probe:
    """What the probe found: whether pgvector serves `dims`-dimension vectors, and whether
    a connection pooler stands between the client and the server."""

    vector: bool
    pooled: bool


def connect_error(exc: psycopg.Error, target: str, display: str) -> BackendError:
    """The error to raise for a failed connection or setup, with no secret of the URL in it
    (nor in its cause, which is kept only when the driver's text holds none). Only a URL the
    driver could not parse is called malformed: an error the server (or a pooler) sent has a
    SQLSTATE and is reported as the server's."""
    text = str(exc).strip()
    reason = scrub(text.splitlines()[0], target) if text else type(exc).__name__
    error: BackendError
    if isinstance(exc, psycopg.ProgrammingError) and exc.sqlstate is None:
        error = BackendError(f"PostgreSQL URL {display} is malformed: {reason}")
    elif exc.sqlstate is not None:
        error = BackendError(f"PostgreSQL at {display} refused the setup: {reason}")
    elif _POOLER_REFUSED in text:
        error = BackendError(
            f"the connection pooler at {display} refused the connection: {reason} (a pooler "
            "refuses startup options such as `options=-c ...`: set them on the role instead, "
            "ALTER ROLE ... SET ...; see docs/pgbouncer.md)"
        )
    else:
        error = BackendUnavailableError(f"cannot reach PostgreSQL at {display}: {reason}")
    error.__cause__ = exc if scrub(str(exc), target) == str(exc) else None
    return error


def _take_setup_lock(conn: psycopg.Connection[Any], display: str) -> None:
    """Open a transaction on `conn` holding the setup lock (left open for the caller)."""
    deadline = time.monotonic() + SETUP_LOCK_TIMEOUT_SECONDS
    while True:
        conn.execute("BEGIN")
        row = conn.execute(SETUP_LOCK_SQL).fetchone()
        if row and row[0]:
            conn.execute(_KEEP_IDLE)
            return
        conn.execute("ROLLBACK")
        if time.monotonic() > deadline:
            raise BackendUnavailableError(f"timed out waiting for migrations on {display}")
        time.sleep(SETUP_LOCK_POLL_SECONDS)


def probe(target: str, display: str, dims: int | None, stack: ExitStack, timeout: float) -> Probe:
    """Check the server answers, notice a pooler, and take the setup lock until `stack`
    closes; say whether pgvector can be used with `dims`-dimension vectors (None: no index
    wanted)."""
    failure: BackendError | None = None
    try:
        conn = psycopg.connect(
            target,
            connect_timeout=max(1, math.ceil(timeout)),
            autocommit=True,
            prepare_threshold=None,
        )
        stack.callback(conn.close)
        served = conn.execute(_BACKEND_PID).fetchone()
        pooled = bool(served and served[0] != conn.info.backend_pid)
        row = conn.execute(_HAS_VECTOR).fetchone()
        _take_setup_lock(conn, display)
        stored = conn.execute(PG_STORED_DIMS).fetchone()
    except psycopg.Error as exc:
        failure = connect_error(exc, target, display)
    if failure is not None:
        raise failure
    if pooled:
        log_once(
            f"PostgreSQL at {display} is reached through a connection pooler: server-side "
            "prepared statements are off (prepared_statements=on in the URL turns them on, "
            "for PgBouncer 1.21+ with max_prepared_statements)",
            logging.INFO,
        )
    return Probe(_vector_usable(display, dims, row, stored), pooled)


def _vector_usable(display: str, dims: int | None, row: Any, stored: Any) -> bool:
    if dims is None:
        return False
    if not (row and row[0]):
        log_once(
            f"pgvector is not installed on {display}: the store runs keyword-only, "
            "without semantic search"
        )
        return False
    if stored and stored[0] > 0 and stored[0] != dims:
        log_once(
            f"the vector index on {display} holds {stored[0]}-dimension vectors but the "
            f"embedding gives {dims}: the store runs keyword-only, without semantic search "
            "(see docs/backends.md, changing the embedding)"
        )
        return False
    return True


def repair_steps(display: str) -> Steps[None]:
    """Drop (and log) the migrations' indexes a killed setup left half-built on `display`."""
    rows = yield (_HALF_BUILT, (list(MIGRATION_INDEXES),))
    names = [row["relname"] if isinstance(row, dict) else row[0] for row in rows]
    for name in names:
        yield (f'DROP INDEX CONCURRENTLY IF EXISTS "{name}"', ())
    if names:
        logger.warning(
            "dropped the half-built index(es) %s on %s left by an interrupted setup; "
            "the migrations build them again",
            ", ".join(names),
            display,
        )


def _rows(cursor: Any) -> list[Any]:
    return cursor.fetchall() if cursor.description else []


def repair(conn: psycopg.Connection[Any], display: str) -> None:
    """Run repair_steps on an autocommit connection."""
    drive(repair_steps(display), lambda sql, args: _rows(conn.execute(sql, args)))


async def arepair(conn: psycopg.AsyncConnection[Any], display: str) -> None:
    """Async twin of repair."""

    async def execute(sql: str, args: tuple[Any, ...]) -> list[Any]:
        cursor = await conn.execute(sql, args)
        return await cursor.fetchall() if cursor.description else []

    await adrive(repair_steps(display), execute)
