"""Whose a thread is, and the threads a user owns, read from the checkpointer.

A thread's owner is the `owner` metadata of its newest checkpoint that records one: every run
of LangGraph Server's thread-ownership recipe records it, and so do the chatbot's runs and
Summarize now; a fork that `update_state` writes (the chatbot taking back a failed turn)
records none and keeps the thread its owner's. A thread no checkpoint names an owner of is
nobody's. Only the root graph's checkpoints (`checkpoint_ns` "") count.
"""

from __future__ import annotations

import asyncio
from typing import Any

from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.base import BaseCheckpointSaver, CheckpointTuple
from langgraph.checkpoint.postgres import PostgresSaver
from langgraph.checkpoint.postgres.aio import AsyncPostgresSaver
from langgraph.checkpoint.sqlite import SqliteSaver
from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver

from memory_plugin.scope.identity import OWNER_METADATA_KEY

Saver = BaseCheckpointSaver[Any]
PAGE = 20
OWNED = """
WITH latest AS (
    SELECT thread_id, MAX(checkpoint_id) AS checkpoint_id FROM checkpoints
    WHERE checkpoint_ns = '' GROUP BY thread_id
), owners AS (
    SELECT thread_id, {owner} AS owner,
        ROW_NUMBER() OVER (PARTITION BY thread_id ORDER BY checkpoint_id DESC) AS n
    FROM checkpoints WHERE checkpoint_ns = '' AND {owner} IS NOT NULL
)
SELECT latest.thread_id, latest.checkpoint_id
FROM latest JOIN owners ON owners.thread_id = latest.thread_id
WHERE owners.n = 1 AND owners.owner = {named}
    AND ({text} IS NULL OR latest.checkpoint_id < {text})
ORDER BY latest.checkpoint_id DESC LIMIT {count}
"""
# The owner as its JSON value (a JSON null is none), so an owner that is no string (7) names
# nobody, as in thread_owner.
SQLITE_OWNED = OWNED.format(
    owner="json_extract(CAST(metadata AS TEXT), '$.owner')", named="?", text="?", count="?"
)
POSTGRES_OWNED = OWNED.format(
    owner="NULLIF(metadata->'owner', 'null'::jsonb)",
    named="to_jsonb(%s::text)",
    text="%s::text",
    count="%s",
)


async def _page(
    saver: Saver, config: RunnableConfig | None, before: RunnableConfig | None, limit: int | None
) -> list[CheckpointTuple]:
    """Checkpoints newest first (of one thread, or all with `config` None); a saver without
    async methods (one opened with connect) is read in a worker thread."""
    try:
        return [saved async for saved in saver.alist(config, before=before, limit=limit)]
    except NotImplementedError:
        return await asyncio.to_thread(lambda: list(saver.list(config, before=before, limit=limit)))


async def thread_owner(saver: Saver, thread_id: str) -> str | None:
    """The thread's owner (see the module), None when it has none or does not exist."""
    config: RunnableConfig = {"configurable": {"thread_id": thread_id, "checkpoint_ns": ""}}
    before: RunnableConfig | None = None
    while True:
        page = await _page(saver, config, before, PAGE)
        for saved in page:
            owner = (saved.metadata or {}).get(OWNER_METADATA_KEY)
            if owner is not None:
                return owner if isinstance(owner, str) else None
        if len(page) < PAGE:
            return None
        before = page[-1].config


async def owned_threads(
    saver: Saver, owner: str, *, before: str | None, limit: int
) -> list[tuple[str, str]]:
    """The threads `owner` owns, as (thread id, newest checkpoint id), newest first, up to
    `limit` of them; `before`: only threads whose newest checkpoint id is below it (the
    last one of the previous page)."""
    params = (owner, before, before, limit)
    if isinstance(saver, AsyncPostgresSaver):
        async with saver._cursor() as cur:
            await cur.execute(POSTGRES_OWNED, params)
            return [(row["thread_id"], row["checkpoint_id"]) for row in await cur.fetchall()]
    if isinstance(saver, AsyncSqliteSaver):
        await saver.setup()
        async with saver.lock, saver.conn.execute(SQLITE_OWNED, params) as cur:
            return [(row[0], row[1]) for row in await cur.fetchall()]
    if isinstance(saver, PostgresSaver | SqliteSaver):
        return await asyncio.to_thread(_owned_sync, saver, params)
    return await _scanned(saver, owner, before, limit)


def _owned_sync(saver: PostgresSaver | SqliteSaver, params: tuple[Any, ...]) -> list[Any]:
    if isinstance(saver, PostgresSaver):
        with saver._cursor() as cur:
            cur.execute(POSTGRES_OWNED, params)
            return [(row["thread_id"], row["checkpoint_id"]) for row in cur.fetchall()]
    with saver.cursor(transaction=False) as cur:
        cur.execute(SQLITE_OWNED, params)
        return [(row[0], row[1]) for row in cur.fetchall()]


async def _scanned(
    saver: Saver, owner: str, before: str | None, limit: int
) -> list[tuple[str, str]]:
    """owned_threads for any other saver (the in-memory one): every checkpoint read."""
    newest: dict[str, str] = {}
    owners: dict[str, tuple[str, Any]] = {}
    for saved in await _page(saver, None, None, None):
        conf = saved.config["configurable"]
        if conf.get("checkpoint_ns", ""):
            continue
        thread, checkpoint = str(conf["thread_id"]), str(conf["checkpoint_id"])
        newest[thread] = max(newest.get(thread, checkpoint), checkpoint)
        named = (saved.metadata or {}).get(OWNER_METADATA_KEY)
        if named is not None and checkpoint >= owners.get(thread, ("", None))[0]:
            owners[thread] = (checkpoint, named)
    found = sorted(
        (
            (newest[thread], thread)
            for thread, (_, named) in owners.items()
            if named == owner and (before is None or newest[thread] < before)
        ),
        reverse=True,
    )
    return [(thread, checkpoint) for checkpoint, thread in found[:limit]]


async def aowned_thread_ids(saver: Saver, owner: str, *, page: int = 500) -> list[str]:
    """Every thread `owner` owns, newest first (owned_threads page by page)."""
    found: list[tuple[str, str]] = []
    before: str | None = None
    while True:
        batch = await owned_threads(saver, owner, before=before, limit=page)
        found += batch
        if len(batch) < page:
            return [thread for thread, _ in found]
        before = batch[-1][1]
