"""SQLite backend, the embedded default: SqliteStore and SqliteSaver on one file.

Vector search needs the sqlite-vec extension, which needs a sqlite3 module that can load
extensions (pysqlite3-binary, or a Python built with it). Without one the store runs
keyword-only and says so once.

Deleted means unreadable on disk. Every connection runs with secure_delete, so a removal
zeroes the removed rows and freed pages in the file; but the write-ahead log (memory.db-wal)
keeps the page images written before it until SQLite checkpoints the log, which it does by
itself only when the log grows past 1000 pages or the last connection closes, and even then
leaves old frames in the file. So after each batch that deletes an item, each
`erasure.Purge` step (which plans yield after rewrites that drop text) and each deleted
thread, the store or the checkpointer copies the log into the file and truncates it
(`PRAGMA wal_checkpoint(TRUNCATE)`), under the lock the two share so that no write of this
process lands in between. Another process reading the file keeps its frames: the checkpoint
then reports busy, which is logged once and never fails the removal (closing, or the
operator's checkpoint in docs/privacy.md, finishes the job). Removals are rare, and the log
they truncate holds only what was written since the last checkpoint.
"""

from __future__ import annotations

import asyncio
import sqlite3
import threading
from collections.abc import AsyncIterator, Iterable, Iterator, Sequence
from contextlib import AsyncExitStack, ExitStack, asynccontextmanager, contextmanager
from pathlib import Path
from types import ModuleType
from typing import Any

import aiosqlite
from langgraph.store.base import GetOp, ListNamespacesOp, Op, PutOp, Result, SearchOp
from langgraph.store.sqlite import SqliteStore
from langgraph.store.sqlite.aio import AsyncSqliteStore

from memory_plugin.backends.base import Opened
from memory_plugin.backends.erasure import removes
from memory_plugin.backends.fts import asqlite_setup, mark_ready, sqlite_setup
from memory_plugin.backends.index import log_once
from memory_plugin.backends.sqlite_savers import (
    SharedLibraryAsyncSqliteSaver,
    SharedLibrarySqliteSaver,
)
from memory_plugin.backends.unclosed import stop_at_exit
from memory_plugin.backends.wal import atruncate_wal, truncate_wal
from memory_plugin.backends.writes_seen import wrote_ops
from memory_plugin.errors import BackendUnavailableError
from memory_plugin.serde import CachingSerializer

STORE_CACHE_KIB = 65_536
"""The store connection's page cache: searches read a scope's vectors and postings from
memory instead of the file (SQLite's default is 2 MiB)."""


def single_statement(
    store: SqliteStore | AsyncSqliteStore, ops: list[Op]
) -> tuple[str, Sequence[Any]] | None:
    """The one statement a batch of writes runs (puts without vectors, or deletes in one
    namespace), None when it takes more: that one is atomic without a transaction."""
    puts = [op for op in ops if isinstance(op, PutOp)]
    if not puts or len(puts) < len(ops) or _takes_more(store, puts):
        return None
    queries, vectors = store._prepare_batch_PUT_queries(list(enumerate(ops)))  # type: ignore[arg-type]
    return queries[0] if vectors is None and len(queries) == 1 else None


def _takes_more(store: SqliteStore | AsyncSqliteStore, puts: list[PutOp]) -> bool:
    """Whether the puts surely take more than one statement (vectors to write, deletes beside
    writes, deletes in several namespaces), told without preparing them (their values would
    be serialized twice)."""
    if store.index_config and any(p.value is not None and p.index is not False for p in puts):
        return True
    deleted = {p.namespace for p in puts if p.value is None}
    return len(deleted) > 1 or (bool(deleted) and any(p.value is not None for p in puts))


class ThreadedSqliteStore(SqliteStore):
    """SqliteStore whose async methods run the sync batch in a worker thread, as
    PostgresStore does, so nodes using the async API work on a store from `connect`.

    Its transactions take the write lock when they begin (BEGIN IMMEDIATE), waiting out the
    checkpointer's writes: a deferred transaction that reads first (the search triggers do)
    cannot take the lock once another connection has written, and fails at once with
    "database is locked". A batch of reads only (no TTL to refresh) reads one snapshot in a
    deferred transaction, which never waits for a writer; a batch of writes that is one
    statement runs without BEGIN and COMMIT (`single_statement`)."""

    _reading = threading.local()

    @contextmanager
    def _cursor(self, *, transaction: bool = True) -> Iterator[sqlite3.Cursor]:
        if not self.is_setup:
            self.setup()
        with self.lock:
            if transaction:
                reads_only = getattr(self._reading, "only", False)
                self.conn.execute("BEGIN" if reads_only else "BEGIN IMMEDIATE")
            cur = self.conn.cursor()
            try:
                yield cur
            finally:
                if transaction:
                    self.conn.execute("COMMIT")
                cur.close()

    def batch(self, ops: Iterable[Op]) -> list[Result]:
        """SqliteStore.batch; after a removal, the write-ahead log is emptied; its writes move
        the write generation (memory_plugin.backends.writes_seen)."""
        ops = list(ops)
        try:
            return self._batch(ops)
        finally:
            wrote_ops(ops)

    def _batch(self, ops: list[Op]) -> list[Result]:
        single = single_statement(self, ops)
        if single is not None:
            with self._cursor(transaction=False) as cur:
                cur.execute(*single)
            if removes(ops):
                self.purge_removed()
            return [None] * len(ops)
        self._reading.only = self.ttl_config is None and all(
            isinstance(op, (GetOp, SearchOp, ListNamespacesOp)) for op in ops
        )
        try:
            results = super().batch(ops)
        finally:
            self._reading.only = False
        if removes(ops):
            self.purge_removed()
        return results

    async def abatch(self, ops: Iterable[Op]) -> list[Result]:
        """Run a batch off the event loop."""
        return await asyncio.get_running_loop().run_in_executor(None, self.batch, list(ops))

    def purge_removed(self) -> None:
        """Empty the write-ahead log, which holds the page images written before a removal."""
        with self.lock:
            truncate_wal(self.conn)

    async def apurge_removed(self) -> None:
        """Async twin of purge_removed, off the event loop."""
        await asyncio.to_thread(self.purge_removed)


class ImmediateAsyncSqliteStore(AsyncSqliteStore):
    """AsyncSqliteStore whose transactions take the write lock when they begin (see
    ThreadedSqliteStore)."""

    @asynccontextmanager
    async def _cursor(self, *, transaction: bool = True) -> AsyncIterator[aiosqlite.Cursor]:
        if not self.is_setup:
            await self.setup()
        async with self.lock:
            if transaction:
                await self.conn.execute("BEGIN IMMEDIATE")
            async with self.conn.cursor() as cur:
                try:
                    yield cur
                finally:
                    if transaction:
                        await self.conn.execute("COMMIT")

    async def abatch(self, ops: Iterable[Op]) -> list[Result]:
        """AsyncSqliteStore.abatch; after a removal, the write-ahead log is emptied; its writes
        move the write generation."""
        ops = list(ops)
        try:
            return await self._abatch(ops)
        finally:
            wrote_ops(ops)

    async def _abatch(self, ops: list[Op]) -> list[Result]:
        single = single_statement(self, ops)
        if single is not None:
            async with self._cursor(transaction=False) as cur:
                await cur.execute(*single)
            results: list[Result] = [None] * len(ops)
        else:
            results = await super().abatch(ops)
        if removes(ops):
            await self.apurge_removed()
        return results

    def purge_removed(self) -> None:
        """Empty the write-ahead log (see ThreadedSqliteStore), from another thread."""
        asyncio.run_coroutine_threadsafe(self.apurge_removed(), self.loop).result()

    async def apurge_removed(self) -> None:
        """Empty the write-ahead log, which holds the page images written before a removal."""
        async with self.lock:
            await atruncate_wal(self.conn)


def loadable_sqlite() -> ModuleType | None:
    """A sqlite3 module that can load sqlite-vec, or None."""
    candidates: list[ModuleType] = []
    try:
        from pysqlite3 import dbapi2

        candidates.append(dbapi2)
    except ImportError:
        pass
    candidates.append(sqlite3)
    for module in candidates:
        try:
            import sqlite_vec

            probe = module.connect(":memory:")
            try:
                probe.enable_load_extension(True)
                sqlite_vec.load(probe)
            finally:
                probe.close()
        except Exception:
            continue
        return module
    return None


def _module(index: dict[str, Any] | None) -> tuple[ModuleType, bool]:
    """The sqlite3 module for both connections, and whether vectors can be searched.

    Both connections use the module that can load sqlite-vec whenever there is one, index or
    not: two SQLite libraries in one process release each other's file locks, which corrupts
    the database.
    """
    module = loadable_sqlite()
    if index is not None and module is None:
        log_once(
            "SQLite cannot load sqlite-vec with this Python (no enable_load_extension and no "
            "pysqlite3): the store runs keyword-only, without semantic search"
        )
    return module or sqlite3, index is not None and module is not None


def _prepare(path: str) -> str:
    if path != ":memory:":
        try:
            Path(path).parent.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise BackendUnavailableError(f"cannot create the folder for {path}: {exc}") from exc
    return path


def _connect(module: ModuleType, path: str, cache_kib: int = 0, **kwargs: Any) -> Any:
    try:
        conn = module.connect(path, check_same_thread=False, **kwargs)
        conn.execute("PRAGMA journal_mode=WAL")
        if cache_kib:
            conn.execute(f"PRAGMA cache_size=-{int(cache_kib)}")
        conn.execute("PRAGMA synchronous=NORMAL")  # WAL: no fsync per commit, never corrupt
        conn.execute("PRAGMA secure_delete=ON")  # removed text is zeroed, not left in the file
    except Exception as exc:
        raise BackendUnavailableError(f"cannot open SQLite database {path}: {exc}") from exc
    return conn


def open_sqlite(path: str, index: dict[str, Any] | None, stack: ExitStack) -> Opened:
    """Open a durable SQLite store and checkpointer on one database file.

    They take turns under one lock: on two connections each waiting in SQLite's busy handler
    (which sleeps and retries, never queues), one side writing back to back kept the other
    out past any busy timeout, and a turn failed with "database is locked"."""
    _prepare(path)
    module, vectors = _module(index)
    store_conn = _connect(module, path, STORE_CACHE_KIB, isolation_level=None)
    stack.callback(store_conn.close)
    saver_conn = _connect(module, path, isolation_level=None)
    stack.callback(saver_conn.close)
    store = ThreadedSqliteStore(store_conn, index=index if vectors else None)  # type: ignore[arg-type]
    saver = SharedLibrarySqliteSaver(saver_conn, serde=CachingSerializer())
    saver.lock = store.lock
    store.setup()
    saver.setup()
    sqlite_setup(store_conn)
    mark_ready(store)
    return Opened(store, saver, vectors)


async def aopen_sqlite(path: str, index: dict[str, Any] | None, stack: AsyncExitStack) -> Opened:
    """Async twin of open_sqlite, on aiosqlite connections."""
    _prepare(path)
    module, vectors = _module(index)

    def connector(mod: ModuleType, cache: int = 0, **kwargs: Any) -> aiosqlite.Connection:
        return stop_at_exit(
            aiosqlite.Connection(lambda: _connect(mod, path, cache, **kwargs), iter_chunk_size=64)
        )

    store_conn = await connector(module, STORE_CACHE_KIB, isolation_level=None)
    stack.push_async_callback(store_conn.close)
    saver_conn = await connector(module, isolation_level=None)
    stack.push_async_callback(saver_conn.close)
    store = ImmediateAsyncSqliteStore(store_conn, index=index if vectors else None)  # type: ignore[arg-type]
    saver = SharedLibraryAsyncSqliteSaver(saver_conn, serde=CachingSerializer())
    saver.lock = store.lock
    await store.setup()
    await saver.setup()
    await asqlite_setup(store_conn)
    mark_ready(store)
    return Opened(store, saver, vectors)
