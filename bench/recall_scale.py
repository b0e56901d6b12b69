"""Recall latency at 1k, 10k and 100k notes in one scope, and appends per second, per backend.

Run: python bench/recall_scale.py [--sizes 1000,10000,100000] [--queries 50]
     [--postgres URL] [--fresh-postgres] [--appends 200] [--append-sizes 10,100000]
     [--slowest 3]
     (PostgreSQL from --postgres or $MEMORY_TEST_POSTGRES_URL; skipped when neither is set;
     --fresh-postgres empties the plugin's tables there first and drops the vector table
     before and after, since its width is fixed by the first index that created it)

Notes are synthetic sentences (seeded, Zipf-distributed words, 100 notes a day) imported
with `ScopedMemory.import_notes` into one scope, next to other scopes (`--others`, default
one, each `--other-share` of its size, default a tenth) so that searches must keep to their
own scope. The embedding is a deterministic 384-dim hashed
bag of words (no model); the time spent embedding each query is measured inside the embed
function and reported apart from the search time. Modes:

- keyword: `KeywordSearch` for 100 candidates (database full-text search, Python on memory);
- hybrid: `KeywordSearch` and `VectorSearch` for 100 candidates each in one `gather`, fused
  by score-normalised sum, top 10;
- recall(): `ScopedMemory.recall(ctx, query)` end to end, whatever ranking it does today.

p95 is by nearest rank: of 50 questions, the third slowest. On SQLite two hybrid searches per
size are slow on the vector side whatever the question (the first scans the scope's vectors,
the second loads their cached matrix; backends/vectors.py), so the slowest other question
decides the hybrid p95. `--slowest N` prints each mode's N slowest questions per size
to stderr, with their times.

Appends into a scope that already holds 10 or 100,000 notes on the same day (the day's
position claim is what used to grow with the day): `remember` end to end, the position claim
alone (`insert_next`), and the claim this replaced ("claim before": the next position found
by MAX() over the day's keys, then the insert, in one transaction) on SQLite and PostgreSQL,
measured in the same run.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import random
import sys
import tempfile
import time
import uuid
import zlib
from collections.abc import Callable, Iterator, Sequence
from datetime import UTC, date, datetime, timedelta
from functools import partial
from pathlib import Path
from typing import Any

from langgraph.store.base import BaseStore
from pgtables import empty_postgres

from memory_plugin import Backend, MemoryContext, connect
from memory_plugin.backends.claims import insert_next
from memory_plugin.backends.search import KeywordSearch, Scored, VectorSearch
from memory_plugin.plans import Plan, gather, run
from memory_plugin.scope import thread_scope
from memory_plugin.scoped import ScopedMemory
from memory_plugin.scoped.notes import NOTE_INDEX, NOTES

DIMS = 384
CANDIDATES = 100
PER_DAY = 100
NOISE = 0.1
VOCABULARY = 6_000
_WORDS = [
    "".join(
        random.Random(n).choice("bcdfghjklmnprstvwz") + random.Random(n * 7 + i).choice("aeiou")
        for i in range(2 + n % 3)
    )
    for n in range(VOCABULARY)
]


class HashedEmbedding:
    """A deterministic 384-dim hashed bag of words; counts the time spent on single texts
    (queries) so it can be reported apart."""

    def __init__(self) -> None:
        self.query_seconds = 0.0

    def __call__(self, texts: Sequence[str]) -> list[list[float]]:
        start = time.perf_counter()
        vectors = [self._one(text) for text in texts]
        if len(texts) == 1:
            self.query_seconds += time.perf_counter() - start
        return vectors

    @staticmethod
    def _one(text: str) -> list[float]:
        vector = [0.0] * DIMS
        for word in text.lower().split():
            code = zlib.crc32(word.encode())
            vector[code % DIMS] += 1.0 if code & 0x10000 else -1.0
        norm = math.sqrt(sum(x * x for x in vector)) or 1.0
        return [x / norm for x in vector]


def sentences(count: int, seed: int) -> Iterator[str]:
    """Synthetic notes: 8-16 Zipf-distributed words each."""
    rng = random.Random(seed)
    weights = [1.0 / (rank + 1) for rank in range(VOCABULARY)]
    for _ in range(count):
        yield " ".join(rng.choices(_WORDS, weights, k=rng.randint(8, 16)))


def dated(texts: Iterator[str], first: int) -> list[tuple[str, str]]:
    """(day, text) pairs, PER_DAY notes a day, the n-th note overall on day n // PER_DAY."""
    start = date(2020, 1, 1)
    return [
        ((start + timedelta(days=(first + i) // PER_DAY)).isoformat(), text)
        for i, text in enumerate(texts)
    ]


def queries(count: int, seed: int) -> list[str]:
    """Questions of 3-5 words drawn like the notes' words (mid-frequency words mostly)."""
    rng = random.Random(seed)
    return [
        " ".join(rng.choice(_WORDS[20:2_000]) for _ in range(rng.randint(3, 5)))
        for _ in range(count)
    ]


def fuse(keyword: list[Scored], semantic: list[Scored], k: int) -> list[str]:
    """Score-normalised sum of two candidate lists, top k keys."""
    fused: dict[str, float] = {}
    for found in (keyword, semantic):
        if not found:
            continue
        high, low = found[0].score, found[-1].score
        for item in found:
            fused[item.key] = fused.get(item.key, 0.0) + (
                (item.score - low) / (high - low) if high > low else 1.0
            )
    return sorted(fused, key=lambda key: (-fused[key], key))[:k]


def _one(request: KeywordSearch | VectorSearch) -> Plan[list[Scored]]:
    found: list[Scored] = yield request
    return found


def hybrid_plan(ctx: MemoryContext, query: str) -> Plan[list[str]]:
    """Keyword and vector candidates fetched together, fused."""
    scope = thread_scope(ctx)
    keyword, semantic = yield from gather(
        [
            _one(KeywordSearch(scope.child(NOTES), query, CANDIDATES)),
            _one(VectorSearch(scope.child(NOTE_INDEX), query, CANDIDATES)),
        ]
    )
    return fuse(keyword, semantic, 10)


def hybrid_only(store: BaseStore, ctx: MemoryContext, query: str) -> list[str]:
    """Keyword and vector candidates, fused."""
    return run(store, hybrid_plan(ctx, query))


def keyword_only(store: BaseStore, ctx: MemoryContext, query: str) -> list[Scored]:
    """Keyword candidates alone."""
    return run(store, _one(KeywordSearch(thread_scope(ctx).child(NOTES), query, CANDIDATES)))


def timed(
    embed: HashedEmbedding, call: Callable[[str], Any], asked: list[str]
) -> tuple[list[float], list[float]]:
    """Per query: milliseconds spent outside the embedding, and inside it."""
    search, embedding = [], []
    for query in asked:
        embed.query_seconds = 0.0
        start = time.perf_counter()
        call(query)
        total = time.perf_counter() - start
        search.append((total - embed.query_seconds) * 1e3)
        embedding.append(embed.query_seconds * 1e3)
    return search, embedding


def p(values: list[float], q: float) -> float:
    """The q-quantile (nearest rank)."""
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, math.ceil(q * len(ordered)) - 1))]


def recall_rows(
    kind: str,
    url: str,
    sizes: list[int],
    asked: list[str],
    recall_queries: int,
    others: tuple[int, float] = (1, NOISE),
    slowest: int = 0,
) -> list[str]:
    """Markdown rows: p50/p95 per mode at each size, one scope grown in place."""
    embed = HashedEmbedding()
    rows = []
    with connect(url, index={"dims": DIMS, "embed": embed, "fields": ["text"]}) as backend:
        memory = ScopedMemory(backend.store)
        ctx = MemoryContext(user_id="bench", workspace_id=f"w{uuid.uuid4().hex[:8]}")
        count, share = others
        scopes = [(ctx, 1, 1.0)] + [
            (MemoryContext(user_id=f"other{n}", workspace_id=ctx.workspace_id), n + 2, share)
            for n in range(count)
        ]
        have = 0
        for size in sizes:
            start = time.perf_counter()
            for who, seed, part in scopes:
                new = int(size * part) - int(have * part)
                added = dated(sentences(new, seed * 1_000_003 + have), int(have * part))
                for chunk in range(0, len(added), 10_000):
                    memory.import_notes(who, added[chunk : chunk + 10_000])
            imported = (size - have) * (1 + count * share) / (time.perf_counter() - start)
            have = size
            keyword_only(backend.store, ctx, asked[0])
            keyword, _ = timed(embed, partial(keyword_only, backend.store, ctx), asked)
            hybrid, embedding = timed(embed, partial(hybrid_only, backend.store, ctx), asked)
            full, _ = timed(embed, lambda q: memory.recall(ctx, q), asked[:recall_queries])
            rows.append(
                f"| {kind} | {size:,} | {p(keyword, 0.5):.1f} / {p(keyword, 0.95):.1f} "
                f"| {p(hybrid, 0.5):.1f} / {p(hybrid, 0.95):.1f} | {p(embedding, 0.5):.2f} "
                f"| {p(full, 0.5):.1f} / {p(full, 0.95):.1f} | {imported:,.0f} |"
            )
            print(rows[-1], flush=True)
            for mode, times in (("keyword", keyword), ("hybrid", hybrid), ("recall()", full)):
                _print_slowest(f"{kind} {size:,} {mode}", times, asked, slowest)
    return rows


def _print_slowest(label: str, times: list[float], asked: list[str], count: int) -> None:
    """The `count` slowest questions of a mode, with their times, to stderr."""
    worst = sorted(range(len(times)), key=lambda i: -times[i])[:count]
    if worst:
        slow = ", ".join(f"#{i} {times[i]:.1f} ms ({asked[i]!r})" for i in worst)
        print(f"{label} slowest: {slow}", file=sys.stderr, flush=True)


_PG_BEFORE = """
INSERT INTO store (prefix, key, value, created_at, updated_at)
SELECT %(prefix)s, %(head)s || lpad(n::text, greatest(6, length(n::text)), '0'),
       %(value)s::jsonb || jsonb_build_object('position', n, 'version', 1), NOW(), NOW()
FROM (SELECT COALESCE(MAX(substr(key, %(digits)s)::bigint), 0) + 1 AS n
      FROM store WHERE prefix = %(prefix)s AND starts_with(key, %(head)s)) AS claim
"""
_SQLITE_BEFORE = (
    "SELECT MAX(CAST(substr(key, ?) AS INTEGER)) FROM store WHERE prefix = ? AND key >= ? "
    "AND key < ?"
)


def before_append(backend: Backend, ctx: MemoryContext, day: str, n: int) -> None:
    """The append this replaced: the next position by MAX() over the day's keys."""
    prefix, head = ".".join(thread_scope(ctx).child(NOTES)), f"{day}#"
    value = json.dumps({"text": f"- claimed note {n}", "day": day, "consolidated": False})
    store: Any = backend.store
    if backend.kind == "postgres":
        with store.conn.connection() as conn, conn.transaction():
            params = {"prefix": prefix, "head": head, "digits": len(head) + 1, "value": value}
            conn.execute(_PG_BEFORE, params)
        return
    with store.lock:
        db = store.conn
        db.execute("BEGIN IMMEDIATE")
        (last,) = db.execute(_SQLITE_BEFORE, (len(head) + 1, prefix, head, f"{day}$")).fetchone()
        key = f"{head}{(last or 0) + 1:06d}"
        db.execute("INSERT INTO store (prefix, key, value) VALUES (?, ?, ?)", (prefix, key, value))
        db.execute("COMMIT")


def append_rows(kind: str, url: str, sizes: list[int], appends: int) -> list[str]:
    """Markdown rows: appends per second into a scope holding each size of notes that day."""
    today = datetime(2026, 1, 5, 12, tzinfo=UTC)
    day = today.date().isoformat()
    rates: dict[tuple[str, int], float] = {}
    with connect(url) as backend:
        memory = ScopedMemory(backend.store, clock=lambda: today)
        for size in sizes:
            ctx = MemoryContext(user_id="append", workspace_id=f"w{uuid.uuid4().hex[:8]}")
            texts = list(sentences(size, 7))
            for chunk in range(0, size, 10_000):
                memory.import_notes(ctx, [(today, t) for t in texts[chunk : chunk + 10_000]])
            namespace = thread_scope(ctx).child(NOTES)
            methods: dict[str, Callable[[int], Any]] = {
                "remember()": partial(_remember, memory, ctx),
                "claim now": partial(_claim, backend.store, namespace, day),
            }
            if kind != "memory":
                methods["claim before"] = partial(before_append, backend, ctx, day)
            for method, append in methods.items():
                start = time.perf_counter()
                for n in range(appends):
                    append(n)
                rates[(method, size)] = appends / (time.perf_counter() - start)
    rows = []
    for method in ("remember()", "claim now", "claim before"):
        if (method, sizes[0]) not in rates:
            continue
        base = rates[(method, sizes[0])]
        cells = " | ".join(
            f"{rates[(method, s)]:,.0f} ({rates[(method, s)] / base:.2f}x)" for s in sizes
        )
        rows.append(f"| {kind} | {method} | {cells} |")
        print(rows[-1], flush=True)
    return rows


def _remember(memory: ScopedMemory, ctx: MemoryContext, n: int) -> None:
    memory.remember(ctx, f"appended note {n}")


def _claim(store: BaseStore, namespace: tuple[str, ...], day: str, n: int) -> None:
    value = {"text": f"- claimed note {n}", "day": day, "consolidated": False}
    insert_next(store, namespace, day, value)


def main() -> None:
    """Measure every backend and print Markdown tables."""
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--sizes", default="1000,10000,100000")
    parser.add_argument("--memory-max", type=int, default=10_000)
    parser.add_argument("--queries", type=int, default=50)
    parser.add_argument("--recall-queries", type=int, default=20)
    parser.add_argument("--appends", type=int, default=200)
    parser.add_argument("--append-sizes", default="10,100000", help="empty: no appends")
    parser.add_argument("--backends", default="memory,sqlite,postgres")
    parser.add_argument("--postgres", default=os.environ.get("MEMORY_TEST_POSTGRES_URL"))
    parser.add_argument("--fresh-postgres", action="store_true")
    parser.add_argument("--others", type=int, default=1, help="other scopes next to the one")
    parser.add_argument("--other-share", type=float, default=NOISE, help="their size vs it")
    parser.add_argument("--slowest", type=int, default=0, help="print each mode's N slowest")
    args = parser.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    append_sizes = [int(s) for s in args.append_sizes.split(",") if s]
    asked = queries(args.queries, 99)
    with tempfile.TemporaryDirectory() as folder:
        urls = {"memory": "memory://", "sqlite": f"sqlite:///{Path(folder) / 'bench.db'}"}
        if args.postgres:
            urls["postgres"] = args.postgres
        chosen = [k for k in args.backends.split(",") if k in urls]
        print(
            "| backend | notes in scope | keyword p50 / p95 ms | hybrid p50 / p95 ms "
            "| query embedding p50 ms | recall() p50 / p95 ms | imported notes/s |"
        )
        print("| --- | --- | --- | --- | --- | --- | --- |")
        for kind in chosen:
            if kind == "postgres" and args.fresh_postgres:
                empty_postgres(urls[kind], drop_vectors=True)
            limit = args.memory_max if kind == "memory" else max(sizes)
            chosen_sizes = [s for s in sizes if s <= limit]
            others = (args.others, args.other_share)
            recall_rows(
                kind, urls[kind], chosen_sizes, asked, args.recall_queries, others, args.slowest
            )
        if append_sizes:
            cells = " | ".join(
                f"{s:,} notes: appends/s (vs {append_sizes[0]:,})" for s in append_sizes
            )
            print(f"\n| backend | append | {cells} |")
            print("| --- | --- |" + " --- |" * len(append_sizes))
            for kind in chosen:
                limit = args.memory_max if kind == "memory" else max(append_sizes)
                append_rows(kind, urls[kind], [s for s in append_sizes if s <= limit], args.appends)
        if "postgres" in chosen and args.fresh_postgres:
            empty_postgres(urls["postgres"], drop_vectors=True)


if __name__ == "__main__":
    main()
