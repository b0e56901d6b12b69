-- The plugin's large tables, hash-partitioned by scope (see docs/large-stores.md).
--
-- Run once on an empty database, before the first app server connects:
--     psql "$MEMORY_URL" -f docs/partitioned.sql
-- then connect with `ann_index_config: {"kind": "flat"}` in the index config (per-scope
-- exact vector ranking; LangGraph's CONCURRENTLY-built HNSW index cannot be created on a
-- partitioned table). Every per-scope query names its prefix, so it reads one partition.
-- `vector(384)` is the embedding's dimension count: change it to yours.

CREATE EXTENSION IF NOT EXISTS vector;

CREATE TABLE store (
    prefix text NOT NULL,
    key text NOT NULL,
    value jsonb NOT NULL,
    created_at timestamptz DEFAULT CURRENT_TIMESTAMP,
    updated_at timestamptz DEFAULT CURRENT_TIMESTAMP,
    expires_at timestamptz,
    ttl_minutes integer,
    PRIMARY KEY (prefix, key)
) PARTITION BY HASH (prefix);
CREATE INDEX store_prefix_idx ON store USING btree (prefix text_pattern_ops);
CREATE INDEX idx_store_expires_at ON store USING btree (expires_at)
    WHERE expires_at IS NOT NULL;

CREATE TABLE store_vectors (
    prefix text NOT NULL,
    key text NOT NULL,
    field_name text NOT NULL,
    embedding vector(384),
    created_at timestamptz DEFAULT CURRENT_TIMESTAMP,
    updated_at timestamptz DEFAULT CURRENT_TIMESTAMP,
    PRIMARY KEY (prefix, key, field_name),
    FOREIGN KEY (prefix, key) REFERENCES store (prefix, key) ON DELETE CASCADE
) PARTITION BY HASH (prefix);

CREATE TABLE memory_note_fts (
    prefix text NOT NULL,
    key text NOT NULL,
    tsv tsvector NOT NULL,
    len integer NOT NULL,
    PRIMARY KEY (prefix, key)
) PARTITION BY HASH (prefix);

CREATE TABLE memory_note_terms (
    prefix text NOT NULL,
    lexeme text NOT NULL,
    key text NOT NULL,
    tf integer NOT NULL,
    len integer NOT NULL,
    PRIMARY KEY (prefix, lexeme, key)
) PARTITION BY HASH (prefix);

-- 32 partitions per table: change both 32s together.
DO $$
BEGIN
    FOR n IN 0..31 LOOP
        EXECUTE format('CREATE TABLE store_p%s PARTITION OF store '
            'FOR VALUES WITH (MODULUS 32, REMAINDER %s)', n, n);
        EXECUTE format('CREATE TABLE store_vectors_p%s PARTITION OF store_vectors '
            'FOR VALUES WITH (MODULUS 32, REMAINDER %s)', n, n);
        EXECUTE format('CREATE TABLE memory_note_fts_p%s PARTITION OF memory_note_fts '
            'FOR VALUES WITH (MODULUS 32, REMAINDER %s)', n, n);
        EXECUTE format('CREATE TABLE memory_note_terms_p%s PARTITION OF memory_note_terms '
            'FOR VALUES WITH (MODULUS 32, REMAINDER %s)', n, n);
    END LOOP;
END $$;

-- LangGraph's store and vector migrations this schema already holds (store 0-3, vectors
-- 0-2); the two that build indexes CONCURRENTLY cannot run on a partitioned table. The
-- checkpointer's and the plugin's own migrations run as usual on first connect.
CREATE TABLE store_migrations (v integer PRIMARY KEY);
INSERT INTO store_migrations (v) VALUES (0), (1), (2), (3);
CREATE TABLE vector_migrations (v integer PRIMARY KEY);
INSERT INTO vector_migrations (v) VALUES (0), (1), (2);
