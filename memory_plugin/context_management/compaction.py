"""Compaction: past the trigger share of the window, messages older than the keep window are
replaced by a model-written running summary, and a divider records the cut.

The cut never separates an AI message's tool calls from their results, and the latest
write_todos call stays with its result. Summaries are progressive: the previous summary is
fed into the next. A summary the model fails to write, or one `checked_rewrite` refuses, is
a failed compaction: the conversation stays as it was. On a call whose request changes
anyway (a new snapshot of memory after a removal, or an update dropped for one: masking.py
`resnapshotted`), compaction runs from `compaction_on_break_ratio` of the window: that
request is billed in full regardless, so the calls after it start from a small one. Below
the trigger it keeps the latest exchange too, and runs only when what it would summarize
is at least `masking_min_clear_ratio` of the window. On a call where masking left its pass
to compaction (due.py) it runs from that share below its trigger.
Summarize now keeps the latest complete turn (or the keep share, whichever is smaller) and
compacts everything before it.

The summary is asked by repeating the agent's last request with one instruction after it
when that bills less than a transcript of what it summarizes (cache_share.py), else from the
transcript (prompts.py).

`CompactionStep` keeps the running `summary`, the `dividers`, `flush_event` (the compaction
event whose flush note was started, in the background once the turn ends: one note per
event, however often it is retried),
`compaction_failed_in` (the user message whose turn saw an automatic compaction fail: it is
retried on the next turn, not after every tool step, so a hung model costs a turn one
timeout) and `last_compaction` (the outcome of the last Summarize now).
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Literal

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, RemoveMessage
from langchain_core.runnables import Runnable
from langgraph.config import get_store
from langgraph.graph.message import REMOVE_ALL_MESSAGES

from memory_plugin.context_management.cache_share import cached_summary_request
from memory_plugin.context_management.due import (
    FAILED_IN,
    MASKED_TOKENS,
    compaction_due,
    input_tokens,
    latest_user_index,
    latest_user_message_id,
    trigger_share,
)
from memory_plugin.context_management.flush import FlushStart, flush_hook, in_background
from memory_plugin.context_management.journaling import journal_before_removal, kept_cursor
from memory_plugin.context_management.masking import SCAN_FROM
from memory_plugin.context_management.naming import NAME
from memory_plugin.context_management.pairs import preserved_before, safe_cut
from memory_plugin.context_management.prompts import summary_messages
from memory_plugin.context_management.tally import count_keys, tally
from memory_plugin.context_management.turn import SUMMARY, Turn, window
from memory_plugin.events import emit
from memory_plugin.models.maintenance import MaintenanceModel
from memory_plugin.models.replies import RejectedReply, checked_rewrite
from memory_plugin.plans import ModelCall, Plan
from memory_plugin.settings import MemorySettings
from memory_plugin.tokens import TokenCounter

logger = logging.getLogger(__name__)
Trigger = Literal["auto", "manual"]
DIVIDER_TEXT = {
    "auto": "Earlier messages were summarized to free up context",
    "manual": "Context summarized on request",
}
DIVIDERS, FLUSH_EVENT, LAST = "dividers", "flush_event", "last_compaction"
NOT_ENABLED = "Summarize now is not enabled (MEMORY_COMPACTION_MANUAL)"
NOTHING_YET = "nothing to compact yet"
UNJOURNALED = "the journal could not be written; the conversation is unchanged"
TOO_LITTLE = "too little before the latest exchange to compact ahead of the trigger"
JournalFirst = Callable[[Sequence[int]], Plan[list[BaseMessage] | None]]
"""Given the indices about to be summarized, journal what must be first: the new messages
left for a later journal write, None when the journal could not be written."""


@dataclass(frozen=True)
class Compaction:
    """What a compaction attempt did: `compacted`, `nothing_to_compact` or `failed`."""

    status: Literal["compacted", "nothing_to_compact", "failed"]
    updates: dict[str, Any] = field(default_factory=dict)
    message: str = ""


def latest_turn_start(messages: Sequence[BaseMessage]) -> int | None:
    """Index of the user message that opens the latest complete turn (one the assistant
    answered); None when there is none."""
    answered = False
    for i in range(len(messages) - 1, -1, -1):
        if isinstance(messages[i], AIMessage):
            answered = True
        elif isinstance(messages[i], HumanMessage) and answered:
            return i
    return None


def split(
    messages: Sequence[BaseMessage],
    counter: TokenCounter,
    keep_tokens: float,
    keep_from: int | None = None,
    opening: int | None = None,
    keep_all_from: int | None = None,
) -> tuple[list[int], list[int], int]:
    """Indices to summarize, indices to keep, and the cut: the newest messages within
    keep_tokens (at least one), or only those from `keep_from` on when that keeps fewer, or
    all from `keep_all_from` on when that keeps more, moved back so tool calls and results
    stay whole, are kept with what is always preserved, and with the message at `opening`
    (the user message of the turn under way)."""
    cut = len(messages)
    used = 0
    while cut > 0:
        size = counter.count_message(messages[cut - 1])
        if used + size > keep_tokens and cut < len(messages):
            break
        used += size
        cut -= 1
    if keep_from is not None:
        cut = max(cut, keep_from)
    if keep_all_from is not None:
        cut = min(cut, keep_all_from)
    cut = safe_cut(messages, cut)
    preserved = set(preserved_before(messages, cut))
    if opening is not None and opening < cut:
        preserved.add(opening)
    summarize = [i for i in range(cut) if i not in preserved]
    keep = sorted(preserved) + list(range(cut, len(messages)))
    return summarize, keep, cut


def compaction_plan(
    messages: Sequence[BaseMessage],
    info: dict[str, Any],
    *,
    model: BaseChatModel,
    settings: MemorySettings,
    window: int,
    counter: TokenCounter,
    kind: Trigger,
    now: datetime,
    flush: FlushStart | None,
    journal: JournalFirst | None = None,
    prefix_breaks: bool = False,
    share_cache: bool = False,
) -> Plan[Compaction]:
    """Compact when due (always for `manual`; `prefix_breaks` as for `compaction_due`); see
    the module docstring. The thread's update clears it and adds back what is kept: a removal
    per summarized message costs more to build, apply and checkpoint than the kept messages.
    `journal` runs before the summary. `share_cache`: `model` is the agent's, so the summary
    may be asked by repeating the agent's last request (memory_plugin.context_management.
    cache_share), the transcript being sent if that fails."""
    summary = str(info.get(SUMMARY, ""))
    tokens = int(info["tokens"]) if "tokens" in info else counter.count(messages)
    before = tokens + counter.count_text(summary)
    size = input_tokens({**info, "tokens": tokens}, counter)
    due = size >= trigger_share(info, settings, prefix_breaks) * window
    if kind == "auto" and not due:
        return Compaction("nothing_to_compact", message="below the compaction trigger")
    early = kind == "auto" and size < trigger_share(info, settings, False) * window
    keep_from = latest_turn_start(messages) if kind == "manual" else None
    keep_tokens = settings.summarization_keep_ratio * window
    opening = latest_user_index(messages) if kind == "auto" else None
    keep_all_from = latest_turn_start(messages) if early else None
    summarize, keep, cut = split(messages, counter, keep_tokens, keep_from, opening, keep_all_from)
    if not summarize:
        return Compaction("nothing_to_compact", message=NOTHING_YET)
    least = settings.masking_min_clear_ratio * window
    if early and counter.count([messages[i] for i in summarize]) < least:
        return Compaction("nothing_to_compact", message=TOO_LITTLE)
    pending: list[BaseMessage] = []
    if journal is not None:
        journaled = yield from journal(summarize)
        if journaled is None:
            return Compaction("failed", message=UNJOURNALED)
        pending = journaled
    old = [messages[i] for i in summarize]
    prompt = summary_messages(summary, old, settings.summary_input_chars)  # the flush reuses it
    flushed: dict[str, Any] = {}
    if flush is not None and info.get(FLUSH_EVENT) != old[0].id:
        flush(old)
        flushed = {FLUSH_EVENT: old[0].id}
    cached = None
    if share_cache:
        kept_first = messages[cut] if cut < len(messages) else None
        cached = cached_summary_request(
            list(messages), info, kept_first, settings.prompt_cache_seconds
        )
    attempts = summary_requests(model, prompt, cached, settings.prompt_cache_read_ratio, counter)
    for n, (asked, request) in enumerate(attempts, start=1):
        try:
            reply = yield ModelCall(asked, request, timeout=settings.summary_timeout_seconds)
            new_summary = summary_of(reply, summary)
            break
        except Exception as exc:
            if n < len(attempts):
                logger.info("the cached summary request failed, sending the transcript: %s", exc)
                continue
            logger.warning(
                "compaction failed; the conversation is unchanged: %s", exc, exc_info=True
            )
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
        SUMMARY: new_summary,
        DIVIDERS: [*info.get(DIVIDERS, []), divider],
        **count_keys(kept, kept_tokens),
        **kept_cursor(kept, pending),
        SCAN_FROM: 0,
        MASKED_TOKENS: 0,
    }
    return Compaction(
        "compacted",
        {"messages": [RemoveMessage(id=REMOVE_ALL_MESSAGES), *kept], "memory_context": context},
        f"{DIVIDER_TEXT[kind]} (~{before:,} -> ~{after:,} tokens)",
    )


def summary_requests(
    model: BaseChatModel,
    transcript: list[BaseMessage],
    cached: tuple[Runnable[Any, Any], list[BaseMessage]] | None,
    price: float,
    counter: TokenCounter,
) -> list[tuple[Runnable[Any, Any], list[BaseMessage]]]:
    """The summary requests to try in turn: the cached one first when, its repeated part
    billed at `price`, it costs less than the transcript."""
    if cached is None:
        return [(model, transcript)]
    repeated = cached[1]
    cost = price * counter.count(repeated[:-1]) + counter.count(repeated[-1:])
    if cost >= counter.count(transcript):
        return [(model, transcript)]
    return [cached, (model, transcript)]


def summary_of(reply: Any, previous: str) -> str:
    """The reply's summary if it may replace `previous`; RejectedReply when it calls a tool
    or checked_rewrite refuses it."""
    if getattr(reply, "tool_calls", None):
        raise RejectedReply("compaction summary", "it called a tool")
    return checked_rewrite(reply, previous=previous, what="compaction summary")


class CompactionStep:
    """Compacts a turn's thread when due, or on request (Summarize now)."""

    def __init__(
        self,
        model: BaseChatModel,
        maintenance: MaintenanceModel,
        counter: TokenCounter,
        clock: Callable[[], datetime],
        journal: Callable[[Turn], Plan[None]],
    ) -> None:
        self.model = model
        self.maintenance = maintenance
        self.counter = counter
        self.clock = clock
        self.journal = journal

    def step(self, turn: Turn, kind: Trigger, prefix_breaks: bool = False) -> Plan[Compaction]:
        """Compact when due (always for `manual`; from `compaction_on_break_ratio` when
        `prefix_breaks`); whatever it would take out of the thread unjournaled is journaled
        first (what it keeps is journaled with the turn's end)."""
        counts, _ = tally(turn.messages, turn.info, self.counter)
        turn.record(counts)
        size = window(self.model, turn.settings)
        due = compaction_due(
            turn.info, turn.settings, size, self.counter, prefix_breaks=prefix_breaks
        )
        if kind == "auto" and not due:
            return Compaction("nothing_to_compact", message="below the compaction trigger")
        opened_by = latest_user_message_id(turn.messages)
        if kind == "auto" and opened_by is not None and turn.info.get(FAILED_IN) == opened_by:
            return Compaction("nothing_to_compact", message="retried next turn after a failure")
        if turn.journaled:
            now = self.clock()
            summary_model = self.maintenance(turn.settings) or self.model
            result = yield from compaction_plan(
                turn.messages,
                turn.info,
                model=summary_model,
                settings=turn.settings,
                window=size,
                counter=self.counter,
                kind=kind,
                now=now,
                flush=in_background(
                    flush_hook(summary_model, get_store(), turn.ctx, turn.settings, now),
                    get_store(),
                    turn.thread_id,
                ),
                journal=self._journal_first(turn),
                prefix_breaks=prefix_breaks,
                share_cache=summary_model is self.model,
            )
        else:
            result = Compaction("failed", message=UNJOURNALED)
        turn.apply(result.updates.get("messages", []))
        turn.record(result.updates.get("memory_context", {}))
        if kind == "auto" and result.status == "failed":
            turn.record({FAILED_IN: opened_by})
        if result.status != "nothing_to_compact" or kind == "manual":
            divider = result.updates.get("memory_context", {}).get(DIVIDERS, [{}])[-1]
            emit(
                NAME,
                result.status,
                None,
                trigger=kind,
                message=result.message,
                tokens_before=divider.get("tokens_before"),
                tokens_after=divider.get("tokens_after"),
            )
        return result

    def _journal_first(self, turn: Turn) -> JournalFirst:
        def first(removed: Sequence[int]) -> Plan[list[BaseMessage] | None]:
            opening = latest_user_index(turn.messages)
            pending = yield from journal_before_removal(turn, removed, self.journal, opening)
            return pending if turn.journaled else None

        return first

    def on_request(self, turn: Turn) -> Plan[None]:
        """Summarize now: at least one assistant turn and something before the latest turn
        are needed; the outcome goes to `last_compaction`."""
        if not turn.settings.compaction_manual:
            result = Compaction("failed", message=NOT_ENABLED)
        elif not any(isinstance(m, AIMessage) for m in turn.messages):
            result = Compaction("nothing_to_compact", message=NOTHING_YET)
        else:
            result = yield from self.step(turn, "manual")
        turn.record({LAST: {"status": result.status, "message": result.message, "kind": "manual"}})
