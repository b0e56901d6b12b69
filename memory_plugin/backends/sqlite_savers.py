"""The SQLite checkpointers: LangGraph's savers on a connection of the store's sqlite3 module,
sharing the store's lock, with each write one statement.

Their connection is in autocommit mode. A checkpoint is one INSERT, and a task's writes are
one INSERT of all its rows, so each is atomic without the BEGIN and COMMIT that LangGraph's
savers wrap around them (two statements of three, on every write a turn makes). Writes too
many for one statement (SQLite's bound on parameters), and deleting a thread (two tables),
run in one transaction as before.

A checkpoint's DeltaChannel history is one statement (memory_plugin.backends.sqlite_history).
Under durability="exit", a run's DeltaChannel writes are held and stored with the run's final
checkpoint in one transaction (see memory_plugin.backends.exit_writes).
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Iterator, Mapping, Sequence
from typing import Any

from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.base import (
    WRITES_IDX_MAP,
    ChannelVersions,
    Checkpoint,
    CheckpointMetadata,
    CheckpointTuple,
    DeltaChannelHistory,
    get_checkpoint_id,
    get_checkpoint_metadata,
)
from langgraph.checkpoint.sqlite import SqliteSaver
from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver

from memory_plugin.backends.exit_writes import ExitWrites
from memory_plugin.backends.pages import apages, pages
from memory_plugin.backends.sqlite_history import HistoryWalk, history_statement, walk
from memory_plugin.backends.steps import Steps, adrive, drive, transaction
from memory_plugin.backends.wal import atruncate_wal, truncate_wal

_COLUMNS = (
    "(thread_id, checkpoint_ns, checkpoint_id, task_id, task_path, idx, channel, type, value)"
)
_ROW = "(?, ?, ?, ?, ?, ?, ?, ?, ?)"
ROWS_PER_STATEMENT = 110
"""Rows in one INSERT: 9 parameters each, under the 999 that older SQLite builds allow."""
_PUT_CHECKPOINT = (
    "INSERT OR REPLACE INTO checkpoints (thread_id, checkpoint_ns, checkpoint_id,"
    " parent_checkpoint_id, type, checkpoint, metadata) VALUES (?, ?, ?, ?, ?, ?, ?)"
)
_DELETE_THREAD = (
    "DELETE FROM checkpoints WHERE thread_id = ?",
    "DELETE FROM writes WHERE thread_id = ?",
)

Statement = tuple[str, tuple[Any, ...]]


Rows = tuple[str, list[tuple[Any, ...]]]
"""A task's writes as rows, with the verb their INSERT takes (REPLACE or IGNORE)."""


def write_rows(
    saver: SqliteSaver | AsyncSqliteSaver,
    config: RunnableConfig,
    writes: Sequence[tuple[str, Any]],
    task_id: str,
    task_path: str,
) -> Rows:
    """The rows LangGraph's put_writes stores for a task's writes."""
    verb = "REPLACE" if all(w[0] in WRITES_IDX_MAP for w in writes) else "IGNORE"
    conf = config["configurable"]
    head = (str(conf["thread_id"]), str(conf["checkpoint_ns"]), str(conf["checkpoint_id"]))
    rows = [
        (*head, task_id, task_path, WRITES_IDX_MAP.get(channel, idx), channel, *typed)
        for idx, (channel, value) in enumerate(writes)
        for typed in [saver.serde.dumps_typed(value)]
    ]
    return verb, rows


def insert_statements(verb: str, rows: Sequence[tuple[Any, ...]]) -> list[Statement]:
    """The INSERTs of these rows, ROWS_PER_STATEMENT at most in one."""
    statements: list[Statement] = []
    for start in range(0, len(rows), ROWS_PER_STATEMENT):
        chunk = rows[start : start + ROWS_PER_STATEMENT]
        values = ", ".join([_ROW] * len(chunk))
        sql = f"INSERT OR {verb} INTO writes {_COLUMNS} VALUES {values}"
        statements.append((sql, tuple(v for row in chunk for v in row)))
    return statements


def checkpoint_statement(
    saver: SqliteSaver | AsyncSqliteSaver,
    config: RunnableConfig,
    checkpoint: Checkpoint,
    metadata: CheckpointMetadata,
) -> Statement:
    """The INSERT that stores a checkpoint, the row LangGraph's put stores."""
    conf = config["configurable"]
    type_, serialized = saver.serde.dumps_typed(checkpoint)
    meta = json.dumps(get_checkpoint_metadata(config, metadata), ensure_ascii=False)
    row = (
        str(conf["thread_id"]),
        conf["checkpoint_ns"],
        checkpoint["id"],
        conf.get("checkpoint_id"),
        type_,
        serialized,
        meta.encode("utf-8", "ignore"),
    )
    return _PUT_CHECKPOINT, row


def exit_put_statements(
    saver: SqliteSaver | AsyncSqliteSaver,
    held: Sequence[Rows],
    config: RunnableConfig,
    checkpoint: Checkpoint,
    metadata: CheckpointMetadata,
) -> list[Statement]:
    """The held exit writes, an INSERT for each verb, then the checkpoint's INSERT."""
    by_verb: dict[str, list[tuple[Any, ...]]] = {}
    for verb, rows in held:
        by_verb.setdefault(verb, []).extend(rows)
    statements = [s for verb, rows in by_verb.items() for s in insert_statements(verb, rows)]
    return [*statements, checkpoint_statement(saver, config, checkpoint, metadata)]


def _history_walk(
    saver: SqliteSaver | AsyncSqliteSaver, config: RunnableConfig, channels: Sequence[str]
) -> tuple[HistoryWalk, tuple[str, tuple[Any, ...]]] | None:
    """The walk and statement of a checkpoint's history; None where LangGraph's own read
    is the one (no checkpoint id, no channel, no task_path column)."""
    checkpoint_id = get_checkpoint_id(config)
    if not channels or not checkpoint_id or not saver._has_task_path:
        return None
    conf = config["configurable"]
    ns = str(conf.get("checkpoint_ns", ""))
    statement = history_statement(str(conf["thread_id"]), ns, checkpoint_id, channels)
    return HistoryWalk(checkpoint_id, channels, saver.serde), statement


def _saved(config: RunnableConfig, checkpoint: Checkpoint) -> RunnableConfig:
    conf = config["configurable"]
    return {
        "configurable": {
            "thread_id": conf["thread_id"],
            "checkpoint_ns": conf["checkpoint_ns"],
            "checkpoint_id": checkpoint["id"],
        }
    }


def _delete_thread(thread_id: str) -> list[Statement]:
    return [(sql, (str(thread_id),)) for sql in _DELETE_THREAD]


def _writes(statements: Sequence[Statement]) -> Steps[None]:
    """One statement on its own (atomic as it is), more in one transaction."""
    if len(statements) == 1:
        yield statements[0]
    elif statements:
        yield from transaction(_each(statements))


def _each(statements: Sequence[Statement]) -> Steps[None]:
    for sql, params in statements:  # noqa: UP028 (a generator: transaction sends it rows)
        yield sql, params


class SharedLibrarySqliteSaver(SqliteSaver):
    """SqliteSaver on a connection of the store's sqlite3 module (pysqlite3 where it is the
    one that loads sqlite-vec): LangGraph's migration only recognises the standard module's
    "duplicate column name" error, which means the column is already there.

    It takes the store's lock (see memory_plugin.backends.sqlite), lists checkpoints a page
    at a time so that the lock is never held while the caller works between two of them, and
    writes each checkpoint and each task's writes in one statement (see the module)."""

    exit_writes: ExitWrites[Rows]

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.exit_writes = ExitWrites()

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

    def put_writes(
        self,
        config: RunnableConfig,
        writes: Sequence[tuple[str, Any]],
        task_id: str,
        task_path: str = "",
    ) -> None:
        """Store a task's writes as SqliteSaver does, in one statement; a run's exit writes are
        held for its checkpoint."""
        rows = write_rows(self, config, writes, task_id, task_path)
        if self.exit_writes.hold(config, task_id, task_path, rows):
            return
        statements = insert_statements(*rows)
        with self.lock:
            self.setup()
            drive(_writes(statements), self.conn.execute)

    def put(
        self,
        config: RunnableConfig,
        checkpoint: Checkpoint,
        metadata: CheckpointMetadata,
        new_versions: ChannelVersions,
    ) -> RunnableConfig:
        """Store a checkpoint as SqliteSaver does, with the exit writes its run held for it."""
        held = self.exit_writes.take(config, checkpoint["id"])
        if not held:
            return super().put(config, checkpoint, metadata, new_versions)
        statements = exit_put_statements(self, held, config, checkpoint, metadata)
        with self.lock:
            self.setup()
            drive(_writes(statements), self.conn.execute)
        return _saved(config, checkpoint)

    def get_delta_channel_history(
        self, *, config: RunnableConfig, channels: Sequence[str]
    ) -> Mapping[str, DeltaChannelHistory]:
        """The history SqliteSaver returns, in one statement."""
        found = _history_walk(self, config, channels)
        if found is None:
            return super().get_delta_channel_history(config=config, channels=channels)
        walker, (sql, params) = found
        with self.cursor(transaction=False) as cur:
            walk(walker, cur.execute(sql, params))
        return walker.history()

    def delete_thread(self, thread_id: str) -> None:
        """Delete a thread's checkpoints and writes, then empty the write-ahead log."""
        with self.lock:
            self.setup()
            drive(_writes(_delete_thread(thread_id)), self.conn.execute)
            truncate_wal(self.conn)

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

    exit_writes: ExitWrites[Rows]

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.exit_writes = ExitWrites()

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

    async def aput_writes(
        self,
        config: RunnableConfig,
        writes: Sequence[tuple[str, Any]],
        task_id: str,
        task_path: str = "",
    ) -> None:
        """Store a task's writes as AsyncSqliteSaver does, in one statement; a run's exit writes
        are held for its checkpoint."""
        rows = write_rows(self, config, writes, task_id, task_path)
        if self.exit_writes.hold(config, task_id, task_path, rows):
            return
        statements = insert_statements(*rows)
        await self.setup()
        async with self.lock:
            await adrive(_writes(statements), self.conn.execute_fetchall)

    async def aput(
        self,
        config: RunnableConfig,
        checkpoint: Checkpoint,
        metadata: CheckpointMetadata,
        new_versions: ChannelVersions,
    ) -> RunnableConfig:
        """Store a checkpoint as AsyncSqliteSaver does, with the exit writes its run held."""
        held = self.exit_writes.take(config, checkpoint["id"])
        if not held:
            return await super().aput(config, checkpoint, metadata, new_versions)
        statements = exit_put_statements(self, held, config, checkpoint, metadata)
        await self.setup()
        async with self.lock:
            await adrive(_writes(statements), self.conn.execute_fetchall)
        return _saved(config, checkpoint)

    async def aget_delta_channel_history(
        self, *, config: RunnableConfig, channels: Sequence[str]
    ) -> Mapping[str, DeltaChannelHistory]:
        """The history AsyncSqliteSaver returns, in one statement."""
        await self.setup()
        found = _history_walk(self, config, channels)
        if found is None:
            return await super().aget_delta_channel_history(config=config, channels=channels)
        walker, (sql, params) = found
        async with self.lock, self.conn.execute(sql, params) as cur:
            async for row in cur:
                if walker.feed(tuple(row)):
                    break
        return walker.history()

    async def adelete_thread(self, thread_id: str) -> None:
        """Delete a thread's checkpoints and writes, then empty the write-ahead log."""
        await self.setup()
        async with self.lock:
            await adrive(_writes(_delete_thread(thread_id)), self.conn.execute_fetchall)
            await atruncate_wal(self.conn)

    async def setup(self) -> None:
        """Create the checkpoint tables; an existing task_path column is no error."""
        try:
            await super().setup()
        except Exception as exc:
            if "duplicate column name" not in str(exc):
                raise
            self.is_setup = True
