"""Hybrid recall over a scope's notes: keyword and semantic candidates, ranked together.

A fixed number of candidates (`CANDIDATES`, whatever k is) comes from each signal, searched
where the notes are: BM25 over stemmed words without stopwords (`KeywordSearch`) and the
store's vector index where one is configured (`VectorSearch`). The
candidates and the live notes next to them on the same day are ranked by `ranking.rank` on
their scores and places (day and position, read from their keys), so the first n results
are the same for any k >= n; only the notes returned are read. The notes stay authoritative
(a deleted note never comes back); when the vector index is missing or fails, keyword ranking
answers alone.
"""

from __future__ import annotations

import logging
from collections.abc import Collection
from dataclasses import dataclass

from langgraph.store.base import GetOp

from memory_plugin.backends.search import KeywordSearch, LiveKeys, VectorSearch
from memory_plugin.errors import MemoryWriteError
from memory_plugin.plans import Plan
from memory_plugin.scope import Scope
from memory_plugin.scoped.notes import NOTE_INDEX, NOTES, Note, note_key, to_note
from memory_plugin.scoped.ranking import DEFAULT_WEIGHTS, Placed, RankWeights, rank
from memory_plugin.text import bm25_scores, search_terms

logger = logging.getLogger(__name__)
CANDIDATES = 100
SIGNALS = frozenset({"keyword", "semantic"})


@dataclass(frozen=True)
class Hit:
    """A recalled note and its score."""

    note: Note
    score: float


def keyword_scores(query: str, notes: list[Note], limit: int) -> dict[str, float]:
    """The BM25 scores of the `limit` best notes sharing a stemmed word with the query,
    computed in Python over the notes given (the exhaustive reference for the recall audit)."""
    scores = bm25_scores(query, [(note.key, note.body) for note in notes], analyze=search_terms)
    return dict(sorted(scores.items(), key=lambda item: (-item[1], item[0]))[:limit])


def neighbour_keys(keys: Collection[str], reach: int) -> list[str]:
    """The keys of the notes up to `reach` positions from each key on the same day, the keys
    themselves included."""
    return sorted(neighbour_places(keys, reach))


@dataclass(frozen=True)
class Place:
    """Where a note sits: its day and its position on that day."""

    day: str
    position: int


def neighbour_places(keys: Collection[str], reach: int) -> dict[str, Place | None]:
    """The keys of neighbour_keys, each with the place it names (None for a key of another
    form, whose note must be read to place it)."""
    near: dict[str, Place | None] = {}
    for key in keys:
        day, _, position = key.rpartition("#")
        if day and position.isdigit():
            at = int(position)
            for offset in range(-reach, reach + 1):
                if at + offset > 0:
                    near[note_key(day, at + offset)] = Place(day, at + offset)
        near.setdefault(key, None)
    return near


@dataclass(frozen=True)
class Candidates:
    """What recall ranks: the candidates' keyword and semantic scores, and where the live
    notes among the candidates and their neighbours sit."""

    keyword: dict[str, float]
    semantic: dict[str, float]
    notes: dict[str, Placed]


def candidates_plan(
    scope: Scope, query: str, signals: Collection[str], breadth: int, reach: int
) -> Plan[Candidates]:
    """The `breadth` best candidates of each signal and the live notes up to `reach`
    positions from them (which exist is asked of the store, key by key; no note is read);
    a failing or missing vector index leaves the keyword candidates alone."""
    keyword: dict[str, float] = {}
    semantic: dict[str, float] = {}
    if "keyword" in signals:
        found = yield KeywordSearch(scope.child(NOTES), query, breadth)
        keyword = {hit.key: hit.score for hit in found}
    if "semantic" in signals:
        try:
            found = yield VectorSearch(scope.child(NOTE_INDEX), query, breadth)
            semantic = {hit.key: hit.score for hit in found}
        except ValueError:
            logger.debug("no vector index; answering with keyword ranking", exc_info=True)
        except Exception:
            logger.warning("semantic recall failed; answering with keyword ranking", exc_info=True)
    wanted = neighbour_places({*keyword, *semantic}, reach)
    live = yield LiveKeys(scope.child(NOTES), tuple(sorted(wanted)))
    notes: dict[str, Placed] = {}
    unplaced = []
    for key in sorted(live):
        if (where := wanted[key]) is None:
            unplaced.append(key)
        else:
            notes[key] = where
    if unplaced:
        items = yield [GetOp(scope.child(NOTES), key) for key in unplaced]
        notes.update((n.key, n) for item in items if item and (n := to_note(item)) is not None)
    return Candidates(keyword, semantic, notes)


def notes_plan(scope: Scope, keys: list[str]) -> Plan[list[Note] | None]:
    """The notes of these keys, in order; None when one is no longer live."""
    items = (yield [GetOp(scope.child(NOTES), key) for key in keys]) if keys else []
    notes = [to_note(item) if item else None for item in items]
    return None if None in notes else [note for note in notes if note is not None]


def recall_plan(
    scope: Scope,
    query: str,
    k: int,
    *,
    signals: Collection[str] = SIGNALS,
    weights: RankWeights = DEFAULT_WEIGHTS,
    candidates: int = CANDIDATES,
) -> Plan[list[Hit]]:
    """The k best notes for a query, consolidated ones included; `signals` picks keyword,
    semantic or both (the default), `candidates` the breadth of each signal's search. Only
    the k notes returned are read; when one was deleted meanwhile, the search runs again."""
    if not isinstance(query, str) or not query.strip():
        raise MemoryWriteError("recall needs a non-empty query")
    if not signals or not set(signals) <= SIGNALS:
        raise MemoryWriteError(f"recall signals are keyword and/or semantic, got {signals!r}")
    while True:
        found = yield from candidates_plan(
            scope, query, signals, candidates, len(weights.neighbour)
        )
        ranked = rank(query, found.keyword, found.semantic, found.notes, weights)[:k]
        notes = yield from notes_plan(scope, [key for key, _ in ranked])
        if notes is not None:
            return [Hit(note, score) for note, (_, score) in zip(notes, ranked, strict=True)]
