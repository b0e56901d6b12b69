"""Hybrid recall over agent entries: semantic candidates where the store has an index, fused
with keyword ranking; the entries re-read from the store stay authoritative (visibility and
expiry re-applied), and importance boosts the ranking."""

from __future__ import annotations

import logging
from dataclasses import dataclass
from datetime import datetime

from langgraph.store.base import Op, SearchOp

from memory_plugin.agent.entries import ENTRIES, Entry, list_plan
from memory_plugin.errors import MemoryWriteError
from memory_plugin.plans import Plan
from memory_plugin.scope import Scope
from memory_plugin.text import bm25_scores

logger = logging.getLogger(__name__)
RRF_K = 60


@dataclass(frozen=True)
class EntryHit:
    """A recalled entry and its score."""

    entry: Entry
    score: float


def recall_plan(scopes: list[Scope], query: str, k: int, now: datetime) -> Plan[list[EntryHit]]:
    """The k best live entries for a query."""
    if not isinstance(query, str) or not query.strip():
        raise MemoryWriteError("memory_recall needs a non-empty query")
    entries = yield from list_plan(scopes, now)
    by_key = {entry.key: entry for entry in entries}
    docs = [(e.key, f"{e.key} {e.category} {e.content}") for e in entries]
    scores = bm25_scores(query, docs)
    rankings = [sorted(scores, key=lambda key: (-scores[key], key))]
    try:
        ops: list[Op] = [
            SearchOp(s.child(ENTRIES), query=query, limit=max(3 * k, 20)) for s in scopes
        ]
        found = yield ops
        semantic = [i for page in found for i in page if i.score is not None and i.key in by_key]
        semantic.sort(key=lambda item: -(item.score or 0.0))
        rankings.append(list(dict.fromkeys(item.key for item in semantic)))
    except Exception:
        logger.warning("semantic recall of agent entries failed; keyword only", exc_info=True)
    fused: dict[str, float] = {}
    for ranking in rankings:
        for rank, key in enumerate(ranking):
            fused[key] = fused.get(key, 0.0) + 1.0 / (RRF_K + rank + 1)
    boosted = {key: score * (1.0 + by_key[key].importance) for key, score in fused.items()}
    best = sorted(boosted, key=lambda key: (-boosted[key], key))[:k]
    return [EntryHit(by_key[key], boosted[key]) for key in best]
