"""One node call's view of a thread, shared by the context-management steps: its messages,
the `memory_context` bookkeeping, the settings of the turn, and the updates made so far.

Each step owns its own `memory_context` keys (the journal cursor, the token tally, the
masking scan, the dividers, the window start, the prefix's blocks); this module names the
two keys several steps share: `settings`, the values load_memory resolved for the whole turn,
and `summary`, the summary the model is shown (compaction's running summary, or the rolling
summary under the recent-window policy).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import BaseMessage
from langchain_core.runnables import RunnableConfig
from langgraph.config import get_store

from memory_plugin.context_management.state import add_messages_batch
from memory_plugin.errors import ScopeError
from memory_plugin.plans import Plan
from memory_plugin.scope.context import MemoryContext
from memory_plugin.settings import MemorySettings, SettingsCache
from memory_plugin.tokens import context_window

State = dict[str, Any]
RECENT_WINDOW = "recent_window"
SETTINGS, SUMMARY = "settings", "summary"


def thread_id_of(config: RunnableConfig, needs: str = "thread memory") -> str:
    """The run's thread id; what `needs` it cannot work without one (ScopeError)."""
    thread_id = (config.get("configurable") or {}).get("thread_id")
    if not thread_id:
        raise ScopeError(
            f"{needs} needs a thread_id: run the graph with one in config['configurable']"
        )
    return str(thread_id)


def window(model: BaseChatModel, settings: MemorySettings) -> int:
    """The model's input window, or the configured fallback."""
    return context_window(model, settings.fallback_context_window)


@dataclass
class Turn:
    """One node call's view of the thread, and the updates its steps have made so far.

    `journaled` turns False when this call could not write the journal: steps that would
    take messages out of the thread state then leave them, so nothing is lost.
    """

    messages: list[BaseMessage]
    info: State
    settings: MemorySettings
    thread_id: str
    ctx: MemoryContext
    config: RunnableConfig
    changes: list[BaseMessage] = field(default_factory=list)
    context: State = field(default_factory=dict)
    journaled: bool = True

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


class TurnSettings:
    """The settings a turn runs with: resolved by load_memory from the shared settings source
    and kept in memory_context, so the turn's later nodes reuse them."""

    def __init__(self, source: SettingsCache) -> None:
        self.source = source
        self._last: tuple[State, MemorySettings] | None = None

    def resolve_plan(self, ctx: MemoryContext) -> Plan[MemorySettings]:
        """The effective settings for this run's context, read now."""
        effective = yield from self.source.for_store(get_store()).effective_plan(ctx)
        return effective.values

    def of_state_plan(self, state: State, ctx: MemoryContext) -> Plan[MemorySettings]:
        """The settings load_memory resolved for this turn (resolving them if it did not)."""
        values = (state.get("memory_context") or {}).get(SETTINGS)
        if values is None:
            return (yield from self.resolve_plan(ctx))
        last = self._last
        if last is not None and last[0] is values:
            return last[1]
        settings = MemorySettings.model_construct(**values)
        self._last = (values, settings)
        return settings

    def turn_plan(self, state: State, config: RunnableConfig, ctx: MemoryContext) -> Plan[Turn]:
        """A Turn over the node's state."""
        settings = yield from self.of_state_plan(state, ctx)
        info = dict(state.get("memory_context") or {})
        return Turn(state["messages"], info, settings, thread_id_of(config), ctx, config)

    def fresh_turn_plan(
        self, state: State, config: RunnableConfig, ctx: MemoryContext
    ) -> Plan[Turn]:
        """A Turn with settings read now (for a request that skips load_memory)."""
        settings = yield from self.resolve_plan(ctx)
        values = settings.model_dump()
        info = {**(state.get("memory_context") or {}), SETTINGS: values}
        turn = Turn(list(state["messages"]), info, settings, thread_id_of(config), ctx, config)
        turn.record({SETTINGS: values})
        return turn
