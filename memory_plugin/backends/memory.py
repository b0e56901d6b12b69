"""In-memory backend: InMemoryStore and InMemorySaver, for tests and throwaway runs."""

from __future__ import annotations

import itertools
import threading
from collections.abc import Iterable
from typing import Any

from langgraph.checkpoint.memory import InMemorySaver
from langgraph.store.base import Op, Result
from langgraph.store.memory import InMemoryStore

from memory_plugin.backends.base import Opened
from memory_plugin.backends.versions import bump
from memory_plugin.backends.writes_seen import wrote_ops
from memory_plugin.serde import CachingSerializer


class LockedInMemoryStore(InMemoryStore):
    """InMemoryStore safe to use from many threads at once.

    InMemoryStore reads and writes plain dicts: a search or a get of a new namespace while
    another thread writes raises "dictionary changed size during iteration". Here every read
    and write of its dicts holds one lock; embedding calls run outside it. Each distinct text
    of a batch is embedded once and its vector indexes every item holding that text
    (InMemoryStore itself refuses a batch in which two items share a text). It keeps each
    namespace's version (memory_plugin.backends.versions) and moves the write generation
    (memory_plugin.backends.writes_seen).
    """

    def __init__(self, *, index: Any = None) -> None:
        super().__init__(index=index)
        self._lock = threading.Lock()
        self.versions: dict[str, int] = {}
        self._counter = itertools.count(1)

    def batch(self, ops: Iterable[Op]) -> list[Result]:
        """Run a batch; reads and writes of the store's data are serialised."""
        with self._lock:
            results, puts, searches = self._prepare_ops(ops)
        if searches:
            self._batch_search(searches, self._embed_search_queries(searches), results)
        to_embed = self._extract_texts(puts)
        vectors = None
        if to_embed and self.embeddings is not None:
            vectors = self.embeddings.embed_documents(list(to_embed))
        self._apply(puts, to_embed, vectors)
        return results

    async def abatch(self, ops: Iterable[Op]) -> list[Result]:
        """Async twin of batch."""
        with self._lock:
            results, puts, searches = self._prepare_ops(ops)
        if searches:
            self._batch_search(searches, await self._aembed_search_queries(searches), results)
        to_embed = self._extract_texts(puts)
        vectors = None
        if to_embed and self.embeddings is not None:
            vectors = await self.embeddings.aembed_documents(list(to_embed))
        self._apply(puts, to_embed, vectors)
        return results

    def _apply(
        self,
        puts: dict[tuple[tuple[str, ...], str], Any],
        to_embed: dict[str, list[tuple[tuple[str, ...], str, str]]],
        vectors: list[list[float]] | None,
    ) -> None:
        with self._lock:
            if vectors is not None:
                self._insertinmem_store(to_embed, _per_field(to_embed, vectors))
            self._apply_put_ops(puts)
            bump(self.versions, self._counter, puts.values(), lambda ns: bool(self._data.get(ns)))
        wrote_ops(puts.values())


def _per_field(
    to_embed: dict[str, list[tuple[tuple[str, ...], str, str]]], vectors: list[list[float]]
) -> list[list[float]]:
    """One vector per indexed field: each distinct text's vector for every field holding it."""
    if len(vectors) != len(to_embed):
        raise ValueError(f"{len(vectors)} embeddings returned for {len(to_embed)} texts")
    return [
        vector for vector, fields in zip(vectors, to_embed.values(), strict=True) for _ in fields
    ]


def open_memory(index: dict[str, Any] | None) -> Opened:
    """Open an in-memory store and checkpointer (sync and async alike)."""
    store = LockedInMemoryStore(index=index)
    return Opened(store, InMemorySaver(serde=CachingSerializer()), index is not None)
