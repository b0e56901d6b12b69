"""The days that hold live notes, newest first, found without reading the notes.

A note's key starts with its UTC day (`YYYY-MM-DD#position`). SQLite and PostgreSQL keep the
keys of live notes in the full-text index's row map (`memory_note_rows`, `memory_note_fts`,
both keyed by scope and note key), so each next older day is one descending index probe: the
greatest live key below the previous day. Other stores are read in Python: the in-memory
store's keys directly, any other store page by page.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import Any

from langgraph.store.base import BaseStore
from langgraph.store.memory import InMemoryStore
from langgraph.store.postgres import AsyncPostgresStore, PostgresStore
from langgraph.store.sqlite import SqliteStore
from langgraph.store.sqlite.aio import AsyncSqliteStore

from memory_plugin.backends.fts import (
    apg_search_connection,
    asqlite_search_connection,
    pg_search_connection,
    sqlite_search_connection,
)
from memory_plugin.plans import all_items_plan, arun, run

LATEST = "9999-99-99"
PAGE = 1_000


@dataclass(frozen=True)
class NoteDays:
    """Up to `limit` days before `before` (exclusive; None: any) on which the notes
    `namespace` holds a live note, newest first."""

    namespace: tuple[str, ...]
    before: str | None
    limit: int

    def run(self, store: BaseStore) -> list[str]:
        """The days, with the store's sync methods (see note_days)."""
        return note_days(store, self)

    async def arun(self, store: BaseStore) -> list[str]:
        """Async twin of run."""
        return await anote_days(store, self)


_SQLITE_DAYS = """
WITH RECURSIVE days(day, n) AS (
    SELECT (SELECT substr(key, 1, 10) FROM memory_note_rows
            WHERE prefix = ?1 AND key < ?2 ORDER BY key DESC LIMIT 1), 1
    UNION ALL
    SELECT (SELECT substr(key, 1, 10) FROM memory_note_rows
            WHERE prefix = ?1 AND key < days.day ORDER BY key DESC LIMIT 1), n + 1
    FROM days WHERE days.day IS NOT NULL AND n < ?3
)
SELECT day FROM days WHERE day IS NOT NULL ORDER BY n
"""
_PG_DAYS = """
WITH RECURSIVE days(day, n) AS (
    SELECT (SELECT substr(key, 1, 10) FROM memory_note_fts
            WHERE prefix = %(prefix)s AND key < %(before)s ORDER BY key DESC LIMIT 1), 1
    UNION ALL
    SELECT (SELECT substr(key, 1, 10) FROM memory_note_fts
            WHERE prefix = %(prefix)s AND key < days.day ORDER BY key DESC LIMIT 1), n + 1
    FROM days WHERE days.day IS NOT NULL AND n < %(limit)s
)
SELECT day FROM days WHERE day IS NOT NULL ORDER BY n
"""


def _prefix(namespace: tuple[str, ...]) -> str:
    return ".".join(namespace)


def _sqlite_args(request: NoteDays) -> tuple[Any, ...]:
    return (_prefix(request.namespace), request.before or LATEST, request.limit)


def _pg_params(request: NoteDays) -> dict[str, Any]:
    prefix, before, limit = _sqlite_args(request)
    return {"prefix": prefix, "before": before, "limit": limit}


def _day(row: Any) -> str:
    return str(row["day"] if isinstance(row, dict) else row[0])


def _live_day(value: Any) -> str | None:
    """The day of a live note's value, None for a tombstone or anything else."""
    if not isinstance(value, dict) or value.get("deleted") or not value.get("text"):
        return None
    day = value.get("day")
    return day if isinstance(day, str) else None


def _newest(values: list[Any], request: NoteDays) -> list[str]:
    before = request.before or LATEST
    days = {day for value in values if (day := _live_day(value)) is not None and day < before}
    return sorted(days, reverse=True)[: request.limit]


def _in_memory(store: InMemoryStore, request: NoteDays) -> list[str]:
    lock = getattr(store, "_lock", None)
    if lock is not None:
        with lock:
            items = list(store._data.get(request.namespace, {}).values())
    else:
        items = list(store._data.get(request.namespace, {}).values())
    return _newest([item.value for item in items], request)


def _paged(store: BaseStore, request: NoteDays) -> list[str]:
    items = run(store, all_items_plan(request.namespace, page=PAGE))
    return _newest([item.value for item in items], request)


async def _apaged(store: BaseStore, request: NoteDays) -> list[str]:
    items = await arun(store, all_items_plan(request.namespace, page=PAGE))
    return _newest([item.value for item in items], request)


def note_days(store: BaseStore, request: NoteDays) -> list[str]:
    """The days with live notes before `request.before`, newest first."""
    if request.limit <= 0:
        return []
    if isinstance(store, PostgresStore):
        with pg_search_connection(store) as conn:
            return [_day(row) for row in conn.execute(_PG_DAYS, _pg_params(request)).fetchall()]
    if isinstance(store, SqliteStore):
        with sqlite_search_connection(store) as conn:
            return [_day(row) for row in conn.execute(_SQLITE_DAYS, _sqlite_args(request))]
    if isinstance(store, InMemoryStore):
        return _in_memory(store, request)
    return _paged(store, request)


async def anote_days(store: BaseStore, request: NoteDays) -> list[str]:
    """Async twin of note_days."""
    if request.limit <= 0:
        return []
    if isinstance(store, AsyncPostgresStore):
        async with apg_search_connection(store) as conn:
            cur = await conn.execute(_PG_DAYS, _pg_params(request))
            return [_day(row) for row in await cur.fetchall()]
    if isinstance(store, AsyncSqliteStore):
        async with asqlite_search_connection(store) as conn:
            rows = await conn.execute_fetchall(_SQLITE_DAYS, _sqlite_args(request))
            return [_day(row) for row in rows]
    if isinstance(store, InMemoryStore):
        return _in_memory(store, request)
    if isinstance(store, SqliteStore | PostgresStore):
        return await asyncio.to_thread(note_days, store, request)
    return await _apaged(store, request)
