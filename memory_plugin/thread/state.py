"""Graph state for thread memory: add these keys to your own state (or use MemoryState)."""

from __future__ import annotations

from typing import Annotated, Any, NotRequired, TypedDict

from langchain_core.messages import AnyMessage
from langgraph.graph.message import add_messages


def merge_info(left: dict[str, Any] | None, right: dict[str, Any] | None) -> dict[str, Any]:
    """Reducer: each update replaces only the keys it names."""
    return {**(left or {}), **(right or {})}


class MemoryState(TypedDict):
    """Messages plus the bookkeeping the memory nodes persist with the thread.

    `memory_context` holds the running summary, the compaction dividers, the journal cursor,
    the running token count and the frozen block snapshot; `memory_blocks` the per-turn
    prompt blocks; `memory_command` a one-shot request such as "summarize_now".
    """

    messages: Annotated[list[AnyMessage], add_messages]
    memory_context: NotRequired[Annotated[dict[str, Any], merge_info]]
    memory_blocks: NotRequired[list[dict[str, str]]]
    memory_command: NotRequired[str | None]
