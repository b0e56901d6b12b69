"""SQLite backend, the embedded default: SqliteStore and SqliteSaver on one file.

Vector search needs the sqlite-vec extension, which needs a sqlite3 module that can load
extensions (pysqlite3-binary, or a Python built with it). Without one the store runs
keyword-only and says so once.
"""

from __future__ import annotations

import asyncio
import sqlite3
from collections.abc import AsyncIterator, Iterable, Iterator
from contextlib import AsyncExitStack, ExitStack, asynccontextmanager, contextmanager
from pathlib import Path
from types import ModuleType
from typing import Any

import aiosqlite
from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.base import CheckpointTuple
from langgraph.checkpoint.sqlite import SqliteSaver
from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver
from langgraph.store.base import Op, Result
from langgraph.store.sqlite import SqliteStore
from langgraph.store.sqlite.aio import AsyncSqliteStore

from memory_plugin.backends.base import Opened
from memory_plugin.backends.fts import asqlite_setup, mark_ready, sqlite_setup
from memory_plugin.backends.index import log_once
from memory_plugin.backends.pages import apages, pages
from memory_plugin.backends.unclosed import stop_at_exit
from memory_plugin.errors import BackendUnavailableError
from memory_plugin.serde import CachingSerializer

STORE_CACHE_KIB = 65_536
"""The store connection's page cache: searches read a scope's vectors and postings from
memory instead of the file (SQLite's default is 2 MiB)."""


class ThreadedSqliteStore(SqliteStore):
    """SqliteStore whose async methods run the sync batch in a worker thread, as
    PostgresStore does, so nodes using the async API work on a store from `connect`.

    Its transactions take the write lock when they begin (BEGIN IMMEDIATE), waiting out the
    checkpointer's writes: a deferred transaction that reads first (the search triggers do)
    cannot take the lock once another connection has written, and fails at once with
    "database is locked"."""

    @contextmanager
    def _cursor(self, *, transaction: bool = True) -> Iterator[sqlite3.Cursor]:
        if not self.is_setup:
            self.setup()
        with self.lock:
            if transaction:
                self.conn.execute("BEGIN IMMEDIATE")
            cur = self.conn.cursor()
            try:
                yield cur
            finally:
                if transaction:
                    self.conn.execute("COMMIT")
                cur.close()

    async def abatch(self, ops: Iterable[Op]) -> list[Result]:
        """Run a batch off the event loop."""
        return await asyncio.get_running_loop().run_in_executor(None, self.batch, list(ops))


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


class SharedLibrarySqliteSaver(SqliteSaver):
    """SqliteSaver on a connection of the store's sqlite3 module (pysqlite3 where it is the
    one that loads sqlite-vec): LangGraph's migration only recognises the standard module's
    "duplicate column name" error, which means the column is already there.

    It takes the store's lock (see open_sqlite), and lists checkpoints a page at a time so
    that the lock is never held while the caller works between two of them."""

    def list(
        self,
        config: RunnableConfig | None,
        *,
        filter: dict[str, Any] | None = None,
        before: RunnableConfig | None = None,
        limit: int | None = None,
    ) -> Iterator[CheckpointTuple]:
        """Checkpoints newest first, as SqliteSaver.list gives them."""

        def read(after: RunnableConfig | None, size: int) -> list[CheckpointTuple]:
            return [*SqliteSaver.list(self, config, filter=filter, before=after, limit=size)]

        return pages(read, before, limit)

    def setup(self) -> None:
        """Create the checkpoint tables; an existing task_path column is no error."""
        try:
            super().setup()
        except Exception as exc:
            if "duplicate column name" not in str(exc):
                raise
            self.is_setup = True


class SharedLibraryAsyncSqliteSaver(AsyncSqliteSaver):
    """Async twin of SharedLibrarySqliteSaver."""

    async def alist(
        self,
        config: RunnableConfig | None,
        *,
        filter: dict[str, Any] | None = None,
        before: RunnableConfig | None = None,
        limit: int | None = None,
    ) -> AsyncIterator[CheckpointTuple]:
        """Checkpoints newest first, as AsyncSqliteSaver.alist gives them."""

        async def read(after: RunnableConfig | None, size: int) -> list[CheckpointTuple]:
            listed = AsyncSqliteSaver.alist(self, config, filter=filter, before=after, limit=size)
            return [saved async for saved in listed]

        async for saved in apages(read, before, limit):
            yield saved

    async def setup(self) -> None:
        """Create the checkpoint tables; an existing task_path column is no error."""
        try:
            await super().setup()
        except Exception as exc:
            if "duplicate column name" not in str(exc):
                raise
            self.is_setup = True


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
    saver_conn = _connect(module, path)
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
    saver_conn = await connector(module)
    stack.push_async_callback(saver_conn.close)
    store = ImmediateAsyncSqliteStore(store_conn, index=index if vectors else None)  # type: ignore[arg-type]
    saver = SharedLibraryAsyncSqliteSaver(saver_conn, serde=CachingSerializer())
    saver.lock = store.lock
    await store.setup()
    await saver.setup()
    await asqlite_setup(store_conn)
    mark_ready(store)
    return Opened(store, saver, vectors)
