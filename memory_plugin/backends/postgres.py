"""PostgreSQL backend: PostgresStore (pgvector for semantic search) and PostgresSaver on a pool."""

from __future__ import annotations

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

CONNECT_TIMEOUT_SECONDS = 5
POOL_MAX_SIZE = 10
_CONN_KWARGS: dict[str, Any] = {"autocommit": True, "prepare_threshold": 0, "row_factory": dict_row}


def _probe(target: str, display: str, want_vector: bool) -> bool:
    """Check the server answers; report whether pgvector can be used."""
    try:
        with psycopg.connect(target, connect_timeout=CONNECT_TIMEOUT_SECONDS) as conn:
            row = conn.execute(
                "SELECT count(*) FROM pg_available_extensions WHERE name = 'vector'"
            ).fetchone()
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
    vector = _probe(target, display, index is not None)
    pool: ConnectionPool[Any] = ConnectionPool(
        target, min_size=1, max_size=POOL_MAX_SIZE, kwargs=_CONN_KWARGS, open=False
    )
    pool.open(wait=True, timeout=CONNECT_TIMEOUT_SECONDS)
    stack.callback(pool.close)
    store = PostgresStore(pool, index=index if vector else None)  # type: ignore[arg-type]
    saver = PostgresSaver(pool)
    store.setup()
    saver.setup()
    return Opened(store, saver, vector)


async def aopen_postgres(
    target: str, display: str, index: dict[str, Any] | None, stack: AsyncExitStack
) -> Opened:
    """Async twin of open_postgres."""
    vector = _probe(target, display, index is not None)
    pool: AsyncConnectionPool[Any] = AsyncConnectionPool(
        target, min_size=1, max_size=POOL_MAX_SIZE, kwargs=_CONN_KWARGS, open=False
    )
    await pool.open(wait=True, timeout=CONNECT_TIMEOUT_SECONDS)
    stack.push_async_callback(pool.close)
    store = AsyncPostgresStore(pool, index=index if vector else None)  # type: ignore[arg-type]
    saver = AsyncPostgresSaver(pool)
    await store.setup()
    await saver.setup()
    return Opened(store, saver, vector)
