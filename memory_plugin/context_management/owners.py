"""Whose a thread is, and the threads a user owns.

The graph records it: a thread's first turn (the memory nodes' load_memory, which both
create_memory_graph and MemoryMiddleware run) claims the thread for the run's resolved context
(its `thread_owner_id`, else its `user_id`; memory_plugin.scope.identity decides them), in
the thread's state and in a record in the store; later turns, whoever runs them, never change
it. Deleting the thread (journal.delete_thread) deletes the record, and deleting a user with
their threads (privacy.erase) every record naming them.

A thread's owner is the `owner` metadata of its newest checkpoint that records one (as every
run of LangGraph Server's thread-ownership recipe, the chatbot and Summarize now write it, and
an app may in `config["metadata"]`), else the owner the graph recorded: a fork that
`update_state` writes records no metadata and keeps the thread its owner's. A thread neither
names an owner of is nobody's. Only the root graph's checkpoints (`checkpoint_ns` "") count.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Mapping
from typing import Any

from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.base import BaseCheckpointSaver, CheckpointTuple
from langgraph.checkpoint.postgres import PostgresSaver
from langgraph.checkpoint.postgres.aio import AsyncPostgresSaver
from langgraph.checkpoint.sqlite import SqliteSaver
from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver
from langgraph.store.base import BaseStore, GetOp, PutOp

from memory_plugin.plans import Plan, all_items_plan, arun
from memory_plugin.scope.context import MemoryContext
from memory_plugin.scope.identity import OWNER_METADATA_KEY
from memory_plugin.scope.namespaces import namespace

Saver = BaseCheckpointSaver[Any]
PAGE = 20
RECORDS = namespace("thread_owners")
RECORD_PAGE = 1_000
CLAIMED = "thread_owner"
"""The memory_context key of the owner the graph recorded for the thread."""
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
FROM latest LEFT JOIN owners ON owners.thread_id = latest.thread_id AND owners.n = 1
WHERE (owners.owner = {named} OR (owners.owner IS NULL AND latest.thread_id IN {recorded}))
    AND ({text} IS NULL OR latest.checkpoint_id < {text})
ORDER BY latest.checkpoint_id DESC LIMIT {count}
"""
# The owner as its JSON value (a JSON null is none), so an owner that is no string (7) names
# nobody, as in thread_owner; `recorded`: the threads the graph recorded as the owner's.
SQLITE_OWNED = OWNED.format(
    owner="json_extract(CAST(metadata AS TEXT), '$.owner')",
    named="?",
    recorded="(SELECT value FROM json_each(?))",
    text="?",
    count="?",
)
POSTGRES_OWNED = OWNED.format(
    owner="NULLIF(metadata->'owner', 'null'::jsonb)",
    named="to_jsonb(%s::text)",
    recorded="(SELECT unnest(%s::text[]))",
    text="%s::text",
    count="%s",
)


def claim_plan(
    info: Mapping[str, Any], config: RunnableConfig, ctx: MemoryContext
) -> Plan[dict[str, Any]]:
    """Record the run's owner for a thread the graph has recorded none for; the
    memory_context update (nothing once it has one, or without a thread id or a user)."""
    owner = ctx.thread_owner_id or ctx.user_id
    thread_id = (config.get("configurable") or {}).get("thread_id")
    if info.get(CLAIMED) is not None or owner is None or not thread_id:
        return {}
    yield [PutOp(RECORDS, str(thread_id), {"owner": owner}, index=False)]
    return {CLAIMED: owner}


def release_plan(thread_id: str) -> Plan[None]:
    """Forget the owner the graph recorded for a thread (it was deleted)."""
    yield [PutOp(RECORDS, thread_id, None)]


def disown_plan(owner: str) -> Plan[None]:
    """Forget every record naming `owner` (a user deleted with their threads), those of
    threads deleted some other way (LangGraph Server's API, the checkpointer alone) too."""
    threads = yield from _recorded_plan(owner)
    for start in range(0, len(threads), RECORD_PAGE):
        yield [PutOp(RECORDS, thread, None) for thread in threads[start : start + RECORD_PAGE]]


def _record_plan(thread_id: str) -> Plan[str | None]:
    (item,) = yield [GetOp(RECORDS, thread_id)]
    return item.value.get("owner") if item is not None else None


def _recorded_plan(owner: str) -> Plan[list[str]]:
    items = yield from all_items_plan(RECORDS, page=RECORD_PAGE, filter={"owner": owner})
    return [item.key for item in items]


async def _page(
    saver: Saver, config: RunnableConfig | None, before: RunnableConfig | None, limit: int | None
) -> list[CheckpointTuple]:
    """Checkpoints newest first (of one thread, or all with `config` None); a saver without
    async methods (one opened with connect) is read in a worker thread."""
    try:
        return [saved async for saved in saver.alist(config, before=before, limit=limit)]
    except NotImplementedError:
        return await asyncio.to_thread(lambda: list(saver.list(config, before=before, limit=limit)))


async def thread_owner(saver: Saver, store: BaseStore, thread_id: str) -> str | None:
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
            break
        before = page[-1].config
    if before is None and not page:
        return None
    return await arun(store, _record_plan(thread_id))


async def owned_threads(
    saver: Saver, store: BaseStore, owner: str, *, before: str | None, limit: int
) -> list[tuple[str, str]]:
    """The threads `owner` owns, as (thread id, newest checkpoint id), newest first, up to
    `limit` of them; `before`: only threads whose newest checkpoint id is below it (the
    last one of the previous page)."""
    recorded = await arun(store, _recorded_plan(owner))
    if isinstance(saver, AsyncPostgresSaver):
        async with saver._cursor() as cur:
            await cur.execute(POSTGRES_OWNED, (owner, recorded, before, before, limit))
            return [(row["thread_id"], row["checkpoint_id"]) for row in await cur.fetchall()]
    if isinstance(saver, AsyncSqliteSaver):
        await saver.setup()
        params = (owner, json.dumps(recorded), before, before, limit)
        async with saver.lock, saver.conn.execute(SQLITE_OWNED, params) as cur:
            return [(row[0], row[1]) for row in await cur.fetchall()]
    if isinstance(saver, PostgresSaver | SqliteSaver):
        return await asyncio.to_thread(_owned_sync, saver, owner, recorded, before, limit)
    return await _scanned(saver, owner, set(recorded), before, limit)


def _owned_sync(
    saver: PostgresSaver | SqliteSaver,
    owner: str,
    recorded: list[str],
    before: str | None,
    limit: int,
) -> list[Any]:
    if isinstance(saver, PostgresSaver):
        with saver._cursor() as cur:
            cur.execute(POSTGRES_OWNED, (owner, recorded, before, before, limit))
            return [(row["thread_id"], row["checkpoint_id"]) for row in cur.fetchall()]
    with saver.cursor(transaction=False) as cur:
        cur.execute(SQLITE_OWNED, (owner, json.dumps(recorded), before, before, limit))
        return [(row[0], row[1]) for row in cur.fetchall()]


async def _scanned(
    saver: Saver, owner: str, recorded: set[str], before: str | None, limit: int
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
            (checkpoint, thread)
            for thread, checkpoint in newest.items()
            if (owners[thread][1] == owner if thread in owners else thread in recorded)
            and (before is None or checkpoint < before)
        ),
        reverse=True,
    )
    return [(thread, checkpoint) for checkpoint, thread in found[:limit]]


async def aowned_thread_ids(
    saver: Saver, store: BaseStore, owner: str, *, page: int = 500
) -> list[str]:
    """Every thread `owner` owns, newest first (owned_threads page by page)."""
    found: list[tuple[str, str]] = []
    before: str | None = None
    while True:
        batch = await owned_threads(saver, store, owner, before=before, limit=page)
        found += batch
        if len(batch) < page:
            return [thread for thread, _ in found]
        before = batch[-1][1]
