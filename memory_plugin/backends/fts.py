"""Full-text indexes of notes, kept in step with the LangGraph `store` table by triggers.

Every write to `store`, ours or a LangGraph put or delete, updates the index in the same
transaction. SQLite: an FTS5 table (Porter stemming) keyed by a row map, with the scope's
token in its own column so a search reads one scope's postings; LangGraph's SQLite put is an
INSERT OR REPLACE, which fires no delete trigger, so the insert trigger drops a replaced
row's entry first. PostgreSQL: a table of `english` tsvectors (read by the trigger, to find
a replaced note's postings), their postings (scope, lexeme, note: term frequency and
length) for BM25 scoring, and per-scope statistics (notes and total length); an update that
leaves a note's text and deletion as they were (marking it consolidated) touches none of
them. Both also hold the per-group position counters that make appends O(1). Setup is
idempotent; its migrations run once each (PG_MIGRATIONS).
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

from memory_plugin.compat import pg_async_connections, pg_connections

NOTES_GLOB = "memory_plugin.*.notes"

SQLITE_SCHEMA = [
    """CREATE TABLE IF NOT EXISTS memory_claims (
        prefix TEXT NOT NULL, grp TEXT NOT NULL, last INTEGER NOT NULL,
        PRIMARY KEY (prefix, grp))""",
    """CREATE TABLE IF NOT EXISTS memory_note_rows (
        id INTEGER PRIMARY KEY, prefix TEXT NOT NULL, key TEXT NOT NULL,
        UNIQUE (prefix, key))""",
    """CREATE VIRTUAL TABLE IF NOT EXISTS memory_note_fts
        USING fts5(scope, text, tokenize = 'porter unicode61')""",
    f"""CREATE TRIGGER IF NOT EXISTS memory_note_fts_insert AFTER INSERT ON store
    WHEN new.prefix GLOB '{NOTES_GLOB}' BEGIN
        DELETE FROM memory_note_fts WHERE rowid =
            (SELECT id FROM memory_note_rows WHERE prefix = new.prefix AND key = new.key);
        DELETE FROM memory_note_rows WHERE prefix = new.prefix AND key = new.key;
        INSERT INTO memory_note_rows (prefix, key) SELECT new.prefix, new.key
            WHERE json_extract(new.value, '$.deleted') IS NOT 1
            AND coalesce(json_extract(new.value, '$.text'), '') <> '';
        INSERT INTO memory_note_fts (rowid, scope, text)
            SELECT id, 's' || hex(new.prefix), json_extract(new.value, '$.text')
            FROM memory_note_rows WHERE prefix = new.prefix AND key = new.key;
    END""",
    f"""CREATE TRIGGER IF NOT EXISTS memory_note_fts_update AFTER UPDATE ON store
    WHEN old.prefix GLOB '{NOTES_GLOB}' OR new.prefix GLOB '{NOTES_GLOB}' BEGIN
        DELETE FROM memory_note_fts WHERE rowid =
            (SELECT id FROM memory_note_rows WHERE prefix = old.prefix AND key = old.key);
        DELETE FROM memory_note_rows WHERE prefix = old.prefix AND key = old.key;
        INSERT INTO memory_note_rows (prefix, key) SELECT new.prefix, new.key
            WHERE new.prefix GLOB '{NOTES_GLOB}'
            AND json_extract(new.value, '$.deleted') IS NOT 1
            AND coalesce(json_extract(new.value, '$.text'), '') <> '';
        INSERT INTO memory_note_fts (rowid, scope, text)
            SELECT id, 's' || hex(new.prefix), json_extract(new.value, '$.text')
            FROM memory_note_rows WHERE prefix = new.prefix AND key = new.key;
    END""",
    f"""CREATE TRIGGER IF NOT EXISTS memory_note_fts_delete AFTER DELETE ON store
    WHEN old.prefix GLOB '{NOTES_GLOB}' BEGIN
        DELETE FROM memory_note_fts WHERE rowid =
            (SELECT id FROM memory_note_rows WHERE prefix = old.prefix AND key = old.key);
        DELETE FROM memory_note_rows WHERE prefix = old.prefix AND key = old.key;
    END""",
]
SQLITE_BACKFILL = [
    f"""INSERT OR IGNORE INTO memory_note_rows (prefix, key) SELECT prefix, key FROM store
        WHERE prefix GLOB '{NOTES_GLOB}' AND json_extract(value, '$.deleted') IS NOT 1
        AND coalesce(json_extract(value, '$.text'), '') <> ''""",
    """INSERT INTO memory_note_fts (rowid, scope, text)
        SELECT r.id, 's' || hex(r.prefix), json_extract(s.value, '$.text')
        FROM memory_note_rows r JOIN store s ON s.prefix = r.prefix AND s.key = r.key
        WHERE r.id NOT IN (SELECT rowid FROM memory_note_fts)""",
]
_SQLITE_HAS_FTS = "SELECT 1 FROM sqlite_master WHERE name = 'memory_note_fts_delete'"

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
    """
CREATE OR REPLACE FUNCTION memory_note_fts_sync() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    gone integer;
    old_doc tsvector;
    doc tsvector;
    size integer;
BEGIN
    IF TG_OP = 'UPDATE' AND OLD.value->>'text' IS NOT DISTINCT FROM NEW.value->>'text'
            AND OLD.value->'deleted' IS NOT DISTINCT FROM NEW.value->'deleted' THEN
        RETURN NULL;
    END IF;
    IF TG_OP IN ('UPDATE', 'DELETE') AND starts_with(OLD.prefix, 'memory_plugin.')
            AND right(OLD.prefix, 6) = '.notes' THEN
        DELETE FROM memory_note_fts WHERE prefix = OLD.prefix AND key = OLD.key
            RETURNING len, tsv INTO gone, old_doc;
        IF FOUND THEN
            UPDATE memory_note_stats SET docs = docs - 1, total_len = total_len - gone
                WHERE prefix = OLD.prefix;
            DELETE FROM memory_note_terms WHERE prefix = OLD.prefix
                AND lexeme = ANY (tsvector_to_array(old_doc)) AND key = OLD.key;
        END IF;
    END IF;
    IF TG_OP IN ('INSERT', 'UPDATE') AND starts_with(NEW.prefix, 'memory_plugin.')
            AND right(NEW.prefix, 6) = '.notes'
            AND NEW.value->'deleted' IS DISTINCT FROM 'true'::jsonb
            AND coalesce(NEW.value->>'text', '') <> '' THEN
        doc := to_tsvector('english', NEW.value->>'text');
        SELECT coalesce(sum(coalesce(array_length(positions, 1), 1)), 0) INTO size
            FROM unnest(doc);
        INSERT INTO memory_note_fts (prefix, key, tsv, len) VALUES (NEW.prefix, NEW.key, doc, size);
        INSERT INTO memory_note_terms (prefix, lexeme, key, tf, len)
            SELECT NEW.prefix, lexeme, NEW.key, coalesce(array_length(positions, 1), 1), size
            FROM unnest(doc);
        INSERT INTO memory_note_stats AS s (prefix, docs, total_len) VALUES (NEW.prefix, 1, size)
            ON CONFLICT (prefix) DO UPDATE
            SET docs = s.docs + 1, total_len = s.total_len + excluded.total_len;
    END IF;
    RETURN NULL;
END $$
""",
    """
DROP TRIGGER IF EXISTS memory_note_fts_sync ON store
""",
    """
CREATE TRIGGER memory_note_fts_sync AFTER INSERT OR UPDATE OR DELETE ON store
    FOR EACH ROW EXECUTE FUNCTION memory_note_fts_sync()
""",
    """
CREATE TABLE IF NOT EXISTS memory_search_migrations (v integer PRIMARY KEY)
""",
]
PG_BACKFILL = [
    """
INSERT INTO memory_note_fts (prefix, key, tsv, len)
SELECT prefix, key, doc,
       (SELECT coalesce(sum(coalesce(array_length(positions, 1), 1)), 0) FROM unnest(doc))
FROM (SELECT prefix, key, to_tsvector('english', value->>'text') AS doc FROM store
      WHERE starts_with(prefix, 'memory_plugin.') AND right(prefix, 6) = '.notes'
      AND value->'deleted' IS DISTINCT FROM 'true'::jsonb
      AND coalesce(value->>'text', '') <> '') AS live
ON CONFLICT DO NOTHING
""",
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
PG_MIGRATIONS = [(1, PG_BACKFILL), (2, PG_POSTINGS), (3, PG_UNUSED_GIN)]
"""Run once each, in order: index the notes written before the search tables existed, add
their postings, drop the tsvector GIN index no query uses (keyword search reads postings)."""
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


def sqlite_setup(conn: Any) -> None:
    """Create the SQLite search tables and triggers, indexing existing notes the first time
    (on a connection in autocommit mode). Probes read every row they match: a statement left
    part-read keeps a stale read snapshot open, and the connection's next write then fails
    with "database is locked" once another connection has written."""
    if conn.execute(_SQLITE_HAS_FTS).fetchall():
        return
    conn.execute("BEGIN IMMEDIATE")
    try:
        if not conn.execute(_SQLITE_HAS_FTS).fetchall():
            for statement in [*SQLITE_SCHEMA, *SQLITE_BACKFILL]:
                conn.execute(statement)
    except BaseException:
        conn.execute("ROLLBACK")
        raise
    conn.execute("COMMIT")


async def asqlite_setup(conn: Any) -> None:
    """Async twin of sqlite_setup, on an aiosqlite connection."""
    async with conn.execute(_SQLITE_HAS_FTS) as rows:
        if await rows.fetchone() is not None:
            return
    await conn.execute("BEGIN IMMEDIATE")
    try:
        async with conn.execute(_SQLITE_HAS_FTS) as rows:
            missing = await rows.fetchone() is None
        if missing:
            for statement in [*SQLITE_SCHEMA, *SQLITE_BACKFILL]:
                await conn.execute(statement)
    except BaseException:
        await conn.execute("ROLLBACK")
        raise
    await conn.execute("COMMIT")


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
