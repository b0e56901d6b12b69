"""The pre-compaction flush: one short note capturing the conversation before it is
summarized, and, when the Memory capability (`agent_memory`) is on for an agent, the agent
entries the same reply adds. Best effort: bounded by a timeout, and any failure only logs.
A compaction starts it in the background (`in_background`) with the messages it summarizes,
so the turn waits for the summary alone. The job then waits for the turn's end (the graph's
run ended, or the turn's last journal write where the graph does not report its runs; at
most TURN_END_WAIT seconds: memory_plugin.context_management.turn_end) before it asks for the
note: its model call, screen and write never compete with the turn."""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from datetime import UTC, datetime

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import BaseMessage, SystemMessage
from langgraph.store.base import BaseStore

from memory_plugin.agent.flush import ENTRY_INSTRUCTION, flush_entries_plan, split_entries
from memory_plugin.context_management.prompts import flush_messages
from memory_plugin.context_management.turn_end import TurnJobs
from memory_plugin.errors import ScopeError
from memory_plugin.events import emit
from memory_plugin.models.replies import reply_text
from memory_plugin.plans import ModelCall, Plan
from memory_plugin.provenance import current, origin, turn_of
from memory_plugin.safety import screen, visibility_of
from memory_plugin.scope import Scope, thread_scope
from memory_plugin.scope.context import MemoryContext
from memory_plugin.scoped.naming import NAME as SCOPED
from memory_plugin.scoped.notes import Note, append_plan
from memory_plugin.settings import MemorySettings

logger = logging.getLogger(__name__)
FlushHook = Callable[[Sequence[BaseMessage]], Plan[Note | None]]
FlushStart = Callable[[Sequence[BaseMessage]], None]
_flushes = TurnJobs("flush")


def trim_at_word(text: str, limit: int) -> str:
    """One line of at most `limit` characters, cut at a word boundary."""
    line = " ".join(text.split())
    if len(line) <= limit:
        return line
    cut = line[: limit - 1].rsplit(" ", 1)[0] or line[: limit - 1]
    return cut.rstrip(" ,;:.-") + "…"


def flush_plan(
    model: BaseChatModel,
    messages: Sequence[BaseMessage],
    scope: Scope | None,
    settings: MemorySettings,
    now: datetime,
    semantic: bool,
    agent: MemoryContext | None = None,
    actor: str | None = None,
) -> Plan[Note | None]:
    """Ask for the note and append it to the scope (none without one), storing the reply's
    entries for the `agent` context's agent; None when disabled or anything failed. Both
    record the flush as their provenance, with the last turn of the messages summarized and
    the `actor` whose run it was."""
    if not settings.flush:
        return None
    with origin(source="node", job="flush", turn=turn_of(messages), actor=actor):
        provenance = current(at=now.astimezone(UTC).isoformat())
    try:
        prompt = flush_messages(messages, settings.flush_max_chars, settings.summary_input_chars)
        if agent is not None:
            prompt[0] = SystemMessage(f"{prompt[0].content}{ENTRY_INSTRUCTION}")
        reply = yield ModelCall(model, prompt, timeout=settings.flush_timeout_seconds)
        text, entries = split_entries(reply_text(reply))
        if agent is not None and entries:
            yield from flush_entries_plan(agent, entries, now, semantic, provenance)
        if scope is None:
            return None
        screen(text, "the note", visibility=visibility_of(scope.kind))
        text = trim_at_word(text.lstrip("-*• "), settings.flush_max_chars)
        limit = settings.note_max_chars
        note = yield from append_plan(scope, text, limit, now, semantic, provenance)
        emit(SCOPED, "flushed", scope.kind, note=note.body)
        return note
    except Exception:
        logger.warning("pre-compaction flush failed; compaction goes on", exc_info=True)
        return None


def flush_hook(
    model: BaseChatModel,
    store: BaseStore,
    ctx: MemoryContext,
    settings: MemorySettings,
    now: datetime,
) -> FlushHook | None:
    """The flush for this run's thread scope (and agent entries when `agent_memory` is on and
    the context names an agent), given the messages about to be summarized; None when the
    flush is off or there is nothing to write."""
    agent = ctx if settings.agent_memory and ctx.agent_id else None
    if not settings.flush or not (settings.scoped_memory or agent):
        return None
    semantic = getattr(store, "index_config", True) is not None

    def flush(old: Sequence[BaseMessage]) -> Plan[Note | None]:
        scope: Scope | None = None
        try:
            scope = thread_scope(ctx) if settings.scoped_memory else None
        except ScopeError as exc:
            logger.info("no pre-compaction flush note: %s", exc)
        if scope is None and agent is None:
            return None
        plan = flush_plan(model, old, scope, settings, now, semantic, agent, ctx.user_id)
        return (yield from plan)

    return flush


def in_background(
    hook: FlushHook | None, store: BaseStore, thread_id: str | None = None
) -> FlushStart | None:
    """The flush started as a background job against `store` (returns at once) that waits
    for the end of `thread_id`'s turn first; None without a flush."""
    if hook is None:
        return None

    def start(old: Sequence[BaseMessage]) -> None:
        _flushes.start_after_turn(("flush", id(old)), store, hook(list(old)), thread_id)

    return start
