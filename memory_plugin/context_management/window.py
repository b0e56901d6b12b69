"""The recent-window thread policy (thread-and-agent-memory.md): the model sees the tail of
the durable journal, at most `recent_window_messages` messages (human, assistant and tool
rows all count), trimmed back to a turn boundary; a rolling summary of what left the window
is written progressively in the background and prepended as an extra system message.

Its bookkeeping: `window_from_seq` in memory_context (the journal entry the window starts
at), and beside the journal the stored rolling summary (`text`, `upto_seq`, and
`flushed_from`: the pass whose flush note is written, so a retried pass flushes no more).
A summary the model fails to write, or one `checked_rewrite` refuses, leaves the stored one
in place; the pass is retried after the next turn.
"""

from __future__ import annotations

import asyncio
import logging
import threading
from collections.abc import Mapping, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from datetime import datetime
from typing import Any

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import BaseMessage, HumanMessage, RemoveMessage, ToolMessage
from langgraph.store.base import BaseStore, GetOp, PutOp

from memory_plugin.context_management.flush import FlushHook
from memory_plugin.context_management.journal import JournalEntry, tail_plan, thread_namespace
from memory_plugin.context_management.journaling import next_seq
from memory_plugin.context_management.pairs import call_ids
from memory_plugin.context_management.prompts import summary_messages
from memory_plugin.context_management.turn import SUMMARY as SHOWN_SUMMARY
from memory_plugin.context_management.turn import Turn
from memory_plugin.errors import SettingsError
from memory_plugin.models.replies import checked_rewrite
from memory_plugin.plans import ModelCall, Plan, arun, run
from memory_plugin.settings import MemorySettings
from memory_plugin.tokens import TokenCounter

logger = logging.getLogger(__name__)
SUMMARY = "summary"
ROLLING = "rolling"
OVERRIDE_KEY = "recent_window_messages"
WINDOW_FROM, FLUSHED_FROM = "window_from_seq", "flushed_from"
_background = ThreadPoolExecutor(max_workers=2, thread_name_prefix="memory-plugin-rolling")


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


def rolling_due(
    left: Sequence[JournalEntry], settings: MemorySettings, counter: TokenCounter
) -> bool:
    """Whether enough has left the window since the last pass to summarize it."""
    if len(left) >= settings.rolling_summary_messages:
        return True
    tokens = sum(counter.count_text(entry.text) for entry in left)
    return tokens >= settings.rolling_summary_tokens


def trim_plan(turn: Turn) -> Plan[None]:
    """Keep only the window (read back from the journal) in the thread state; while messages
    wait to be journaled, or when the journal cannot be read, nothing is taken out."""
    if not turn.journaled:
        return
    cap = window_cap(turn.settings, turn.config.get("configurable") or {})
    upto = next_seq(turn)
    try:
        entries = yield from window_plan(turn.thread_id, upto, cap)
    except Exception:
        logger.warning("the recent window could not be read; the thread is kept", exc_info=True)
        return
    inside = {entry.message_id for entry in entries}
    turn.apply([RemoveMessage(id=m.id) for m in turn.messages if m.id not in inside and m.id])
    turn.record({WINDOW_FROM: entries[0].seq if entries else upto})


def rolling_plan(
    thread_id: str,
    window_from: int,
    model: BaseChatModel,
    settings: MemorySettings,
    counter: TokenCounter,
    now: datetime,
    flush: FlushHook | None,
) -> Plan[dict[str, Any] | None]:
    """One progressive pass over the entries that left the window, when due; the stored
    summary, or None when nothing was due or the pass failed."""
    current = yield from summary_plan(thread_id)
    upto = int(current["upto_seq"])
    left = yield from tail_plan(thread_id, window_from, window_from - upto)
    if not left or not rolling_due(left, settings, counter):
        return None
    old = [entry.to_message() for entry in left]
    key = ((*thread_namespace(thread_id), SUMMARY), ROLLING)
    if flush is not None and current.get(FLUSHED_FROM) != upto:
        note = yield from flush(old)
        if note is not None:
            current = {**current, FLUSHED_FROM: upto}
            yield [PutOp(*key, current, index=False)]
    previous = str(current["text"])
    try:
        reply = yield ModelCall(
            model,
            summary_messages(previous, old, settings.summary_input_chars),
            timeout=settings.summary_timeout_seconds,
        )
        text = checked_rewrite(reply, previous=previous, what="rolling summary")
    except Exception as exc:
        logger.warning("rolling summary pass failed; the stored summary stays: %s", exc)
        return None
    stored = {"text": text, "upto_seq": window_from, "updated_at": now.isoformat()}
    yield [PutOp(*key, stored, index=False)]
    return stored


def _logged(plan: Plan[Any]) -> Plan[Any]:
    """A background pass: any failure is logged, never raised."""
    try:
        return (yield from plan)
    except Exception:
        logger.warning("rolling summary pass failed; it will be retried", exc_info=True)
        return None


class RollingSummaries:
    """Rolling-summary passes in the background, at most one per thread at a time: sync runs
    use a small thread pool, async runs a task on their loop."""

    def __init__(self) -> None:
        self._pending: dict[str, Future[Any] | asyncio.Task[Any]] = {}
        self._lock = threading.Lock()

    def load_plan(self, thread_id: str) -> Plan[dict[str, str]]:
        """The memory_context keys that show the stored summary (none if it cannot be read:
        the one shown before stays)."""
        try:
            rolling = yield from summary_plan(thread_id)
        except Exception:
            logger.warning("the rolling summary could not be read", exc_info=True)
            return {}
        return {SHOWN_SUMMARY: str(rolling["text"])}

    def start(self, thread_id: str, store: BaseStore, plan: Plan[Any]) -> None:
        """Run a pass unless one is still running for the thread."""
        with self._lock:
            running = self._pending.get(thread_id)
            if running is not None and not running.done():
                plan.close()
                return
            try:
                loop = asyncio.get_running_loop()
            except RuntimeError:
                self._pending[thread_id] = _background.submit(run, store, _logged(plan))
            else:
                self._pending[thread_id] = loop.create_task(arun(store, _logged(plan)))

    def wait(self, timeout: float) -> None:
        """Block until the passes started by sync runs finish."""
        for job in list(self._pending.values()):
            if isinstance(job, Future):
                job.result(timeout=timeout)

    async def await_all(self) -> None:
        """Await the passes started by async runs."""
        running = [j for j in self._pending.values() if isinstance(j, asyncio.Task)]
        await asyncio.gather(*[job for job in running if not job.done()])
