"""Graph state for thread memory: add these keys to your own state (or use MemoryState)."""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from typing import Annotated, Any, NotRequired, TypedDict

from langchain_core.messages import (
    AnyMessage,
    BaseMessage,
    RemoveMessage,
    convert_to_messages,
    message_chunk_to_message,
)
from langgraph.channels import DeltaChannel
from langgraph.graph.message import add_messages


def merge_info(left: dict[str, Any] | None, right: dict[str, Any] | None) -> dict[str, Any]:
    """Reducer: each update replaces only the keys it names."""
    return {**(left or {}), **(right or {})}


def _with_id(message: BaseMessage, position: int) -> BaseMessage:
    if message.id is not None:
        return message
    digest = hashlib.blake2b(repr(message.content).encode(), digest_size=8).hexdigest()
    return message.model_copy(update={"id": f"msg-{position}-{digest}"})


def add_messages_batch(left: list[AnyMessage], writes: Sequence[Any]) -> list[AnyMessage]:
    """add_messages over a batch of writes, for DeltaChannel: messages without an id get one
    derived from their position and content, so replaying stored writes is deterministic."""
    merged = list(left)
    index = {m.id: i for i, m in enumerate(merged)}
    for write in writes:
        items = [
            message_chunk_to_message(m)
            for m in convert_to_messages(write if isinstance(write, list) else [write])
        ]
        if any(isinstance(m, RemoveMessage) or (m.id is not None and m.id in index) for m in items):
            items = [_with_id(m, len(merged) + k) for k, m in enumerate(items)]
            merged = add_messages(merged, list(items))  # type: ignore[arg-type,assignment]
            index = {m.id: i for i, m in enumerate(merged)}
            continue
        for m in items:
            m = _with_id(m, len(merged))
            index[m.id] = len(merged)
            merged.append(m)  # type: ignore[arg-type]
    return merged


class MemoryState(TypedDict):
    """Messages plus the bookkeeping the memory nodes persist with the thread.

    `messages` behaves like LangGraph's add_messages but is a DeltaChannel: a checkpoint
    stores only the new messages (with a full snapshot now and then), so a turn on a long
    thread no longer re-serializes the whole transcript.

    `memory_context` holds the running summary, the compaction dividers, the journal cursor,
    the running token count and the frozen block snapshot; `memory_blocks` the per-turn
    prompt blocks; `memory_command` a one-shot request such as "summarize_now".
    """

    messages: Annotated[list[AnyMessage], DeltaChannel(add_messages_batch)]
    memory_context: NotRequired[Annotated[dict[str, Any], merge_info]]
    memory_blocks: NotRequired[list[dict[str, str]]]
    memory_command: NotRequired[str | None]
