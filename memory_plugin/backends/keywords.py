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
notes never change a score, and the scores are the memory backend's. SQLite shortlists, in
SQL, the notes that can reach the `limit` best; Python scores the shortlist exactly (a term
found in a third of a 100,000-note scope has some 30,000 postings: reading them into Python
cost 60 ms a search). Terms so common that notes holding only them cannot reach the `limit`
best (their upper bound, idf * (k1 + 1), is below the limit-th score found without them) are
read for the shortlisted notes only; when that bound does not hold, every term's postings
are read. The shortlist keeps every note within `MARGIN` of the limit-th score (SQL adds in
another order), so results, scores and order are those of scoring every posting.
"""

from __future__ import annotations

from collections import Counter
from itertools import accumulate
from typing import Any

import orjson

from memory_plugin.backends.langgraph_tables import SQLITE_NOTE_VALUES, SQLITE_UNANALYSED
from memory_plugin.backends.steps import Rows, Steps, transaction
from memory_plugin.text import BM25_B, BM25_K1, Bm25Stats, bm25_idf, bm25_score, search_terms

CHUNK = 1_000
"""Notes analysed per statement."""
DIRECT = 500
"""Up to this many postings of the query's terms in the scope, all of them are read and
scored in Python: one statement, cheaper than the shortlist's below about 500."""
MARGIN = 1e-9
"""How far below the limit-th score (relative) a note is still shortlisted: SQL sums a note's
terms in another order and computes the length norm in another form than `bm25_score`, a
difference of a few units in the 16th digit."""
SHARE = 0.8
"""The limit-th score is guessed at SHARE * idf of the rarest term whose notes, with the
rarer ones', number `limit`; terms whose upper bounds add up to less are left out of the
shortlist's first read (a guess only chooses the reads: a wrong one costs a second read)."""

_ANY_UNANALYSED = """
SELECT 1 FROM memory_note_rows INDEXED BY memory_note_rows_unanalysed
WHERE prefix = ? AND len IS NULL LIMIT 1
"""
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
_POSTINGS = "INSERT INTO memory_note_terms (scope, term, key, tf, len) VALUES (?, ?, ?, ?, ?)"
"""Run once per posting (executemany: cheaper than unpacking a JSON array in SQL)."""
_STATS = "SELECT id, docs, total_len FROM memory_note_stats WHERE prefix = ?"
_DF = """
SELECT term, count(*) FROM memory_note_terms
WHERE scope = ? AND term IN (SELECT value FROM json_each(?)) GROUP BY term
"""
_SHORTLIST = """
WITH q (term, weight) AS (
    SELECT json_extract(value, '$[0]'), json_extract(value, '$[1]') FROM json_each(?1)
), c (term, weight) AS (
    SELECT json_extract(value, '$[0]'), json_extract(value, '$[1]') FROM json_each(?2)
), partial AS MATERIALIZED (
    SELECT t.key AS key, sum(q.weight * t.tf / (t.tf + ?3 + ?4 * t.len)) AS score
    FROM q CROSS JOIN memory_note_terms AS t ON t.scope = ?5 AND t.term = q.term
    GROUP BY t.key
), partial_bar AS (
    SELECT score FROM partial ORDER BY score DESC LIMIT 1 OFFSET ?6
), scored AS MATERIALIZED (
    SELECT p.key AS key, p.score + coalesce((
        SELECT sum(c.weight * t.tf / (t.tf + ?3 + ?4 * t.len))
        FROM c CROSS JOIN memory_note_terms AS t
        ON t.scope = ?5 AND t.term = c.term AND t.key = p.key), 0.0) AS score
    FROM partial AS p
    WHERE (SELECT score FROM partial_bar) IS NULL
    OR p.score + ?7 >= (SELECT score FROM partial_bar) * ?8
), bar AS (
    SELECT score FROM scored ORDER BY score DESC LIMIT 1 OFFSET ?6
)
SELECT key, (SELECT score FROM partial_bar) FROM scored
WHERE (SELECT score FROM bar) IS NULL OR score >= (SELECT score FROM bar) * ?8
"""
"""The shortlist: every note that can be among the limit best by its score over the terms
read (`?1`, `[term, idf * (k1 + 1)]`: each posting of theirs is read once, in C) plus the
bounds of the terms left out (`?2`, their sum `?7`), which are then looked up for those notes
alone; of these, the notes within MARGIN of the limit-th score (`?8` = 1 - MARGIN). Each row
carries the limit-th score over the terms read (NULL: fewer notes hold them than the limit).
`?3 + ?4 * len` is BM25's length norm."""
_HITS = """
SELECT term, key, tf, len FROM memory_note_terms
WHERE scope = ? AND term IN (SELECT value FROM json_each(?))
"""
_COUNTS = """
SELECT term, key, tf, len FROM memory_note_terms
WHERE scope = ? AND term IN (SELECT value FROM json_each(?))
AND key IN (SELECT value FROM json_each(?))
"""


def _json(value: Any) -> str:
    return orjson.dumps(value).decode()


def analyse_steps(prefix: str) -> Steps[None]:
    """Analyse the scope's notes that are not yet, inside the caller's transaction."""
    rows = yield (SQLITE_UNANALYSED, (prefix,))
    if not rows:
        return
    analysed = [(key, Counter(search_terms(text))) for key, text in rows]
    total = sum(sum(counts.values()) for _, counts in analysed)
    ((scope,),) = yield (_ADD_STATS, (prefix, len(analysed), total))
    for start in range(0, len(analysed), CHUNK):
        chunk = analysed[start : start + CHUNK]
        notes = [[key, sum(counts.values()), _json(list(counts))] for key, counts in chunk]
        yield (_ANALYSED, (prefix, _json(notes)))
        postings = Rows(
            (scope, term, key, tf, length)
            for key, counts in chunk
            for length in [sum(counts.values())]
            for term, tf in counts.items()
        )
        yield (_POSTINGS, postings)


def _left_out(df: dict[str, int], bounds: dict[str, float], limit: int) -> set[str]:
    """The most common terms whose bounds add up to less than the guessed limit-th score of
    the notes holding the others (none when no guess can be made)."""
    rare_first = sorted(df, key=lambda term: (df[term], term))
    held = list(accumulate(df[term] for term in rare_first))
    enough = next((at for at, count in enumerate(held) if count >= limit), len(held))
    if enough >= len(held) - 1:
        return set()
    guess = SHARE * bounds[rare_first[enough]] / (BM25_K1 + 1)
    left: set[str] = set()
    bound = 0.0
    for term in reversed(rare_first[enough + 1 :]):
        if bound + bounds[term] >= guess:
            break
        left.add(term)
        bound += bounds[term]
    return left


def _shortlist_steps(
    scope: int, bounds: dict[str, float], left: set[str], avg_len: float, limit: int
) -> Steps[tuple[list[str], float | None]]:
    """The shortlist of notes that can be among the `limit` best, the postings of the terms
    `left` out read for the notes the others shortlist only; and the limit-th score over
    the terms read."""
    read = [[term, bounds[term]] for term in sorted(bounds) if term not in left]
    params = (
        _json(read),
        _json([[term, bounds[term]] for term in sorted(left)]),
        BM25_K1 * (1 - BM25_B),
        BM25_K1 * BM25_B / avg_len,
        scope,
        limit - 1,
        sum(bounds[term] for term in left),
        1 - MARGIN,
    )
    rows = yield (_SHORTLIST, params)
    return [key for key, _ in rows], (rows[0][1] if rows else None)


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
    df: dict[str, int] = dict((yield (_DF, (scope, _json(sorted(terms))))))
    if not df:
        return []
    collection = Bm25Stats(docs, total_len / docs or 1.0, df)
    held = _json(sorted(df))
    if sum(df.values()) <= DIRECT:
        postings = yield (_HITS, (scope, held))
    else:
        bounds = {term: bm25_idf(docs, n) * (BM25_K1 + 1) for term, n in df.items()}
        left = _left_out(df, bounds, limit)
        keys, bar = yield from _shortlist_steps(scope, bounds, left, collection.avg_len, limit)
        if left and (bar is None or sum(bounds[term] for term in left) >= bar * (1 - MARGIN)):
            keys, _ = yield from _shortlist_steps(scope, bounds, set(), collection.avg_len, limit)
        postings = yield (_COUNTS, (scope, held, _json(keys)))
    counts: dict[str, dict[str, int]] = {}
    lengths: dict[str, int] = {}
    for term, key, tf, length in postings:
        counts.setdefault(key, {})[term] = tf
        lengths[key] = length
    scores = {
        key: bm25_score(terms, found, lengths[key], collection) for key, found in counts.items()
    }
    best = sorted(scores, key=lambda key: (-scores[key], key))[:limit]
    values = dict((yield (SQLITE_NOTE_VALUES, (prefix, _json(best)))))
    return [(key, scores[key], values[key]) for key in best if key in values]
