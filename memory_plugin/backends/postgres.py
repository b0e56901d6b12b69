"""PostgreSQL backend: PostgresStore (pgvector for semantic search) and PostgresSaver on a pool.

The store and the checkpointer share one connection pool per backend (per process): at most
`pool_max` connections (default 10), set in the URL with `?pool_max=N&pool_min=N&pool_timeout=S`
(see docs/capacity.md for sizing against max_connections). Statements are prepared on the
server unless a connection pooler stands in between (`?prepared_statements=auto|on|off`, see
docs/pgbouncer.md); setup is in pg_setup.py.

A server that is down costs a caller at most the store timeout (the store_timeout_seconds
setting): a connection attempt gives up after it, and a request gives up as soon as an
attempt made while it waits fails, instead of queueing for the whole timeout. Each request
that finds no connection starts a fresh attempt, so a server that is back is used at once.
"""

from __future__ import annotations

import math
import time
from collections.abc import Iterable
from contextlib import AsyncExitStack, ExitStack, nullcontext
from typing import Any

import psycopg
from langgraph.store.base import Op, Result
from langgraph.store.postgres import AsyncPostgresStore, PostgresStore
from psycopg.rows import dict_row
from psycopg_pool import AsyncConnectionPool, ConnectionPool, PoolTimeout

from memory_plugin.backends.base import Opened
from memory_plugin.backends.fts import apg_setup, mark_ready, pg_setup
from memory_plugin.backends.pg_setup import Probe, arepair, connect_error, probe, repair
from memory_plugin.backends.postgres_savers import (
    ExitWritesAsyncPostgresSaver,
    ExitWritesPostgresSaver,
)
from memory_plugin.backends.url import PoolConfig, split_pool_options
from memory_plugin.backends.writes_seen import wrote_ops
from memory_plugin.serde import CachingSerializer

POLL_SECONDS = 0.1
_CONN_KWARGS: dict[str, Any] = {"autocommit": True, "row_factory": dict_row}


def _connection_kwargs(timeout: float, prepared: bool) -> dict[str, Any]:
    """Connection settings bounding a connect, and noticing a dead peer, by the timeout;
    statements are prepared on the server only when `prepared`."""
    seconds = max(1, math.ceil(timeout))
    return {
        **_CONN_KWARGS,
        "prepare_threshold": 0 if prepared else None,
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


def _pool_options(display: str, timeout: float, config: PoolConfig, found: Probe) -> dict[str, Any]:
    # reconnect_timeout=0: no retry loop with growing back-off (see the module docstring).
    prepared = config.prepared == "on" or (config.prepared == "auto" and not found.pooled)
    return {
        "min_size": config.min_size,
        "max_size": config.max_size,
        "kwargs": _connection_kwargs(timeout, prepared),
        "timeout": timeout,
        "reconnect_timeout": 0.0,
        "name": display,
        "open": False,
    }


def unlocked() -> Any:
    """The saver's lock on a pool: none. PostgresSaver takes one lock around every call so
    that calls share its connection one at a time; on a pool each call has a connection of its
    own, and the lock only made the writes LangGraph sends together (a step's writes, the
    exit writes of every task under durability="exit") wait for each other's replies.
    LangGraph orders what must be ordered itself (a checkpoint's put after the one before and
    after its delta writes)."""
    return nullcontext()


def open_postgres(
    target: str, display: str, index: dict[str, Any] | None, stack: ExitStack, timeout: float
) -> Opened:
    """Open a pooled PostgresStore and PostgresSaver and run their migrations."""
    target, config = split_pool_options(target)
    timeout = timeout if config.timeout is None else config.timeout
    with ExitStack() as setup_lock:
        found = probe(target, display, index["dims"] if index else None, setup_lock, timeout)
        pool = FailFastPool(target, **_pool_options(display, timeout, config, found))
        pool.open(wait=True, timeout=timeout)
        stack.callback(pool.close)
        try:
            return _set_up(pool, display, index if found.vector else None)
        except psycopg.Error as exc:
            raise connect_error(exc, target, display) from None


class SeenPostgresStore(PostgresStore):
    """PostgresStore whose writes move the write generation (backends.writes_seen)."""

    def batch(self, ops: Iterable[Op]) -> list[Result]:
        """PostgresStore.batch, noting its writes once done."""
        ops = list(ops)
        try:
            return super().batch(ops)
        finally:
            wrote_ops(ops)


class SeenAsyncPostgresStore(AsyncPostgresStore):
    """AsyncPostgresStore whose writes move the write generation (backends.writes_seen)."""

    async def abatch(self, ops: Iterable[Op]) -> list[Result]:
        """AsyncPostgresStore.abatch, noting its writes once done."""
        ops = list(ops)
        try:
            return await super().abatch(ops)
        finally:
            wrote_ops(ops)


def _set_up(pool: FailFastPool, display: str, index: dict[str, Any] | None) -> Opened:
    with pool.connection() as conn:
        repair(conn, display)
    store = SeenPostgresStore(pool, index=index)  # type: ignore[arg-type]
    saver = ExitWritesPostgresSaver(pool, serde=CachingSerializer())
    saver.lock = unlocked()
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
        found = probe(target, display, index["dims"] if index else None, setup_lock, timeout)
        pool = AsyncFailFastPool(target, **_pool_options(display, timeout, config, found))
        await pool.open(wait=True, timeout=timeout)
        stack.push_async_callback(pool.close)
        try:
            return await _aset_up(pool, display, index if found.vector else None)
        except psycopg.Error as exc:
            raise connect_error(exc, target, display) from None


async def _aset_up(pool: AsyncFailFastPool, display: str, index: dict[str, Any] | None) -> Opened:
    async with pool.connection() as conn:
        await arepair(conn, display)
    store = SeenAsyncPostgresStore(pool, index=index)  # type: ignore[arg-type]
    saver = ExitWritesAsyncPostgresSaver(pool, serde=CachingSerializer())
    saver.lock = unlocked()
    await store.setup()
    await saver.setup()
    async with pool.connection() as conn:
        await apg_setup(conn, lock=False)
    mark_ready(store)
    return Opened(store, saver, index is not None)
