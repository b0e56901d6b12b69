"""SQLite keyword search: BM25 over one scope's postings, with that scope's statistics.

Triggers on `store` (memory_plugin.backends.fts) keep a row per live note in
`memory_note_rows` and, whenever a note changes or goes, from any process, drop its postings
and its share of the scope's statistics. SQL cannot stem, so a new or changed note waits
there unanalysed (`len` NULL) until Python analyses it with `search_terms`, the analyser the
memory backend scores with: at the append that wrote it (claims), or before its scope's
next search, in one BEGIN IMMEDIATE transaction. Analysing writes the note's postings
(`memory_note_terms`: scope, term, note, term frequency, length) and adds it to the scope's
note count and total length (`memory_note_stats`). An append's notes keep their postings in
their rows (`pending`: each term's frequency) while the scope holds at most `HOLD` such
notes; the append that would hold more writes the postings of all of them. A note's postings
fall on a page of the term index each, about 56 pages for a 2,000-character note, and
writing them was half of `remember`'s time in the store; written together, notes share
pages. A search reads the waiting notes from their rows (a partial index) beside the
postings.

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
from collections.abc import Mapping, Sequence
from itertools import accumulate
from typing import Any

import orjson

from memory_plugin.backends.langgraph_tables import SQLITE_NOTE_VALUES, SQLITE_UNANALYSED
from memory_plugin.backends.steps import Rows, Steps, snapshot, transaction
from memory_plugin.text import BM25_B, BM25_K1, Bm25Stats, bm25_idf, bm25_score, search_terms

CHUNK = 1_000
"""Notes analysed per statement."""
HOLD = 16
"""Notes of a scope whose postings may wait in their rows (see above)."""
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
_WAITING_COUNT = """(
    SELECT count(*) FROM memory_note_rows INDEXED BY memory_note_rows_pending
    WHERE prefix = ?1 AND pending IS NOT NULL
)"""
"""The scope's waiting notes (the scope's prefix is the statement's first argument)."""
_ADD_STATS = f"""
INSERT INTO memory_note_stats (prefix, docs, total_len) VALUES (?1, ?2, ?3)
ON CONFLICT (prefix) DO UPDATE
SET docs = docs + excluded.docs, total_len = total_len + excluded.total_len
RETURNING id, {_WAITING_COUNT}
"""
_ANALYSED = """
INSERT INTO memory_note_rows (prefix, key, len, terms, pending)
SELECT ?, json_extract(value, '$[0]'), json_extract(value, '$[1]'), json_extract(value, '$[2]'),
    json_extract(value, '$[3]')
FROM json_each(?) WHERE true
ON CONFLICT (prefix, key) DO UPDATE
SET len = excluded.len, terms = excluded.terms, pending = excluded.pending
"""
"""Sets the length, terms and waiting postings (or NULL) of rows read in the same
transaction (an upsert: an UPDATE ... FROM json_each reads the scope's every row for each
note)."""
_WAITING = """
SELECT key, len, pending FROM memory_note_rows INDEXED BY memory_note_rows_pending
WHERE prefix = ? AND pending IS NOT NULL
"""
_POSTED = """
UPDATE memory_note_rows INDEXED BY memory_note_rows_pending SET pending = NULL
WHERE prefix = ? AND pending IS NOT NULL
"""
_POSTINGS = "INSERT INTO memory_note_terms (scope, term, key, tf, len) VALUES (?, ?, ?, ?, ?)"
"""Run once per posting (executemany: cheaper than unpacking a JSON array in SQL)."""
_STATS = f"SELECT id, docs, total_len, {_WAITING_COUNT} FROM memory_note_stats WHERE prefix = ?1"
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


def analyse_steps(prefix: str, hold: int = 0) -> Steps[None]:
    """Analyse the scope's notes that are not yet, inside the caller's transaction; their
    postings wait in their rows while the scope then holds at most `hold` waiting notes, else
    every waiting note's postings are written with theirs."""
    rows = yield (SQLITE_UNANALYSED, (prefix,))
    if not rows:
        return
    analysed = [(key, Counter(search_terms(text))) for key, text in rows]
    total = sum(sum(counts.values()) for _, counts in analysed)
    ((scope, waiting),) = yield (_ADD_STATS, (prefix, len(analysed), total))
    held = waiting + len(analysed) <= hold
    for start in range(0, len(analysed), CHUNK):
        chunk = analysed[start : start + CHUNK]
        notes = [
            [key, sum(counts.values()), _json(list(counts)), _json(counts) if held else None]
            for key, counts in chunk
        ]
        yield (_ANALYSED, (prefix, _json(notes)))
        if not held:
            yield (_POSTINGS, _postings(scope, chunk))
    if not held and waiting:
        rows = yield (_WAITING, (prefix,))
        yield (
            _POSTINGS,
            _postings(scope, [(key, orjson.loads(counts)) for key, _, counts in rows]),
        )
        yield (_POSTED, (prefix,))


def _postings(scope: int, notes: Sequence[tuple[str, Mapping[str, int]]]) -> Rows:
    """The postings rows of the notes' term counts."""
    return Rows(
        (scope, term, key, tf, length)
        for key, counts in notes
        for length in [sum(counts.values())]
        for term, tf in counts.items()
    )


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
    return (yield from snapshot(_scored_steps(prefix, terms, limit)))


def _scored_steps(prefix: str, terms: set[str], limit: int) -> Steps[list[tuple[str, float, Any]]]:
    """`search_steps` once the scope's notes are analysed, read in one snapshot: an append
    elsewhere that writes the waiting notes' postings meanwhile cannot count them twice."""
    stats = yield (_STATS, (prefix,))
    if not stats or not stats[0][1]:
        return []
    scope, docs, total_len, waits = stats[0]
    named = [f'"{term}":' for term in terms]  # a term, a run of word characters, as in JSON
    waiting = [
        (term, key, counts[term], length)
        for key, length, pending in ((yield (_WAITING, (prefix,))) if waits else [])
        if any(name in pending for name in named)
        for counts in [orjson.loads(pending)]
        for term in terms & counts.keys()
    ]
    df = Counter(dict((yield (_DF, (scope, _json(sorted(terms)))))))
    df.update(term for term, *_ in waiting)
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
    for term, key, tf, length in [*postings, *waiting]:
        counts.setdefault(key, {})[term] = tf
        lengths[key] = length
    scores = {
        key: bm25_score(terms, found, lengths[key], collection) for key, found in counts.items()
    }
    best = sorted(scores, key=lambda key: (-scores[key], key))[:limit]
    values = dict((yield (SQLITE_NOTE_VALUES, (prefix, _json(best)))))
    return [(key, scores[key], values[key]) for key in best if key in values]
