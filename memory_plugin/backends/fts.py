"""Keyword indexes of notes, kept in step with the LangGraph `store` table by triggers
(memory_plugin.backends.langgraph_tables).

Every write to `store`, ours or a LangGraph put or delete, updates the index in the same
transaction, and both databases score with each scope's own statistics. SQLite: a row map of
the live notes, their postings (scope, term, note: term frequency and length) and per-scope
statistics (notes and total length); SQL cannot stem, so the triggers drop a changed or
deleted note's postings and statistics and leave a new note unanalysed for Python
(memory_plugin.backends.keywords); LangGraph's SQLite put is an INSERT OR REPLACE, which
fires no delete trigger, so the insert trigger drops a replaced row's entries first.
PostgreSQL: a table of `english` tsvectors (read by the trigger, to find a replaced note's
postings), their postings (scope, lexeme, note: term frequency and length) and per-scope
statistics (notes and total length). On both, an update that leaves a note's text and
deletion as they were (marking it consolidated) touches none of them. Both also hold the
per-group position counters that make appends O(1), and the namespace versions
(memory_plugin.backends.versions). Setup is idempotent; its migrations run once each
(SQLITE_MIGRATIONS, PG_MIGRATIONS).
"""

from __future__ import annotations

import weakref
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from typing import Any

from langgraph.store.base import BaseStore
from langgraph.store.postgres import AsyncPostgresStore, PostgresStore
from langgraph.store.sqlite import SqliteStore
from langgraph.store.sqlite.aio import AsyncSqliteStore

from memory_plugin.backends.langgraph_tables import (
    PG_NOTE_FTS,
    PG_NOTE_SYNC,
    PG_VERSION_SYNC,
    SQLITE_NOTE_ROWS,
    SQLITE_NOTE_TRIGGERS,
    SQLITE_VERSION_TRIGGERS,
)
from memory_plugin.backends.steps import Steps, adrive, drive, transaction
from memory_plugin.compat import pg_async_connections, pg_connections

SQLITE_SCHEMA = [
    """CREATE TABLE IF NOT EXISTS memory_claims (
        prefix TEXT NOT NULL, grp TEXT NOT NULL, last INTEGER NOT NULL,
        PRIMARY KEY (prefix, grp))""",
    "CREATE TABLE IF NOT EXISTS memory_search_migrations (v INTEGER PRIMARY KEY)",
]
SQLITE_PER_SCOPE = [
    *(f"DROP TRIGGER IF EXISTS memory_note_fts_{op}" for op in ("insert", "update", "delete")),
    "DROP TABLE IF EXISTS memory_note_fts",
    "DROP TABLE IF EXISTS memory_note_rows",
    """CREATE TABLE memory_note_rows (
        prefix TEXT NOT NULL, key TEXT NOT NULL, len INTEGER, terms TEXT,
        PRIMARY KEY (prefix, key)) WITHOUT ROWID""",
    "CREATE INDEX memory_note_rows_unanalysed ON memory_note_rows (prefix) WHERE len IS NULL",
    """CREATE TABLE memory_note_stats (
        id INTEGER PRIMARY KEY, prefix TEXT NOT NULL UNIQUE, docs INTEGER NOT NULL,
        total_len INTEGER NOT NULL)""",
    """CREATE TABLE memory_note_terms (
        scope INTEGER NOT NULL, term TEXT NOT NULL, key TEXT NOT NULL, tf INTEGER NOT NULL,
        len INTEGER NOT NULL, PRIMARY KEY (scope, term, key)) WITHOUT ROWID""",
    *SQLITE_NOTE_TRIGGERS,
    SQLITE_NOTE_ROWS,
    "INSERT INTO memory_search_migrations (v) VALUES (1)",
]
SQLITE_VERSIONS = [
    *(f"DROP TRIGGER IF EXISTS memory_versions_{op}" for op in ("insert", "update", "delete")),
    """CREATE TABLE IF NOT EXISTS memory_versions (
        scope TEXT PRIMARY KEY, version INTEGER NOT NULL) WITHOUT ROWID""",
    "INSERT OR IGNORE INTO memory_versions (scope, version) VALUES ('', 0)",
    *SQLITE_VERSION_TRIGGERS,
    "INSERT INTO memory_search_migrations (v) VALUES (2)",
]
SQLITE_PENDING = [
    "ALTER TABLE memory_note_rows ADD COLUMN pending TEXT",
    """CREATE INDEX memory_note_rows_pending ON memory_note_rows (prefix)
        WHERE pending IS NOT NULL""",
    "INSERT INTO memory_search_migrations (v) VALUES (3)",
]
SQLITE_MIGRATIONS = [(1, SQLITE_PER_SCOPE), (2, SQLITE_VERSIONS), (3, SQLITE_PENDING)]
"""Run once each, in order: replace the FTS5 index (table-wide statistics) by per-scope
postings, every existing note left to be analysed before its scope's next search; count the
writes to each namespace; let an append's postings wait in the notes' rows
(memory_plugin.backends.keywords)."""
_SQLITE_HAS_TABLE = "SELECT 1 FROM sqlite_master WHERE name = 'memory_search_migrations'"
_SQLITE_HAS = "SELECT 1 FROM memory_search_migrations WHERE v = ?"

PG_SCHEMA = [
    """
CREATE TABLE IF NOT EXISTS memory_claims (
    prefix text NOT NULL, grp text NOT NULL, last bigint NOT NULL, PRIMARY KEY (prefix, grp))
""",
    """
CREATE TABLE IF NOT EXISTS memory_note_fts (
    prefix text NOT NULL, key text NOT NULL, tsv tsvector NOT NULL, len integer NOT NULL,
    PRIMARY KEY (prefix, key))
""",
    """
CREATE TABLE IF NOT EXISTS memory_note_stats (
    prefix text PRIMARY KEY, docs bigint NOT NULL, total_len bigint NOT NULL)
""",
    """
CREATE TABLE IF NOT EXISTS memory_note_terms (
    prefix text NOT NULL, lexeme text NOT NULL, key text NOT NULL, tf integer NOT NULL,
    len integer NOT NULL, PRIMARY KEY (prefix, lexeme, key))
""",
    *PG_NOTE_SYNC,
    """
CREATE TABLE IF NOT EXISTS memory_search_migrations (v integer PRIMARY KEY)
""",
]
PG_BACKFILL = [
    PG_NOTE_FTS,
    """
INSERT INTO memory_note_stats (prefix, docs, total_len)
SELECT prefix, count(*), sum(len) FROM memory_note_fts GROUP BY prefix
ON CONFLICT (prefix) DO UPDATE SET docs = excluded.docs, total_len = excluded.total_len
""",
    """
INSERT INTO memory_search_migrations (v) VALUES (1)
""",
]
PG_POSTINGS = [
    """
INSERT INTO memory_note_terms (prefix, lexeme, key, tf, len)
SELECT f.prefix, u.lexeme, f.key, coalesce(array_length(u.positions, 1), 1), f.len
FROM memory_note_fts f, unnest(f.tsv) u
ON CONFLICT DO NOTHING
""",
    """
INSERT INTO memory_search_migrations (v) VALUES (2)
""",
]
PG_UNUSED_GIN = [
    """
DROP INDEX IF EXISTS memory_note_fts_tsv
""",
    """
INSERT INTO memory_search_migrations (v) VALUES (3)
""",
]
PG_VERSIONS = [
    """
CREATE TABLE IF NOT EXISTS memory_versions (scope text PRIMARY KEY, version bigint NOT NULL)
""",
    *PG_VERSION_SYNC,
    """
INSERT INTO memory_search_migrations (v) VALUES (4)
""",
]
PG_MIGRATIONS = [(1, PG_BACKFILL), (2, PG_POSTINGS), (3, PG_UNUSED_GIN), (4, PG_VERSIONS)]
"""Run once each, in order: index the notes written before the search tables existed, add
their postings, drop the tsvector GIN index no query uses (keyword search reads postings),
count the writes to each namespace."""
_PG_HAS = "SELECT 1 FROM memory_search_migrations WHERE v = %s"
_PG_LATEST = (PG_MIGRATIONS[-1][0],)
_PG_HAS_TABLE = "SELECT to_regclass('memory_search_migrations') IS NOT NULL AS present"
PG_SETUP_LOCK = "SELECT pg_advisory_xact_lock(hashtext('memory_plugin.setup'))"

_ready: weakref.WeakSet[BaseStore] = weakref.WeakSet()


def is_ready(store: BaseStore) -> bool:
    """Whether this store's search tables were set up in this process."""
    return store in _ready


def mark_ready(store: BaseStore) -> None:
    """Remember that this store's search tables exist."""
    _ready.add(store)


def sqlite_setup_steps() -> Steps[None]:
    """Create the SQLite search tables and run the migrations not run yet, in one
    transaction taken only when something is missing."""

    def current() -> Steps[bool]:
        if not (yield (_SQLITE_HAS_TABLE, ())):
            return False
        return bool((yield (_SQLITE_HAS, (SQLITE_MIGRATIONS[-1][0],))))

    def upgrade() -> Steps[None]:
        if (yield from current()):
            return
        for statement in SQLITE_SCHEMA:
            yield (statement, ())
        for version, statements in SQLITE_MIGRATIONS:
            if not (yield (_SQLITE_HAS, (version,))):
                for statement in statements:
                    yield (statement, ())

    if not (yield from current()):
        yield from transaction(upgrade())


def sqlite_setup(conn: Any) -> None:
    """Create the SQLite search tables and triggers, migrating an older store (on a
    connection in autocommit mode). Probes read every row they match: a statement left
    part-read keeps a stale read snapshot open, and the connection's next write then fails
    with "database is locked" once another connection has written."""
    drive(sqlite_setup_steps(), lambda sql, args: conn.execute(sql, args).fetchall())


async def asqlite_setup(conn: Any) -> None:
    """Async twin of sqlite_setup, on an aiosqlite connection."""
    await adrive(sqlite_setup_steps(), conn.execute_fetchall)


def _pg_done(row: Any) -> bool:
    return bool(row and (row["present"] if isinstance(row, dict) else row[0]))


def pg_setup(conn: Any, *, lock: bool = True) -> None:
    """Create the PostgreSQL search tables and trigger and run the migrations not run yet;
    takes the setup lock for its transaction unless the caller already holds it
    (`lock=False`)."""
    if (
        _pg_done(conn.execute(_PG_HAS_TABLE).fetchone())
        and conn.execute(_PG_HAS, _PG_LATEST).fetchone()
    ):
        return
    with conn.transaction():
        if lock:
            conn.execute(PG_SETUP_LOCK)
        for statement in PG_SCHEMA:
            conn.execute(statement)
        for version, statements in PG_MIGRATIONS:
            if conn.execute(_PG_HAS, (version,)).fetchone() is None:
                for statement in statements:
                    conn.execute(statement)


async def apg_setup(conn: Any, *, lock: bool = True) -> None:
    """Async twin of pg_setup."""
    present = _pg_done(await (await conn.execute(_PG_HAS_TABLE)).fetchone())
    if present and await (await conn.execute(_PG_HAS, _PG_LATEST)).fetchone():
        return
    async with conn.transaction():
        if lock:
            await conn.execute(PG_SETUP_LOCK)
        for statement in PG_SCHEMA:
            await conn.execute(statement)
        for version, statements in PG_MIGRATIONS:
            if await (await conn.execute(_PG_HAS, (version,))).fetchone() is None:
                for statement in statements:
                    await conn.execute(statement)


@contextmanager
def pg_search_connection(store: PostgresStore) -> Iterator[Any]:
    """A connection of the store's pool, the search tables set up first (once per process)."""
    with pg_connections.get_connection(store.conn) as conn:
        if not is_ready(store):
            pg_setup(conn)
            mark_ready(store)
        yield conn


@asynccontextmanager
async def apg_search_connection(store: AsyncPostgresStore) -> AsyncIterator[Any]:
    """Async twin of pg_search_connection."""
    async with pg_async_connections.get_connection(store.conn) as conn:
        if not is_ready(store):
            await apg_setup(conn)
            mark_ready(store)
        yield conn


@contextmanager
def sqlite_search_connection(store: SqliteStore) -> Iterator[Any]:
    """The store's connection under its lock, the search tables set up first."""
    with store.lock:
        if not is_ready(store):
            sqlite_setup(store.conn)
            mark_ready(store)
        yield store.conn


@asynccontextmanager
async def asqlite_search_connection(store: AsyncSqliteStore) -> AsyncIterator[Any]:
    """Async twin of sqlite_search_connection (setting the store itself up when needed)."""
    if not store.is_setup:
        await store.setup()
    async with store.lock:
        if not is_ready(store):
            await asqlite_setup(store.conn)
            mark_ready(store)
        yield store.conn
