"""LangGraph's store and checkpoint tables still hold every table, column and index the
statements of memory_plugin.backends.langgraph_tables and checkpoint_tables rely on (their
RELIES_ON), read from the catalogs of stores and savers LangGraph set up on SQLite and
PostgreSQL, and the savers memory_plugin opens have the members checkpoint_tables runs on (its
SAVER_API); docs/partitioned.sql holds the store's tables too and marks as run exactly the
LangGraph migrations there are."""

from __future__ import annotations

import re
import sqlite3
from collections.abc import Iterator
from importlib.metadata import version
from pathlib import Path
from typing import Any

import psycopg
from langgraph.store.postgres.base import MIGRATIONS, VECTOR_MIGRATIONS

import memory_plugin
from memory_plugin import aconnect, connect
from memory_plugin.backends import checkpoint_tables
from memory_plugin.backends.langgraph_tables import PG_STORED_DIMS, RELIES_ON, Index, Schema
from tests.embeddings import INDEX

PARTITIONED = Path(__file__).parent.parent / "docs" / "partitioned.sql"
VERSIONS = ", ".join(
    f"{name} {version(name)}"
    for name in ("langgraph", "langgraph-checkpoint-postgres", "langgraph-checkpoint-sqlite")
)
_PG_COLUMNS = (
    "SELECT table_name, column_name, udt_name FROM information_schema.columns "
    "WHERE table_schema = current_schema() AND table_name = ANY(%s)"
)
_PG_INDEXES = (
    "SELECT indexname, indexdef FROM pg_indexes "
    "WHERE schemaname = current_schema() AND tablename = ANY(%s)"
)
_PG_INDEX = re.compile(
    r"CREATE (UNIQUE )?INDEX \S+ ON (?:ONLY )?(?:\S+\.)?(\S+) USING (\w+) \((.*?)\)"
)

_TABLE = re.compile(r"\s(?:store|store_vectors|checkpoints|checkpoint_\w+)\b")
_STATEMENT = {"from", "into", "update", "join", "table"}
_PRIVATE = re.compile(r"\._cursor\(|saver\.(?:conn|lock)\b")
"""A saver's private members."""

Columns = dict[str, dict[str, str]]
"""A catalog's columns: table, column, type."""


def _assert_holds(schema: Schema, columns: Columns, indexes: dict[str, Index]) -> None:
    """Fail naming each table, column and index of `schema` the catalog lacks or has changed."""
    lacking = []
    for table, wanted in schema.columns.items():
        if table not in columns:
            lacking.append(f"table {table}")
            continue
        for column, kind in wanted.items():
            found = columns[table].get(column)
            if found != kind:
                lacking.append(f"column {table}.{column} {kind} (found: {found})")
    for name, index in schema.indexes.items():
        if indexes.get(name) != index:
            lacking.append(f"index {name}: {index} (found: {indexes.get(name)})")
    assert not lacking, f"LangGraph's tables moved ({VERSIONS}): {'; '.join(lacking)}"


def _pg_catalog(
    conn: psycopg.Connection[Any], schema: Schema = RELIES_ON["postgres"]
) -> tuple[Columns, dict[str, Index]]:
    tables = list(schema.columns)
    columns: Columns = {}
    for table, column, kind in conn.execute(_PG_COLUMNS, (tables,)).fetchall():
        columns.setdefault(table, {})[column] = kind
    indexes = {}
    for name, definition in conn.execute(_PG_INDEXES, (tables,)).fetchall():
        found = _PG_INDEX.match(definition)
        assert found, f"an index definition this test cannot read: {definition}"
        unique, table, method, listed = found.groups()
        indexes[name] = Index(table, tuple(listed.split(", ")), bool(unique), method)
    return columns, indexes


def _sqlite_catalog(
    conn: sqlite3.Connection, schema: Schema = RELIES_ON["sqlite"]
) -> tuple[Columns, dict[str, Index]]:
    tables = {
        name for (name,) in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")
    }
    columns: Columns = {}
    indexes = {}
    for table in tables & set(schema.columns):
        for _, column, kind, *_ in conn.execute(f"PRAGMA table_info({table})"):
            columns.setdefault(table, {})[column] = kind.lower()
        for _, name, unique, *_ in conn.execute(f"PRAGMA index_list({table})"):
            listed = tuple(column for _, _, column in conn.execute(f"PRAGMA index_info({name})"))
            indexes[name] = Index(table, listed, bool(unique))
    return columns, indexes


def test_sqlite_store_holds_what_the_statements_rely_on(tmp_path: Path) -> None:
    path = tmp_path / "memory.db"
    with connect(f"sqlite:///{path}", index=INDEX) as backend:
        assert backend.vector_search, "sqlite-vec is needed to create store_vectors"
    with sqlite3.connect(path) as conn:
        _assert_holds(RELIES_ON["sqlite"], *_sqlite_catalog(conn))


def test_postgres_store_holds_what_the_statements_rely_on(scratch_postgres_url: str) -> None:
    with connect(scratch_postgres_url, index=INDEX) as backend:
        assert backend.vector_search, "pgvector is needed to create store_vectors"
    with psycopg.connect(scratch_postgres_url) as conn:
        _assert_holds(RELIES_ON["postgres"], *_pg_catalog(conn))
        stored = conn.execute(PG_STORED_DIMS).fetchone()
    assert stored == (INDEX["dims"],), (
        f"store_vectors.embedding's type modifier is not its dimension count ({VERSIONS})"
    )


def test_partitioned_schema_holds_what_the_statements_rely_on(scratch_postgres_url: str) -> None:
    """docs/partitioned.sql stands in for LangGraph's migrations: it holds what the statements
    rely on (but the HNSW index: it is ranked exactly) and marks every migration run."""
    with psycopg.connect(scratch_postgres_url, autocommit=True) as conn:
        conn.execute(PARTITIONED.read_text())  # type: ignore[call-overload]
        columns, indexes = _pg_catalog(conn)
        marked = {
            table: [v for (v,) in conn.execute(f"SELECT v FROM {table} ORDER BY v")]
            for table in ("store_migrations", "vector_migrations")
        }
    schema = RELIES_ON["postgres"]
    exact = {name: index for name, index in schema.indexes.items() if index.method != "hnsw"}
    _assert_holds(Schema(schema.columns, exact), columns, indexes)
    assert marked == {
        "store_migrations": list(range(len(MIGRATIONS))),
        "vector_migrations": list(range(len(VECTOR_MIGRATIONS))),
    }, f"docs/partitioned.sql marks {marked} run; LangGraph's migrations changed ({VERSIONS})"


def _assert_has_api(saver: Any) -> None:
    """Fail naming each member of SAVER_API the saver (a LangGraph saver) lacks."""
    kinds = [kind for kind in checkpoint_tables.SAVER_API if isinstance(saver, kind)]
    assert kinds, f"{type(saver).__name__} is no saver checkpoint_tables reads"
    lacking = [
        f"{kind.__name__}.{name}"
        for kind in kinds
        for name in checkpoint_tables.SAVER_API[kind]
        if not hasattr(saver, name)
    ]
    assert not lacking, f"LangGraph's savers moved ({VERSIONS}): {', '.join(lacking)}"


async def test_sqlite_checkpointer_holds_what_the_statements_rely_on(tmp_path: Path) -> None:
    path = tmp_path / "memory.db"
    with connect(f"sqlite:///{path}") as backend:
        _assert_has_api(backend.checkpointer)
    async with aconnect(f"sqlite:///{path}") as abackend:
        _assert_has_api(abackend.checkpointer)
    schema = checkpoint_tables.RELIES_ON["sqlite"]
    with sqlite3.connect(path) as conn:
        _assert_holds(schema, *_sqlite_catalog(conn, schema))


async def test_postgres_checkpointer_holds_what_the_statements_rely_on(
    scratch_postgres_url: str,
) -> None:
    with connect(scratch_postgres_url) as backend:
        _assert_has_api(backend.checkpointer)
    async with aconnect(scratch_postgres_url) as abackend:
        _assert_has_api(abackend.checkpointer)
    schema = checkpoint_tables.RELIES_ON["postgres"]
    with psycopg.connect(scratch_postgres_url) as conn:
        _assert_holds(schema, *_pg_catalog(conn, schema))


def _fenced(source: str) -> Iterator[int]:
    """The offsets in `source` of SQL on LangGraph's tables and of a saver's private members."""
    for found in _TABLE.finditer(source):
        words = source[max(found.start() - 8, 0) : found.start()].split()
        if words and words[-1].lower() in _STATEMENT:
            yield found.start()
    yield from (found.start() for found in _PRIVATE.finditer(source))


def fence_breaks(root: Path) -> list[str]:
    """Each line of a module under `root` outside backends/ that runs SQL on LangGraph's tables
    or uses a saver's private members."""
    found = []
    for path in sorted(root.rglob("*.py")):
        if path.relative_to(root).parts[0] == "backends":
            continue
        source = path.read_text(encoding="utf-8")
        lines = source.splitlines()
        numbers = sorted({source.count("\n", 0, at) for at in _fenced(source)})
        found += [f"{path.relative_to(root)}:{n + 1}: {lines[n].strip()}" for n in numbers]
    return found


def test_only_the_backends_touch_langgraph_tables(tmp_path: Path) -> None:
    found = fence_breaks(Path(memory_plugin.__file__).parent)
    assert not found, "move it into memory_plugin.backends, beside its RELIES_ON:\n" + "\n".join(
        found
    )
    (tmp_path / "backends").mkdir()
    (tmp_path / "backends" / "tables.py").write_text('Q = "SELECT 1 FROM checkpoints"\n')
    (tmp_path / "owners.py").write_text(
        'Q = "select thread_id from checkpoints"\nasync with saver._cursor() as cur:\n'
    )
    assert fence_breaks(tmp_path) == [
        'owners.py:1: Q = "select thread_id from checkpoints"',
        "owners.py:2: async with saver._cursor() as cur:",
    ]
