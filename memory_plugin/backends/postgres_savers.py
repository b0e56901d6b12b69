"""The PostgreSQL checkpointers: LangGraph's savers, storing a run's exit-mode DeltaChannel
writes with its final checkpoint (see memory_plugin.backends.exit_writes) and reading a
checkpoint's DeltaChannel history with the checkpoint itself, or else in one round trip
(memory_plugin.backends.postgres_history).

The held writes run first in the pipeline LangGraph's put opens for the checkpoint (one round
trip, one transaction: a checkpoint that fails to store keeps none of them). The fence:
PostgresSaver.put and AsyncPostgresSaver.aput store the checkpoint in
`with self._cursor(pipeline=True)`, and `_dump_writes` gives put_writes' rows
(langgraph-checkpoint-postgres 3.2); the override of `_cursor` adds the held writes to that
pipeline only while this saver's own put runs (a context variable, so other threads and
tasks are untouched). Likewise get_tuple's cursor: LangGraph's get_tuple runs its query with
`cur.execute` and reads the row with `cur.fetchone`, and reads the row's columns by name, so
the cursor handed to it wraps the first query (with_history) and keeps the history its row
carries; the history read that follows, in the same thread or task and for that same
checkpoint, takes it (once) instead of asking the server.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator, Mapping, Sequence
from contextlib import asynccontextmanager, contextmanager
from contextvars import ContextVar
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
)
from langgraph.checkpoint.postgres import PostgresSaver
from langgraph.checkpoint.postgres.aio import AsyncPostgresSaver

from memory_plugin.backends.exit_writes import ExitWrites
from memory_plugin.backends.postgres_history import (
    HISTORY_SQL,
    Found,
    found,
    history_from_rows,
    history_params,
    rows_of_tuple,
    with_history,
)

Held = tuple[str, list[tuple[Any, ...]]]
"""A task's writes: the statement that stores them and its rows."""

_TO_PUT: ContextVar[Sequence[Held]] = ContextVar("exit_writes_to_put", default=())
Target = tuple[str, str, str | None]
_PREFETCH: ContextVar[bool] = ContextVar("history_with_tuple", default=False)
_PREFETCHED: ContextVar[Found | None] = ContextVar("history_prefetched", default=None)


def _held(
    saver: PostgresSaver | AsyncPostgresSaver,
    config: RunnableConfig,
    writes: Sequence[tuple[str, Any]],
    task_id: str,
    task_path: str,
) -> Held:
    query = (
        saver.UPSERT_CHECKPOINT_WRITES_SQL
        if all(w[0] in WRITES_IDX_MAP for w in writes)
        else saver.INSERT_CHECKPOINT_WRITES_SQL
    )
    conf = config["configurable"]
    rows = saver._dump_writes(
        conf["thread_id"], conf["checkpoint_ns"], conf["checkpoint_id"], task_id, task_path, writes
    )
    return query, list(rows)


def _target(config: RunnableConfig) -> Target:
    conf = config["configurable"]
    return str(conf["thread_id"]), str(conf.get("checkpoint_ns", "")), get_checkpoint_id(config)


def _prefetched(
    thread_id: str, ns: str, checkpoint_id: str, channels: Sequence[str]
) -> Found | None:
    """The rows the get_tuple before read for this history, taken once."""
    fetched = _PREFETCHED.get()
    if fetched is None:
        return None
    _PREFETCHED.set(None)
    return fetched if fetched.answers(thread_id, ns, checkpoint_id, channels) else None


class ExitWritesPostgresSaver(PostgresSaver):
    """PostgresSaver storing a run's exit writes in its final checkpoint's round trip."""

    exit_writes: ExitWrites[Held]

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.exit_writes = ExitWrites()

    def put_writes(
        self,
        config: RunnableConfig,
        writes: Sequence[tuple[str, Any]],
        task_id: str,
        task_path: str = "",
    ) -> None:
        """Store a task's writes as PostgresSaver does; a run's exit writes wait for its
        checkpoint."""
        if not self.exit_writes.hold(
            config, task_id, task_path, _held(self, config, writes, task_id, task_path)
        ):
            super().put_writes(config, writes, task_id, task_path)

    def put(
        self,
        config: RunnableConfig,
        checkpoint: Checkpoint,
        metadata: CheckpointMetadata,
        new_versions: ChannelVersions,
    ) -> RunnableConfig:
        """Store a checkpoint as PostgresSaver does, with the exit writes its run held."""
        token = _TO_PUT.set(self.exit_writes.take(config, checkpoint["id"]))
        try:
            return super().put(config, checkpoint, metadata, new_versions)
        finally:
            _TO_PUT.reset(token)

    def get_delta_channel_history(
        self, *, config: RunnableConfig, channels: Sequence[str]
    ) -> Mapping[str, DeltaChannelHistory]:
        """The history PostgresSaver returns: read with the checkpoint, or in one round trip."""
        thread_id, ns, checkpoint_id = _target(config)
        if not channels or checkpoint_id is None:
            return super().get_delta_channel_history(config=config, channels=channels)
        channels = list(channels)
        fetched = _prefetched(thread_id, ns, checkpoint_id, channels)
        if fetched is not None:
            return history_from_rows(self, channels, fetched.rows)
        with self._cursor() as cur:
            cur.execute(HISTORY_SQL, history_params(thread_id, ns, checkpoint_id, channels))
            rows = cur.fetchall()
        return history_from_rows(self, channels, rows)

    def get_tuple(self, config: RunnableConfig) -> CheckpointTuple | None:
        """The checkpoint PostgresSaver returns; the history it needs comes in the same round
        trip, for the history read that follows."""
        token = _PREFETCH.set(True)
        try:
            return super().get_tuple(config)
        finally:
            _PREFETCH.reset(token)

    @contextmanager
    def _cursor(self, *, pipeline: bool = False) -> Iterator[Any]:
        with_tuple = _PREFETCH.get()
        _PREFETCH.set(False)
        with super()._cursor(pipeline=pipeline) as cur:
            for query, rows in _TO_PUT.get():
                cur.executemany(query, rows)
            yield _WithHistory(cur) if with_tuple else cur


class _WithHistory:
    """get_tuple's cursor: its first statement also reads the checkpoint's history."""

    def __init__(self, cur: Any) -> None:
        self._cur, self._first = cur, True

    def execute(self, query: str, params: Any = None, **options: Any) -> Any:
        """Run a statement, the first one with the history beside its row."""
        if self._first:
            self._first, query = False, with_history(query)
        return self._cur.execute(query, params, **options)

    def fetchone(self) -> Any:
        """The next row, its history kept for the history read that follows."""
        return _kept(self._cur.fetchone())

    def __getattr__(self, name: str) -> Any:
        return getattr(self._cur, name)


class _AsyncWithHistory(_WithHistory):
    """Async twin of _WithHistory."""

    async def execute(self, query: str, params: Any = None, **options: Any) -> Any:
        """Run a statement, the first one with the history beside its row."""
        if self._first:
            self._first, query = False, with_history(query)
        return await self._cur.execute(query, params, **options)

    async def fetchone(self) -> Any:
        """The next row, its history kept for the history read that follows."""
        return _kept(await self._cur.fetchone())


def _kept(row: Any) -> Any:
    if row is not None and "h_kind" in row:
        thread_id, ns = str(row["thread_id"]), str(row["checkpoint_ns"])
        _PREFETCHED.set(found(thread_id, ns, rows_of_tuple(row)))
    return row


class ExitWritesAsyncPostgresSaver(AsyncPostgresSaver):
    """Async twin of ExitWritesPostgresSaver."""

    exit_writes: ExitWrites[Held]

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.exit_writes = ExitWrites()

    async def aput_writes(
        self,
        config: RunnableConfig,
        writes: Sequence[tuple[str, Any]],
        task_id: str,
        task_path: str = "",
    ) -> None:
        """Store a task's writes as AsyncPostgresSaver does; a run's exit writes wait for its
        checkpoint."""
        if not self.exit_writes.hold(
            config, task_id, task_path, _held(self, config, writes, task_id, task_path)
        ):
            await super().aput_writes(config, writes, task_id, task_path)

    async def aput(
        self,
        config: RunnableConfig,
        checkpoint: Checkpoint,
        metadata: CheckpointMetadata,
        new_versions: ChannelVersions,
    ) -> RunnableConfig:
        """Store a checkpoint as AsyncPostgresSaver does, with the exit writes its run held."""
        token = _TO_PUT.set(self.exit_writes.take(config, checkpoint["id"]))
        try:
            return await super().aput(config, checkpoint, metadata, new_versions)
        finally:
            _TO_PUT.reset(token)

    async def aget_delta_channel_history(
        self, *, config: RunnableConfig, channels: Sequence[str]
    ) -> Mapping[str, DeltaChannelHistory]:
        """The history AsyncPostgresSaver returns: read with the checkpoint, or in one round
        trip."""
        thread_id, ns, checkpoint_id = _target(config)
        if not channels or checkpoint_id is None:
            return await super().aget_delta_channel_history(config=config, channels=channels)
        channels = list(channels)
        fetched = _prefetched(thread_id, ns, checkpoint_id, channels)
        if fetched is not None:
            return history_from_rows(self, channels, fetched.rows)
        async with self._cursor() as cur:
            await cur.execute(HISTORY_SQL, history_params(thread_id, ns, checkpoint_id, channels))
            rows = await cur.fetchall()
        return history_from_rows(self, channels, rows)

    async def aget_tuple(self, config: RunnableConfig) -> CheckpointTuple | None:
        """The checkpoint AsyncPostgresSaver returns; the history it needs comes in the same
        round trip, for the history read that follows."""
        token = _PREFETCH.set(True)
        try:
            return await super().aget_tuple(config)
        finally:
            _PREFETCH.reset(token)

    @asynccontextmanager
    async def _cursor(self, *, pipeline: bool = False) -> AsyncIterator[Any]:
        with_tuple = _PREFETCH.get()
        _PREFETCH.set(False)
        async with super()._cursor(pipeline=pipeline) as cur:
            for query, rows in _TO_PUT.get():
                await cur.executemany(query, rows)
            yield _AsyncWithHistory(cur) if with_tuple else cur
