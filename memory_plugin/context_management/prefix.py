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
never change its prompt. A removal does: every source, frozen ones included, is read at each
turn's start and again before each model call that follows a tool step (`recheck_plan`), and
when memory the session's snapshot showed is gone (updates.retracted) the session starts again
there; memory only its updates told drops those updates instead (updates.standing), the
system message kept.
Both reads are skipped while the namespaces the last full read touched are unchanged
(memory_plugin.context_management.trusted): one version check instead.
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
from memory_plugin.context_management.compaction import DIVIDERS
from memory_plugin.context_management.due import PREFIX_TOKENS
from memory_plugin.context_management.journaling import SEQ
from memory_plugin.context_management.naming import NAME
from memory_plugin.context_management.trusted import (
    MEMORY_READ,
    Recorder,
    fingerprint,
    recalled,
    record,
    refreshed,
    unchanged_plan,
)
from memory_plugin.context_management.turn import (
    RECENT_WINDOW,
    SETTINGS,
    SUMMARY,
    State,
    Turn,
    TurnSettings,
    thread_id_of,
)
from memory_plugin.context_management.updates import (
    SHOWN,
    UPDATES,
    anchor,
    news,
    place,
    retracted,
    standing,
)
from memory_plugin.context_management.window import RollingSummaries
from memory_plugin.events import emit, quiet
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


Loaded = tuple[list[PromptBlock], bool]
"""Blocks, and whether every source gave its own."""


def current(shown: list[dict[str, Any]] | None, loaded: Loaded) -> list[PromptBlock]:
    """The blocks as loaded; after a partial load, a block shown before that no source gave
    is kept as shown (its source may be the one that failed)."""
    blocks, complete = loaded
    if complete:
        return blocks
    names = {block.name for block in blocks}
    return blocks + [block for block in from_dicts(shown or []) if block.name not in names]


def snapshot_gone(info: State, shown: list[PromptBlock], frozen: list[PromptBlock]) -> bool:
    """Whether memory in this session's snapshot (its system message, frozen blocks
    included) was removed or replaced since."""
    if SHOWN not in info:
        return False
    return retracted(from_dicts(info[SHOWN] or []), [], shown) or retracted(
        from_dicts(info.get(FROZEN) or []), [], frozen
    )


def still_told(info: State, shown: list[PromptBlock]) -> list[dict[str, Any]]:
    """The session's updates before the first that told memory now gone (all when none did):
    the request up to that update's anchor stays as it was sent."""
    told = list(info.get(UPDATES) or [])
    if SHOWN not in info:
        return told
    return told[: standing(from_dicts(info[SHOWN] or []), told, shown)]


def snapshot(info: State, shown: list[PromptBlock], frozen: list[PromptBlock]) -> State:
    """The memory_context keys of a new session's snapshot, taken of these blocks."""
    return {
        FROZEN: to_dicts(frozen),
        SHOWN: to_dicts(shown),
        UPDATES: [],
        SESSION_DIVIDERS: len(info.get(DIVIDERS) or []),
    }


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

    def sources_plan(
        self, ctx: MemoryContext, settings: MemorySettings
    ) -> Plan[tuple[Loaded, Loaded]]:
        """The per-turn and the frozen sources' blocks, read in one batch."""
        loaded, frozen = yield from gather(
            [
                self.blocks_plan(self.sources, ctx, settings),
                self.blocks_plan(self.frozen_sources, ctx, settings),
            ]
        )
        return loaded, frozen

    def _settings_and_blocks_plan(
        self, info: State, ctx: MemoryContext
    ) -> Plan[tuple[MemorySettings, Loaded, Loaded]]:
        """The turn's settings and every source's blocks, read in one batch: the blocks are
        loaded with the previous turn's settings alongside the settings read, and again only
        when the settings changed since."""
        previous = info.get(SETTINGS)
        if previous is None:
            settings = yield from self.settings.resolve_plan(ctx)
            loaded, frozen = yield from self.sources_plan(ctx, settings)
            return settings, loaded, frozen
        guess = MemorySettings.model_construct(**previous)
        settings, (loaded, frozen) = yield from gather(
            [self.settings.resolve_plan(ctx), self.sources_plan(ctx, guess)]
        )
        if self._dump(settings) != previous:
            loaded, frozen = yield from self.sources_plan(ctx, settings)
        return settings, loaded, frozen

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

    def _key(self) -> str:
        sources = [*self.sources, *self.frozen_sources]
        return fingerprint(sources, self.settings.source.base, self.clock())

    def _read_plan(
        self, info: State, ctx: MemoryContext
    ) -> Plan[tuple[MemorySettings, State | None, Loaded, Loaded]]:
        """The turn's settings and blocks: those of the last full read while its namespaces
        are unchanged, else read now (with the record to keep when the read was complete)."""
        key = self._key()
        same, versions, before = yield from unchanged_plan(info, key)
        if same and SETTINGS in info:
            blocks, kept_frozen = recalled(info)
            settings = MemorySettings.model_construct(**info[SETTINGS])
            self._dumped = (settings, info[SETTINGS])
            return settings, None, (blocks, True), (kept_frozen, True)
        recorder = Recorder()
        settings, loaded, frozen = yield from recorder.run(
            self._settings_and_blocks_plan(info, ctx)
        )
        reads = recorder.result()
        kept = record(key, reads, versions if reads == before else None, loaded[0], frozen[0])
        return settings, kept if loaded[1] and frozen[1] else None, loaded, frozen

    def load_plan(self, state: State, config: RunnableConfig, ctx: MemoryContext) -> Plan[State]:
        """The load_memory update: settings, blocks, and a new snapshot when a session starts
        or memory it showed is gone (a session that starts while a frozen source fails is
        started again next turn); the blocks and the command only when they change (each
        channel written is a row of the step's checkpoint writes)."""
        info = state.get("memory_context") or {}
        settings, read, loaded, frozen_loaded = yield from self._read_plan(info, ctx)
        blocks = loaded[0]
        emit(NAME, "loaded", None, blocks=[block.name for block in blocks])
        context: State = {POLICY: settings.thread_policy, SETTINGS: self._dump(settings)}
        if read is not None or (MEMORY_READ in info and not loaded[1]):
            context[MEMORY_READ] = read
        if settings.thread_policy == RECENT_WINDOW and info.get(SEQ):
            context.update((yield from self.rolling.load_plan(thread_id_of(config))))
        now = self.clock()
        context[TURN_AT] = now.isoformat()
        starts = new_session(info, settings, now)
        if starts and not frozen_loaded[1]:
            context[TURN_AT], starts = info.get(TURN_AT), False
        shown = current(info.get(SHOWN), loaded)
        frozen = current(info.get(FROZEN), frozen_loaded)
        if starts or snapshot_gone(info, shown, frozen):
            context.update(snapshot(info, shown, frozen))
        else:
            told = still_told(info, shown)
            context.update(self._told(info, told, blocks, state.get("messages") or []))
        context[PREFIX_TOKENS] = self._tokens({**info, **context})
        update: State = {"memory_context": context}
        shown_now = to_dicts(blocks, entries=False)
        if state.get("memory_blocks") != shown_now:
            update["memory_blocks"] = shown_now
        if state.get("memory_command") is not None:
            update["memory_command"] = None
        return update

    def recheck_plan(self, state: State, ctx: MemoryContext) -> Plan[State]:
        """Before a model call that follows a tool step: every source read again, and when
        memory the session has shown is gone since (a tool, another thread or the console
        removed it) a new snapshot, or only the updates that told it dropped when its
        snapshot did not show it; else nothing (what is new waits for the next turn). A
        complete re-read is what the next check compares with."""
        info = state.get("memory_context") or {}
        if SHOWN not in info:
            return {}
        same, now, _ = yield from unchanged_plan(info, self._key(), again=True)
        if same:
            return {}
        settings = yield from self.settings.of_state_plan(state, ctx)
        recorder = Recorder()
        with quiet():
            loaded, frozen_loaded = yield from recorder.run(self.sources_plan(ctx, settings))
        shown = current(info.get(SHOWN), loaded)
        frozen = current(info.get(FROZEN), frozen_loaded)
        kept = None
        if loaded[1] and frozen_loaded[1]:
            kept = refreshed(info, now, recorder.result(), loaded[0], frozen_loaded[0])
        context: State = {MEMORY_READ: kept} if kept else {}
        if snapshot_gone(info, shown, frozen):
            context.update(snapshot(info, shown, frozen))
        elif len(told := still_told(info, shown)) < len(info.get(UPDATES) or []):
            context[UPDATES] = told
        else:
            return {"memory_context": context} if context else {}
        context[PREFIX_TOKENS] = self._tokens({**info, **context})
        return {"memory_blocks": to_dicts(loaded[0], entries=False), "memory_context": context}

    def _tokens(self, info: State) -> int:
        """The tokens of the system message without the summary, and of the updates told."""
        blocks = from_dicts(info.get(FROZEN) or []) + from_dicts(info.get(SHOWN) or [])
        system = assemble(self.system_prompt, blocks, "", [])
        tokens = self.counter.count_text(str(system[0].content)) if system else 0
        told = info.get(UPDATES) or []
        return tokens + sum(self.counter.count_text(update["text"]) for update in told)

    def resnapshot_plan(self, turn: Turn) -> Plan[None]:
        """After a compaction, take the session's snapshot again at once (a compaction starts
        a session), so the system message changes on that call only, not again next turn
        (of the last full read's blocks while its namespaces are unchanged)."""
        same, _, _ = yield from unchanged_plan(turn.info, self._key())
        if same:
            blocks, frozen_blocks = recalled(turn.info)
            loaded, frozen = (blocks, True), (frozen_blocks, True)
        else:
            loaded, frozen = yield from self.sources_plan(turn.ctx, turn.settings)
        if not frozen[1]:
            return
        shown = current(turn.info.get(SHOWN), loaded)
        turn.record(snapshot(turn.info, shown, frozen[0]))
        turn.record({PREFIX_TOKENS: self._tokens(turn.info)})

    @staticmethod
    def _told(
        info: State,
        told: list[dict[str, Any]],
        blocks: list[PromptBlock],
        messages: list[BaseMessage],
    ) -> State:
        """The updates still `told` with what `blocks` hold beyond them and the snapshot,
        placed before the turn's input (a thread from before snapshots shows `blocks` from now
        on)."""
        if SHOWN not in info:
            return {SHOWN: to_dicts(blocks), UPDATES: []}
        entry = news(from_dicts(info[SHOWN] or []), told, blocks)
        if entry is None or not messages:
            return {UPDATES: told} if len(told) < len(info.get(UPDATES) or []) else {}
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
