"""Summarize now for one of the caller's threads."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter
from langchain_core.runnables import RunnableConfig

from memory_plugin.identity import OWNER_METADATA_KEY
from memory_plugin.server import schemas
from memory_plugin.server.access import CallerDep, NotFound
from memory_plugin.server.services import ConsoleDep, written_by
from memory_plugin.thread.nodes import asummarize_now

router = APIRouter(prefix="/api/threads", tags=["threads"])


@router.post("/{thread_id}/summarize", response_model=schemas.Summarized)
async def summarize(thread_id: str, caller: CallerDep, console: ConsoleDep) -> Any:
    """Compact the thread now; 404 unless it exists and the caller owns it (its checkpoints'
    `owner` metadata, as LangGraph Server's thread ownership records it)."""
    if console.checkpointer is None:
        raise NotFound
    config: RunnableConfig = {"configurable": {"thread_id": thread_id}}
    saved = await console.checkpointer.aget_tuple(config)
    if saved is None or (saved.metadata or {}).get(OWNER_METADATA_KEY) != caller.user_id:
        raise NotFound
    config["metadata"] = {OWNER_METADATA_KEY: caller.user_id}
    with written_by(caller):
        return await asummarize_now(console.graph(), config, context=caller.context())
