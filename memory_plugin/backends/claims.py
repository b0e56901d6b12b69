"""Appending at the next positions of a group, claimed in one short transaction, never retried.

The items of a group live under the keys `{group}#{position:06d}` and carry their `position`;
positions start at 1 and are never reused (a deleted item stays as a tombstone), so they are
unique and gap-free however many writers append at once. Both databases keep the group's
last position in a counter row (`memory_claims`), so a claim costs the same whatever the
group's size. PostgreSQL bumps the row first: its row lock holds other writers of the group
until commit (safe across app servers); a group without a row yet (its first claim, or one
written before the counter existed, counted once) is seeded under a per-group advisory
transaction lock. SQLite claims inside BEGIN IMMEDIATE (safe across processes on one file)
and analyses the new notes for keyword search in the same transaction
(memory_plugin.backends.keywords). Any other store, InMemoryStore included, finds the first
free key under a lock in this process.
"""

from __future__ import annotations

import asyncio
import threading
import weakref
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

import orjson
from langgraph.store.base import BaseStore, GetOp, PutOp
from langgraph.store.postgres import AsyncPostgresStore, PostgresStore
from langgraph.store.sqlite import SqliteStore
from langgraph.store.sqlite.aio import AsyncSqliteStore
from psycopg.types.json import Jsonb

from memory_plugin.backends import keywords
from memory_plugin.backends.fts import (
    apg_search_connection,
    asqlite_search_connection,
    pg_search_connection,
    sqlite_search_connection,
)
from memory_plugin.backends.langgraph_tables import (
    PG_CLAIM_SEED,
    PG_INSERT_DATED,
    SQLITE_CLAIM_SEED,
    SQLITE_INSERT_DATED,
)
from memory_plugin.backends.steps import adrive, drive
from memory_plugin.backends.writes_seen import noted
from memory_plugin.storable import storable


@dataclass(frozen=True)
class InsertNext:
    """Insert `value` as the next item of `group` in `namespace`.

    The result is the stored value: `value` with its `position` and `version` 1.
    """

    namespace: tuple[str, ...]
    group: str
    value: Mapping[str, Any]

    def run(self, store: BaseStore) -> dict[str, Any]:
        """The append, its value made storable, with the store's sync methods."""
        return insert_next(store, self.namespace, self.group, storable(self.value))

    async def arun(self, store: BaseStore) -> dict[str, Any]:
        """Async twin of run."""
        return await ainsert_next(store, self.namespace, self.group, storable(self.value))


@dataclass(frozen=True)
class InsertMany:
    """Insert `values`, in order, as the next items of `group` in `namespace`, in one
    transaction; `dated`: each row is stamped with its value's `created_at` (ISO 8601)
    instead of now.

    The result is the list of stored values, each with its `position` and `version` 1.
    """

    namespace: tuple[str, ...]
    group: str
    values: tuple[Mapping[str, Any], ...]
    dated: bool = False

    def _storable(self) -> InsertMany:
        """This append with each value made storable."""
        values = tuple(storable(value) for value in self.values)
        return InsertMany(self.namespace, self.group, values, self.dated)

    def run(self, store: BaseStore) -> list[dict[str, Any]]:
        """The append, its values made storable, with the store's sync methods."""
        return insert_many(store, self._storable())

    async def arun(self, store: BaseStore) -> list[dict[str, Any]]:
        """Async twin of run."""
        return await ainsert_many(store, self._storable())


def positioned_key(group: str, position: int) -> str:
    """The store key of the item at `position` in `group`: sortable within the group."""
    return f"{group}#{position:06d}"


_PG_LOCK = "SELECT pg_advisory_xact_lock(hashtextextended(%s, 0))"
_PG_BUMP = (
    "UPDATE memory_claims SET last = last + %(n)s "
    "WHERE prefix = %(prefix)s AND grp = %(grp)s RETURNING last"
)
_SQLITE_BUMP = (
    "UPDATE memory_claims SET last = last + ? WHERE prefix = ? AND grp = ? RETURNING last"
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


def _claimed(request: InsertMany, last: int) -> list[dict[str, Any]]:
    """The stored values of a claim that ended at position `last`."""
    first = last - len(request.values) + 1
    return [_stored(value, first + i) for i, value in enumerate(request.values)]


def _stamp(request: InsertMany, value: Mapping[str, Any]) -> datetime | None:
    if not request.dated:
        return None
    return datetime.fromisoformat(str(value["created_at"])).astimezone(UTC)


def _pg_params(request: InsertMany) -> dict[str, Any]:
    head = _head(request.group)
    return {
        "prefix": _prefix(request.namespace),
        "grp": request.group,
        "head": head,
        "digits": len(head) + 1,
        "n": len(request.values),
    }


def _pg_rows(request: InsertMany, stored: list[dict[str, Any]]) -> list[tuple[Any, ...]]:
    prefix = _prefix(request.namespace)
    rows = []
    for value in stored:
        stamp = _stamp(request, value)
        key = positioned_key(request.group, value["position"])
        rows.append((prefix, key, Jsonb(value), stamp, stamp))
    return rows


def _sqlite_time(stamp: datetime | None) -> str | None:
    return stamp.strftime("%Y-%m-%d %H:%M:%S") if stamp is not None else None


def _sqlite_rows(request: InsertMany, stored: list[dict[str, Any]]) -> list[tuple[Any, ...]]:
    prefix = _prefix(request.namespace)
    rows = []
    for value in stored:
        stamp = _sqlite_time(_stamp(request, value))
        key = positioned_key(request.group, value["position"])
        rows.append((prefix, key, orjson.dumps(value), stamp, stamp))
    return rows


def _sqlite_bump_args(request: InsertMany) -> tuple[Any, ...]:
    return (len(request.values), _prefix(request.namespace), request.group)


def _sqlite_seed_args(request: InsertMany) -> tuple[Any, ...]:
    head = _head(request.group)
    prefix = _prefix(request.namespace)
    n = len(request.values)
    return (prefix, request.group, len(head) + 1, n, prefix, head, f"{request.group}$")


def _pg_lock_name(namespace: tuple[str, ...], group: str) -> str:
    return f"memory_plugin.claim:{_prefix(namespace)}:{group}"


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


def _as_many(namespace: tuple[str, ...], group: str, value: Mapping[str, Any]) -> InsertMany:
    return InsertMany(namespace, group, (value,))


def insert_next(
    store: BaseStore, namespace: tuple[str, ...], group: str, value: Mapping[str, Any]
) -> dict[str, Any]:
    """Store `value` at the next position of `group`; returns the stored value."""
    (stored,) = insert_many(store, _as_many(namespace, group, value))
    return stored


async def ainsert_next(
    store: BaseStore, namespace: tuple[str, ...], group: str, value: Mapping[str, Any]
) -> dict[str, Any]:
    """Async twin of insert_next."""
    (stored,) = await ainsert_many(store, _as_many(namespace, group, value))
    return stored


@noted(lambda store, request: request.namespace)
def insert_many(store: BaseStore, request: InsertMany) -> list[dict[str, Any]]:
    """Store the values at the next positions of their group; returns the stored values."""
    if not request.values:
        return []
    if isinstance(store, PostgresStore):
        with pg_search_connection(store) as conn, conn.transaction():
            params = _pg_params(request)
            row = conn.execute(_PG_BUMP, params).fetchone()
            if row is None:
                conn.execute(_PG_LOCK, (_pg_lock_name(request.namespace, request.group),))
                row = conn.execute(_PG_BUMP, params).fetchone()
                if row is None:
                    row = conn.execute(PG_CLAIM_SEED, params).fetchone()
            assert row is not None, "INSERT ... SELECT of one row returns that row"
            stored = _claimed(request, int(row["last"]))
            with conn.cursor() as cur:
                cur.executemany(PG_INSERT_DATED, _pg_rows(request, stored))
            return stored
    if isinstance(store, SqliteStore):
        with sqlite_search_connection(store) as db:
            db.execute("BEGIN IMMEDIATE")
            try:
                rows = db.execute(_SQLITE_BUMP, _sqlite_bump_args(request)).fetchall()
                if not rows:
                    rows = db.execute(SQLITE_CLAIM_SEED, _sqlite_seed_args(request)).fetchall()
                stored = _claimed(request, int(rows[0][0]))
                db.executemany(SQLITE_INSERT_DATED, _sqlite_rows(request, stored))
                analyse = keywords.analyse_steps(_prefix(request.namespace), keywords.HOLD)
                drive(analyse, lambda sql, args: db.execute(sql, args).fetchall(), db.executemany)
            except BaseException:
                db.execute("ROLLBACK")
                raise
            db.execute("COMMIT")
            return stored
    with _process_lock(store):
        first = _free_position(store, request.namespace, request.group)
        stored = _claimed(request, first + len(request.values) - 1)
        ops = [
            PutOp(request.namespace, positioned_key(request.group, v["position"]), v, index=False)
            for v in stored
        ]
        store.batch(ops)
        return stored


@noted(lambda store, request: request.namespace)
async def ainsert_many(store: BaseStore, request: InsertMany) -> list[dict[str, Any]]:
    """Async twin of insert_many."""
    if not request.values:
        return []
    if isinstance(store, AsyncPostgresStore):
        async with apg_search_connection(store) as conn, conn.transaction():
            params = _pg_params(request)
            row = await (await conn.execute(_PG_BUMP, params)).fetchone()
            if row is None:
                lock = (_pg_lock_name(request.namespace, request.group),)
                await conn.execute(_PG_LOCK, lock)
                row = await (await conn.execute(_PG_BUMP, params)).fetchone()
                if row is None:
                    row = await (await conn.execute(PG_CLAIM_SEED, params)).fetchone()
            assert row is not None, "INSERT ... SELECT of one row returns that row"
            stored = _claimed(request, int(row["last"]))
            async with conn.cursor() as cur:
                await cur.executemany(PG_INSERT_DATED, _pg_rows(request, stored))
            return stored
    if isinstance(store, AsyncSqliteStore):
        async with asqlite_search_connection(store) as db:
            await db.execute("BEGIN IMMEDIATE")
            try:
                found = list(await db.execute_fetchall(_SQLITE_BUMP, _sqlite_bump_args(request)))
                if not found:
                    seed = _sqlite_seed_args(request)
                    found = list(await db.execute_fetchall(SQLITE_CLAIM_SEED, seed))
                stored = _claimed(request, int(found[0][0]))
                await db.executemany(SQLITE_INSERT_DATED, _sqlite_rows(request, stored))
                analysed = keywords.analyse_steps(_prefix(request.namespace), keywords.HOLD)
                await adrive(analysed, db.execute_fetchall, db.executemany)
            except BaseException:
                await db.execute("ROLLBACK")
                raise
            await db.execute("COMMIT")
            return stored
    return await asyncio.to_thread(insert_many, store, request)


@dataclass(frozen=True)
class DropCounters:
    """Forget the position counters of every group in `namespaces`, so each group's next claim
    seeds its counter again from the items present: after items were written at chosen
    positions (an import) or the items of a namespace were removed (a deleted user). Stores
    without counters (InMemoryStore) have nothing to forget."""

    namespaces: tuple[tuple[str, ...], ...]

    def run(self, store: BaseStore) -> None:
        """Drop the counters with the store's sync methods."""
        prefixes = [(_prefix(ns),) for ns in self.namespaces]
        if not prefixes:
            return
        if isinstance(store, PostgresStore):
            with pg_search_connection(store) as conn, conn.transaction():
                conn.cursor().executemany(_PG_DROP, prefixes)
        elif isinstance(store, SqliteStore):
            with sqlite_search_connection(store) as db:
                db.execute("BEGIN IMMEDIATE")
                try:
                    db.executemany(_SQLITE_DROP, prefixes)
                except BaseException:
                    db.execute("ROLLBACK")
                    raise
                db.execute("COMMIT")

    async def arun(self, store: BaseStore) -> None:
        """Async twin of run."""
        prefixes = [(_prefix(ns),) for ns in self.namespaces]
        if not prefixes:
            return
        if isinstance(store, AsyncPostgresStore):
            async with apg_search_connection(store) as conn, conn.transaction():
                await conn.cursor().executemany(_PG_DROP, prefixes)
        elif isinstance(store, AsyncSqliteStore):
            async with asqlite_search_connection(store) as db:
                await db.execute("BEGIN IMMEDIATE")
                try:
                    await db.executemany(_SQLITE_DROP, prefixes)
                except BaseException:
                    await db.execute("ROLLBACK")
                    raise
                await db.execute("COMMIT")
        elif isinstance(store, PostgresStore | SqliteStore):
            await asyncio.to_thread(self.run, store)


_PG_DROP = "DELETE FROM memory_claims WHERE prefix = %s"
_SQLITE_DROP = "DELETE FROM memory_claims WHERE prefix = ?"
