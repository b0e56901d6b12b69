"""Empty the tables LangGraph and the plugin keep in a PostgreSQL database (tests, benches)."""

from __future__ import annotations

import psycopg

_TABLES = """
SELECT tablename FROM pg_tables
WHERE schemaname = 'public' AND tablename NOT LIKE '%migrations'
  AND (tablename LIKE 'store%' OR tablename LIKE 'checkpoint%' OR tablename LIKE 'memory\\_%')
"""


def empty_postgres(url: str, *, drop_vectors: bool = False) -> None:
    """Truncate the store's, the checkpointer's and the plugin's tables; with `drop_vectors`,
    drop the vector table (its width is fixed by the first store that created it) so the next
    store creates it at its own width."""
    with psycopg.connect(url, autocommit=True) as conn:
        if drop_vectors:
            conn.execute("DROP TABLE IF EXISTS store_vectors")
            conn.execute("DROP TABLE IF EXISTS vector_migrations")
        tables = [row[0] for row in conn.execute(_TABLES).fetchall()]
        if tables:
            conn.execute("TRUNCATE " + ", ".join(f'"{t}"' for t in tables))
