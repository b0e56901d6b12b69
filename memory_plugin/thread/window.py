"""The recent-window thread policy (thread-and-agent-memory.md): the model sees the tail of
the durable journal, at most `recent_window_messages` messages (human, assistant and tool
rows all count), trimmed back to a turn boundary; a rolling summary of what left the window
is written progressively in the background and prepended as an extra system message.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import BaseMessage, HumanMessage, ToolMessage
from langgraph.store.base import GetOp, PutOp

from memory_plugin.errors import SettingsError
from memory_plugin.plans import ModelCall, Plan
from memory_plugin.replies import reply_text
from memory_plugin.settings import MemorySettings
from memory_plugin.thread.journal import JournalEntry, tail_plan, thread_namespace
from memory_plugin.thread.pairs import call_ids
from memory_plugin.thread.prompts import summary_messages
from memory_plugin.tokens import TokenCounter

logger = logging.getLogger(__name__)
SUMMARY = "summary"
ROLLING = "rolling"
OVERRIDE_KEY = "recent_window_messages"


def window_cap(settings: MemorySettings, configurable: Mapping[str, Any]) -> int:
    """The window size: the setting, or a per-thread override, which can only lower it."""
    override = configurable.get(OVERRIDE_KEY)
    if override is None:
        return settings.recent_window_messages
    if isinstance(override, bool) or not isinstance(override, int) or override < 1:
        raise SettingsError(
            f"{OVERRIDE_KEY} must be a whole number of at least 1, got {override!r}"
        )
    return min(override, settings.recent_window_messages)


def turn_start(messages: Sequence[BaseMessage]) -> int:
    """Index where the window may start: the first user message, or, when one turn fills the
    whole window, the first message whose tool results are all inside it."""
    for i, message in enumerate(messages):
        if isinstance(message, HumanMessage):
            return i
    inside = {m.tool_call_id for m in messages if isinstance(m, ToolMessage)}
    for i, message in enumerate(messages):
        if not isinstance(message, ToolMessage) and set(call_ids(message)) <= inside:
            return i
    return len(messages)


def window_plan(thread_id: str, next_seq: int, cap: int) -> Plan[list[JournalEntry]]:
    """The window read from the journal: the last `cap` entries from a turn boundary on."""
    entries = yield from tail_plan(thread_id, next_seq, cap)
    start = turn_start([entry.to_message() for entry in entries])
    return entries[start:]


def summary_plan(thread_id: str) -> Plan[dict[str, Any]]:
    """The stored rolling summary: {"text", "upto_seq"} (empty before the first pass)."""
    (item,) = yield [GetOp((*thread_namespace(thread_id), SUMMARY), ROLLING)]
    return dict(item.value) if item else {"text": "", "upto_seq": 0}


def due(left: Sequence[JournalEntry], settings: MemorySettings, counter: TokenCounter) -> bool:
    """Whether enough has left the window since the last pass to summarize it."""
    if len(left) >= settings.rolling_summary_messages:
        return True
    tokens = sum(counter.count_text(entry.text) for entry in left)
    return tokens >= settings.rolling_summary_tokens


def rolling_plan(
    thread_id: str,
    window_from: int,
    model: BaseChatModel,
    settings: MemorySettings,
    counter: TokenCounter,
    now: datetime,
    flush: Any,
) -> Plan[dict[str, Any] | None]:
    """One progressive pass over the entries that left the window, when due; the stored
    summary, or None when nothing was due or the pass failed."""
    current = yield from summary_plan(thread_id)
    upto = int(current["upto_seq"])
    left = yield from tail_plan(thread_id, window_from, window_from - upto)
    if not left or not due(left, settings, counter):
        return None
    old = [entry.to_message() for entry in left]
    if flush is not None:
        yield from flush(old)
    try:
        reply = yield ModelCall(model, summary_messages(str(current["text"]), old))
        text = reply_text(reply)
        if not text:
            raise ValueError("the model returned an empty summary")
    except Exception:
        logger.warning("rolling summary pass failed; it will be retried", exc_info=True)
        return None
    stored = {"text": text, "upto_seq": window_from, "updated_at": now.isoformat()}
    yield [PutOp((*thread_namespace(thread_id), SUMMARY), ROLLING, stored, index=False)]
    return stored
