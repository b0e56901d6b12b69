"""Tool calls and their results travel together: cuts never separate them."""

from __future__ import annotations

from collections.abc import Sequence

from langchain_core.messages import AIMessage, BaseMessage, SystemMessage, ToolMessage

TODOS_TOOL = "write_todos"


def call_ids(message: BaseMessage) -> list[str]:
    """The tool_call ids an AI message asks for."""
    if isinstance(message, AIMessage):
        return [call["id"] for call in message.tool_calls if call["id"]]
    return []


def call_positions(messages: Sequence[BaseMessage]) -> dict[str, int]:
    """tool_call_id -> index of the AI message that made the call."""
    return {cid: i for i, m in enumerate(messages) for cid in call_ids(m)}


def safe_cut(messages: Sequence[BaseMessage], cut: int) -> int:
    """Move `cut` earlier until every tool result at or after it has its call at or after it."""
    calls = call_positions(messages)
    while cut > 0:
        earliest = cut
        for message in messages[cut:]:
            if isinstance(message, ToolMessage):
                earliest = min(earliest, calls.get(message.tool_call_id, cut))
        if earliest == cut:
            return cut
        cut = earliest
    return cut


def _is_todos_call(message: BaseMessage) -> bool:
    return isinstance(message, AIMessage) and any(
        call["name"] == TODOS_TOOL for call in message.tool_calls
    )


def preserved_before(messages: Sequence[BaseMessage], cut: int) -> list[int]:
    """Indices before `cut` that compaction keeps: system messages, and the latest
    write_todos call with every result of that AI message."""
    keep = {i for i, m in enumerate(messages[:cut]) if isinstance(m, SystemMessage)}
    todo = next((i for i in range(cut - 1, -1, -1) if _is_todos_call(messages[i])), None)
    if todo is not None:
        ids = set(call_ids(messages[todo]))
        keep.add(todo)
        for i in range(todo + 1, cut):
            message = messages[i]
            if isinstance(message, ToolMessage) and message.tool_call_id in ids:
                keep.add(i)
    return sorted(keep)


def unpaired(messages: Sequence[BaseMessage]) -> list[str]:
    """Tool call ids that lack a result, or results that lack their call (empty when whole)."""
    problems = []
    seen_calls: set[str] = set()
    results = {m.tool_call_id for m in messages if isinstance(m, ToolMessage)}
    for message in messages:
        if isinstance(message, ToolMessage) and message.tool_call_id not in seen_calls:
            problems.append(f"result without call: {message.tool_call_id}")
        for cid in call_ids(message):
            seen_calls.add(cid)
            if cid not in results:
                problems.append(f"call without result: {cid}")
    return problems
