"""The caller's threads, and Summarize now for one of them (whose a thread is: see owners)."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Path, Query
from fastapi.concurrency import run_in_threadpool
from langchain_core.messages import HumanMessage
from langchain_core.runnables import RunnableConfig
from langgraph.types import StateSnapshot

from memory_plugin.context_management.nodes import asummarize_now, summarize_now
from memory_plugin.context_management.owners import owned_threads, thread_owner
from memory_plugin.scope.identity import OWNER_METADATA_KEY
from memory_plugin.scope.namespaces import MAX_ID_BYTES, check_id
from memory_plugin.server import schemas
from memory_plugin.server.access import CallerDep, NotFound
from memory_plugin.server.console import Console, ConsoleDep, written_by
from memory_plugin.server.switches import SUMMARIZE_OFF, switch

ThreadId = Annotated[str, Path(min_length=1, max_length=MAX_ID_BYTES)]
router = APIRouter(prefix="/api/threads", tags=["threads"])
PREVIEW_CHARS = 200


async def thread_state(console: Console, thread_id: str) -> StateSnapshot:
    """The thread's current state in the console's graph (read in a worker thread from a
    checkpointer without async methods)."""
    config: RunnableConfig = {"configurable": {"thread_id": thread_id}}
    graph = console.graph()
    try:
        state: StateSnapshot = await graph.aget_state(config)
    except NotImplementedError:
        state = await run_in_threadpool(graph.get_state, config)
    return state


def thread_json(thread_id: str, state: StateSnapshot) -> dict[str, Any]:
    """A thread as JSON: when it last changed and the last user message in it."""
    messages = state.values.get("messages") or []
    said = [m.text for m in messages if isinstance(m, HumanMessage)]
    return {
        "thread_id": thread_id,
        "updated_at": state.created_at,
        "last_message": said[-1][:PREVIEW_CHARS] if said else None,
    }


@router.get("", response_model=schemas.ThreadsPage)
async def list_threads(
    caller: CallerDep,
    console: ConsoleDep,
    before: Annotated[
        str | None, Query(max_length=64, description="the `older` of the previous page")
    ] = None,
    limit: Annotated[int, Query(ge=1, le=100, description="threads per page")] = 20,
) -> dict[str, Any]:
    """The caller's threads (those they own: see owners), newest first."""
    settings = (await console.settings.aget(caller.context())).values
    summarize = switch(settings.compaction_manual, SUMMARIZE_OFF)
    checkpointer = console.checkpointer
    if checkpointer is None:
        return {"threads": [], "older": None, "summarize": summarize}
    found = await owned_threads(
        checkpointer, console.store, caller.key, before=before, limit=limit + 1
    )
    page = found[:limit]
    threads = []
    for thread_id, _ in page:
        state = await thread_state(console, thread_id)
        if state.created_at is not None:
            threads.append(thread_json(thread_id, state))
    older = page[-1][1] if len(found) > limit else None
    return {"threads": threads, "older": older, "summarize": summarize}


@router.post("/{thread_id}/summarize", response_model=schemas.Summarized)
async def summarize(thread_id: ThreadId, caller: CallerDep, console: ConsoleDep) -> Any:
    """Compact the thread now; 404 unless it exists and the caller owns it; 400 for an id
    that is no usable id. A checkpointer without async methods (opened with connect) runs in
    a worker thread."""
    checkpointer = console.checkpointer
    if checkpointer is None:
        raise NotFound
    config: RunnableConfig = {"configurable": {"thread_id": check_id(thread_id, what="thread_id")}}
    if await thread_owner(checkpointer, console.store, thread_id) != caller.key:
        raise NotFound
    config["metadata"] = {OWNER_METADATA_KEY: caller.user_id}
    with written_by(caller):
        try:
            await checkpointer.aget_tuple(config)
        except NotImplementedError:
            return await run_in_threadpool(
                summarize_now, console.graph(), config, context=caller.context()
            )
        return await asummarize_now(console.graph(), config, context=caller.context())
