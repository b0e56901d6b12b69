"""Context-management nodes for your own StateGraph (its state needs MemoryState's keys).

    manager = ContextManager(model, sources=[ScopedMemory(store)])
    builder.add_node("load_memory", manager.load_memory)
    builder.add_node("journal", manager.journal)
    builder.add_node("mask_tool_outputs", manager.mask_tool_outputs)
    builder.add_node("summarize", manager.summarize)
    ...and in your model node: model.invoke(manager.model_input(state))

`prepare_context` runs journal, mask_tool_outputs and summarize as one node; `start_turn` is
load_memory + prepare_context and `finish_turn` is journal + rolling_summary (fewer steps,
the same work). After a tool step, `recheck` (or `after_tools`: recheck + prepare_context)
takes memory removed since the turn began out of the model's next input.

ContextManager only composes the steps, each beside its policy and owning its bookkeeping:
the prefix (prefix.py), the journal (journaling.py), masking (masking.py), compaction
(compaction.py) and the recent window with its rolling summary (window.py). Every node
works under invoke and ainvoke.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterable, Sequence
from datetime import datetime
from typing import Any

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import BaseMessage
from langchain_core.runnables import RunnableConfig
from langchain_core.tools import BaseTool
from langgraph.config import get_store

from memory_plugin.base import MemoryService, Parts, SettingsLike, utc_now
from memory_plugin.blocks import BlockSource
from memory_plugin.context_management.compaction import DIVIDERS, CompactionStep
from memory_plugin.context_management.flush import flush_hook
from memory_plugin.context_management.journaling import SEQ, JournalStep
from memory_plugin.context_management.masking import MaskingStep
from memory_plugin.context_management.naming import NAME
from memory_plugin.context_management.owners import claim_plan
from memory_plugin.context_management.prefix import POLICY, Prefix
from memory_plugin.context_management.turn import (
    RECENT_WINDOW,
    Turn,
    TurnSettings,
    thread_id_of,
    window,
)
from memory_plugin.context_management.window import (
    WINDOW_FROM,
    RollingSummaries,
    rolling_plan,
    trim_plan,
)
from memory_plugin.graphnode import State, plan_node
from memory_plugin.models.maintenance import MaintenanceModel
from memory_plugin.plans import Plan
from memory_plugin.scope.context import MemoryContext
from memory_plugin.scope.identity import Membership
from memory_plugin.scope.nouser import MEMORY_OFF, announce
from memory_plugin.settings import MemorySettings, SettingsCache
from memory_plugin.tokens import TokenCounter, counter_for

SUMMARIZE_NOW = "summarize_now"
JOURNAL_TOOLS = frozenset({"journal_tool_call_view", "journal_message_search"})


class ContextManager(MemoryService):
    """Protected prefixes, journal, tool-output masking, compaction and the pre-compaction
    flush, as plain LangGraph nodes.

    `model` is the graph's model: its profile gives the window, and it writes summaries and
    flush notes unless `summary_model` (the graph's maintenance model) is given; the
    `maintenance_model` setting names another. `sources` contribute protected blocks.
    `settings`, `membership` and `clock` are taken as by every memory kind
    (memory_plugin.base.MemoryService); the graph's nodes work on the graph's store.
    """

    name = NAME
    always = True

    @classmethod
    def build(cls, parts: Parts) -> ContextManager:
        """The manager of one graph: its model, and the blocks of the kinds built before it."""
        if parts.model is None:
            raise TypeError("context management needs the graph's model (Parts.model)")
        return cls(
            parts.model,
            summary_model=parts.maintenance,
            sources=parts.blocks.get("per_turn", ()),
            frozen_sources=parts.blocks.get("frozen", ()),
            system_prompt=parts.system_prompt,
            settings=parts.settings,
            membership=parts.membership,
        )

    def tools(self, membership: Membership | None) -> list[BaseTool]:
        """The journal tools (message search, tool call view) of the current thread."""
        from memory_plugin.context_management.journal_tools import journal_tools

        return journal_tools(self, membership)

    def __init__(
        self,
        model: BaseChatModel,
        *,
        sources: Sequence[BlockSource] = (),
        frozen_sources: Sequence[BlockSource] = (),
        summary_model: BaseChatModel | MaintenanceModel | None = None,
        system_prompt: str | None = None,
        settings: SettingsLike | None = None,
        defaults: MemorySettings | None = None,
        membership: Membership | None = None,
        clock: Callable[[], datetime] = utc_now,
        counter: TokenCounter | None = None,
        excluded_tools: Iterable[str] = JOURNAL_TOOLS,
    ) -> None:
        super().__init__(
            settings=settings,
            defaults=defaults,
            model=summary_model or model,
            membership=membership,
            clock=clock,
        )
        self.model = model
        self.counter = counter or counter_for(model)
        self.turns = TurnSettings(self.source)
        self.journaling = JournalStep(clock)
        self.masking = MaskingStep(
            model, self.counter, frozenset(excluded_tools), self.journaling.step
        )
        self.compaction = CompactionStep(
            model, self.maintenance, self.counter, clock, self.journaling.step
        )
        self.rolling = RollingSummaries()
        self.prefix = Prefix(
            system_prompt, sources, frozen_sources, self.turns, self.rolling, self.counter
        )
        node = functools.partial(plan_node, membership=membership)
        self.load_memory = node(self.load_memory_plan)
        self.journal = node(self.journal_plan)
        self.mask_tool_outputs = node(self._mask)
        self.summarize = node(self._summarize)
        self.prepare_context = node(self.prepare_context_plan)
        self.start_turn = node(self.start_turn_plan)
        self.recheck = node(self.recheck_plan)
        self.after_tools = node(self.after_tools_plan)
        self.finish_turn = node(self.finish_turn_plan)
        self.summarize_now = node(self._summarize_now)
        self.rolling_summary = node(self._rolling_summary)

    @property
    def settings(self) -> SettingsCache:
        """The settings source shared with the graph's other memory kinds."""
        return self.source

    @property
    def summary_model(self) -> BaseChatModel:
        """The model that writes summaries and flush notes when no `maintenance_model` setting
        names one."""
        return self.maintenance.default or self.model

    @summary_model.setter
    def summary_model(self, value: BaseChatModel) -> None:
        self.maintenance.default = value

    @property
    def system_prompt(self) -> str | None:
        """The app's system prompt, first in the protected prefix."""
        return self.prefix.system_prompt

    @system_prompt.setter
    def system_prompt(self, value: str | None) -> None:
        self.prefix.system_prompt = value

    @property
    def sources(self) -> list[BlockSource]:
        """The sources of per-turn and recent-notes blocks."""
        return self.prefix.sources

    @sources.setter
    def sources(self, value: Sequence[BlockSource]) -> None:
        self.prefix.sources = list(value)

    @property
    def frozen_sources(self) -> list[BlockSource]:
        """The sources of frozen blocks (snapshot on a thread's first turn)."""
        return self.prefix.frozen_sources

    @frozen_sources.setter
    def frozen_sources(self, value: Sequence[BlockSource]) -> None:
        self.prefix.frozen_sources = list(value)

    def window(self, settings: MemorySettings) -> int:
        """The model's input window, or the configured fallback."""
        return window(self.model, settings)

    def _journal_step(self, turn: Turn) -> Plan[None]:
        """Journal what is new; under the recent-window policy keep only the window."""
        yield from self.journaling.step(turn)
        if turn.settings.thread_policy == RECENT_WINDOW:
            yield from trim_plan(turn)

    def load_memory_plan(
        self, state: State, config: RunnableConfig, ctx: MemoryContext
    ) -> Plan[State]:
        """The prefix's blocks, whether memory is off for this run (said once, here), and, on
        the thread's first turn, whose the thread is (memory_plugin.context_management.owners)."""
        loaded = yield from self.prefix.load_plan(state, config, ctx)
        loaded["memory_context"][MEMORY_OFF] = announce(ctx, self.name)
        claimed = yield from claim_plan(state.get("memory_context") or {}, config, ctx)
        loaded["memory_context"].update(claimed)
        return loaded

    def journal_plan(self, state: State, config: RunnableConfig, ctx: MemoryContext) -> Plan[State]:
        """Journal what is new (under the recent-window policy, keep only the window)."""
        turn = yield from self.turns.turn_plan(state, config, ctx)
        yield from self._journal_step(turn)
        return turn.updates()

    def _mask(self, state: State, config: RunnableConfig, ctx: MemoryContext) -> Plan[State]:
        turn = yield from self.turns.turn_plan(state, config, ctx)
        yield from self.masking.step(turn)
        return turn.updates()

    def _summarize(self, state: State, config: RunnableConfig, ctx: MemoryContext) -> Plan[State]:
        turn = yield from self.turns.turn_plan(state, config, ctx)
        if turn.settings.thread_policy != RECENT_WINDOW:
            yield from self._compaction_step(turn, "auto")
        return turn.updates()

    def prepare_context_plan(
        self, state: State, config: RunnableConfig, ctx: MemoryContext
    ) -> Plan[State]:
        """mask_tool_outputs and summarize in one node, each journaling what it is about to
        take out of the thread first (nothing when a stored layer switches context management
        off); what is new is journaled at the end of the turn by finish_turn, so a turn writes
        the journal once. A thread's first turn journals first: a journal left by a deleted
        thread of the same id is moved aside before any tool can read it."""
        turn = yield from self.turns.turn_plan(state, config, ctx)
        if not turn.settings.context_management:
            return turn.updates()
        if turn.settings.thread_policy == RECENT_WINDOW or not turn.info.get(SEQ):
            yield from self._journal_step(turn)
        prefix_breaks = yield from self.masking.step(turn)
        if turn.settings.thread_policy != RECENT_WINDOW:
            yield from self._compaction_step(turn, "auto", prefix_breaks)
        return turn.updates()

    def _compaction_step(self, turn: Turn, kind: str, prefix_breaks: bool = False) -> Plan[None]:
        """Compact when due (`auto`; from further below the trigger on a call whose request
        changes anyway, `prefix_breaks`, as masking says) or asked (`manual`); a compaction
        takes the session's snapshot of memory again."""
        dividers = len(turn.info.get(DIVIDERS) or [])
        if kind == "manual":
            yield from self.compaction.on_request(turn)
        else:
            yield from self.compaction.step(turn, "auto", prefix_breaks)
        if len(turn.info.get(DIVIDERS) or []) != dividers:
            yield from self.prefix.resnapshot_plan(turn)

    def start_turn_plan(
        self, state: State, config: RunnableConfig, ctx: MemoryContext
    ) -> Plan[State]:
        """load_memory, then prepare_context, in one node."""
        loaded = yield from self.load_memory_plan(state, config, ctx)
        info = {**(state.get("memory_context") or {}), **loaded["memory_context"]}
        prepared = yield from self.prepare_context_plan(
            {**state, "memory_context": info}, config, ctx
        )
        context = {**loaded["memory_context"], **prepared.get("memory_context", {})}
        return {**loaded, **prepared, "memory_context": context}

    def recheck_plan(self, state: State, config: RunnableConfig, ctx: MemoryContext) -> Plan[State]:
        """Memory removed since the model's last call leaves its next input (a new snapshot)."""
        return (yield from self.prefix.recheck_plan(state, ctx))

    def after_tools_plan(
        self, state: State, config: RunnableConfig, ctx: MemoryContext
    ) -> Plan[State]:
        """recheck, then prepare_context, in one node (the step after a tool step)."""
        checked = yield from self.prefix.recheck_plan(state, ctx)
        info = {**(state.get("memory_context") or {}), **checked.get("memory_context", {})}
        prepared = yield from self.prepare_context_plan(
            {**state, **checked, "memory_context": info}, config, ctx
        )
        context = {**checked.get("memory_context", {}), **prepared.get("memory_context", {})}
        update = {**checked, **prepared}
        if context:
            update["memory_context"] = context
        return update

    def finish_turn_plan(
        self, state: State, config: RunnableConfig, ctx: MemoryContext
    ) -> Plan[State]:
        """journal (the final reply), then rolling_summary, in one node."""
        journaled = yield from self.journal_plan(state, config, ctx)
        info = {**(state.get("memory_context") or {}), **journaled.get("memory_context", {})}
        yield from self._rolling_summary({**state, "memory_context": info}, config, ctx)
        return journaled

    def _summarize_now(
        self, state: State, config: RunnableConfig, ctx: MemoryContext
    ) -> Plan[State]:
        turn = yield from self.turns.fresh_turn_plan(state, config, ctx)
        yield from self._compaction_step(turn, "manual")
        return {**turn.updates(), "memory_command": None}

    def _rolling_summary(
        self, state: State, config: RunnableConfig, ctx: MemoryContext
    ) -> Plan[State]:
        """Start a rolling-summary pass in the background (recent-window policy only)."""
        info = state.get("memory_context") or {}
        if info.get(POLICY) != RECENT_WINDOW:
            return {}
        settings = yield from self.turns.of_state_plan(state, ctx)
        if not settings.context_management:
            return {}
        store, now = get_store(), self.clock()
        summary_model = self.maintenance(settings) or self.model
        plan = rolling_plan(
            thread_id_of(config),
            int(info.get(WINDOW_FROM, 0)),
            summary_model,
            settings,
            self.counter,
            now,
            flush_hook(summary_model, store, ctx, settings, now),
        )
        self.rolling.start(thread_id_of(config), store, plan)
        return {}

    def wait_for_background(self, timeout: float = 30.0) -> None:
        """Block until background rolling-summary passes started by sync runs finish."""
        self.rolling.wait(timeout)

    async def await_background(self) -> None:
        """Await background rolling-summary passes started by async runs."""
        await self.rolling.await_all()

    def model_input(self, state: State) -> list[BaseMessage]:
        """The model's messages: system prompt, frozen, per-turn and recent-notes blocks, the
        running summary, then the thread's messages. Assembled now, never stored. Under the
        recent-window policy the rolling summary is an extra system message instead."""
        return self.prefix.model_input(state)


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
