"""SQLite keyword search: BM25 over one scope's postings, with that scope's statistics.

Triggers on `store` (memory_plugin.backends.fts) keep a row per live note in
`memory_note_rows` and, whenever a note changes or goes, from any process, drop its postings
and its share of the scope's statistics. SQL cannot stem, so a new or changed note waits
there unanalysed (`len` NULL) until Python analyses it with `search_terms`, the analyser the
memory backend scores with: at the append that wrote it (claims), or before its scope's
next search, in one BEGIN IMMEDIATE transaction. Analysing writes the note's postings
(`memory_note_terms`: scope, term, note, term frequency, length) and adds it to the scope's
note count and total length (`memory_note_stats`).

A search reads the postings of the query's terms in one scope, so its cost follows the
matches, and scores with `bm25_score` and that scope's statistics alone: another scope's
notes never change a score, and the scores are the memory backend's.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

import orjson

from memory_plugin.backends.steps import Steps, transaction
from memory_plugin.text import Bm25Stats, bm25_score, search_terms

CHUNK = 1_000
"""Notes analysed per statement."""

_ANY_UNANALYSED = """
SELECT 1 FROM memory_note_rows INDEXED BY memory_note_rows_unanalysed
WHERE prefix = ? AND len IS NULL LIMIT 1
"""
_UNANALYSED = """
SELECT r.key, json_extract(s.value, '$.text')
FROM memory_note_rows AS r INDEXED BY memory_note_rows_unanalysed
CROSS JOIN store s ON s.prefix = r.prefix AND s.key = r.key
WHERE r.prefix = ? AND r.len IS NULL
"""
"""Both read the partial index of unanalysed rows, then the notes by key (CROSS JOIN fixes
the order): the planner would read the scope's every row."""
_ADD_STATS = """
INSERT INTO memory_note_stats (prefix, docs, total_len) VALUES (?, ?, ?)
ON CONFLICT (prefix) DO UPDATE
SET docs = docs + excluded.docs, total_len = total_len + excluded.total_len
RETURNING id
"""
_ANALYSED = """
INSERT INTO memory_note_rows (prefix, key, len, terms)
SELECT ?, json_extract(value, '$[0]'), json_extract(value, '$[1]'), json_extract(value, '$[2]')
FROM json_each(?) WHERE true
ON CONFLICT (prefix, key) DO UPDATE SET len = excluded.len, terms = excluded.terms
"""
"""Sets the length and terms of rows read in the same transaction (an upsert: an UPDATE
... FROM json_each reads the scope's every row for each note)."""
_POSTINGS = """
INSERT INTO memory_note_terms (scope, term, key, tf, len)
SELECT ?, json_extract(value, '$[0]'), json_extract(value, '$[1]'),
       json_extract(value, '$[2]'), json_extract(value, '$[3]')
FROM json_each(?)
"""
_STATS = "SELECT id, docs, total_len FROM memory_note_stats WHERE prefix = ?"
_HITS = """
SELECT term, key, tf, len FROM memory_note_terms
WHERE scope = ? AND term IN (SELECT value FROM json_each(?))
"""
_VALUES = (
    "SELECT key, value FROM store WHERE prefix = ? AND key IN (SELECT value FROM json_each(?))"
)


def _json(value: Any) -> str:
    return orjson.dumps(value).decode()


def analyse_steps(prefix: str) -> Steps[None]:
    """Analyse the scope's notes that are not yet, inside the caller's transaction."""
    rows = yield (_UNANALYSED, (prefix,))
    if not rows:
        return
    analysed = [(key, Counter(search_terms(text))) for key, text in rows]
    total = sum(sum(counts.values()) for _, counts in analysed)
    ((scope,),) = yield (_ADD_STATS, (prefix, len(analysed), total))
    for start in range(0, len(analysed), CHUNK):
        chunk = analysed[start : start + CHUNK]
        notes = [[key, sum(counts.values()), _json(list(counts))] for key, counts in chunk]
        yield (_ANALYSED, (prefix, _json(notes)))
        postings = [
            [term, key, tf, sum(counts.values())]
            for key, counts in chunk
            for term, tf in counts.items()
        ]
        yield (_POSTINGS, (scope, _json(postings)))


def search_steps(prefix: str, query: str, limit: int) -> Steps[list[tuple[str, float, Any]]]:
    """The (key, score, value as stored) of the scope's `limit` best notes for the query,
    best first, ties by key; the scope's unanalysed notes are analysed first."""
    terms = set(search_terms(query))
    if not terms or limit <= 0:
        return []
    if (yield (_ANY_UNANALYSED, (prefix,))):
        yield from transaction(analyse_steps(prefix))
    stats = yield (_STATS, (prefix,))
    if not stats or not stats[0][1]:
        return []
    scope, docs, total_len = stats[0]
    counts: dict[str, dict[str, int]] = {}
    lengths: dict[str, int] = {}
    df: Counter[str] = Counter()
    for term, key, tf, length in (yield (_HITS, (scope, _json(list(terms))))):
        counts.setdefault(key, {})[term] = tf
        lengths[key] = length
        df[term] += 1
    collection = Bm25Stats(docs, total_len / docs or 1.0, df)
    scores = {
        key: bm25_score(terms, found, lengths[key], collection) for key, found in counts.items()
    }
    best = sorted(scores, key=lambda key: (-scores[key], key))[:limit]
    values = dict((yield (_VALUES, (prefix, _json(best)))))
    return [(key, scores[key], values[key]) for key in best if key in values]
