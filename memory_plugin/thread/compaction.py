"""Compaction: past the trigger share of the window, messages older than the keep window are
replaced by a model-written running summary, and a divider records the cut.

The cut never separates an AI message's tool calls from their results, and the latest
write_todos call stays with its result. Summaries are progressive: the previous summary is
fed into the next. A failed summary leaves the conversation as it was.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Literal

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import BaseMessage, RemoveMessage

from memory_plugin.plans import ModelCall, Plan
from memory_plugin.replies import reply_text
from memory_plugin.settings import MemorySettings
from memory_plugin.thread.pairs import preserved_before, safe_cut
from memory_plugin.thread.prompts import summary_messages
from memory_plugin.tokens import TokenCounter

logger = logging.getLogger(__name__)
Kind = Literal["auto", "manual"]
DIVIDER_TEXT = {
    "auto": "Earlier messages were summarized to free up context",
    "manual": "Context summarized on request",
}
FlushHook = Callable[[Sequence[BaseMessage]], Plan[Any]]


@dataclass(frozen=True)
class Compaction:
    """What a compaction attempt did: `compacted`, `nothing_to_compact` or `failed`."""

    status: Literal["compacted", "nothing_to_compact", "failed"]
    updates: dict[str, Any] = field(default_factory=dict)
    message: str = ""


def split(
    messages: Sequence[BaseMessage], counter: TokenCounter, keep_tokens: float
) -> tuple[list[int], list[int], int]:
    """Indices to summarize, indices to keep, and the cut: the newest messages within
    keep_tokens (at least one), moved back so tool calls and results stay whole, are kept
    with what is always preserved."""
    cut = len(messages)
    used = 0
    while cut > 0:
        size = counter.count_message(messages[cut - 1])
        if used + size > keep_tokens and cut < len(messages):
            break
        used += size
        cut -= 1
    cut = safe_cut(messages, cut)
    preserved = set(preserved_before(messages, cut))
    summarize = [i for i in range(cut) if i not in preserved]
    keep = sorted(preserved) + list(range(cut, len(messages)))
    return summarize, keep, cut


def due(info: dict[str, Any], settings: MemorySettings, window: int, counter: TokenCounter) -> bool:
    """Whether the transcript and running summary have crossed the compaction trigger."""
    before = int(info.get("tokens", 0)) + counter.count_text(str(info.get("summary", "")))
    return before >= settings.summarization_trigger_ratio * window


def compaction_plan(
    messages: Sequence[BaseMessage],
    info: dict[str, Any],
    *,
    model: BaseChatModel,
    settings: MemorySettings,
    window: int,
    counter: TokenCounter,
    kind: Kind,
    now: datetime,
    flush: FlushHook | None,
) -> Plan[Compaction]:
    """Compact when due (always for `manual`); see the module docstring."""
    summary = str(info.get("summary", ""))
    tokens = int(info["tokens"]) if "tokens" in info else counter.count(messages)
    before = tokens + counter.count_text(summary)
    if kind == "auto" and not due({**info, "tokens": tokens}, settings, window, counter):
        return Compaction("nothing_to_compact", message="below the compaction trigger")
    summarize, keep, cut = split(messages, counter, settings.summarization_keep_ratio * window)
    if not summarize:
        return Compaction("nothing_to_compact", message="nothing to compact yet")
    old = [messages[i] for i in summarize]
    flush_event = old[0].id
    flushed: dict[str, Any] = {}
    if flush is not None and info.get("flush_event") != flush_event:
        yield from flush(old)
        flushed = {"flush_event": flush_event}
    try:
        reply = yield ModelCall(model, summary_messages(summary, old))
        new_summary = reply_text(reply)
        if not new_summary:
            raise ValueError("the model returned an empty summary")
    except Exception as exc:
        logger.warning("compaction failed; the conversation is unchanged", exc_info=True)
        return Compaction(
            "failed", {"memory_context": flushed} if flushed else {}, f"summary failed: {exc}"
        )
    kept = [messages[i] for i in keep]
    kept_tokens = counter.count(kept)
    after = kept_tokens + counter.count_text(new_summary)
    divider = {
        "kind": kind,
        "text": DIVIDER_TEXT[kind],
        "tokens_before": before,
        "tokens_after": after,
        "at": now.isoformat(),
        "before_message_id": messages[cut].id if cut < len(messages) else None,
        "summarized": len(old),
    }
    context = {
        **flushed,
        "summary": new_summary,
        "dividers": [*info.get("dividers", []), divider],
        "tokens": kept_tokens,
        "counted_len": len(kept),
        "counted_last_id": kept[-1].id if kept else None,
        "mask_scan_from": 0,
    }
    removals = [RemoveMessage(id=m.id) for m in old if m.id]
    return Compaction(
        "compacted",
        {"messages": removals, "memory_context": context},
        f"{DIVIDER_TEXT[kind]} (~{before:,} -> ~{after:,} tokens)",
    )
