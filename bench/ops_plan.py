"""Operations-plan measurements for docs/large-stores.md: load, WAL, checkpoints, index churn.

Run: python bench/ops_plan.py --postgres URL load [--notes 200000] [--scopes 2000]
     python bench/ops_plan.py --postgres URL wal [--remember 400] [--fold 200] [--stats-wait 11]
     python bench/ops_plan.py --postgres URL turns [--threads 10] [--turns 20] [--every 5]
     python bench/ops_plan.py --postgres URL prune
     python bench/ops_plan.py --postgres URL churn [--rounds 3] [--append 0.01] [--forget 0.005]
    (use a database of its own: `load` empties it first; `wal` and `churn` expect it loaded,
    `turns` empties the checkpointer's tables)

- load: notes in Zipf-sized scopes through `ScopedMemory.import_notes` (bench/large_store.py's
  loader), VACUUM ANALYZE, then the relation sizes.
- wal: WAL bytes (pg_current_wal_lsn() before and after, and pg_stat_wal's records and full
  page images) per `remember()` into scopes drawn at random, right after a CHECKPOINT (every
  page's first change writes a full page image, as at scale) and again on the same scopes
  (their pages already imaged); then per folded note of the nightly job (`consolidate` with a
  scripted model over `--fold-scopes` fresh scopes of 5 ten-day-old notes each).
- turns: `create_memory_graph` conversations on the PostgreSQL checkpointer, `--threads`
  threads of `--turns` turns, two kinds of turn: a plain chat turn (the model answers 60
  words) and the load test's tool turn (remember, update_memory and a 60-line tool output);
  the checkpoint tables' bytes and rows, and the WAL, per turn at 5, 10, ... turns.
- prune: deletes the threads `turns` wrote with the checkpointer's `delete_thread`, timed.
- churn: the postings table's indexes under the plugin's own churn, in rounds: append
  `--append` of the notes with `remember()`, mark them consolidated (the nightly job's write),
  forget `--forget` of the notes with `delete_note`, VACUUM; sizes after each round, then
  REINDEX CONCURRENTLY (timed) and the sizes it leaves.
Every phase prints Markdown tables (and the server's settings that change the figures).
"""

from __future__ import annotations

import argparse
import os
import random
import re
import time
from datetime import UTC, datetime, timedelta
from typing import Any
from urllib.parse import urlsplit

import psycopg
from consolidation_shards import FoldingModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage
from large_store import HNSW_INDEX, _index, context_of, load, scope_sizes, sql
from load_worker import LoadModel, lookup
from pgtables import empty_postgres

from memory_plugin import MemoryContext, connect, create_memory_graph
from memory_plugin.offline import OfflineModel
from memory_plugin.offline.upkeep import upkeep_answer
from memory_plugin.plans import run
from memory_plugin.scope import thread_scope
from memory_plugin.scoped import ScopedMemory
from memory_plugin.scoped.consolidation import consolidate
from memory_plugin.scoped.notes import update_note_plan
from memory_plugin.settings import LayeredSettings

SETTINGS = ("shared_buffers", "max_wal_size", "checkpoint_timeout", "full_page_writes", "fsync")
SIZES = """
SELECT c.relname, pg_relation_size(c.oid), c.relkind
FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
WHERE n.nspname = 'public' AND c.relkind IN ('r', 'i', 't')
  AND (c.relname LIKE %s)
ORDER BY c.relname
"""
WAL = (
    "SELECT pg_current_wal_lsn(), wal_records, wal_fpi, wal_bytes, "
    "pg_snapshot_xmax(pg_current_snapshot())::text::bigint FROM pg_stat_wal"
)
CHECKPOINT_TABLES = ("checkpoints", "checkpoint_blobs", "checkpoint_writes")
MAX_SCOPES = 10_000  # the consolidation_max_scopes setting's ceiling
REPLY = " ".join(["Here is a considered answer to your question about the garden."] * 6)


def _show(conn: psycopg.Connection[Any], name: str) -> str:
    row = conn.execute(f"SHOW {name}").fetchone()
    return str(row[0]) if row else "?"


def _settings(url: str) -> str:
    with psycopg.connect(url) as conn:
        shown = [f"{name}={_show(conn, name)}" for name in SETTINGS]
        version = _show(conn, "server_version")
    return f"PostgreSQL {version}: " + ", ".join(shown)


def _drawn(scopes: int, count: int, seed: int) -> list[int]:
    return random.Random(seed).sample(range(scopes), min(count, scopes))


class WalMeter:
    """WAL written between `start()` and `stop()` (the whole server's: run nothing else)."""

    def __init__(self, url: str, wait: float) -> None:
        self.conn = psycopg.connect(url, autocommit=True)
        self.wait = wait  # an idle backend reports its WAL counters to pg_stat_wal within 10 s
        self.began: tuple[Any, ...] = ()

    def checkpoint(self) -> None:
        self.conn.execute("CHECKPOINT")

    def compression(self, value: str) -> None:
        """Set wal_compression for every session (ALTER SYSTEM, reloaded); "" resets it."""
        if value:
            self.conn.execute(f"ALTER SYSTEM SET wal_compression = {value}")
        else:
            self.conn.execute("ALTER SYSTEM RESET wal_compression")
        self.conn.execute("SELECT pg_reload_conf()")
        time.sleep(1)

    def start(self) -> None:
        time.sleep(self.wait)
        self.began = tuple(self.conn.execute(WAL).fetchone() or ())

    def stop(self) -> dict[str, float]:
        time.sleep(self.wait)
        now = tuple(self.conn.execute(WAL).fetchone() or ())
        row = self.conn.execute("SELECT pg_wal_lsn_diff(%s, %s)", (now[0], self.began[0]))
        lsn_bytes = float((row.fetchone() or (0,))[0])
        return {
            "bytes": lsn_bytes,
            "records": float(now[1] - self.began[1]),
            "fpi": float(now[2] - self.began[2]),
            "xids": float(now[4] - self.began[4]),
        }

    def close(self) -> None:
        self.conn.close()


def _per(label: str, count: int, unit: str, wal: dict[str, float]) -> str:
    return (
        f"| {label} | {count} | {wal['bytes'] / count:,.0f} | {wal['records'] / count:.1f} "
        f"| {wal['fpi'] / count:.1f} | {wal['xids'] / count:.1f} "
        f"| {wal['bytes'] / 1024**2:,.1f} MiB for {count} {unit} |"
    )


def cmd_load(url: str, args: argparse.Namespace) -> None:
    sizes = scope_sizes(args.notes, args.scopes, args.skew)
    empty_postgres(url, drop_vectors=True)
    with connect(url, index=_index()):
        pass
    sql(url, f"DROP INDEX IF EXISTS {HNSW_INDEX}")
    written, seconds = load(url, sizes, args.loaders)
    print(f"loaded {written:,} notes in {len(sizes):,} scopes in {seconds:,.0f} s")
    print(f"VACUUM ANALYZE: {sql(url, 'VACUUM ANALYZE'):,.0f} s")
    with psycopg.connect(url) as conn:
        size = conn.execute("SELECT pg_database_size(current_database())").fetchone()
    print(f"database size: {(size or (0,))[0] / 1024**3:.2f} GiB")


def cmd_wal(url: str, args: argparse.Namespace) -> None:
    print(_settings(url))
    meter = WalMeter(url, args.stats_wait)
    print(
        "\n| write | count | WAL bytes each | records each | full-page images each "
        "| transaction ids each | total |"
    )
    print("| --- | --- | --- | --- | --- | --- | --- |")
    with connect(url, index=_index()) as backend:
        memory = ScopedMemory(backend.store)
        scopes = [context_of(i) for i in _drawn(args.scopes, args.remember, 11)]
        rounds = [
            ("remember(), after a CHECKPOINT", True, "off"),
            ("remember(), same scopes again", False, "off"),
            ("remember(), after a CHECKPOINT, wal_compression=pglz", True, "pglz"),
        ]
        written: list[str] = []
        for label, checkpoint, compression in rounds:
            meter.compression(compression)
            if checkpoint:
                meter.checkpoint()
            meter.start()
            for n, ctx in enumerate(scopes):
                note = memory.remember(ctx, f"Prefers the {n}th window seat on flights to Oslo")
                written.append(note.key)
            print(_per(label, len(scopes), "notes", meter.stop()), flush=True)
        meter.compression("")
        meter.checkpoint()
        meter.start()
        for ctx, key in zip(scopes, written, strict=False):
            change = {"consolidated": True, "consolidated_at": "2026-01-01T00:00:00"}
            run(backend.store, update_note_plan(thread_scope(ctx), key, change))
        print(_per("mark consolidated, after a CHECKPOINT", len(scopes), "notes", meter.stop()))
    _nightly_wal(url, args, meter)
    meter.close()


def _nightly_wal(url: str, args: argparse.Namespace, meter: WalMeter) -> None:
    """WAL of the nightly job over `--fold` fresh scopes of 5 ten-day-old notes, two nights
    (the first writes each scope's document, the second rewrites it), in a database of its
    own on the same server (the WAL is the server's)."""
    fold_url = _scratch_database(url, "_fold")
    with connect(fold_url, index=_index()) as backend:
        memory = ScopedMemory(backend.store)
        LayeredSettings(backend.store).update(
            "platform", MemoryContext(), set={"consolidation_max_scopes": MAX_SCOPES}
        )
        fresh = [MemoryContext(user_id=f"f{i}", workspace_id="fold") for i in range(args.fold)]
        for night in (1, 2):
            day = (datetime.now(UTC) - timedelta(days=10)).date()
            for i, ctx in enumerate(fresh):
                texts = [f"night {night}: user {i} likes thing {j}" for j in range(5)]
                memory.import_notes(ctx, [(day, text) for text in texts])
            meter.checkpoint()
            meter.start()
            report = consolidate(backend.store, FoldingModel())
            wal = meter.stop()
            done = len([r for r in report.scopes if r.status == "consolidated"])
            what = "writes the document" if night == 1 else "rewrites it"
            print(
                _per(f"nightly job {night} ({what}), per folded note", report.folded, "notes", wal)
            )
            print(_per(f"nightly job {night}, per scope", done, "scopes", wal), flush=True)
    _drop_database(url, fold_url)


def _scratch_database(url: str, suffix: str) -> str:
    """A fresh database beside the one of `url`, named after it; its URL."""
    parts = urlsplit(url)
    name = parts.path.lstrip("/") + suffix
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        conn.execute(f'CREATE DATABASE "{name}"')
    return parts._replace(path=f"/{name}").geturl()


def _drop_database(url: str, other: str) -> None:
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{urlsplit(other).path.lstrip("/")}" WITH (FORCE)')


class ChatModel(OfflineModel):
    """A plain chat turn: a 60-word answer; memory's own prompts answered as OfflineModel."""

    @property
    def _llm_type(self) -> str:
        return "ops-chat"

    def respond(self, messages: list[BaseMessage], **kwargs: Any) -> AIMessage:  # type: ignore[override]
        system = str(messages[0].content) if isinstance(messages[0], SystemMessage) else ""
        upkeep = upkeep_answer(system, str(messages[-1].content)) if len(messages) > 1 else None
        if upkeep is not None:
            return AIMessage(upkeep)
        return AIMessage(REPLY)


def _checkpoint_sizes(conn: psycopg.Connection[Any]) -> dict[str, float]:
    out: dict[str, float] = {}
    for table in CHECKPOINT_TABLES:
        row = conn.execute(
            f"SELECT pg_total_relation_size('{table}'), count(*) FROM {table}"
        ).fetchone()
        out[f"{table}_bytes"], out[f"{table}_rows"] = float(row[0]), float(row[1])  # type: ignore[index]
    return out


def _turn_row(
    kind: str,
    turn: int,
    args: argparse.Namespace,
    base: dict[str, float],
    sizes: dict[str, float],
    wal: dict[str, float],
) -> str:
    turns = turn * args.threads
    per = [(sizes[f"{x}_bytes"] - base[f"{x}_bytes"]) / turns for x in CHECKPOINT_TABLES]
    rows = sum(sizes[f"{x}_rows"] - base[f"{x}_rows"] for x in CHECKPOINT_TABLES)
    split = " / ".join(f"{b:,.0f}" for b in per)
    return (
        f"| {kind} | {turn} | {sum(per):,.0f} ({split}) | {rows / turns:.1f} "
        f"| {wal['bytes'] / (args.every * args.threads):,.0f} "
        f"| {wal['xids'] / (args.every * args.threads):.1f} |"
    )


def cmd_turns(url: str, args: argparse.Namespace) -> None:
    print(_settings(url))
    with psycopg.connect(url, autocommit=True) as conn:
        for table in CHECKPOINT_TABLES:
            conn.execute(f"DROP TABLE IF EXISTS {table}")
        conn.execute("DROP TABLE IF EXISTS checkpoint_migrations")
    print(
        "\n| turn kind | turns so far (per thread) | checkpoint bytes per turn "
        "(checkpoints / blobs / writes) | rows per turn | WAL bytes per turn (these turns) "
        "| transaction ids per turn |"
    )
    print("| --- | --- | --- | --- | --- | --- |")
    for kind in ("chat", "tools"):
        with connect(url, index=_index()) as backend, psycopg.connect(url) as conn:
            conn.autocommit = True
            model = ChatModel() if kind == "chat" else LoadModel()
            graph = create_memory_graph(
                model,
                [lookup],
                store=backend.store,
                checkpointer=backend.checkpointer,
                membership=lambda user, workspace: True,
            )
            base = _checkpoint_sizes(conn)
            meter = WalMeter(url, args.stats_wait)
            meter.start()
            for turn in range(1, args.turns + 1):
                for t in range(args.threads):
                    text = (
                        f"Turn {turn} of {kind}{t} (attempt 1). "
                        "By the way, I moved the garden party to Sunday."
                    )
                    graph.invoke(
                        {"messages": [HumanMessage(text)]},
                        {"configurable": {"thread_id": f"ops-{kind}-{t}"}},
                        context={"user_id": f"ops-{kind}-{t}"},
                    )
                if turn % args.every == 0:
                    wal = meter.stop()
                    print(_turn_row(kind, turn, args, base, _checkpoint_sizes(conn), wal))
                    meter.start()
            meter.close()


def _index_sizes(url: str) -> dict[str, int]:
    with psycopg.connect(url) as conn:
        rows = conn.execute(SIZES, ("memory_note_terms%",)).fetchall()
    return {name: int(size) for name, size, kind in rows if kind in ("r", "i")}


def _size_row(label: str, sizes: dict[str, int], notes: int) -> str:
    cells = " | ".join(f"{sizes[name] / 1024**2:,.1f}" for name in sorted(sizes))
    return f"| {label} | {notes:,} | {cells} |"


def cmd_churn(url: str, args: argparse.Namespace) -> None:
    print(_settings(url))
    sizes = _index_sizes(url)
    print(f"\n| state | notes | {' | '.join(sorted(sizes))} (MiB) |")
    print("|" + " --- |" * (len(sizes) + 2))
    with psycopg.connect(url) as conn:
        count = conn.execute("SELECT count(*) FROM memory_note_fts").fetchone()
        notes = int((count or (0,))[0])
    print(_size_row("as loaded (VACUUM ANALYZE)", sizes, notes), flush=True)
    rng = random.Random(3)
    with connect(url, index=_index()) as backend:
        memory = ScopedMemory(backend.store)
        for round_ in range(1, args.rounds + 1):
            appended = int(notes * args.append)
            added = []
            for n in range(appended):
                ctx = context_of(rng.randrange(args.scopes))
                note = memory.remember(ctx, f"Round {round_} fact {n}: bought {n % 97} red tulips")
                added.append((ctx, note.key))
            for ctx, key in added:
                change = {"consolidated": True, "consolidated_at": "2026-01-02T00:00:00"}
                run(backend.store, update_note_plan(thread_scope(ctx), key, change))
            forgotten = 0
            for _ in range(int(notes * args.forget)):
                ctx = context_of(rng.randrange(args.scopes))
                listed = memory.list_notes(ctx)
                if listed:
                    memory.delete_note(ctx, rng.choice(listed).key)
                    forgotten += 1
            sql(url, "VACUUM memory_note_terms")
            notes += appended - forgotten
            label = f"round {round_}: +{appended:,} appended and folded, -{forgotten:,} forgotten"
            print(_size_row(label, _index_sizes(url), notes), flush=True)
    for name in sorted(_index_sizes(url)):
        if name != "memory_note_terms":
            took = sql(url, f"REINDEX INDEX CONCURRENTLY {name}")
            print(f"REINDEX INDEX CONCURRENTLY {name}: {took:,.1f} s")
    print(_size_row("after REINDEX CONCURRENTLY", _index_sizes(url), notes))


def cmd_prune(url: str, args: argparse.Namespace) -> None:
    """Delete the threads `turns` wrote with the checkpointer's delete_thread, timed."""
    with psycopg.connect(url) as conn:
        threads = [
            row[0]
            for row in conn.execute(
                "SELECT DISTINCT thread_id FROM checkpoints WHERE thread_id LIKE 'ops-%%'"
            ).fetchall()
        ]
        before = _checkpoint_sizes(conn)
    times = []
    with connect(url, index=_index()) as backend:
        for thread in threads:
            began = time.perf_counter()
            backend.checkpointer.delete_thread(thread)
            times.append((time.perf_counter() - began) * 1e3)
    with psycopg.connect(url) as conn:
        after = _checkpoint_sizes(conn)
    rows = sum(before[f"{x}_rows"] - after[f"{x}_rows"] for x in CHECKPOINT_TABLES)
    times.sort()
    print(
        f"delete_thread: {len(threads)} threads, {rows:,.0f} rows deleted, "
        f"p50 {times[len(times) // 2] if times else 0:.1f} ms, max {max(times, default=0):.1f} ms"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--postgres", default=os.environ.get("MEMORY_TEST_POSTGRES_URL"))
    parser.add_argument("--notes", type=int, default=200_000, help="notes to load")
    parser.add_argument("--scopes", type=int, default=2_000, help="scopes loaded")
    parser.add_argument("--skew", type=float, default=0.7)
    parser.add_argument("--loaders", type=int, default=2)
    parser.add_argument("--remember", type=int, default=400, help="wal: remember() calls")
    parser.add_argument("--fold", type=int, default=200, help="wal: scopes for the nightly job")
    parser.add_argument("--threads", type=int, default=10, help="turns: threads per kind")
    parser.add_argument("--turns", type=int, default=20, help="turns: turns per thread")
    parser.add_argument("--every", type=int, default=5, help="turns: a row every N turns")
    parser.add_argument(
        "--stats-wait",
        type=float,
        default=11.0,
        help="wal, turns: seconds to wait before reading pg_stat_wal (backends report within 10 s)",
    )
    parser.add_argument("--rounds", type=int, default=3, help="churn: rounds")
    parser.add_argument("--append", type=float, default=0.01, help="churn: share appended")
    parser.add_argument("--forget", type=float, default=0.005, help="churn: share forgotten")
    parser.add_argument("phase", choices=["load", "wal", "turns", "churn", "prune"])
    args = parser.parse_args()
    if not args.postgres or not re.match(r"postgres(ql)?://", args.postgres):
        parser.error("give --postgres URL or set MEMORY_TEST_POSTGRES_URL")
    {"load": cmd_load, "wal": cmd_wal, "turns": cmd_turns, "churn": cmd_churn, "prune": cmd_prune}[
        args.phase
    ](args.postgres, args)


if __name__ == "__main__":
    main()
