"""Search operations for plans: keyword (BM25) and vector (cosine) search in one namespace.

`KeywordSearch` reads a notes namespace and ranks by BM25 with the scope's own statistics
(its notes, their average length, the notes holding each term), so another scope's notes
never change a result: SQLite over postings of the notes analysed in Python
(memory_plugin.backends.keywords), PostgreSQL over the postings of `english` tsvectors, any
other store in Python over the namespace's live items; both SQLite and the others stem with
Snowball English through `search_terms`, so their scores are equal. English stopwords are
dropped from every query; a query of stopwords alone matches nothing.

`VectorSearch` reads a namespace whose items are in the store's vector index. PostgreSQL
ranks a scope of up to `EXACT_MAX` vectors exactly; a larger one it asks the HNSW index
with its search breadth (hnsw.ef_search) set from the limit, and scans the scope exactly
when the index, which filters by scope after the fact, found fewer than the limit. SQLite
scans the scope's vectors with sqlite-vec, a large scope shortlisted first from a cached
matrix (memory_plugin.backends.vectors); any other store runs its own search. Every
backend returns up to `limit` results, best first.

`LiveKeys` says which of some keys are live notes without reading them: from the full-text
index's row map on SQLite and PostgreSQL, from the items elsewhere.
"""

from __future__ import annotations

import asyncio
import math
from array import array
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import orjson
import sqlite_vec
from langgraph.store.base import BaseStore, GetOp, Item, SearchItem
from langgraph.store.postgres import AsyncPostgresStore, PostgresStore
from langgraph.store.sqlite import SqliteStore
from langgraph.store.sqlite.aio import AsyncSqliteStore

from memory_plugin.backends import keywords, vectors
from memory_plugin.backends.fts import (
    apg_search_connection,
    asqlite_search_connection,
    pg_search_connection,
    sqlite_search_connection,
)
from memory_plugin.backends.langgraph_tables import (
    PG_EXACT,
    PG_KEYWORD,
    PG_NEAREST,
    PG_SMALL_SCOPE,
    SQLITE_SAMPLE,
)
from memory_plugin.backends.steps import adrive, drive
from memory_plugin.compat import pg_async_connections, pg_connections
from memory_plugin.plans import all_items_plan, arun, run
from memory_plugin.text import bm25_scores, query_words, search_terms

PAGE = 1_000
MAX_EF_SEARCH = 1_000
EXACT_MAX = 5_000
"""PostgreSQL ranks a scope of at most this many vectors exactly rather than by HNSW."""


@dataclass(frozen=True)
class Scored:
    """One search result: the item's key, its score (higher is better) and its value."""

    key: str
    score: float
    value: dict[str, Any] | None


@dataclass(frozen=True)
class KeywordSearch:
    """The live notes of `namespace` matching `query`, best BM25 score first, at most `limit`."""

    namespace: tuple[str, ...]
    query: str
    limit: int

    def run(self, store: BaseStore) -> list[Scored]:
        """The result, with the store's sync methods (see keyword_search)."""
        return keyword_search(store, self)

    async def arun(self, store: BaseStore) -> list[Scored]:
        """Async twin of run."""
        return await akeyword_search(store, self)


@dataclass(frozen=True)
class VectorSearch:
    """The items of `namespace` nearest to `query` by cosine similarity, at most `limit`;
    fails when the store has no vector index."""

    namespace: tuple[str, ...]
    query: str
    limit: int

    def run(self, store: BaseStore) -> list[Scored]:
        """The result, with the store's sync methods (see vector_search)."""
        return vector_search(store, self)

    async def arun(self, store: BaseStore) -> list[Scored]:
        """Async twin of run."""
        return await avector_search(store, self)


@dataclass(frozen=True)
class LiveKeys:
    """Which of `keys` are live notes of the notes `namespace` (not deleted, with text)."""

    namespace: tuple[str, ...]
    keys: tuple[str, ...]

    def run(self, store: BaseStore) -> set[str]:
        """The result, with the store's sync methods (see live_keys)."""
        return live_keys(store, self)

    async def arun(self, store: BaseStore) -> set[str]:
        """Async twin of run."""
        return await alive_keys(store, self)


_SQLITE_LIVE = (
    "SELECT key FROM memory_note_rows WHERE prefix = ? AND key IN (SELECT value FROM json_each(?))"
)
_PG_LIVE = "SELECT key FROM memory_note_fts WHERE prefix = %s AND key = ANY(%s)"
"""Run unprepared: a prepared statement's generic plan reads the whole scope and filters it
by the keys (227 ms for 1,000 keys in a 25,000-note scope), a plan for the keys given probes
the index once per key (1.6 ms)."""
_PG_EF = "SELECT set_config('hnsw.ef_search', %s, true)"
UNIT_TOLERANCE = 1e-3


def _prefix(namespace: tuple[str, ...]) -> str:
    return ".".join(namespace)


def _row(row: Any) -> tuple[Any, ...]:
    return (row["key"], row["score"], row["value"]) if isinstance(row, dict) else tuple(row)


def _pg_scored(rows: Any) -> list[Scored]:
    scored = []
    for row in rows:
        key, score, value = _row(row)
        scored.append(Scored(key, float(score), dict(value)))
    return scored


def _python_scored(query: str, items: list[Item], limit: int) -> list[Scored]:
    live = [i for i in items if not i.value.get("deleted") and _has_text(i.value)]
    scores = bm25_scores(query, [(i.key, i.value["text"]) for i in live], analyze=search_terms)
    by_key = {item.key: item for item in live}
    best = sorted(scores, key=lambda key: (-scores[key], key))[:limit]
    return [Scored(key, scores[key], dict(by_key[key].value)) for key in best]


def _vector_kind(store: BaseStore) -> str:
    config = getattr(store, "index_config", None) or {}
    kind = config.get("ann_index_config", {}).get("vector_type", "vector")
    return "halfvec" if kind == "halfvec" else "vector"


def _small_params(params: dict[str, Any]) -> dict[str, Any]:
    return {"prefix": params["prefix"], "most": EXACT_MAX}


def _small(row: Any) -> bool:
    return bool(row["small"] if isinstance(row, dict) else row[0])


def _ef_search(limit: int) -> str:
    return str(min(MAX_EF_SEARCH, max(40, 2 * limit)))


def _require_index(store: BaseStore) -> Any:
    embeddings = getattr(store, "embeddings", None)
    if getattr(store, "index_config", None) is None:
        raise ValueError(f"{type(store).__name__} has no vector index: no semantic search")
    return embeddings


def _pg_vector_params(request: VectorSearch, vector: list[float]) -> dict[str, Any]:
    return {
        "vector": "[" + ",".join(repr(float(x)) for x in vector) + "]",
        "prefix": _prefix(request.namespace),
        "limit": request.limit,
    }


def _items(store: BaseStore, namespace: tuple[str, ...]) -> list[Item]:
    return run(store, all_items_plan(namespace, page=PAGE))


async def _aitems(store: BaseStore, namespace: tuple[str, ...]) -> list[Item]:
    return await arun(store, all_items_plan(namespace, page=PAGE))


def _from_search(found: list[SearchItem]) -> list[Scored]:
    return [Scored(i.key, float(i.score), dict(i.value)) for i in found if i.score is not None]


def _has_text(value: dict[str, Any]) -> bool:
    text = value.get("text")
    return isinstance(text, str) and text != ""


def _live(results: Sequence[Any]) -> set[str]:
    """The keys of the live notes among GetOp results."""
    return {
        item.key
        for item in results
        if isinstance(item, Item) and not item.value.get("deleted") and _has_text(item.value)
    }


def _live_ops(request: LiveKeys) -> list[GetOp]:
    return [GetOp(request.namespace, key) for key in request.keys]


def live_keys(store: BaseStore, request: LiveKeys) -> set[str]:
    """The live notes among the keys, read from the full-text index's row map where there is
    one (no note is parsed), else from the items."""
    if not request.keys:
        return set()
    prefix = _prefix(request.namespace)
    if isinstance(store, PostgresStore):
        with pg_search_connection(store) as conn:
            rows = conn.execute(_PG_LIVE, (prefix, list(request.keys)), prepare=False).fetchall()
            return {row["key"] if isinstance(row, dict) else row[0] for row in rows}
    if isinstance(store, SqliteStore):
        with sqlite_search_connection(store):
            args = (prefix, orjson.dumps(request.keys).decode())
            return {key for (key,) in store.conn.execute(_SQLITE_LIVE, args).fetchall()}
    return _live(store.batch(_live_ops(request)))


async def alive_keys(store: BaseStore, request: LiveKeys) -> set[str]:
    """Async twin of live_keys."""
    if not request.keys:
        return set()
    prefix = _prefix(request.namespace)
    if isinstance(store, AsyncPostgresStore):
        async with apg_search_connection(store) as conn:
            cur = await conn.execute(_PG_LIVE, (prefix, list(request.keys)), prepare=False)
            return {row["key"] if isinstance(row, dict) else row[0] for row in await cur.fetchall()}
    if isinstance(store, AsyncSqliteStore):
        async with asqlite_search_connection(store):
            args = (prefix, orjson.dumps(request.keys).decode())
            return {key for (key,) in await store.conn.execute_fetchall(_SQLITE_LIVE, args)}
    if isinstance(store, SqliteStore | PostgresStore):
        return await asyncio.to_thread(live_keys, store, request)
    return _live(await store.abatch(_live_ops(request)))


def _sqlite_scored(rows: list[tuple[str, float, Any]]) -> list[Scored]:
    return [Scored(key, score, orjson.loads(value)) for key, score, value in rows]


def keyword_search(store: BaseStore, request: KeywordSearch) -> list[Scored]:
    """Run a keyword search on the store's own full-text index, else in Python."""
    words = query_words(request.query)
    if not words or request.limit <= 0:
        return []
    prefix = _prefix(request.namespace)
    if isinstance(store, PostgresStore):
        params = {"query": " ".join(words), "prefix": prefix, "limit": request.limit}
        with pg_search_connection(store) as conn:
            return _pg_scored(conn.execute(PG_KEYWORD, params).fetchall())
    if isinstance(store, SqliteStore):
        steps = keywords.search_steps(prefix, request.query, request.limit)
        with sqlite_search_connection(store) as conn:
            found = drive(
                steps, lambda sql, args: conn.execute(sql, args).fetchall(), conn.executemany
            )
            return _sqlite_scored(found)
    return _python_scored(request.query, _items(store, request.namespace), request.limit)


async def akeyword_search(store: BaseStore, request: KeywordSearch) -> list[Scored]:
    """Async twin of keyword_search."""
    words = query_words(request.query)
    if not words or request.limit <= 0:
        return []
    prefix = _prefix(request.namespace)
    if isinstance(store, AsyncPostgresStore):
        params = {"query": " ".join(words), "prefix": prefix, "limit": request.limit}
        async with apg_search_connection(store) as conn:
            cur = await conn.execute(PG_KEYWORD, params)
            return _pg_scored(await cur.fetchall())
    if isinstance(store, AsyncSqliteStore):
        steps = keywords.search_steps(prefix, request.query, request.limit)
        async with asqlite_search_connection(store) as conn:
            return _sqlite_scored(await adrive(steps, conn.execute_fetchall, conn.executemany))
    if isinstance(store, SqliteStore | PostgresStore):
        return await asyncio.to_thread(keyword_search, store, request)
    return _python_scored(request.query, await _aitems(store, request.namespace), request.limit)


def vector_search(store: BaseStore, request: VectorSearch) -> list[Scored]:
    """Run a semantic search on the store's vector index, complete within the namespace."""
    embeddings = _require_index(store)
    if request.limit <= 0:
        return []
    if isinstance(store, PostgresStore):
        params = _pg_vector_params(request, embeddings.embed_query(request.query))
        kind = _vector_kind(store)
        with pg_connections.get_connection(store.conn) as conn, conn.transaction():
            small = _small(conn.execute(PG_SMALL_SCOPE, _small_params(params)).fetchone())
            rows = []
            if not small:
                conn.execute(_PG_EF, (_ef_search(request.limit),))
                rows = conn.execute(PG_NEAREST.format(kind=kind), params).fetchall()
            if len(rows) < request.limit:
                rows = conn.execute(PG_EXACT.format(kind=kind), params).fetchall()
            return _pg_scored(rows)
    if isinstance(store, SqliteStore):
        query = embeddings.embed_query(request.query)
        prefix = _prefix(request.namespace)
        blob = sqlite_vec.serialize_float32(query)
        with store.lock:
            if not vectors.is_set_up(store):
                for statement in vectors.SCHEMA:
                    store.conn.execute(statement)
                vectors.set_up(store)
            sample = store.conn.execute(SQLITE_SAMPLE, (prefix,)).fetchall()
            unit = _sqlite_unit(query, sample)
            steps = vectors.nearest_steps(store, prefix, query, blob, request.limit, unit)
            rows = drive(steps, lambda sql, args: store.conn.execute(sql, args).fetchall())
        return _sqlite_scored_vector(rows)
    return _from_search(store.search(request.namespace, query=request.query, limit=request.limit))


async def avector_search(store: BaseStore, request: VectorSearch) -> list[Scored]:
    """Async twin of vector_search."""
    embeddings = _require_index(store)
    if request.limit <= 0:
        return []
    if isinstance(store, AsyncPostgresStore):
        params = _pg_vector_params(request, await embeddings.aembed_query(request.query))
        kind = _vector_kind(store)
        async with (
            pg_async_connections.get_connection(store.conn) as conn,
            conn.transaction(),
        ):
            cur = await conn.execute(PG_SMALL_SCOPE, _small_params(params))
            small = _small(await cur.fetchone())
            rows = []
            if not small:
                await conn.execute(_PG_EF, (_ef_search(request.limit),))
                cur = await conn.execute(PG_NEAREST.format(kind=kind), params)
                rows = await cur.fetchall()
            if len(rows) < request.limit:
                cur = await conn.execute(PG_EXACT.format(kind=kind), params)
                rows = await cur.fetchall()
            return _pg_scored(rows)
    if isinstance(store, AsyncSqliteStore):
        if not store.is_setup:
            await store.setup()
        query = await embeddings.aembed_query(request.query)
        prefix = _prefix(request.namespace)
        blob = sqlite_vec.serialize_float32(query)
        async with store.lock:
            if not vectors.is_set_up(store):
                for statement in vectors.SCHEMA:
                    await store.conn.execute(statement)
                vectors.set_up(store)
            sample = await store.conn.execute_fetchall(SQLITE_SAMPLE, (prefix,))
            unit = _sqlite_unit(query, sample)
            steps = vectors.nearest_steps(store, prefix, query, blob, request.limit, unit)
            found_rows = await adrive(steps, store.conn.execute_fetchall)
        return _sqlite_scored_vector(found_rows)
    if isinstance(store, SqliteStore | PostgresStore):
        return await asyncio.to_thread(vector_search, store, request)
    found = await store.asearch(request.namespace, query=request.query, limit=request.limit)
    return _from_search(found)


def _unit(vector: Sequence[float]) -> bool:
    return abs(math.sqrt(sum(x * x for x in vector)) - 1.0) < UNIT_TOLERANCE


def _sqlite_unit(query: Sequence[float], sample: Any) -> bool:
    """Whether the query and a sample of the scope's vectors are unit length: then L2
    distance orders as cosine does, and sqlite-vec computes it several times faster."""
    stored = [array("f", bytes(row[0])) for row in sample]
    return _unit(query) and all(map(_unit, stored))


def _sqlite_scored_vector(rows: Any) -> list[Scored]:
    return [Scored(key, float(score), orjson.loads(value)) for key, score, value in rows]
