"""Context-management nodes for your own StateGraph (its state needs MemoryState's keys).

    manager = ContextManager(model, sources=[ScopedMemory(store)])
    builder.add_node("load_memory", manager.load_memory)
    builder.add_node("journal", manager.journal)
    builder.add_node("mask_tool_outputs", manager.mask_tool_outputs)
    builder.add_node("summarize", manager.summarize)
    ...and in your model node: model.invoke(manager.model_input(state))

`prepare_context` runs journal, mask_tool_outputs and summarize as one node; `start_turn` is
load_memory + prepare_context and `finish_turn` is journal + rolling_summary (fewer steps,
the same work).

Every node works under invoke and ainvoke.
"""

from __future__ import annotations

import asyncio
import logging
import threading
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, RemoveMessage, SystemMessage
from langchain_core.runnables import RunnableConfig
from langgraph.config import get_store
from langgraph.store.base import BaseStore

from memory_plugin.blocks import (
    SUMMARY_TAG,
    BlockSource,
    PromptBlock,
    assemble,
    from_dicts,
    to_dicts,
)
from memory_plugin.context import MemoryContext
from memory_plugin.errors import ScopeError
from memory_plugin.events import emit
from memory_plugin.graphnode import State, plan_node
from memory_plugin.plans import Plan, arun, gather, run
from memory_plugin.scope import thread_scope
from memory_plugin.settings import MemorySettings, SettingsCache
from memory_plugin.thread import journal
from memory_plugin.thread.compaction import Compaction, compaction_plan, due
from memory_plugin.thread.flush import flush_plan
from memory_plugin.thread.masking import mask
from memory_plugin.thread.state import add_messages_batch
from memory_plugin.thread.tally import tally
from memory_plugin.thread.window import rolling_plan, summary_plan, window_cap, window_plan
from memory_plugin.tokens import TokenCounter, context_window, counter_for, reports_window

logger = logging.getLogger(__name__)
SUMMARIZE_NOW = "summarize_now"
RECENT_WINDOW = "recent_window"
_background = ThreadPoolExecutor(max_workers=2, thread_name_prefix="memory-plugin-rolling")
JOURNAL_TOOLS = frozenset({"journal_tool_call_view", "journal_message_search"})


def _thread_id(config: RunnableConfig) -> str:
    thread_id = (config.get("configurable") or {}).get("thread_id")
    if not thread_id:
        raise ScopeError("thread memory needs a thread_id in config['configurable']")
    return str(thread_id)


@dataclass
class _Turn:
    """One node call's view of the thread, and the updates it has made so far."""

    messages: list[BaseMessage]
    info: State
    settings: MemorySettings
    thread_id: str
    ctx: MemoryContext
    config: RunnableConfig
    changes: list[BaseMessage] = field(default_factory=list)
    context: State = field(default_factory=dict)

    def record(self, keys: State) -> None:
        """Remember memory_context keys to write (later steps see them)."""
        self.info.update(keys)
        self.context.update(keys)

    def apply(self, changes: Sequence[BaseMessage]) -> None:
        """Message replacements or removals to write (later steps see them)."""
        if changes:
            self.messages = add_messages_batch(self.messages, [list(changes)])  # type: ignore[arg-type,assignment]
            self.changes.extend(changes)

    def updates(self) -> State:
        """The node's state update."""
        update: State = {"memory_context": self.context} if self.context else {}
        if self.changes:
            update["messages"] = self.changes
        return update


class ContextManager:
    """Protected prefixes, journal, tool-output masking, compaction and the pre-compaction
    flush, as plain LangGraph nodes.

    `model` is the graph's model: its profile gives the window, and it writes summaries and
    flush notes unless `summary_model` is given. `sources` contribute protected blocks.
    """

    def __init__(
        self,
        model: BaseChatModel,
        *,
        sources: Sequence[BlockSource] = (),
        frozen_sources: Sequence[BlockSource] = (),
        summary_model: BaseChatModel | None = None,
        system_prompt: str | None = None,
        defaults: MemorySettings | None = None,
        counter: TokenCounter | None = None,
        excluded_tools: Iterable[str] = JOURNAL_TOOLS,
        clock: Callable[[], datetime] = lambda: datetime.now(UTC),
    ) -> None:
        self.model = model
        self.sources = list(sources)
        self.frozen_sources = list(frozen_sources)
        self.summary_model = summary_model or model
        self.system_prompt = system_prompt
        self.counter = counter or counter_for(model)
        self.excluded_tools = frozenset(excluded_tools)
        self.clock = clock
        self._settings = SettingsCache(defaults)
        self._last_settings: tuple[State, MemorySettings] | None = None
        self._prefix: tuple[tuple[Any, ...], list[BaseMessage]] | None = None
        self.load_memory = plan_node(self._load_memory)
        self.journal = plan_node(self._journal)
        self.mask_tool_outputs = plan_node(self._mask)
        self.summarize = plan_node(self._summarize)
        self.prepare_context = plan_node(self._prepare_context)
        self.start_turn = plan_node(self._start_turn)
        self.finish_turn = plan_node(self._finish_turn)
        self.summarize_now = plan_node(self._summarize_now)
        self.rolling_summary = plan_node(self._rolling_summary)
        self._pending: dict[str, Future[Any] | asyncio.Task[Any]] = {}
        self._pending_lock = threading.Lock()

    def _resolve_plan(self, store: BaseStore, ctx: MemoryContext) -> Plan[MemorySettings]:
        effective = yield from self._settings.for_store(store).effective_plan(ctx)
        return effective.values

    def _settings_plan(self, state: State, ctx: MemoryContext) -> Plan[MemorySettings]:
        """The settings load_memory resolved for this turn (resolving them if it did not)."""
        values = (state.get("memory_context") or {}).get("settings")
        if values is None:
            return (yield from self._resolve_plan(get_store(), ctx))
        last = self._last_settings
        if last is not None and last[0] is values:
            return last[1]
        settings = MemorySettings.model_construct(**values)
        self._last_settings = (values, settings)
        return settings

    def window(self, settings: MemorySettings) -> int:
        """The model's input window, or the configured fallback."""
        return context_window(self.model, settings.fallback_context_window)

    def _blocks_plan(
        self, sources: Sequence[BlockSource], ctx: MemoryContext, settings: MemorySettings
    ) -> Plan[list[PromptBlock]]:
        """Every source's blocks, their store reads batched together; a failing source is
        logged and left out."""

        def guarded(source: BlockSource) -> Plan[list[PromptBlock]]:
            try:
                return (yield from source.blocks_plan(ctx, settings))
            except Exception:
                logger.warning("memory blocks of %s could not be loaded", source, exc_info=True)
                return []

        found = yield from gather([guarded(source) for source in sources])
        return [block for blocks in found for block in blocks]

    def _load_memory(self, state: State, config: RunnableConfig, ctx: MemoryContext) -> Plan[State]:
        info = state.get("memory_context") or {}
        settings = yield from self._resolve_plan(get_store(), ctx)
        blocks = yield from self._blocks_plan(self.sources, ctx, settings)
        emit("context", "loaded", None, blocks=[block.name for block in blocks])
        context: State = {"policy": settings.thread_policy, "settings": settings.model_dump()}
        if settings.thread_policy == RECENT_WINDOW:
            rolling = yield from summary_plan(_thread_id(config))
            context["summary"] = rolling["text"]
        if "frozen_blocks" not in info:
            frozen = yield from self._blocks_plan(self.frozen_sources, ctx, settings)
            context["frozen_blocks"] = to_dicts(frozen)
        return {
            "memory_blocks": to_dicts(blocks),
            "memory_command": None,
            "memory_context": context,
        }

    def _journal_step(self, turn: _Turn) -> Plan[None]:
        """Journal the messages added since the last journaled one; under the recent-window
        policy, keep only the window (read back from the journal) in the thread state."""
        messages, info = turn.messages, turn.info
        last_id = info.get("journal_last_id")
        start = 0
        if last_id is not None:
            start = next(
                (i + 1 for i in range(len(messages) - 1, -1, -1) if messages[i].id == last_id), -1
            )
            if start < 0:
                logger.warning("thread %s was rewritten outside memory_plugin", turn.thread_id)
                start = len(messages)
        new = messages[start:]
        if new:
            seq = int(info.get("journal_seq", 0))
            next_seq = yield from journal.append_plan(turn.thread_id, new, seq, self.clock())
            turn.record({"journal_seq": next_seq, "journal_last_id": new[-1].id})
            emit("journal", "journaled", None, messages=len(new))
        if turn.settings.thread_policy != RECENT_WINDOW:
            return
        cap = window_cap(turn.settings, turn.config.get("configurable") or {})
        next_seq = int(turn.info.get("journal_seq", 0))
        window = yield from window_plan(turn.thread_id, next_seq, cap)
        inside = {entry.message_id for entry in window}
        turn.apply([RemoveMessage(id=m.id) for m in messages if m.id not in inside and m.id])
        turn.record({"window_from_seq": window[0].seq if window else next_seq})

    def _mask_step(self, turn: _Turn) -> Plan[None]:
        """Mask older tool outputs past the trigger (journaling them first)."""
        counts, rewritten = tally(turn.messages, turn.info, self.counter)
        turn.record(counts)
        if not reports_window(self.model):
            return
        result = mask(
            turn.messages,
            counts["tokens"],
            self.window(turn.settings),
            turn.settings,
            self.counter,
            scan_from=0 if rewritten else int(turn.info.get("mask_scan_from", 0)),
            excluded=self.excluded_tools,
        )
        if not result.replacements:
            return
        yield from self._journal_step(turn)
        turn.apply(result.replacements)
        emit("context", "masked", None, outputs=len(result.replacements), freed=result.freed_tokens)
        turn.record(
            {
                "tokens": counts["tokens"] - result.freed_tokens,
                "mask_scan_from": result.scan_from,
                "masked": int(turn.info.get("masked", 0)) + len(result.replacements),
            }
        )

    def _compact_step(self, turn: _Turn, kind: str) -> Plan[Compaction]:
        """Compact when due (always for a manual request), journaling first."""
        counts, _ = tally(turn.messages, turn.info, self.counter)
        turn.record(counts)
        if kind == "auto" and not due(
            turn.info, turn.settings, self.window(turn.settings), self.counter
        ):
            return Compaction("nothing_to_compact", message="below the compaction trigger")
        yield from self._journal_step(turn)
        store = get_store()
        now = self.clock()
        result = yield from compaction_plan(
            turn.messages,
            turn.info,
            model=self.summary_model,
            settings=turn.settings,
            window=self.window(turn.settings),
            counter=self.counter,
            kind="manual" if kind == "manual" else "auto",
            now=now,
            flush=self._flush_hook(store, turn.ctx, turn.settings, now),
        )
        turn.apply(result.updates.get("messages", []))
        turn.record(result.updates.get("memory_context", {}))
        if result.status != "nothing_to_compact" or kind == "manual":
            divider = (result.updates.get("memory_context") or {}).get("dividers", [{}])[-1]
            emit(
                "context",
                "compacted" if result.status == "compacted" else result.status,
                None,
                trigger=kind,
                message=result.message,
                tokens_before=divider.get("tokens_before"),
                tokens_after=divider.get("tokens_after"),
            )
        return result

    def _flush_hook(
        self, store: BaseStore, ctx: MemoryContext, settings: MemorySettings, now: datetime
    ) -> Callable[[Sequence[BaseMessage]], Plan[Any]] | None:
        if not settings.flush:
            return None
        semantic = getattr(store, "index_config", True) is not None

        def flush(old: Sequence[BaseMessage]) -> Plan[Any]:
            try:
                scope = thread_scope(ctx)
            except ScopeError as exc:
                logger.info("no pre-compaction flush: %s", exc)
                return None
            return (yield from flush_plan(self.summary_model, old, scope, settings, now, semantic))

        return flush

    def _turn_plan(self, state: State, config: RunnableConfig, ctx: MemoryContext) -> Plan[_Turn]:
        settings = yield from self._settings_plan(state, ctx)
        info = dict(state.get("memory_context") or {})
        return _Turn(state["messages"], info, settings, _thread_id(config), ctx, config)

    def _journal(self, state: State, config: RunnableConfig, ctx: MemoryContext) -> Plan[State]:
        turn = yield from self._turn_plan(state, config, ctx)
        yield from self._journal_step(turn)
        return turn.updates()

    def _mask(self, state: State, config: RunnableConfig, ctx: MemoryContext) -> Plan[State]:
        turn = yield from self._turn_plan(state, config, ctx)
        yield from self._mask_step(turn)
        return turn.updates()

    def _summarize(self, state: State, config: RunnableConfig, ctx: MemoryContext) -> Plan[State]:
        turn = yield from self._turn_plan(state, config, ctx)
        if turn.settings.thread_policy != RECENT_WINDOW:
            yield from self._compact_step(turn, "auto")
        return turn.updates()

    def _prepare_context(
        self, state: State, config: RunnableConfig, ctx: MemoryContext
    ) -> Plan[State]:
        """journal, mask_tool_outputs and summarize in one node."""
        turn = yield from self._turn_plan(state, config, ctx)
        yield from self._journal_step(turn)
        yield from self._mask_step(turn)
        if turn.settings.thread_policy != RECENT_WINDOW:
            yield from self._compact_step(turn, "auto")
        return turn.updates()

    def _start_turn(self, state: State, config: RunnableConfig, ctx: MemoryContext) -> Plan[State]:
        """load_memory, then prepare_context, in one node."""
        loaded = yield from self._load_memory(state, config, ctx)
        info = {**(state.get("memory_context") or {}), **loaded["memory_context"]}
        prepared = yield from self._prepare_context({**state, "memory_context": info}, config, ctx)
        context = {**loaded["memory_context"], **prepared.get("memory_context", {})}
        return {**loaded, **prepared, "memory_context": context}

    def _finish_turn(self, state: State, config: RunnableConfig, ctx: MemoryContext) -> Plan[State]:
        """journal (the final reply), then rolling_summary, in one node."""
        journaled = yield from self._journal(state, config, ctx)
        info = {**(state.get("memory_context") or {}), **journaled.get("memory_context", {})}
        yield from self._rolling_summary({**state, "memory_context": info}, config, ctx)
        return journaled

    def _summarize_now(
        self, state: State, config: RunnableConfig, ctx: MemoryContext
    ) -> Plan[State]:
        settings = yield from self._resolve_plan(get_store(), ctx)
        info = {**(state.get("memory_context") or {}), "settings": settings.model_dump()}
        turn = _Turn(list(state["messages"]), info, settings, _thread_id(config), ctx, config)
        turn.record({"settings": info["settings"]})
        if not settings.compaction_manual:
            result = Compaction(
                "failed", message="Summarize now is not enabled (MEMORY_COMPACTION_MANUAL)"
            )
        elif not any(isinstance(m, AIMessage) for m in turn.messages):
            result = Compaction("nothing_to_compact", message="nothing to compact yet")
        else:
            result = yield from self._compact_step(turn, "manual")
        report = {"status": result.status, "message": result.message, "kind": "manual"}
        turn.record({"last_compaction": report})
        return {**turn.updates(), "memory_command": None}

    def _rolling_plan(self, state: State, config: RunnableConfig, ctx: MemoryContext) -> Plan[Any]:
        store = get_store()
        settings = yield from self._settings_plan(state, ctx)
        info = state.get("memory_context") or {}
        return rolling_plan(
            _thread_id(config),
            int(info.get("window_from_seq", 0)),
            self.summary_model,
            settings,
            self.counter,
            self.clock(),
            self._flush_hook(store, ctx, settings, self.clock()),
        )

    def _rolling_summary(
        self, state: State, config: RunnableConfig, ctx: MemoryContext
    ) -> Plan[State]:
        """Start a rolling-summary pass in the background (recent-window policy only)."""
        info = state.get("memory_context") or {}
        if info.get("policy") != RECENT_WINDOW:
            return {}
        thread_id = _thread_id(config)
        plan = yield from self._rolling_plan(state, config, ctx)
        store = get_store()
        with self._pending_lock:
            running = self._pending.get(thread_id)
            if running is not None and not running.done():
                return {}
            try:
                loop = asyncio.get_running_loop()
            except RuntimeError:
                self._pending[thread_id] = _background.submit(run, store, plan)
            else:
                self._pending[thread_id] = loop.create_task(arun(store, plan))
        return {}

    def wait_for_background(self, timeout: float = 30.0) -> None:
        """Block until background rolling-summary passes started by sync runs finish."""
        for job in list(self._pending.values()):
            if isinstance(job, Future):
                job.result(timeout=timeout)

    async def await_background(self) -> None:
        """Await background rolling-summary passes started by async runs."""
        await asyncio.gather(*[j for j in self._pending.values() if isinstance(j, asyncio.Task)])

    def model_input(self, state: State) -> list[BaseMessage]:
        """The model's messages: system prompt, frozen, per-turn and recent-notes blocks, the
        running summary, then the thread's messages. Assembled now, never stored. Under the
        recent-window policy the rolling summary is an extra system message instead."""
        info = state.get("memory_context") or {}
        key = (
            info.get("frozen_blocks", []),
            state.get("memory_blocks") or [],
            str(info.get("summary", "")),
            info.get("policy"),
        )
        cached = self._prefix
        if cached is None or cached[0] != key:
            frozen, per_turn, summary, policy = key
            blocks = from_dicts(frozen) + from_dicts(per_turn)
            if policy != RECENT_WINDOW:
                prefix = assemble(self.system_prompt, blocks, summary, [])
            else:
                extra = f"<{SUMMARY_TAG}>\n{summary}\n</{SUMMARY_TAG}>"
                prefix = assemble(self.system_prompt, blocks, "", [])
                prefix += [SystemMessage(extra)] if summary else []
            cached = self._prefix = (key, prefix)
        return [*cached[1], *state["messages"]]


def route_start(state: State) -> str:
    """Entry router: a `memory_command` of "summarize_now" goes to the summarize_now node."""
    return SUMMARIZE_NOW if state.get("memory_command") == SUMMARIZE_NOW else "load_memory"


def summarize_now(graph: Any, config: RunnableConfig, *, context: Any = None) -> dict[str, Any]:
    """Compact a thread on request (the graph routes `route_start`); returns
    {"status", "message", "kind"}: compacted, nothing_to_compact, or failed."""
    out = graph.invoke({"memory_command": SUMMARIZE_NOW}, config, context=context)
    return dict(out["memory_context"]["last_compaction"])


async def asummarize_now(
    graph: Any, config: RunnableConfig, *, context: Any = None
) -> dict[str, Any]:
    """Async twin of summarize_now."""
    out = await graph.ainvoke({"memory_command": SUMMARIZE_NOW}, config, context=context)
    return dict(out["memory_context"]["last_compaction"])
