"""Appending at the next position of a group, claimed in one short transaction, never retried.

The items of a group live under the keys `{group}#{position:06d}` and carry their `position`;
positions start at 1 and are never reused (a deleted item stays as a tombstone), so they are
unique and gap-free however many writers append at once. PostgreSQL claims under a per-group
advisory transaction lock (safe across app servers), SQLite inside BEGIN IMMEDIATE (safe
across processes on one file); any other store, InMemoryStore included, finds the first free
key under a lock in this process.
"""

from __future__ import annotations

import asyncio
import threading
import weakref
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import orjson
from langgraph.store.base import BaseStore, GetOp, PutOp
from langgraph.store.postgres import AsyncPostgresStore, PostgresStore
from langgraph.store.sqlite import SqliteStore
from langgraph.store.sqlite.aio import AsyncSqliteStore
from psycopg.types.json import Jsonb

from memory_plugin.compat import pg_async_connections, pg_connections


@dataclass(frozen=True)
class InsertNext:
    """Insert `value` as the next item of `group` in `namespace`.

    The result is the stored value: `value` with its `position` and `version` 1.
    """

    namespace: tuple[str, ...]
    group: str
    value: Mapping[str, Any]


def positioned_key(group: str, position: int) -> str:
    """The store key of the item at `position` in `group`: sortable within the group."""
    return f"{group}#{position:06d}"


_PG_LOCK = "SELECT pg_advisory_xact_lock(hashtextextended(%s, 0))"
_PG_INSERT_NEXT = """
INSERT INTO store (prefix, key, value, created_at, updated_at)
SELECT %(prefix)s, %(head)s || lpad(n::text, greatest(6, length(n::text)), '0'),
       %(value)s || jsonb_build_object('position', n, 'version', 1), NOW(), NOW()
FROM (
    SELECT COALESCE(MAX(substr(key, %(digits)s)::bigint), 0) + 1 AS n
    FROM store WHERE prefix = %(prefix)s AND starts_with(key, %(head)s)
) AS claim
RETURNING value
"""
_SQLITE_LAST = (
    "SELECT MAX(CAST(substr(key, ?) AS INTEGER)) FROM store "
    "WHERE prefix = ? AND key >= ? AND key < ?"
)
_SQLITE_INSERT = (
    "INSERT INTO store (prefix, key, value, created_at, updated_at) "
    "VALUES (?, ?, ?, CURRENT_TIMESTAMP, CURRENT_TIMESTAMP)"
)
_PROBES = 48

_locks: weakref.WeakKeyDictionary[BaseStore, threading.Lock] = weakref.WeakKeyDictionary()
_guard = threading.Lock()


def _prefix(namespace: tuple[str, ...]) -> str:
    return ".".join(namespace)


def _head(group: str) -> str:
    return f"{group}#"


def _stored(value: Mapping[str, Any], position: int) -> dict[str, Any]:
    return {**value, "position": position, "version": 1}


def _pg_params(namespace: tuple[str, ...], group: str, value: Mapping[str, Any]) -> dict[str, Any]:
    head = _head(group)
    return {
        "prefix": _prefix(namespace),
        "head": head,
        "digits": len(head) + 1,
        "value": Jsonb(dict(value)),
    }


def _returned(row: Mapping[str, Any] | None) -> dict[str, Any]:
    assert row is not None, "INSERT ... SELECT of one row returns that row"
    return dict(row["value"])


def _pg_lock_name(namespace: tuple[str, ...], group: str) -> str:
    return f"memory_plugin.claim:{_prefix(namespace)}:{group}"


def _sqlite_last_args(namespace: tuple[str, ...], group: str) -> tuple[Any, ...]:
    head = _head(group)
    return (len(head) + 1, _prefix(namespace), head, f"{group}$")


def _sqlite_insert_args(
    namespace: tuple[str, ...], group: str, value: Mapping[str, Any], last: int | None
) -> tuple[dict[str, Any], tuple[Any, ...]]:
    new = _stored(value, (last or 0) + 1)
    key = positioned_key(group, new["position"])
    return new, (_prefix(namespace), key, orjson.dumps(new))


def _process_lock(store: BaseStore) -> threading.Lock:
    with _guard:
        lock = _locks.get(store)
        if lock is None:
            lock = _locks[store] = threading.Lock()
        return lock


def _free_position(store: BaseStore, namespace: tuple[str, ...], group: str) -> int:
    """The first free position, in O(log n) reads: positions 1..last are all taken."""

    def taken(positions: list[int]) -> list[bool]:
        ops = [GetOp(namespace, positioned_key(group, p)) for p in positions]
        return [item is not None for item in store.batch(ops)]

    powers = [1 << i for i in range(_PROBES)]
    first_free = taken(powers).index(False)
    if first_free == 0:
        return 1
    low, high = powers[first_free - 1], powers[first_free]
    while high - low > 1:
        middle = (low + high) // 2
        (is_taken,) = taken([middle])
        low, high = (middle, high) if is_taken else (low, middle)
    return high


def insert_next(
    store: BaseStore, namespace: tuple[str, ...], group: str, value: Mapping[str, Any]
) -> dict[str, Any]:
    """Store `value` at the next position of `group`; returns the stored value."""
    if isinstance(store, PostgresStore):
        with pg_connections.get_connection(store.conn) as conn, conn.transaction():
            conn.execute(_PG_LOCK, (_pg_lock_name(namespace, group),))
            row = conn.execute(_PG_INSERT_NEXT, _pg_params(namespace, group, value)).fetchone()
            return _returned(row)
    if isinstance(store, SqliteStore):
        with store.lock:
            db = store.conn
            db.execute("BEGIN IMMEDIATE")
            try:
                (last,) = db.execute(_SQLITE_LAST, _sqlite_last_args(namespace, group)).fetchone()
                new, args = _sqlite_insert_args(namespace, group, value, last)
                db.execute(_SQLITE_INSERT, args)
            except BaseException:
                db.execute("ROLLBACK")
                raise
            db.execute("COMMIT")
            return new
    with _process_lock(store):
        new = _stored(value, _free_position(store, namespace, group))
        key = positioned_key(group, new["position"])
        store.batch([PutOp(namespace, key, new, index=False)])
        return new


async def ainsert_next(
    store: BaseStore, namespace: tuple[str, ...], group: str, value: Mapping[str, Any]
) -> dict[str, Any]:
    """Async twin of insert_next."""
    if isinstance(store, AsyncPostgresStore):
        async with (
            pg_async_connections.get_connection(store.conn) as conn,
            conn.transaction(),
        ):
            await conn.execute(_PG_LOCK, (_pg_lock_name(namespace, group),))
            cur = await conn.execute(_PG_INSERT_NEXT, _pg_params(namespace, group, value))
            return _returned(await cur.fetchone())
    if isinstance(store, AsyncSqliteStore):
        if not store.is_setup:
            await store.setup()
        async with store.lock:
            db = store.conn
            await db.execute("BEGIN IMMEDIATE")
            try:
                async with db.execute(_SQLITE_LAST, _sqlite_last_args(namespace, group)) as rows:
                    (last,) = await rows.fetchone()  # type: ignore[misc]
                new, args = _sqlite_insert_args(namespace, group, value, last)
                await db.execute(_SQLITE_INSERT, args)
            except BaseException:
                await db.execute("ROLLBACK")
                raise
            await db.execute("COMMIT")
            return new
    return await asyncio.to_thread(insert_next, store, namespace, group, value)
