"""The protected prefix: what the model sees in front of the thread's messages.

`load_plan` (the load_memory node) resolves the turn's settings and loads every source's
blocks, each source failing alone; `model_input` assembles, at model-call time, the system
prompt, the frozen blocks (a snapshot taken on the thread's first turn), the per-turn and
recent-notes blocks, then the running summary. Its bookkeeping: `memory_blocks` in the state,
and `policy`, `frozen_blocks` and `prefix_tokens` (the tokens of the system message without
the summary, which compaction adds to the transcript's to decide whether it is due) in
memory_context.

The frozen blocks are a snapshot per session: a session starts on the thread's first turn,
after an idle gap of `session_idle_minutes` since the last turn began, and after a compaction
(`session_turn_at` and `session_dividers` in memory_context), so writes during a session
never change its prompt.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from datetime import UTC, datetime, timedelta
from typing import Any

from langchain_core.messages import BaseMessage, SystemMessage
from langchain_core.runnables import RunnableConfig

from memory_plugin.blocks import (
    SUMMARY_TAG,
    BlockSource,
    PromptBlock,
    assemble,
    from_dicts,
    to_dicts,
)
from memory_plugin.context_management.compaction import DIVIDERS, PREFIX_TOKENS
from memory_plugin.context_management.journaling import SEQ
from memory_plugin.context_management.turn import (
    RECENT_WINDOW,
    SETTINGS,
    SUMMARY,
    State,
    Turn,
    TurnSettings,
    thread_id_of,
)
from memory_plugin.context_management.updates import SHOWN, UPDATES, anchor, news, place
from memory_plugin.context_management.window import RollingSummaries
from memory_plugin.events import emit
from memory_plugin.plans import Plan, gather
from memory_plugin.scope.context import MemoryContext
from memory_plugin.settings import MemorySettings
from memory_plugin.tokens import TokenCounter

logger = logging.getLogger(__name__)
POLICY, FROZEN = "policy", "frozen_blocks"
TURN_AT, SESSION_DIVIDERS = "session_turn_at", "session_dividers"


def new_session(info: State, settings: MemorySettings, now: datetime) -> bool:
    """Whether this turn starts a session: no snapshot yet, a compaction since it was taken,
    or an idle gap since the last turn began."""
    if FROZEN not in info or info.get(SESSION_DIVIDERS, 0) != len(info.get(DIVIDERS) or []):
        return True
    last = info.get(TURN_AT)
    if not last:
        return False
    return now - datetime.fromisoformat(last) >= timedelta(minutes=settings.session_idle_minutes)


class Prefix:
    """Loads the blocks of a turn and assembles the model's input in front of the thread."""

    def __init__(
        self,
        system_prompt: str | None,
        sources: Sequence[BlockSource],
        frozen_sources: Sequence[BlockSource],
        settings: TurnSettings,
        rolling: RollingSummaries,
        counter: TokenCounter,
        clock: Callable[[], datetime] = lambda: datetime.now(UTC),
    ) -> None:
        self.system_prompt = system_prompt
        self.sources = list(sources)
        self.frozen_sources = list(frozen_sources)
        self.settings = settings
        self.rolling = rolling
        self.counter = counter
        self.clock = clock
        self._cached: tuple[tuple[Any, ...], list[BaseMessage]] | None = None
        self._dumped: tuple[MemorySettings, dict[str, Any]] | None = None

    def blocks_plan(
        self, sources: Sequence[BlockSource], ctx: MemoryContext, settings: MemorySettings
    ) -> Plan[tuple[list[PromptBlock], bool]]:
        """Every source's blocks, their store reads batched together, and whether all loaded;
        a failing source is logged and left out, the others still load."""

        def guarded(source: BlockSource) -> Plan[list[PromptBlock] | None]:
            try:
                return (yield from source.blocks_plan(ctx, settings))
            except Exception:
                logger.warning("memory blocks of %s could not be loaded", source, exc_info=True)
                return None

        found = yield from gather([guarded(source) for source in sources])
        blocks = [block for source_blocks in found if source_blocks for block in source_blocks]
        return blocks, all(source_blocks is not None for source_blocks in found)

    def _settings_and_blocks_plan(
        self, info: State, ctx: MemoryContext
    ) -> Plan[tuple[MemorySettings, list[PromptBlock]]]:
        """The turn's settings and the sources' blocks, read in one batch: the blocks are
        loaded with the previous turn's settings alongside the settings read, and again only
        when the settings changed since."""
        previous = info.get(SETTINGS)
        if previous is None:
            settings = yield from self.settings.resolve_plan(ctx)
            blocks, _ = yield from self.blocks_plan(self.sources, ctx, settings)
            return settings, blocks
        guess = MemorySettings.model_construct(**previous)
        settings, (blocks, _) = yield from gather(
            [self.settings.resolve_plan(ctx), self.blocks_plan(self.sources, ctx, guess)]
        )
        if self._dump(settings) != previous:
            blocks, _ = yield from self.blocks_plan(self.sources, ctx, settings)
        return settings, blocks

    def _dump(self, settings: MemorySettings) -> dict[str, Any]:
        """The settings as plain values as a checkpoint gives them back (lists, not tuples),
        kept while the resolved settings are the same."""
        dumped = self._dumped
        if dumped is None or dumped[0] is not settings:
            values = {
                name: list(value) if isinstance(value, tuple) else value
                for name, value in settings.model_dump().items()
            }
            dumped = self._dumped = (settings, values)
        return dumped[1]

    def load_plan(self, state: State, config: RunnableConfig, ctx: MemoryContext) -> Plan[State]:
        """The load_memory update: settings, blocks, and the frozen snapshot when a session
        starts (taken again next turn if a frozen source failed)."""
        info = state.get("memory_context") or {}
        settings, blocks = yield from self._settings_and_blocks_plan(info, ctx)
        emit("context", "loaded", None, blocks=[block.name for block in blocks])
        context: State = {POLICY: settings.thread_policy, SETTINGS: self._dump(settings)}
        if settings.thread_policy == RECENT_WINDOW and info.get(SEQ):
            context.update((yield from self.rolling.load_plan(thread_id_of(config))))
        now = self.clock()
        context[TURN_AT] = now.isoformat()
        if new_session(info, settings, now):
            frozen, complete = yield from self.blocks_plan(self.frozen_sources, ctx, settings)
            if complete:
                context[FROZEN] = to_dicts(frozen)
                context[SESSION_DIVIDERS] = len(info.get(DIVIDERS) or [])
                context[SHOWN] = to_dicts(blocks)
                context[UPDATES] = []
            else:
                context[TURN_AT] = info.get(TURN_AT)
        if SHOWN not in context:
            context.update(self._told(info, blocks, state.get("messages") or []))
        context[PREFIX_TOKENS] = self._tokens({**info, **context})
        return {
            "memory_blocks": to_dicts(blocks),
            "memory_command": None,
            "memory_context": context,
        }

    def _tokens(self, info: State) -> int:
        """The tokens of the system message without the summary, and of the updates told."""
        blocks = from_dicts(info.get(FROZEN) or []) + from_dicts(info.get(SHOWN) or [])
        system = assemble(self.system_prompt, blocks, "", [])
        tokens = self.counter.count_text(str(system[0].content)) if system else 0
        told = info.get(UPDATES) or []
        return tokens + sum(self.counter.count_text(update["text"]) for update in told)

    def resnapshot_plan(self, turn: Turn) -> Plan[None]:
        """After a compaction, take the session's snapshot again at once (a compaction starts
        a session), so the system message changes on that call only, not again next turn."""
        ctx, settings = turn.ctx, turn.settings
        (blocks, _), (frozen, complete) = yield from gather(
            [
                self.blocks_plan(self.sources, ctx, settings),
                self.blocks_plan(self.frozen_sources, ctx, settings),
            ]
        )
        if not complete:
            return
        turn.record(
            {
                FROZEN: to_dicts(frozen),
                SHOWN: to_dicts(blocks),
                UPDATES: [],
                SESSION_DIVIDERS: len(turn.info.get(DIVIDERS) or []),
            }
        )
        turn.record({PREFIX_TOKENS: self._tokens(turn.info)})

    @staticmethod
    def _told(info: State, blocks: list[PromptBlock], messages: list[BaseMessage]) -> State:
        """The session's updates with what `blocks` hold beyond its snapshot, placed before
        the turn's input (a thread from before snapshots shows `blocks` from now on)."""
        if SHOWN not in info:
            return {SHOWN: to_dicts(blocks), UPDATES: []}
        told = list(info.get(UPDATES) or [])
        entry = news(from_dicts(info[SHOWN] or []), told, blocks)
        if entry is None or not messages:
            return {}
        before = anchor(messages)
        entry.update({"before": before} if before else {"after": messages[-1].id})
        return {UPDATES: [*told, entry]}

    def model_input(self, state: State) -> list[BaseMessage]:
        """The model's messages: system prompt, frozen, per-turn and recent-notes blocks, the
        running summary, then the thread's messages. Under the recent-window policy the
        rolling summary is an extra system message instead."""
        info = state.get("memory_context") or {}
        key = (
            self.system_prompt,
            info.get(FROZEN, []),
            info.get(SHOWN, state.get("memory_blocks") or []),
            str(info.get(SUMMARY, "")),
            info.get(POLICY),
        )
        cached = self._cached
        if cached is None or cached[0] != key:
            system_prompt, frozen, per_turn, summary, policy = key
            blocks = from_dicts(frozen) + from_dicts(per_turn or [])
            if policy != RECENT_WINDOW:
                prefix = assemble(system_prompt, blocks, summary, [])
            else:
                extra = f"<{SUMMARY_TAG}>\n{summary}\n</{SUMMARY_TAG}>"
                prefix = assemble(system_prompt, blocks, "", [])
                prefix += [SystemMessage(extra)] if summary else []
            cached = self._cached = (key, prefix)
        return [*cached[1], *place(state["messages"], info.get(UPDATES) or [])]
