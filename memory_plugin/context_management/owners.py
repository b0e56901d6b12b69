"""Whose a thread is, and the threads a person (an org's user: a UserKey) owns.

The graph records it: a thread's first turn (the memory nodes' load_memory, which both
create_memory_graph and MemoryMiddleware run) claims the thread for the run's resolved context
(its `thread_owner_id`, else its `user_id`, with its `org_id`; memory_plugin.scope.identity
decides them), in the thread's state and in a record in the store (with the run's workspace,
where the console finds the workspaces a user chatted in); later turns, whoever runs
them, never change it. Deleting the thread (journal.delete_thread) deletes the record, and
deleting a user with their threads (privacy.erase) every record naming them.

A thread's owner is the `owner` metadata of its newest checkpoint that records one (as every
run of LangGraph Server's thread-ownership recipe, the chatbot and Summarize now write it, and
an app may in `config["metadata"]`), else the owner the graph recorded: a fork that
`update_state` writes records no metadata and keeps the thread its owner's. A thread neither
names an owner of is nobody's. Only the root graph's checkpoints (`checkpoint_ns` "") count.

The metadata names a user only: their org is the one the graph recorded for the thread when
it recorded that same user, else none. So a thread is never the user's of the same id in
another org; one whose turns ran before owners were recorded is claimed, with the org of the
run, by its next turn.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Mapping
from typing import Any

from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.base import BaseCheckpointSaver, CheckpointTuple
from langgraph.store.base import BaseStore, GetOp, PutOp

from memory_plugin.backends.checkpoint_tables import Owned, newest_owned
from memory_plugin.plans import Plan, all_items_plan, arun
from memory_plugin.scope.context import MemoryContext
from memory_plugin.scope.identity import OWNER_METADATA_KEY, UserKey
from memory_plugin.scope.namespaces import namespace

Saver = BaseCheckpointSaver[Any]
PAGE = 20
RECORDS = namespace("thread_owners")
RECORD_PAGE = 1_000
logger = logging.getLogger(__name__)
CLAIMED = "thread_owner"
"""The memory_context key of the owner the graph recorded for the thread."""


def claim_plan(
    info: Mapping[str, Any], config: RunnableConfig, ctx: MemoryContext
) -> Plan[dict[str, Any]]:
    """Record the run's owner (with its org and workspace) for a thread the graph has recorded
    none for; the memory_context update (nothing once it has one, or without a thread id or a
    user)."""
    owner = ctx.thread_owner_id or ctx.user_id
    thread_id = (config.get("configurable") or {}).get("thread_id")
    if info.get(CLAIMED) is not None or owner is None or not thread_id:
        return {}
    record = {
        "owner": owner,
        **({"org": ctx.org_id} if ctx.org_id else {}),
        **({"workspace": ctx.workspace_id} if ctx.workspace_id else {}),
    }
    try:
        yield [PutOp(RECORDS, str(thread_id), record, index=False)]
    except Exception:
        logger.warning("the owner of thread %s could not be recorded", thread_id, exc_info=True)
        return {}
    return {CLAIMED: owner}


def release_plan(thread_id: str) -> Plan[None]:
    """Forget the owner the graph recorded for a thread (it was deleted)."""
    yield [PutOp(RECORDS, thread_id, None)]


def disown_plan(owner: UserKey) -> Plan[None]:
    """Forget every record naming `owner` (a user deleted with their threads), those of
    threads deleted some other way (LangGraph Server's API, the checkpointer alone) too."""
    recorded = yield from _recorded_plan(owner.user_id)
    threads = [thread for thread, org in recorded if org == owner.org_id]
    for start in range(0, len(threads), RECORD_PAGE):
        yield [PutOp(RECORDS, thread, None) for thread in threads[start : start + RECORD_PAGE]]


def _record_plan(thread_id: str) -> Plan[UserKey | None]:
    (item,) = yield [GetOp(RECORDS, thread_id)]
    if item is None or not isinstance(item.value.get("owner"), str):
        return None
    return UserKey(item.value.get("org"), item.value["owner"])


def _recorded_plan(user_id: str) -> Plan[list[tuple[str, str | None]]]:
    """The threads the graph recorded for `user_id`, each with the org it recorded."""
    items = yield from all_items_plan(RECORDS, page=RECORD_PAGE, filter={"owner": user_id})
    return [(item.key, item.value.get("org")) for item in items]


def workspaces_plan(owner: UserKey) -> Plan[list[str]]:
    """The workspaces of the threads the graph recorded for `owner`, sorted."""
    recorded = yield from all_items_plan(RECORDS, page=RECORD_PAGE, filter={"owner": owner.user_id})
    named = (item.value for item in recorded if item.value.get("org") == owner.org_id)
    return sorted(
        {value["workspace"] for value in named if isinstance(value.get("workspace"), str)}
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


async def _named(saver: Saver, thread_id: str) -> tuple[bool, Any]:
    """Whether the thread exists, and the owner metadata of its newest checkpoint that
    records one (None: none does)."""
    config: RunnableConfig = {"configurable": {"thread_id": thread_id, "checkpoint_ns": ""}}
    before: RunnableConfig | None = None
    while True:
        page = await _page(saver, config, before, PAGE)
        for saved in page:
            owner = (saved.metadata or {}).get(OWNER_METADATA_KEY)
            if owner is not None:
                return True, owner
        if len(page) < PAGE:
            return before is not None or bool(page), None
        before = page[-1].config


async def thread_owner(saver: Saver, store: BaseStore, thread_id: str) -> UserKey | None:
    """The thread's owner (see the module), None when it has none or does not exist."""
    exists, named = await _named(saver, thread_id)
    if not exists:
        return None
    recorded = await arun(store, _record_plan(thread_id))
    if named is None:
        return recorded
    if not isinstance(named, str):
        return None
    org = recorded.org_id if recorded is not None and recorded.user_id == named else None
    return UserKey(org, named)


async def owned_threads(
    saver: Saver, store: BaseStore, owner: UserKey, *, before: str | None, limit: int
) -> list[tuple[str, str]]:
    """The threads `owner` owns, as (thread id, newest checkpoint id), newest first, up to
    `limit` of them; `before`: only threads whose newest checkpoint id is below it (the
    last one of the previous page)."""
    recorded = await arun(store, _recorded_plan(owner.user_id))
    mine = [thread for thread, org in recorded if org == owner.org_id]
    theirs = [thread for thread, org in recorded if org != owner.org_id]
    owned = Owned(owner.user_id, mine, theirs, owner.org_id is None, before, limit)
    found = await newest_owned(saver, owned)
    if found is not None:
        return found
    return await _scanned(saver, owner, set(mine), set(theirs), before, limit)


async def _scanned(
    saver: Saver,
    owner: UserKey,
    mine: set[str],
    theirs: set[str],
    before: str | None,
    limit: int,
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
            if _owns(owner, owners[thread][1] if thread in owners else None, thread, mine, theirs)
            and (before is None or checkpoint < before)
        ),
        reverse=True,
    )
    return [(thread, checkpoint) for checkpoint, thread in found[:limit]]


def _owns(owner: UserKey, named: Any, thread: str, mine: set[str], theirs: set[str]) -> bool:
    """checkpoint_tables.Owned's rule for one thread whose newest owner metadata is `named`
    (None: none)."""
    if named is None:
        return thread in mine
    loose = owner.org_id is None or thread in mine
    return named == owner.user_id and thread not in theirs and loose


async def aowned_thread_ids(
    saver: Saver, store: BaseStore, owner: UserKey, *, page: int = 500
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
