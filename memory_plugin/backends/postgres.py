"""PostgreSQL backend: PostgresStore (pgvector for semantic search) and PostgresSaver on a pool.

The store and the checkpointer share one connection pool per backend (per process): at most
`pool_max` connections (default 10), set in the URL with `?pool_max=N&pool_min=N&pool_timeout=S`
(see docs/capacity.md for sizing against max_connections).

A server that is down costs a caller at most the store timeout (the store_timeout_seconds
setting): a connection attempt gives up after it, and a request gives up as soon as an
attempt made while it waits fails, instead of queueing for the whole timeout. Each request
that finds no connection starts a fresh attempt, so a server that is back is used at once.
"""

from __future__ import annotations

import math
import time
from contextlib import AsyncExitStack, ExitStack
from typing import Any

import psycopg
from langgraph.checkpoint.postgres import PostgresSaver
from langgraph.checkpoint.postgres.aio import AsyncPostgresSaver
from langgraph.store.postgres import AsyncPostgresStore, PostgresStore
from psycopg.rows import dict_row
from psycopg_pool import AsyncConnectionPool, ConnectionPool, PoolTimeout

from memory_plugin.backends.base import Opened
from memory_plugin.backends.fts import apg_setup, mark_ready, pg_setup
from memory_plugin.backends.index import log_once
from memory_plugin.backends.url import PoolConfig, scrub, split_pool_options
from memory_plugin.errors import BackendError, BackendUnavailableError
from memory_plugin.serde import CachingSerializer

POLL_SECONDS = 0.1
# Held while migrations run, so app servers starting together never race on them. Polled
# with short statements: a waiting statement would stall the migrations' CREATE INDEX
# CONCURRENTLY, which waits for every open transaction.
SETUP_LOCK_SQL = "SELECT pg_try_advisory_lock(hashtext('memory_plugin.setup'))"
SETUP_LOCK_POLL_SECONDS = 0.05
SETUP_LOCK_TIMEOUT_SECONDS = 120
_STORED_DIMS = (
    "SELECT atttypmod FROM pg_attribute "
    "WHERE attrelid = to_regclass('store_vectors') AND attname = 'embedding'"
)
_CONN_KWARGS: dict[str, Any] = {"autocommit": True, "prepare_threshold": 0, "row_factory": dict_row}


def _connection_kwargs(timeout: float) -> dict[str, Any]:
    """Connection settings bounding a connect, and noticing a dead peer, by the timeout."""
    seconds = max(1, math.ceil(timeout))
    return {
        **_CONN_KWARGS,
        "connect_timeout": seconds,
        "keepalives": 1,
        "keepalives_idle": seconds,
        "keepalives_interval": 1,
        "keepalives_count": 3,
    }


class FailFastPool(ConnectionPool[Any]):
    """A connection pool that stops queueing requests once the server cannot be reached."""

    unreachable = False
    started = 0
    last_failed = -1

    def _connect(self, timeout: float | None = None) -> Any:
        attempt, self.started = self.started, self.started + 1
        try:
            conn = super()._connect(timeout)
        except Exception:
            self.unreachable = True
            self.last_failed = max(self.last_failed, attempt)
            raise
        self.unreachable = False
        return conn

    def getconn(self, timeout: float | None = None) -> Any:
        """A connection within `timeout` (the pool's); an attempt started meanwhile that fails
        ends the wait (one started before the request does not)."""
        wait = self.timeout if timeout is None else timeout
        deadline = time.monotonic() + wait
        first = self.started
        while True:
            try:
                return super().getconn(min(deadline - time.monotonic(), POLL_SECONDS))
            except PoolTimeout:
                failed = self.unreachable and self.last_failed >= first
                if failed or time.monotonic() >= deadline:
                    raise _no_connection(self, wait) from None


class AsyncFailFastPool(AsyncConnectionPool[Any]):
    """Async twin of FailFastPool."""

    unreachable = False
    started = 0
    last_failed = -1

    async def _connect(self, timeout: float | None = None) -> Any:
        attempt, self.started = self.started, self.started + 1
        try:
            conn = await super()._connect(timeout)
        except Exception:
            self.unreachable = True
            self.last_failed = max(self.last_failed, attempt)
            raise
        self.unreachable = False
        return conn

    async def getconn(self, timeout: float | None = None) -> Any:
        """A connection within `timeout` (the pool's); an attempt started meanwhile that fails
        ends the wait (one started before the request does not)."""
        wait = self.timeout if timeout is None else timeout
        deadline = time.monotonic() + wait
        first = self.started
        while True:
            try:
                return await super().getconn(min(deadline - time.monotonic(), POLL_SECONDS))
            except PoolTimeout:
                failed = self.unreachable and self.last_failed >= first
                if failed or time.monotonic() >= deadline:
                    raise _no_connection(self, wait) from None


def _no_connection(pool: FailFastPool | AsyncFailFastPool, waited: float) -> PoolTimeout:
    if pool.unreachable:
        return PoolTimeout(f"PostgreSQL at {pool.name} cannot be reached; try again shortly")
    return PoolTimeout(f"no free connection to PostgreSQL at {pool.name} within {waited:g} s")


def _take_setup_lock(conn: psycopg.Connection[Any], display: str) -> None:
    deadline = time.monotonic() + SETUP_LOCK_TIMEOUT_SECONDS
    while True:
        row = conn.execute(SETUP_LOCK_SQL).fetchone()
        if row and row[0]:
            return
        if time.monotonic() > deadline:
            raise BackendUnavailableError(f"timed out waiting for migrations on {display}")
        time.sleep(SETUP_LOCK_POLL_SECONDS)


def _connect_error(exc: psycopg.Error, target: str, display: str) -> BackendError:
    """The error to raise for a failed connection, with no secret of the URL in it (nor in
    its cause, which is kept only when the driver's text holds none)."""
    text = str(exc).strip()
    reason = scrub(text.splitlines()[0], target) if text else type(exc).__name__
    error: BackendError
    if isinstance(exc, psycopg.ProgrammingError):
        error = BackendError(f"PostgreSQL URL {display} is malformed: {reason}")
    else:
        error = BackendUnavailableError(f"cannot reach PostgreSQL at {display}: {reason}")
    error.__cause__ = exc if scrub(str(exc), target) == str(exc) else None
    return error


def _probe(target: str, display: str, dims: int | None, stack: ExitStack, timeout: float) -> bool:
    """Check the server answers, take the setup lock, report whether pgvector can be used
    with `dims`-dimension vectors (None: no index wanted)."""
    failure: BackendError | None = None
    try:
        conn = psycopg.connect(target, connect_timeout=max(1, math.ceil(timeout)), autocommit=True)
        stack.callback(conn.close)
        row = conn.execute(
            "SELECT count(*) FROM pg_available_extensions WHERE name = 'vector'"
        ).fetchone()
        _take_setup_lock(conn, display)
        stored = conn.execute(_STORED_DIMS).fetchone()
    except psycopg.Error as exc:
        failure = _connect_error(exc, target, display)
    if failure is not None:
        raise failure
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


def _pool_options(display: str, timeout: float, config: PoolConfig) -> dict[str, Any]:
    # reconnect_timeout=0: no retry loop with growing back-off (see the module docstring).
    return {
        "min_size": config.min_size,
        "max_size": config.max_size,
        "kwargs": _connection_kwargs(timeout),
        "timeout": timeout,
        "reconnect_timeout": 0.0,
        "name": display,
        "open": False,
    }


def open_postgres(
    target: str, display: str, index: dict[str, Any] | None, stack: ExitStack, timeout: float
) -> Opened:
    """Open a pooled PostgresStore and PostgresSaver and run their migrations."""
    target, config = split_pool_options(target)
    timeout = timeout if config.timeout is None else config.timeout
    with ExitStack() as setup_lock:
        vector = _probe(target, display, index["dims"] if index else None, setup_lock, timeout)
        return _open_pool(target, display, index if vector else None, stack, timeout, config)


def _open_pool(
    target: str,
    display: str,
    index: dict[str, Any] | None,
    stack: ExitStack,
    timeout: float,
    config: PoolConfig,
) -> Opened:
    pool = FailFastPool(target, **_pool_options(display, timeout, config))
    pool.open(wait=True, timeout=timeout)
    stack.callback(pool.close)
    store = PostgresStore(pool, index=index)  # type: ignore[arg-type]
    saver = PostgresSaver(pool, serde=CachingSerializer())
    store.setup()
    saver.setup()
    with pool.connection() as conn:
        pg_setup(conn, lock=False)
    mark_ready(store)
    return Opened(store, saver, index is not None)


async def aopen_postgres(
    target: str,
    display: str,
    index: dict[str, Any] | None,
    stack: AsyncExitStack,
    timeout: float,
) -> Opened:
    """Async twin of open_postgres."""
    target, config = split_pool_options(target)
    timeout = timeout if config.timeout is None else config.timeout
    with ExitStack() as setup_lock:
        vector = _probe(target, display, index["dims"] if index else None, setup_lock, timeout)
        return await _aopen_pool(target, display, index if vector else None, stack, timeout, config)


async def _aopen_pool(
    target: str,
    display: str,
    index: dict[str, Any] | None,
    stack: AsyncExitStack,
    timeout: float,
    config: PoolConfig,
) -> Opened:
    pool = AsyncFailFastPool(target, **_pool_options(display, timeout, config))
    await pool.open(wait=True, timeout=timeout)
    stack.push_async_callback(pool.close)
    store = AsyncPostgresStore(pool, index=index)  # type: ignore[arg-type]
    saver = AsyncPostgresSaver(pool, serde=CachingSerializer())
    await store.setup()
    await saver.setup()
    async with pool.connection() as conn:
        await apg_setup(conn, lock=False)
    mark_ready(store)
    return Opened(store, saver, index is not None)
