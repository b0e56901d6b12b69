"""Hybrid recall over a scope's notes: keyword ranking fused with semantic candidates.

Semantic candidates come from the store's vector index where one is configured; the notes
themselves stay authoritative (a deleted note never comes back). When the index is missing
or fails, keyword ranking answers alone.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

from langgraph.store.base import SearchOp

from memory_plugin.errors import MemoryWriteError
from memory_plugin.plans import Plan
from memory_plugin.scope import Scope
from memory_plugin.scoped.notes import NOTE_INDEX, Note, all_notes_plan
from memory_plugin.text import bm25_scores

logger = logging.getLogger(__name__)
RRF_K = 60


@dataclass(frozen=True)
class Hit:
    """A recalled note and its fused score."""

    note: Note
    score: float


def keyword_ranking(query: str, notes: list[Note]) -> list[str]:
    """Note keys ranked by BM25 against the query; notes sharing no word are left out."""
    scores = bm25_scores(query, [(note.key, note.body) for note in notes])
    return sorted(scores, key=lambda key: (-scores[key], key))


def clamp_k(k: int | None, default: int, maximum: int) -> int:
    """The number of notes to return: default when None, at most `maximum`, at least 1."""
    if k is None:
        return min(default, maximum)
    if isinstance(k, bool) or not isinstance(k, int):
        raise MemoryWriteError(f"k must be a whole number, got {k!r}")
    if k <= 0:
        raise MemoryWriteError(f"k must be at least 1, got {k}")
    return min(k, maximum)


def recall_plan(scope: Scope, query: str, k: int) -> Plan[list[Hit]]:
    """The k best notes for a query, consolidated ones included."""
    if not isinstance(query, str) or not query.strip():
        raise MemoryWriteError("recall needs a non-empty query")
    notes = yield from all_notes_plan(scope)
    by_key = {note.key: note for note in notes}
    rankings = [keyword_ranking(query, notes)]
    try:
        (candidates,) = yield [SearchOp(scope.child(NOTE_INDEX), query=query, limit=max(3 * k, 20))]
        rankings.append([c.key for c in candidates if c.score is not None and c.key in by_key])
    except Exception:
        logger.warning("semantic recall failed; answering with keyword ranking", exc_info=True)
    fused: dict[str, float] = {}
    for ranking in rankings:
        for rank, key in enumerate(ranking):
            fused[key] = fused.get(key, 0.0) + 1.0 / (RRF_K + rank + 1)
    best = sorted(fused, key=lambda key: (-fused[key], key))[:k]
    return [Hit(by_key[key], fused[key]) for key in best]
