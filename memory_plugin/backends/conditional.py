"""Conditional writes: put an item only if its version is still the one the writer read.

LangGraph's BaseStore has no compare-and-swap, so each backend gets one: PostgreSQL and
SQLite check the version inside the database (safe across processes and app servers);
any other store, InMemoryStore included, serialises the check in this process.
Every versioned value carries `version`: 1 for a new item, +1 per accepted write.

`also` lists further puts (a history entry, for example) written only when the check
passes and in the same transaction as the item: on PostgreSQL one transaction on the
connection, on SQLite inside the same `BEGIN IMMEDIATE`, on any other store one batch under
the process lock. Either all of them land or none does. They are never vector-indexed.
"""

from __future__ import annotations

import asyncio
import threading
import weakref
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import orjson
from langgraph.store.base import BaseStore, GetOp, PutOp
from langgraph.store.memory import InMemoryStore
from langgraph.store.postgres import AsyncPostgresStore, PostgresStore
from langgraph.store.sqlite import SqliteStore
from langgraph.store.sqlite.aio import AsyncSqliteStore
from psycopg.types.json import Jsonb

from memory_plugin.backends.index import log_once
from memory_plugin.backends.langgraph_tables import (
    PG_INSERT_NEW,
    PG_UPDATE_IF_VERSION,
    PG_UPSERT,
    SQLITE_INSERT_NEW,
    SQLITE_READ_VALUE,
    SQLITE_UPDATE_VALUE,
    SQLITE_UPSERT,
)
from memory_plugin.backends.writes_seen import noted
from memory_plugin.compat import pg_async_connections, pg_connections
from memory_plugin.storable import storable, storable_op


@dataclass(frozen=True)
class PutIfVersion:
    """Write an item only if its version is still `expected` (None: only if absent), with
    the `also` puts in the same transaction (all land or none does).

    The result is the stored value with its new version, or None when the check failed.
    """

    namespace: tuple[str, ...]
    key: str
    value: Mapping[str, Any]
    expected: int | None
    also: tuple[PutOp, ...] = ()

    def _args(self) -> tuple[Any, ...]:
        """The fields, in order, the value made storable (not copied when already storable)."""
        also = tuple(storable_op(op) for op in self.also)
        return (self.namespace, self.key, storable(self.value), self.expected, also)

    def run(self, store: BaseStore) -> dict[str, Any] | None:
        """The conditional put, with the store's sync methods (see put_if_version)."""
        return put_if_version(store, *self._args())

    async def arun(self, store: BaseStore) -> dict[str, Any] | None:
        """Async twin of run."""
        return await aput_if_version(store, *self._args())


_thread_locks: weakref.WeakKeyDictionary[BaseStore, threading.Lock] = weakref.WeakKeyDictionary()
_guard = threading.Lock()


def next_version(expected: int | None) -> int:
    """The version a write expecting `expected` stores when it is accepted."""
    return (expected or 0) + 1


def _versioned(value: Mapping[str, Any], expected: int | None) -> dict[str, Any]:
    return {**value, "version": next_version(expected)}


def _extra_rows(also: Sequence[PutOp]) -> list[tuple[str, str, Any]]:
    rows = []
    for op in also:
        if op.value is None:
            raise ValueError("a conditional write's extra puts must have a value")
        rows.append((_prefix(op.namespace), op.key, op.value))
    return rows


def _plain(also: Sequence[PutOp]) -> list[PutOp]:
    return [PutOp(op.namespace, op.key, op.value, index=False) for op in also]


def _prefix(namespace: tuple[str, ...]) -> str:
    return ".".join(namespace)


def _sqlite_check(row: Any, expected: int | None) -> bool:
    if row is None:
        return expected is None
    current = orjson.loads(row[0]).get("version")
    return expected is not None and current == expected


def _process_lock(store: BaseStore) -> threading.Lock:
    with _guard:
        lock = _thread_locks.get(store)
        if lock is None:
            lock = _thread_locks[store] = threading.Lock()
            if not isinstance(store, SqliteStore | PostgresStore | InMemoryStore):
                log_once(
                    f"{type(store).__name__} has no conditional write: versions are checked "
                    "under a lock in this process only"
                )
        return lock


def _matches(item: Any, expected: int | None) -> bool:
    if item is None:
        return expected is None
    return expected is not None and bool(item.value.get("version") == expected)


@noted(lambda store, namespace, *_, **__: namespace)
def put_if_version(
    store: BaseStore,
    namespace: tuple[str, ...],
    key: str,
    value: Mapping[str, Any],
    expected: int | None,
    also: Sequence[PutOp] = (),
) -> dict[str, Any] | None:
    """Write value if the item's version is `expected` (None: the item must not exist), and
    the `also` puts with it, atomically.

    Returns the stored value (with its new version), or None when the check failed (then
    nothing was written).
    """
    new = _versioned(value, expected)
    extra = _extra_rows(also)
    if isinstance(store, PostgresStore):
        with pg_connections.get_connection(store.conn) as conn, conn.transaction():
            if expected is None:
                cur = conn.execute(PG_INSERT_NEW, (_prefix(namespace), key, Jsonb(new)))
            else:
                params = (Jsonb(new), _prefix(namespace), key, expected)
                cur = conn.execute(PG_UPDATE_IF_VERSION, params)
            if cur.rowcount != 1:
                return None
            for prefix, extra_key, extra_value in extra:
                conn.execute(PG_UPSERT, (prefix, extra_key, Jsonb(extra_value)))
            return new
    if isinstance(store, SqliteStore):
        with store.lock:
            db = store.conn
            db.execute("BEGIN IMMEDIATE")
            try:
                rows = db.execute(SQLITE_READ_VALUE, (_prefix(namespace), key)).fetchall()
                row = rows[0] if rows else None
                ok = _sqlite_check(row, expected)
                if ok:
                    sql = SQLITE_INSERT_NEW if row is None else SQLITE_UPDATE_VALUE
                    args = (_prefix(namespace), key, orjson.dumps(new))
                    db.execute(sql, args if row is None else (args[2], args[0], args[1]))
                    for prefix, extra_key, extra_value in extra:
                        db.execute(SQLITE_UPSERT, (prefix, extra_key, orjson.dumps(extra_value)))
            except BaseException:
                db.execute("ROLLBACK")
                raise
            db.execute("COMMIT")
            return new if ok else None
    with _process_lock(store):
        (item,) = store.batch([GetOp(namespace, key)])
        if not _matches(item, expected):
            return None
        store.batch([PutOp(namespace, key, new, index=False), *_plain(also)])
        return new


_async_locks: weakref.WeakKeyDictionary[BaseStore, asyncio.Lock] = weakref.WeakKeyDictionary()


@noted(lambda store, namespace, *_, **__: namespace)
async def aput_if_version(
    store: BaseStore,
    namespace: tuple[str, ...],
    key: str,
    value: Mapping[str, Any],
    expected: int | None,
    also: Sequence[PutOp] = (),
) -> dict[str, Any] | None:
    """Async twin of put_if_version."""
    new = _versioned(value, expected)
    extra = _extra_rows(also)
    if isinstance(store, AsyncPostgresStore):
        async with (
            pg_async_connections.get_connection(store.conn) as conn,
            conn.transaction(),
        ):
            if expected is None:
                cur = await conn.execute(PG_INSERT_NEW, (_prefix(namespace), key, Jsonb(new)))
            else:
                params = (Jsonb(new), _prefix(namespace), key, expected)
                cur = await conn.execute(PG_UPDATE_IF_VERSION, params)
            if cur.rowcount != 1:
                return None
            for prefix, extra_key, extra_value in extra:
                await conn.execute(PG_UPSERT, (prefix, extra_key, Jsonb(extra_value)))
            return new
    if isinstance(store, AsyncSqliteStore):
        if not store.is_setup:
            await store.setup()
        async with store.lock:
            db = store.conn
            await db.execute("BEGIN IMMEDIATE")
            try:
                async with db.execute(SQLITE_READ_VALUE, (_prefix(namespace), key)) as rows:
                    row = await rows.fetchone()
                ok = _sqlite_check(row, expected)
                if ok:
                    sql = SQLITE_INSERT_NEW if row is None else SQLITE_UPDATE_VALUE
                    args = (_prefix(namespace), key, orjson.dumps(new))
                    await db.execute(sql, args if row is None else (args[2], args[0], args[1]))
                    for prefix, extra_key, extra_value in extra:
                        upsert = (prefix, extra_key, orjson.dumps(extra_value))
                        await db.execute(SQLITE_UPSERT, upsert)
            except BaseException:
                await db.execute("ROLLBACK")
                raise
            await db.execute("COMMIT")
            return new if ok else None
    if isinstance(store, SqliteStore | PostgresStore):
        return await asyncio.to_thread(put_if_version, store, namespace, key, value, expected, also)
    lock = _async_locks.setdefault(store, asyncio.Lock())
    async with lock:
        (item,) = await store.abatch([GetOp(namespace, key)])
        if not _matches(item, expected):
            return None
        await store.abatch([PutOp(namespace, key, new, index=False), *_plain(also)])
        return new
