"""Leases: a named claim held by one worker until it drops it or its time runs out.

A lease lets several processes share work (the sharded nightly job claims each scope) without
two doing the same piece at once. Taking a lease succeeds when nobody holds it, when the
holder's time has run out, or when the taker already holds it (a renewal); the database's
clock decides, unless the request gives the time to judge it at (`at`, Unix seconds: how
tests move a lease past its expiry without waiting for it). PostgreSQL takes it in one
`INSERT ... ON CONFLICT ... DO UPDATE ... WHERE` statement on `memory_leases` (the row lock
makes it atomic across app servers); SQLite runs the same upsert inside BEGIN IMMEDIATE
(atomic across processes on one file). Any other store, InMemoryStore included, keeps a lock
table in this process. `held_leases` lists a holder's leases with the time each has left
(how a dead worker's claims are found and waited out).
"""

from __future__ import annotations

import asyncio
import threading
import time
import weakref
from dataclasses import dataclass
from typing import Any

from langgraph.store.base import BaseStore
from langgraph.store.postgres import AsyncPostgresStore, PostgresStore
from langgraph.store.sqlite import SqliteStore
from langgraph.store.sqlite.aio import AsyncSqliteStore

from memory_plugin.backends.fts import (
    PG_SETUP_LOCK,
    apg_search_connection,
    asqlite_search_connection,
    pg_search_connection,
    sqlite_search_connection,
)


@dataclass(frozen=True)
class TakeLease:
    """Take (or renew) the lease `name` for `holder` for `seconds`, unless another holder's
    lease on it is still valid. The result is True when `holder` now holds it."""

    name: str
    holder: str
    seconds: float
    at: float | None = None
    """The Unix time the lease is judged at and counted from; None: the database's clock."""

    def run(self, store: BaseStore) -> bool:
        """Take the lease with the store's sync methods (see lease)."""
        return lease(store, self)

    async def arun(self, store: BaseStore) -> bool:
        """Async twin of run."""
        return await alease(store, self)


@dataclass(frozen=True)
class DropLease:
    """Give back the lease `name` if `holder` holds it. The result is True when it did."""

    name: str
    holder: str

    def run(self, store: BaseStore) -> bool:
        """Drop the lease with the store's sync methods (see lease)."""
        return lease(store, self)

    async def arun(self, store: BaseStore) -> bool:
        """Async twin of run."""
        return await alease(store, self)


_PG_TABLE = (
    "CREATE TABLE IF NOT EXISTS memory_leases ("
    "name text PRIMARY KEY, holder text NOT NULL, expires_at timestamptz NOT NULL)"
)
_PG_NOW = "coalesce(to_timestamp(%(at)s::float8), now())"
_PG_TAKE = f"""
INSERT INTO memory_leases AS l (name, holder, expires_at)
VALUES (%(name)s, %(holder)s, {_PG_NOW} + make_interval(secs => %(seconds)s))
ON CONFLICT (name) DO UPDATE SET holder = excluded.holder, expires_at = excluded.expires_at
WHERE l.expires_at <= {_PG_NOW} OR l.holder = excluded.holder
RETURNING holder
"""
_PG_DROP = "DELETE FROM memory_leases WHERE name = %(name)s AND holder = %(holder)s RETURNING name"
_PG_HELD = (
    f"SELECT name, extract(epoch FROM expires_at - {_PG_NOW}) AS seconds_left "
    "FROM memory_leases WHERE holder = %(holder)s"
)
_SQLITE_TABLE = (
    "CREATE TABLE IF NOT EXISTS memory_leases ("
    "name TEXT PRIMARY KEY, holder TEXT NOT NULL, expires_at REAL NOT NULL)"
)
_SQLITE_NOW = "coalesce(:at, (julianday('now') - 2440587.5) * 86400.0)"
_SQLITE_TAKE = f"""
INSERT INTO memory_leases (name, holder, expires_at)
VALUES (:name, :holder, {_SQLITE_NOW} + :seconds)
ON CONFLICT (name) DO UPDATE SET holder = excluded.holder, expires_at = excluded.expires_at
WHERE memory_leases.expires_at <= {_SQLITE_NOW} OR memory_leases.holder = excluded.holder
RETURNING holder
"""
_SQLITE_DROP = "DELETE FROM memory_leases WHERE name = :name AND holder = :holder RETURNING name"
_SQLITE_HELD = f"SELECT name, expires_at - {_SQLITE_NOW} FROM memory_leases WHERE holder = :holder"

_tables: weakref.WeakSet[BaseStore] = weakref.WeakSet()
_held: weakref.WeakKeyDictionary[BaseStore, dict[str, tuple[str, float]]] = (
    weakref.WeakKeyDictionary()
)
_guard = threading.Lock()


def _args(request: TakeLease | DropLease) -> dict[str, Any]:
    """The statement parameters of a request (both databases name them alike)."""
    if isinstance(request, TakeLease):
        at = None if request.at is None else float(request.at)
        return {
            "name": request.name,
            "holder": request.holder,
            "seconds": float(request.seconds),
            "at": at,
        }
    return {"name": request.name, "holder": request.holder}


def _pg_args(request: TakeLease | DropLease) -> tuple[str, dict[str, Any]]:
    return (_PG_TAKE if isinstance(request, TakeLease) else _PG_DROP), _args(request)


def _sqlite_args(request: TakeLease | DropLease) -> tuple[str, dict[str, Any]]:
    return (_SQLITE_TAKE if isinstance(request, TakeLease) else _SQLITE_DROP), _args(request)


def _sqlite_rows(db: Any, statement: str, args: dict[str, Any], store: BaseStore) -> list[Any]:
    """The rows of `statement`, run under BEGIN IMMEDIATE (the table created first)."""
    db.execute("BEGIN IMMEDIATE")
    try:
        if store not in _tables:
            db.execute(_SQLITE_TABLE)
        rows: list[Any] = db.execute(statement, args).fetchall()
    except BaseException:
        db.execute("ROLLBACK")
        raise
    db.execute("COMMIT")
    _tables.add(store)
    return rows


async def _asqlite_write(db: Any, statement: str, args: dict[str, Any], store: BaseStore) -> bool:
    await db.execute("BEGIN IMMEDIATE")
    try:
        if store not in _tables:
            await db.execute(_SQLITE_TABLE)
        rows = list(await db.execute_fetchall(statement, args))
    except BaseException:
        await db.execute("ROLLBACK")
        raise
    await db.execute("COMMIT")
    _tables.add(store)
    return bool(rows)


def _pg_rows(conn: Any, statement: str, args: Any, store: BaseStore) -> list[Any]:
    """The rows of `statement`, run in a transaction (the table created first)."""
    with conn.transaction():
        if store not in _tables:
            conn.execute(PG_SETUP_LOCK)
            conn.execute(_PG_TABLE)
        rows: list[Any] = conn.execute(statement, args).fetchall()
    _tables.add(store)
    return rows


async def _apg_write(conn: Any, statement: str, args: Any, store: BaseStore) -> bool:
    async with conn.transaction():
        if store not in _tables:
            await conn.execute(PG_SETUP_LOCK)
            await conn.execute(_PG_TABLE)
        row = await (await conn.execute(statement, args)).fetchone()
    _tables.add(store)
    return row is not None


def _local(store: BaseStore, request: TakeLease | DropLease) -> bool:
    """The lease in this process's lock table."""
    with _guard:
        held = _held.setdefault(store, {})
        holder, expires = held.get(request.name, (None, 0.0))
        if isinstance(request, DropLease):
            if holder != request.holder:
                return False
            del held[request.name]
            return True
        now = time.time() if request.at is None else request.at
        if holder not in (None, request.holder) and expires > now:
            return False
        held[request.name] = (request.holder, now + request.seconds)
        return True


def lease(store: BaseStore, request: TakeLease | DropLease) -> bool:
    """Take or drop a lease (see TakeLease and DropLease)."""
    if isinstance(store, PostgresStore):
        with pg_search_connection(store) as conn:
            return bool(_pg_rows(conn, *_pg_args(request), store))
    if isinstance(store, SqliteStore):
        with sqlite_search_connection(store) as db:
            return bool(_sqlite_rows(db, *_sqlite_args(request), store))
    return _local(store, request)


def held_leases(store: BaseStore, holder: str, at: float | None = None) -> dict[str, float]:
    """The leases `holder` holds, each with the seconds it has left at Unix time `at` (None:
    by the database's clock), zero or less once it has expired."""
    args = {"holder": holder, "at": None if at is None else float(at)}
    if isinstance(store, PostgresStore):
        with pg_search_connection(store) as conn:
            found = _pg_rows(conn, _PG_HELD, args, store)
        rows = [(row["name"], row["seconds_left"]) for row in found]
    elif isinstance(store, SqliteStore):
        with sqlite_search_connection(store) as db:
            rows = _sqlite_rows(db, _SQLITE_HELD, args, store)
    else:
        with _guard:
            now = time.time() if at is None else at
            held = _held.get(store, {}).items()
            rows = [(name, expires - now) for name, (by, expires) in held if by == holder]
    return {name: float(left) for name, left in rows}


async def alease(store: BaseStore, request: TakeLease | DropLease) -> bool:
    """Async twin of lease."""
    if isinstance(store, AsyncPostgresStore):
        async with apg_search_connection(store) as conn:
            return await _apg_write(conn, *_pg_args(request), store)
    if isinstance(store, AsyncSqliteStore):
        async with asqlite_search_connection(store) as db:
            return await _asqlite_write(db, *_sqlite_args(request), store)
    return await asyncio.to_thread(lease, store, request)
