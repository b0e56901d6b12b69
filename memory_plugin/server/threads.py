"""Summarize now for one of the caller's threads."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Path
from fastapi.concurrency import run_in_threadpool
from langchain_core.runnables import RunnableConfig

from memory_plugin.identity import OWNER_METADATA_KEY
from memory_plugin.namespaces import MAX_ID_BYTES, check_id
from memory_plugin.server import schemas
from memory_plugin.server.access import CallerDep, NotFound
from memory_plugin.server.services import ConsoleDep, written_by
from memory_plugin.thread.nodes import asummarize_now, summarize_now

ThreadId = Annotated[str, Path(min_length=1, max_length=MAX_ID_BYTES)]
router = APIRouter(prefix="/api/threads", tags=["threads"])


@router.post("/{thread_id}/summarize", response_model=schemas.Summarized)
async def summarize(thread_id: ThreadId, caller: CallerDep, console: ConsoleDep) -> Any:
    """Compact the thread now; 404 unless it exists and the caller owns it (its checkpoints'
    `owner` metadata, as LangGraph Server's thread ownership records it); 400 for an id that
    is no usable id. A checkpointer without async methods (opened with connect) runs in a
    worker thread."""
    checkpointer = console.checkpointer
    if checkpointer is None:
        raise NotFound
    config: RunnableConfig = {"configurable": {"thread_id": check_id(thread_id, what="thread_id")}}
    try:
        saved = await checkpointer.aget_tuple(config)
        sync = False
    except NotImplementedError:
        saved = await run_in_threadpool(checkpointer.get_tuple, config)
        sync = True
    if saved is None or (saved.metadata or {}).get(OWNER_METADATA_KEY) != caller.user_id:
        raise NotFound
    config["metadata"] = {OWNER_METADATA_KEY: caller.user_id}
    with written_by(caller):
        if sync:
            return await run_in_threadpool(
                summarize_now, console.graph(), config, context=caller.context()
            )
        return await asummarize_now(console.graph(), config, context=caller.context())
