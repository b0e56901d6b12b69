"""A large PostgreSQL store: 1 million notes across 10,000 scopes, with and without HNSW.

Run: python bench/large_store.py --postgres URL [--notes 1000000] [--scopes 10000]
     [--skew 0.7] [--loaders 2] [--samples 200] [--largest 10] [--skip-load] [--no-hnsw]
      [--phases flat,hnsw]
    (the database is emptied first unless --skip-load; use a database of its own)

Scope sizes follow a Zipf law (the i-th scope holds about C / i^skew notes: at the defaults
19,000 in the largest, 50 at the median, 30 in the smallest), each scope a user in one of
100 workspaces. Notes are the synthetic sentences of bench/recall_scale.py, 10 a day ending
today, imported with `ScopedMemory.import_notes` (the real write path: screen, position
claim, postings and vectors) by `--loaders` processes, with LangGraph's HNSW index dropped
for the load (the usual bulk-load order). Embeddings are recall_scale's 384-dim hashed bag
of words: a real model's vectors have the same size, so sizes and scan costs carry over.

After the load and a VACUUM ANALYZE the store is measured as it is ("flat": no ANN index,
each scope's vectors ranked exactly through the primary key), then the HNSW index LangGraph
creates by default (m=16, ef_construction=64) is built and the searches and appends are
measured again:

- keyword and hybrid p50/p95 over `--samples` scopes drawn uniformly (the typical user) and
  over the `--largest` scopes (20 questions each); recall() end to end on the uniform draw;
- note append latency: `remember()` into scopes drawn uniformly, and the nightly job's write
  per folded note (marking it consolidated, a compare-and-swap update);
- a turn's memory loading: the `load_memory` node (settings layers, curated document, recent
  notes, profile) in a one-node graph on the store, for scopes drawn uniformly, each with a
  curated document;
- table and index sizes, from pg_total_relation_size and friends.
"""

from __future__ import annotations

import argparse
import os
import random
import time
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor
from datetime import UTC, datetime, timedelta
from functools import partial
from typing import Any

import psycopg
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import HumanMessage
from langgraph.graph import START, StateGraph
from pgtables import empty_postgres
from recall_scale import (
    DIMS,
    HashedEmbedding,
    hybrid_only,
    keyword_only,
    p,
    queries,
    sentences,
    timed,
)

from memory_plugin import MemoryContext, connect
from memory_plugin.context_management.state import MemoryState
from memory_plugin.plans import run
from memory_plugin.prebuilt.services import build_services
from memory_plugin.scope import thread_scope
from memory_plugin.scoped import ScopedMemory
from memory_plugin.scoped.notes import update_note_plan

PER_DAY = 10
WORKSPACES = 100
CHUNK = 5_000
HNSW_INDEX = "store_vectors_embedding_idx"
HNSW_SQL = (
    f"CREATE INDEX IF NOT EXISTS {HNSW_INDEX} ON store_vectors "
    "USING hnsw (embedding vector_cosine_ops) WITH (m=16, ef_construction=64)"
)


def scope_sizes(notes: int, scopes: int, skew: float) -> list[int]:
    """Notes per scope, Zipf-distributed, summing to `notes`."""
    weights = [1.0 / (i + 1) ** skew for i in range(scopes)]
    scale = notes / sum(weights)
    sizes = [max(1, int(w * scale)) for w in weights]
    sizes[0] += notes - sum(sizes)
    return sizes


def context_of(i: int) -> MemoryContext:
    """The i-th scope: user u<i> in workspace w<i mod 100>."""
    return MemoryContext(user_id=f"u{i}", workspace_id=f"w{i % WORKSPACES}")


def _index() -> dict[str, Any]:
    return {"dims": DIMS, "embed": HashedEmbedding(), "fields": ["text"]}


def load_scopes(url: str, sizes: dict[int, int]) -> int:
    """Import the given scopes' notes (one loader process); returns how many were written."""
    today = datetime.now(UTC).date()
    written = 0
    with connect(url, index=_index()) as backend:
        memory = ScopedMemory(backend.store)
        for i, size in sizes.items():
            texts = list(sentences(size, i))
            dated = [
                (today - timedelta(days=(size - 1 - j) // PER_DAY), t) for j, t in enumerate(texts)
            ]
            for start in range(0, size, CHUNK):
                written += len(memory.import_notes(context_of(i), dated[start : start + CHUNK]))
    return written


def load(url: str, sizes: list[int], loaders: int) -> tuple[int, float]:
    """Every scope's notes, the biggest scopes spread over the loaders; (notes, seconds)."""
    shares: list[dict[int, int]] = [{} for _ in range(loaders)]
    for i, size in enumerate(sizes):
        min(shares, key=lambda share: sum(share.values()))[i] = size
    start = time.perf_counter()
    with ProcessPoolExecutor(loaders) as pool:
        written = sum(pool.map(load_scopes, [url] * loaders, shares))
    return written, time.perf_counter() - start


def sql(url: str, statement: str) -> float:
    """Run one statement in autocommit with generous maintenance memory; its seconds."""
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("SET maintenance_work_mem = '4GB'")
        conn.execute("SET max_parallel_maintenance_workers = 1")
        start = time.perf_counter()
        conn.execute(statement)  # type: ignore[arg-type]
        return time.perf_counter() - start


SIZES_SQL = """
SELECT c.relname, c.relkind, c.reltuples::bigint AS tuples,
       pg_table_size(c.oid) AS table_bytes,
       CASE WHEN c.relkind = 'r' THEN pg_indexes_size(c.oid) ELSE 0 END AS index_bytes
FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
WHERE n.nspname = 'public' AND c.relkind IN ('r', 'i')
  AND (c.relname LIKE 'store%%' OR c.relname LIKE 'memory_note%%')
ORDER BY pg_total_relation_size(c.oid) DESC
"""


def sizes_table(url: str, notes: int) -> list[str]:
    """Markdown rows: each table's rows, heap and index bytes, bytes per note; then each index."""
    with psycopg.connect(url) as conn:
        rows = conn.execute(SIZES_SQL).fetchall()
    mib = 2**20
    lines = ["| relation | kind | rows | table MiB | indexes MiB | bytes per note |"]
    lines.append("| --- | --- | --- | --- | --- | --- |")
    total = 0
    for name, kind, tuples, table_bytes, index_bytes in rows:
        size = table_bytes + index_bytes
        if kind == "r":
            total += size
        label = "table" if kind == "r" else "index"
        shown = f"{table_bytes / mib:,.0f}" if kind == "r" else ""
        indexes = f"{index_bytes / mib:,.0f}" if kind == "r" else f"{table_bytes / mib:,.0f}"
        lines.append(
            f"| {name} | {label} | {max(tuples, 0):,} | {shown} | {indexes} | {size / notes:,.0f} |"
        )
    lines.append(f"| all | | | | {total / mib:,.0f} in all | {total / notes:,.0f} |")
    return lines


def drawn(scopes: int, count: int, seed: int) -> list[int]:
    """`count` scopes drawn uniformly."""
    return random.Random(seed).sample(range(scopes), count)


def per_scope(
    embed: HashedEmbedding, call: Callable[[MemoryContext, str], Any], pairs: list[tuple[int, str]]
) -> list[float]:
    """Milliseconds per (scope, question), query embedding left out."""
    times: list[float] = []
    for i, question in pairs:
        search, _ = timed(embed, partial(call, context_of(i)), [question])
        times.extend(search)
    return times


def cell(values: list[float]) -> str:
    """p50 / p95 in ms."""
    return f"{p(values, 0.5):.1f} / {p(values, 0.95):.1f}"


def search_rows(url: str, label: str, uniform: list[int], largest: list[int]) -> list[str]:
    """Markdown rows: keyword, hybrid and recall() p50/p95 on both draws."""
    embed = HashedEmbedding()
    index = {"dims": DIMS, "embed": embed, "fields": ["text"]}
    asked = queries(len(uniform) + 20 * len(largest), 17)
    typical = list(zip(uniform, asked, strict=False))
    big = [
        (i, asked[len(uniform) + n]) for n, i in enumerate(i for i in largest for _ in range(20))
    ]
    with connect(url, index=index) as backend:
        memory = ScopedMemory(backend.store)
        store = backend.store
        keyword_only(store, context_of(0), asked[0])
        rows = []
        for name, pairs in (("uniform", typical), ("largest", big)):
            keyword = per_scope(embed, lambda c, q: keyword_only(store, c, q), pairs)
            hybrid = per_scope(embed, lambda c, q: hybrid_only(store, c, q), pairs)
            recall = per_scope(embed, memory.recall, pairs[: len(uniform)])
            rows.append(
                f"| {label} | {name} ({len(pairs)}) | {cell(keyword)} | {cell(hybrid)} "
                f"| {cell(recall)} |"
            )
            print(rows[-1], flush=True)
    return rows


def append_row(url: str, label: str, scopes: list[int]) -> str:
    """Markdown row: remember() latency into the given scopes."""
    times = []
    with connect(url, index=_index()) as backend:
        memory = ScopedMemory(backend.store)
        memory.remember(context_of(scopes[0]), "a warm-up note")
        for n, i in enumerate(scopes):
            start = time.perf_counter()
            memory.remember(context_of(i), f"appended note number {n} about the garden")
            times.append((time.perf_counter() - start) * 1e3)
    row = f"| {label} | {len(times)} | {cell(times)} | {p(times, 0.99):.1f} |"
    print(row, flush=True)
    return row


def mark_row(url: str, label: str, scopes: list[int]) -> str:
    """Markdown row: marking one note consolidated (the nightly job's write per folded note)
    in each of the given scopes."""
    times = []
    with connect(url, index=_index()) as backend:
        memory = ScopedMemory(backend.store)
        for n, i in enumerate(scopes):
            ctx = context_of(i)
            key = memory.notes_page(ctx, days=1).days[0][1][-1].key
            change = {"consolidated": True, "consolidated_at": f"2026-01-01T00:00:{n % 60:02d}"}
            start = time.perf_counter()
            run(backend.store, update_note_plan(thread_scope(ctx), key, change))
            times.append((time.perf_counter() - start) * 1e3)
    row = f"| {label}: mark consolidated | {len(times)} | {cell(times)} | {p(times, 0.99):.1f} |"
    print(row, flush=True)
    return row


def loading_row(url: str, scopes: list[int]) -> str:
    """Markdown row: the load_memory node's latency for the given scopes (documents written
    first)."""
    with connect(url, index=_index()) as backend:
        memory = ScopedMemory(backend.store)
        for i in scopes:
            memory.write_document(context_of(i), f"# Scope {i}\n\n- Prefers short answers.\n")
        services = build_services(GenericFakeChatModel(messages=iter([])), store=backend.store)
        builder = StateGraph(MemoryState, context_schema=MemoryContext)
        builder.add_node("load_memory", services.manager.load_memory)
        builder.add_edge(START, "load_memory")
        graph = builder.compile(store=backend.store)
        times, blocks = [], 0
        for n, i in enumerate([scopes[0], *scopes]):
            start = time.perf_counter()
            state = graph.invoke(
                {"messages": [HumanMessage("What did I say about the garden?")]},
                {"configurable": {"thread_id": f"load-{i}"}},
                context=context_of(i),
            )
            if n:
                times.append((time.perf_counter() - start) * 1e3)
                blocks += len(state["memory_blocks"])
    row = (
        f"| load_memory node | {len(times)} | {cell(times)} | {p(times, 0.99):.1f} "
        f"| {blocks / len(times):.1f} blocks a turn |"
    )
    print(row, flush=True)
    return row


def main() -> None:
    """Load, measure flat, build HNSW, measure again; print Markdown."""
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--postgres", default=os.environ.get("MEMORY_TEST_POSTGRES_URL"))
    parser.add_argument("--notes", type=int, default=1_000_000)
    parser.add_argument("--scopes", type=int, default=10_000)
    parser.add_argument("--skew", type=float, default=0.7)
    parser.add_argument("--loaders", type=int, default=2)
    parser.add_argument("--samples", type=int, default=200)
    parser.add_argument("--largest", type=int, default=10)
    parser.add_argument("--skip-load", action="store_true")
    parser.add_argument("--phases", default="flat,hnsw", help="flat: HNSW dropped; hnsw: built")
    args = parser.parse_args()
    if not args.postgres:
        parser.error("give --postgres URL or set MEMORY_TEST_POSTGRES_URL")
    url, sizes = args.postgres, scope_sizes(args.notes, args.scopes, args.skew)
    print(
        f"scopes {len(sizes):,}: largest {sizes[0]:,}, median {sorted(sizes)[len(sizes) // 2]:,}, "
        f"smallest {sizes[-1]:,}; over 5,000 notes: {sum(s > 5_000 for s in sizes)}",
        flush=True,
    )
    if not args.skip_load:
        empty_postgres(url, drop_vectors=True)
        with connect(url, index=_index()):
            pass
        sql(url, f"DROP INDEX IF EXISTS {HNSW_INDEX}")
        written, seconds = load(url, sizes, args.loaders)
        print(f"loaded {written:,} notes in {seconds:,.0f} s: {written / seconds:,.0f} notes/s")
        print(f"VACUUM ANALYZE: {sql(url, 'VACUUM ANALYZE'):,.0f} s", flush=True)
    uniform = drawn(args.scopes, args.samples, 5)
    largest = list(range(args.largest))
    for phase in args.phases.split(","):
        if phase == "flat":
            sql(url, f"DROP INDEX IF EXISTS {HNSW_INDEX}")
        else:
            print(f"\nHNSW build: {sql(url, HNSW_SQL):,.0f} s", flush=True)
        measure(url, phase, args, uniform, largest)


def measure(
    url: str, phase: str, args: argparse.Namespace, uniform: list[int], largest: list[int]
) -> None:
    """Sizes, searches, appends and memory loading as the store is now."""
    print("\n".join(sizes_table(url, args.notes)), flush=True)
    print("\n| index | scopes (questions) | keyword p50 / p95 ms | hybrid | recall() |")
    print("| --- | --- | --- | --- | --- |", flush=True)
    search_rows(url, phase, uniform, largest)
    print("\n| index | appends | remember() p50 / p95 ms | p99 |\n| --- | --- | --- | --- |")
    append_row(url, phase, drawn(args.scopes, args.samples, 6 if phase == "flat" else 8))
    mark_row(url, phase, drawn(args.scopes, args.samples, 9 if phase == "flat" else 10))
    print("\n| what | turns | p50 / p95 ms | p99 | |\n| --- | --- | --- | --- | --- |")
    loading_row(url, drawn(args.scopes, args.samples, 7))


if __name__ == "__main__":
    main()
