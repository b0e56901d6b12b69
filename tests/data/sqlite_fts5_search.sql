-- The SQLite search schema before per-scope statistics (commit 7e93a97): an FTS5 table,
-- its row map and triggers, then the backfill of existing notes. tests/test_search.py
-- turns a store into one written by that code to test the upgrade.
CREATE TABLE IF NOT EXISTS memory_claims (
        prefix TEXT NOT NULL, grp TEXT NOT NULL, last INTEGER NOT NULL,
        PRIMARY KEY (prefix, grp));

CREATE TABLE IF NOT EXISTS memory_note_rows (
        id INTEGER PRIMARY KEY, prefix TEXT NOT NULL, key TEXT NOT NULL,
        UNIQUE (prefix, key));

CREATE VIRTUAL TABLE IF NOT EXISTS memory_note_fts
        USING fts5(scope, text, tokenize = 'porter unicode61');

CREATE TRIGGER IF NOT EXISTS memory_note_fts_insert AFTER INSERT ON store
    WHEN new.prefix GLOB 'memory_plugin.*.notes' BEGIN
        DELETE FROM memory_note_fts WHERE rowid =
            (SELECT id FROM memory_note_rows WHERE prefix = new.prefix AND key = new.key);
        DELETE FROM memory_note_rows WHERE prefix = new.prefix AND key = new.key;
        INSERT INTO memory_note_rows (prefix, key) SELECT new.prefix, new.key
            WHERE json_extract(new.value, '$.deleted') IS NOT 1
            AND coalesce(json_extract(new.value, '$.text'), '') <> '';
        INSERT INTO memory_note_fts (rowid, scope, text)
            SELECT id, 's' || hex(new.prefix), json_extract(new.value, '$.text')
            FROM memory_note_rows WHERE prefix = new.prefix AND key = new.key;
    END;

CREATE TRIGGER IF NOT EXISTS memory_note_fts_update AFTER UPDATE ON store
    WHEN old.prefix GLOB 'memory_plugin.*.notes' OR new.prefix GLOB 'memory_plugin.*.notes' BEGIN
        DELETE FROM memory_note_fts WHERE rowid =
            (SELECT id FROM memory_note_rows WHERE prefix = old.prefix AND key = old.key);
        DELETE FROM memory_note_rows WHERE prefix = old.prefix AND key = old.key;
        INSERT INTO memory_note_rows (prefix, key) SELECT new.prefix, new.key
            WHERE new.prefix GLOB 'memory_plugin.*.notes'
            AND json_extract(new.value, '$.deleted') IS NOT 1
            AND coalesce(json_extract(new.value, '$.text'), '') <> '';
        INSERT INTO memory_note_fts (rowid, scope, text)
            SELECT id, 's' || hex(new.prefix), json_extract(new.value, '$.text')
            FROM memory_note_rows WHERE prefix = new.prefix AND key = new.key;
    END;

CREATE TRIGGER IF NOT EXISTS memory_note_fts_delete AFTER DELETE ON store
    WHEN old.prefix GLOB 'memory_plugin.*.notes' BEGIN
        DELETE FROM memory_note_fts WHERE rowid =
            (SELECT id FROM memory_note_rows WHERE prefix = old.prefix AND key = old.key);
        DELETE FROM memory_note_rows WHERE prefix = old.prefix AND key = old.key;
    END;

INSERT OR IGNORE INTO memory_note_rows (prefix, key) SELECT prefix, key FROM store
        WHERE prefix GLOB 'memory_plugin.*.notes' AND json_extract(value, '$.deleted') IS NOT 1
        AND coalesce(json_extract(value, '$.text'), '') <> '';

INSERT INTO memory_note_fts (rowid, scope, text)
        SELECT r.id, 's' || hex(r.prefix), json_extract(s.value, '$.text')
        FROM memory_note_rows r JOIN store s ON s.prefix = r.prefix AND s.key = r.key
        WHERE r.id NOT IN (SELECT rowid FROM memory_note_fts);
