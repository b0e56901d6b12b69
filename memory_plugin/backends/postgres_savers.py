"""The PostgreSQL checkpointers: LangGraph's savers, storing a run's exit-mode DeltaChannel
writes with its final checkpoint (see memory_plugin.backends.exit_writes) and reading a
checkpoint's DeltaChannel history in one round trip (memory_plugin.backends.postgres_history).

The held writes run first in the pipeline LangGraph's put opens for the checkpoint (one round
trip, one transaction: a checkpoint that fails to store keeps none of them). The fence:
PostgresSaver.put and AsyncPostgresSaver.aput store the checkpoint in
`with self._cursor(pipeline=True)`, and `_dump_writes` gives put_writes' rows
(langgraph-checkpoint-postgres 3.2); the override of `_cursor` adds the held writes to that
pipeline only while this saver's own put runs (a context variable, so other threads and
tasks are untouched).
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
    DeltaChannelHistory,
    get_checkpoint_id,
)
from langgraph.checkpoint.postgres import PostgresSaver
from langgraph.checkpoint.postgres.aio import AsyncPostgresSaver

from memory_plugin.backends.exit_writes import ExitWrites
from memory_plugin.backends.postgres_history import history_from_rows, history_params, history_sql

Held = tuple[str, list[tuple[Any, ...]]]
"""A task's writes: the statement that stores them and its rows."""

_TO_PUT: ContextVar[Sequence[Held]] = ContextVar("exit_writes_to_put", default=())


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


def _target(config: RunnableConfig) -> tuple[str, str, str] | None:
    conf = config["configurable"]
    checkpoint_id = get_checkpoint_id(config)
    if not checkpoint_id:
        return None
    return str(conf["thread_id"]), str(conf.get("checkpoint_ns", "")), checkpoint_id


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
        """The history PostgresSaver returns, in one round trip."""
        target = _target(config)
        if not channels or target is None:
            return super().get_delta_channel_history(config=config, channels=channels)
        channels = list(channels)
        with self._cursor() as cur:
            cur.execute(history_sql(channels), history_params(*target, channels))
            rows = cur.fetchall()
        return history_from_rows(self, channels, rows)

    @contextmanager
    def _cursor(self, *, pipeline: bool = False) -> Iterator[Any]:
        with super()._cursor(pipeline=pipeline) as cur:
            for query, rows in _TO_PUT.get():
                cur.executemany(query, rows)
            yield cur


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
        """The history AsyncPostgresSaver returns, in one round trip."""
        target = _target(config)
        if not channels or target is None:
            return await super().aget_delta_channel_history(config=config, channels=channels)
        channels = list(channels)
        async with self._cursor() as cur:
            await cur.execute(history_sql(channels), history_params(*target, channels))
            rows = await cur.fetchall()
        return history_from_rows(self, channels, rows)

    @asynccontextmanager
    async def _cursor(self, *, pipeline: bool = False) -> AsyncIterator[Any]:
        async with super()._cursor(pipeline=pipeline) as cur:
            for query, rows in _TO_PUT.get():
                await cur.executemany(query, rows)
            yield cur
