"""The only statements and triggers of memory_plugin that touch LangGraph's store tables.

LangGraph's PostgresStore and SqliteStore own `store` (a namespace's items: `prefix`, `key`,
`value`, `created_at`, `updated_at`) and `store_vectors` (one embedding per item and field:
`prefix`, `key`, `field_name`, `embedding`). The plugin reads and writes them directly for
what BaseStore cannot do in one statement: conditional and positioned writes (conditional,
claims), keyword and vector search joined to the items (search, keywords, vectors), the
triggers that keep its own search tables, vector change counters and namespace versions in
step with every write (fts, vectors, versions), and the embedding's dimension count
(pg_setup). Each relies on the columns, types and indexes `RELIES_ON` names: both tables'
primary keys for every lookup by scope and key and for ON CONFLICT (prefix, key), `value` as
JSON (jsonb on PostgreSQL, JSON text on SQLite), `embedding` as a pgvector column whose type
modifier is its dimension count (PostgreSQL) or a float32 blob (SQLite), and on PostgreSQL
the HNSW cosine index that `PG_NEAREST` asks. tests/test_langgraph_schema.py checks them
against the catalogs of stores LangGraph set up, and against docs/partitioned.sql.
"""

from __future__ import annotations

from dataclasses import dataclass

from memory_plugin.text import BM25_B, BM25_K1


@dataclass(frozen=True)
class Index:
    """An index the statements rely on: its table, its columns in order (on PostgreSQL with
    the operator class the statements need), whether it is unique, and its access method."""

    table: str
    columns: tuple[str, ...]
    unique: bool
    method: str = "btree"


@dataclass(frozen=True)
class Schema:
    """What the statements rely on in one database: each table's columns with their types
    (PostgreSQL: `udt_name`; SQLite: the declared type), and the indexes by name."""

    columns: dict[str, dict[str, str]]
    indexes: dict[str, Index]


def _schema(value: str, stamp: str, embedding: str, indexes: dict[str, Index]) -> Schema:
    """The columns the statements rely on in both databases, with one database's types."""
    item = {"prefix": "text", "key": "text"}
    return Schema(
        columns={
            "store": {**item, "value": value, "created_at": stamp, "updated_at": stamp},
            "store_vectors": {**item, "embedding": embedding},
        },
        indexes=indexes,
    )


_STORE_KEY = Index("store", ("prefix", "key"), unique=True)
_VECTORS_KEY = Index("store_vectors", ("prefix", "key", "field_name"), unique=True)
RELIES_ON = {
    "postgres": _schema(
        "jsonb",
        "timestamptz",
        "vector",
        {
            "store_pkey": _STORE_KEY,
            "store_vectors_pkey": _VECTORS_KEY,
            "store_vectors_embedding_idx": Index(
                "store_vectors", ("embedding vector_cosine_ops",), unique=False, method="hnsw"
            ),
        },
    ),
    "sqlite": _schema(
        "text",
        "timestamp",
        "blob",
        {
            "sqlite_autoindex_store_1": _STORE_KEY,
            "sqlite_autoindex_store_vectors_1": _VECTORS_KEY,
        },
    ),
}

NOTES_GLOB = "memory_plugin.*.notes"
_MATCH = "prefix = {row}.prefix AND key = {row}.key"
_LIVE = """{row}.prefix GLOB '{glob}' AND json_extract({row}.value, '$.deleted') IS NOT 1
            AND json_type({row}.value, '$.text') = 'text'
            AND json_extract({row}.value, '$.text') <> ''"""


def _sqlite_forget(row: str) -> str:
    """Trigger statements dropping the note `row` (old or new) from the row map, and its
    postings and its share of the scope's statistics when it was analysed."""
    match = _MATCH.format(row=row)
    return f"""
        UPDATE memory_note_stats SET docs = docs - 1,
            total_len = total_len - (SELECT len FROM memory_note_rows WHERE {match})
            WHERE prefix = {row}.prefix
            AND (SELECT len FROM memory_note_rows WHERE {match}) IS NOT NULL;
        DELETE FROM memory_note_terms
            WHERE scope = (SELECT id FROM memory_note_stats WHERE prefix = {row}.prefix)
            AND term IN (SELECT value FROM json_each(
                (SELECT terms FROM memory_note_rows WHERE {match})))
            AND key = {row}.key;
        DELETE FROM memory_note_rows WHERE {match};"""


_SQLITE_ADD = f"""
        INSERT INTO memory_note_rows (prefix, key) SELECT new.prefix, new.key
            WHERE {_LIVE.format(row="new", glob=NOTES_GLOB)};"""

SQLITE_NOTE_TRIGGERS = [
    f"""CREATE TRIGGER memory_note_index_insert AFTER INSERT ON store
    WHEN new.prefix GLOB '{NOTES_GLOB}' BEGIN{_sqlite_forget("new")}{_SQLITE_ADD}
    END""",
    f"""CREATE TRIGGER memory_note_index_update AFTER UPDATE ON store
    WHEN (old.prefix GLOB '{NOTES_GLOB}' OR new.prefix GLOB '{NOTES_GLOB}')
    AND (old.prefix IS NOT new.prefix OR old.key IS NOT new.key
        OR json_extract(old.value, '$.text') IS NOT json_extract(new.value, '$.text')
        OR json_extract(old.value, '$.deleted') IS NOT json_extract(new.value, '$.deleted'))
    BEGIN{_sqlite_forget("old")}{_SQLITE_ADD}
    END""",
    f"""CREATE TRIGGER memory_note_index_delete AFTER DELETE ON store
    WHEN old.prefix GLOB '{NOTES_GLOB}' BEGIN{_sqlite_forget("old")}
    END""",
]
"""Keep the row map of live notes (memory_plugin.backends.fts) in step with `store`."""
SQLITE_NOTE_ROWS = f"""INSERT INTO memory_note_rows (prefix, key) SELECT prefix, key FROM store AS s
        WHERE {_LIVE.format(row="s", glob=NOTES_GLOB)}"""
"""Map the live notes written before the triggers existed."""

PG_NOTE_SYNC = [
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
]
"""Keep the notes' tsvectors, postings and statistics (memory_plugin.backends.fts) in step
with `store`."""
UNVERSIONED_GLOB = "memory_plugin.thread.*"
"""Namespaces no version counts: thread journals, written every turn and never read by a
turn's memory snapshot (memory_plugin.backends.versions refuses to vouch for them)."""
_SQLITE_BUMP = """
        UPDATE memory_versions SET version = version + 1 WHERE scope = '';
        INSERT INTO memory_versions (scope, version)
            VALUES ({row}.prefix, (SELECT version FROM memory_versions WHERE scope = ''))
            ON CONFLICT (scope) DO UPDATE SET version = excluded.version;"""
_SQLITE_EMPTIED = """
        DELETE FROM memory_versions WHERE scope = old.prefix
            AND NOT EXISTS (SELECT 1 FROM store WHERE prefix = old.prefix);"""
SQLITE_VERSION_TRIGGERS = [
    f"""CREATE TRIGGER memory_versions_{op} AFTER {op.upper()} ON store
    WHEN {row}.prefix NOT GLOB '{UNVERSIONED_GLOB}' BEGIN{_SQLITE_BUMP.format(row=row)}{tail}
    END"""
    for op, row, tail in (
        ("insert", "new", ""),
        ("update", "new", ""),
        ("delete", "old", _SQLITE_EMPTIED),
    )
]
"""Give a namespace a new version at every write to it, from one counter that only grows
(the row of scope ''), and drop the version of a namespace its last item left (nothing of an
erased user stays behind; a namespace written again gets a version it never had)."""
PG_VERSION_SYNC = [
    """
CREATE SEQUENCE IF NOT EXISTS memory_versions_seq
""",
    """
CREATE OR REPLACE FUNCTION memory_versions_bump() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    written text := CASE WHEN TG_OP = 'DELETE' THEN OLD.prefix ELSE NEW.prefix END;
BEGIN
    IF starts_with(written, 'memory_plugin.thread.') THEN
        RETURN NULL;
    END IF;
    IF TG_OP = 'DELETE' AND NOT EXISTS (SELECT 1 FROM store WHERE prefix = written) THEN
        DELETE FROM memory_versions WHERE scope = written;
    ELSE
        INSERT INTO memory_versions AS v (scope, version)
            VALUES (written, nextval('memory_versions_seq'))
            ON CONFLICT (scope) DO UPDATE SET version = excluded.version;
    END IF;
    RETURN NULL;
END $$
""",
    """
DROP TRIGGER IF EXISTS memory_versions_bump ON store
""",
    """
CREATE TRIGGER memory_versions_bump AFTER INSERT OR UPDATE OR DELETE ON store
    FOR EACH ROW EXECUTE FUNCTION memory_versions_bump()
""",
]
"""SQLITE_VERSION_TRIGGERS on PostgreSQL: versions from a sequence."""
PG_NOTE_FTS = """
INSERT INTO memory_note_fts (prefix, key, tsv, len)
SELECT prefix, key, doc,
       (SELECT coalesce(sum(coalesce(array_length(positions, 1), 1)), 0) FROM unnest(doc))
FROM (SELECT prefix, key, to_tsvector('english', value->>'text') AS doc FROM store
      WHERE starts_with(prefix, 'memory_plugin.') AND right(prefix, 6) = '.notes'
      AND value->'deleted' IS DISTINCT FROM 'true'::jsonb
      AND coalesce(value->>'text', '') <> '') AS live
ON CONFLICT DO NOTHING
"""
"""Index the live notes written before the trigger existed."""

PG_KEYWORD = f"""
WITH q AS (
    SELECT DISTINCT lexeme FROM unnest(to_tsvector('english', %(query)s))
), stats AS (
    SELECT docs::float8 AS n, greatest(total_len::float8 / greatest(docs, 1), 1.0) AS avglen
    FROM memory_note_stats WHERE prefix = %(prefix)s
), hits AS MATERIALIZED (
    SELECT t.lexeme, t.key, t.tf, t.len FROM q
    JOIN memory_note_terms t ON t.prefix = %(prefix)s AND t.lexeme = q.lexeme
), df AS (
    SELECT lexeme, count(*)::float8 AS df FROM hits GROUP BY lexeme
), ranked AS (
    SELECT h.key, sum(
        ln(1 + (stats.n - df.df + 0.5) / (df.df + 0.5)) * h.tf * {BM25_K1 + 1}
        / (h.tf + {BM25_K1} * (1 - {BM25_B} + {BM25_B} * h.len / stats.avglen))
    ) AS score
    FROM hits h JOIN df USING (lexeme), stats
    GROUP BY h.key ORDER BY score DESC, h.key LIMIT %(limit)s
)
SELECT r.key, r.score, s.value FROM ranked r
JOIN store s ON s.prefix = %(prefix)s AND s.key = r.key
ORDER BY r.score DESC, r.key
"""
PG_SMALL_SCOPE = (
    "SELECT count(*) <= %(most)s AS small FROM "
    "(SELECT 1 FROM store_vectors WHERE prefix = %(prefix)s LIMIT %(most)s + 1) AS scope"
)
PG_NEAREST = """
SELECT sv.key, 1 - (sv.embedding <=> %(vector)s::{kind}) AS score, s.value
FROM store_vectors sv JOIN store s ON s.prefix = sv.prefix AND s.key = sv.key
WHERE sv.prefix = %(prefix)s
ORDER BY sv.embedding <=> %(vector)s::{kind}
LIMIT %(limit)s
"""
PG_EXACT = """
WITH scope AS MATERIALIZED (
    SELECT sv.key, sv.embedding <=> %(vector)s::{kind} AS distance
    FROM store_vectors sv WHERE sv.prefix = %(prefix)s
), nearest AS (
    SELECT key, distance FROM scope ORDER BY distance, key LIMIT %(limit)s
)
SELECT n.key, 1 - n.distance AS score, s.value FROM nearest n
JOIN store s ON s.prefix = %(prefix)s AND s.key = n.key
ORDER BY n.distance, n.key
"""
PG_STORED_DIMS = (
    "SELECT atttypmod FROM pg_attribute "
    "WHERE attrelid = to_regclass('store_vectors') AND attname = 'embedding'"
)
SQLITE_SAMPLE = "SELECT embedding FROM store_vectors WHERE prefix = ? LIMIT 8"


def _count_change(row: str) -> str:
    """Trigger statement counting a vector write in the scope of `row` (old or new)."""
    return f"""
        INSERT INTO memory_vector_changes (prefix, n) VALUES ({row}.prefix, 1)
            ON CONFLICT (prefix) DO UPDATE SET n = n + 1;"""


SQLITE_VECTOR_TRIGGERS = [
    f"""CREATE TRIGGER IF NOT EXISTS memory_vector_changes_insert AFTER INSERT ON store_vectors
    BEGIN{_count_change("new")}
    END""",
    f"""CREATE TRIGGER IF NOT EXISTS memory_vector_changes_update AFTER UPDATE ON store_vectors
    BEGIN{_count_change("old")}{_count_change("new")}
    END""",
    f"""CREATE TRIGGER IF NOT EXISTS memory_vector_changes_delete AFTER DELETE ON store_vectors
    BEGIN{_count_change("old")}
    END""",
]
"""Count each scope's vector writes (memory_plugin.backends.vectors)."""
SQLITE_NEAREST = """
WITH nearest AS (
    SELECT key, {distance} AS distance FROM store_vectors
    WHERE prefix = ?{within} ORDER BY distance, key LIMIT ?
)
SELECT n.key, {score} AS score, s.value FROM nearest n
JOIN store s ON s.prefix = ? AND s.key = n.key
ORDER BY n.distance, n.key
"""
"""Formatted with `within` (SQLITE_WITHIN or nothing) and SQLITE_COSINE or SQLITE_UNIT."""
SQLITE_WITHIN = " AND key IN (SELECT value FROM json_each(?))"
SQLITE_COSINE = {"distance": "vec_distance_cosine(embedding, ?)", "score": "1.0 - n.distance"}
SQLITE_UNIT = {
    "distance": "vec_distance_l2(embedding, ?)",
    "score": "1.0 - n.distance * n.distance / 2.0",
}
SQLITE_VECTOR_COUNT = "SELECT count(*) FROM store_vectors WHERE prefix = ?"
SQLITE_VECTOR_ROWS = "SELECT key, embedding FROM store_vectors WHERE prefix = ?"

SQLITE_UNANALYSED = """
SELECT r.key, json_extract(s.value, '$.text')
FROM memory_note_rows AS r INDEXED BY memory_note_rows_unanalysed
CROSS JOIN store s ON s.prefix = r.prefix AND s.key = r.key
WHERE r.prefix = ? AND r.len IS NULL
"""
"""Reads the partial index of unanalysed rows, then the notes by key (CROSS JOIN fixes the
order): the planner would read the scope's every row."""
SQLITE_NOTE_VALUES = (
    "SELECT key, value FROM store WHERE prefix = ? AND key IN (SELECT value FROM json_each(?))"
)

PG_CLAIM_SEED = """
INSERT INTO memory_claims (prefix, grp, last)
SELECT %(prefix)s, %(grp)s, COALESCE(MAX(substr(key, %(digits)s)::bigint), 0) + %(n)s
FROM store WHERE prefix = %(prefix)s AND starts_with(key, %(head)s)
RETURNING last
"""
PG_INSERT_DATED = (
    "INSERT INTO store (prefix, key, value, created_at, updated_at) "
    "VALUES (%s, %s, %s, COALESCE(%s, NOW()), COALESCE(%s, NOW()))"
)
SQLITE_CLAIM_SEED = (
    "INSERT INTO memory_claims (prefix, grp, last) "
    "SELECT ?, ?, COALESCE(MAX(CAST(substr(key, ?) AS INTEGER)), 0) + ? FROM store "
    "WHERE prefix = ? AND key >= ? AND key < ? RETURNING last"
)
SQLITE_INSERT_DATED = (
    "INSERT INTO store (prefix, key, value, created_at, updated_at) "
    "VALUES (?, ?, ?, COALESCE(?, CURRENT_TIMESTAMP), COALESCE(?, CURRENT_TIMESTAMP))"
)

PG_INSERT_NEW = (
    "INSERT INTO store (prefix, key, value, created_at, updated_at) "
    "VALUES (%s, %s, %s, NOW(), NOW()) ON CONFLICT (prefix, key) DO NOTHING"
)
PG_UPDATE_IF_VERSION = (
    "UPDATE store SET value = %s, updated_at = NOW() "
    "WHERE prefix = %s AND key = %s AND (value->>'version')::bigint = %s"
)
PG_UPSERT = (
    "INSERT INTO store (prefix, key, value, created_at, updated_at) "
    "VALUES (%s, %s, %s, NOW(), NOW()) "
    "ON CONFLICT (prefix, key) DO UPDATE SET value = EXCLUDED.value, updated_at = NOW()"
)
SQLITE_READ_VALUE = "SELECT value FROM store WHERE prefix = ? AND key = ?"
SQLITE_INSERT_NEW = (
    "INSERT INTO store (prefix, key, value, created_at, updated_at) "
    "VALUES (?, ?, ?, CURRENT_TIMESTAMP, CURRENT_TIMESTAMP)"
)
SQLITE_UPDATE_VALUE = (
    "UPDATE store SET value = ?, updated_at = CURRENT_TIMESTAMP WHERE prefix = ? AND key = ?"
)
SQLITE_UPSERT = (
    "INSERT INTO store (prefix, key, value, created_at, updated_at) "
    "VALUES (?, ?, ?, CURRENT_TIMESTAMP, CURRENT_TIMESTAMP) "
    "ON CONFLICT (prefix, key) DO UPDATE SET value = excluded.value, "
    "updated_at = CURRENT_TIMESTAMP"
)
