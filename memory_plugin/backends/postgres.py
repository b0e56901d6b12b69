"""PostgreSQL backend: PostgresStore (pgvector for semantic search) and PostgresSaver on a pool."""

from __future__ import annotations

import time
from contextlib import AsyncExitStack, ExitStack
from typing import Any

import psycopg
from langgraph.checkpoint.postgres import PostgresSaver
from langgraph.checkpoint.postgres.aio import AsyncPostgresSaver
from langgraph.store.postgres import AsyncPostgresStore, PostgresStore
from psycopg.rows import dict_row
from psycopg_pool import AsyncConnectionPool, ConnectionPool

from memory_plugin.backends.base import Opened
from memory_plugin.backends.index import log_once
from memory_plugin.errors import BackendError, BackendUnavailableError
from memory_plugin.serde import CachingSerializer

CONNECT_TIMEOUT_SECONDS = 5
# Held while migrations run, so app servers starting together never race on them. Polled
# with short statements: a waiting statement would stall the migrations' CREATE INDEX
# CONCURRENTLY, which waits for every open transaction.
SETUP_LOCK_SQL = "SELECT pg_try_advisory_lock(hashtext('memory_plugin.setup'))"
SETUP_LOCK_POLL_SECONDS = 0.05
SETUP_LOCK_TIMEOUT_SECONDS = 120
POOL_MAX_SIZE = 10
_CONN_KWARGS: dict[str, Any] = {"autocommit": True, "prepare_threshold": 0, "row_factory": dict_row}


def _take_setup_lock(conn: psycopg.Connection[Any], display: str) -> None:
    deadline = time.monotonic() + SETUP_LOCK_TIMEOUT_SECONDS
    while True:
        row = conn.execute(SETUP_LOCK_SQL).fetchone()
        if row and row[0]:
            return
        if time.monotonic() > deadline:
            raise BackendUnavailableError(f"timed out waiting for migrations on {display}")
        time.sleep(SETUP_LOCK_POLL_SECONDS)


def _probe(target: str, display: str, want_vector: bool, stack: ExitStack) -> bool:
    """Check the server answers, take the setup lock, report whether pgvector can be used."""
    try:
        conn = psycopg.connect(target, connect_timeout=CONNECT_TIMEOUT_SECONDS, autocommit=True)
        stack.callback(conn.close)
        row = conn.execute(
            "SELECT count(*) FROM pg_available_extensions WHERE name = 'vector'"
        ).fetchone()
        _take_setup_lock(conn, display)
    except psycopg.ProgrammingError as exc:
        raise BackendError(f"PostgreSQL URL {display} is malformed: {exc}") from exc
    except psycopg.Error as exc:
        reason = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise BackendUnavailableError(f"cannot reach PostgreSQL at {display}: {reason}") from exc
    has_vector = bool(row and row[0])
    if want_vector and not has_vector:
        log_once(
            f"pgvector is not installed on {display}: the store runs keyword-only, "
            "without semantic search"
        )
    return want_vector and has_vector


def open_postgres(
    target: str, display: str, index: dict[str, Any] | None, stack: ExitStack
) -> Opened:
    """Open a pooled PostgresStore and PostgresSaver and run their migrations."""
    with ExitStack() as setup_lock:
        vector = _probe(target, display, index is not None, setup_lock)
        return _open_pool(target, index if vector else None, stack)


def _open_pool(target: str, index: dict[str, Any] | None, stack: ExitStack) -> Opened:
    pool: ConnectionPool[Any] = ConnectionPool(
        target, min_size=1, max_size=POOL_MAX_SIZE, kwargs=_CONN_KWARGS, open=False
    )
    pool.open(wait=True, timeout=CONNECT_TIMEOUT_SECONDS)
    stack.callback(pool.close)
    store = PostgresStore(pool, index=index)  # type: ignore[arg-type]
    saver = PostgresSaver(pool, serde=CachingSerializer())
    store.setup()
    saver.setup()
    return Opened(store, saver, index is not None)


async def aopen_postgres(
    target: str, display: str, index: dict[str, Any] | None, stack: AsyncExitStack
) -> Opened:
    """Async twin of open_postgres."""
    with ExitStack() as setup_lock:
        vector = _probe(target, display, index is not None, setup_lock)
        return await _aopen_pool(target, index if vector else None, stack)


async def _aopen_pool(target: str, index: dict[str, Any] | None, stack: AsyncExitStack) -> Opened:
    pool: AsyncConnectionPool[Any] = AsyncConnectionPool(
        target, min_size=1, max_size=POOL_MAX_SIZE, kwargs=_CONN_KWARGS, open=False
    )
    await pool.open(wait=True, timeout=CONNECT_TIMEOUT_SECONDS)
    stack.push_async_callback(pool.close)
    store = AsyncPostgresStore(pool, index=index)  # type: ignore[arg-type]
    saver = AsyncPostgresSaver(pool, serde=CachingSerializer())
    await store.setup()
    await saver.setup()
    return Opened(store, saver, index is not None)
