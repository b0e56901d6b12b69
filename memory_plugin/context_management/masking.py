"""Tool-output masking: past the trigger share of the window, older tool outputs become a
short placeholder saying how to get them back; the most recent results stay.

Masked messages replace the originals in the thread state (so masking is done once and
checkpoints shrink); the originals stay in the journal. A pass masks every older output at
once, and only when that clears at least `masking_batch_ratio` of the window and the cached
reads it saves pay for its cache break (`pays`, at `prompt_cache_read_ratio`), or
`masking_min_clear_ratio` close to the compaction trigger or on a call whose request changes
anyway (a new snapshot of memory after a removal, or an update dropped for one: the
provider's prompt cache breaks there regardless, so such a call also masks from that share
below the trigger, taking the pass the next turns would bring onto the break there is), so
the prompt prefix changes rarely: below that, nothing changes (compaction at its own trigger
still bounds the input). A pass due within `masking_min_clear_ratio` of the compaction
trigger is left to a compaction on the same call (due.py, `masking_defers_to_compaction`).

`MaskingStep` keeps the running token tally (`tokens`, `counted_*`, see tally.py), where the
next scan starts (`mask_scan_from`), how many outputs were masked (`masked`), the tokens the
passes freed since the last compaction (`masked_tokens`: compaction counts the thread with
its masked outputs at their full size, so masking never postpones it) and the memory
snapshot and updates the previous call was sent (`mask_snapshot`). `MaskingStep.step` says
whether the call's request changes anyway, so compaction can move onto that call too.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import BaseMessage, ToolMessage

from memory_plugin.context_management.due import (
    COUNTED_LAST,
    MASK_DEFERRED,
    MASKED_TOKENS,
    leave_to_compaction,
)
from memory_plugin.context_management.naming import NAME
from memory_plugin.context_management.pairs import call_positions
from memory_plugin.context_management.tally import tally
from memory_plugin.context_management.turn import RECENT_WINDOW, SUMMARY, Turn, window
from memory_plugin.context_management.updates import SHOWN, UPDATES
from memory_plugin.events import emit
from memory_plugin.plans import Plan
from memory_plugin.settings import MemorySettings
from memory_plugin.tokens import TokenCounter, reports_window

MASK_KEY = "memory_plugin_masked"
SCAN_FROM, MASKED, SNAPSHOT = "mask_scan_from", "masked", "mask_snapshot"
FROZEN = "frozen_blocks"  # prefix.FROZEN (prefix imports this module through compaction)
PLACEHOLDER = (
    "[{name} output masked to save context ({tokens:,} tokens); "
    'journal_tool_call_view(tool_call_id="{call_id}") reads it.]'
)


@dataclass(frozen=True)
class Masking:
    """The outcome of one masking pass."""

    replacements: list[ToolMessage]
    freed_tokens: int
    scan_from: int


def is_masked(message: BaseMessage) -> bool:
    """Whether a tool message already carries a placeholder."""
    return isinstance(message, ToolMessage) and bool(message.response_metadata.get(MASK_KEY))


def _recent_results(messages: Sequence[BaseMessage], keep: int) -> int:
    """Index of the oldest of the `keep` most recent tool results (len when fewer)."""
    seen = 0
    for i in range(len(messages) - 1, -1, -1):
        if isinstance(messages[i], ToolMessage):
            seen += 1
            if seen == keep:
                return i
    return 0 if seen else len(messages)


class _Names:
    """Tool names by tool_call_id, read from the AI messages only when a result lacks one."""

    def __init__(self, messages: Sequence[BaseMessage]) -> None:
        self.messages = messages
        self.calls: dict[str, int] | None = None

    def of(self, message: ToolMessage) -> str:
        if message.name:
            return message.name
        if self.calls is None:
            self.calls = call_positions(self.messages)
        index = self.calls.get(message.tool_call_id)
        if index is not None:
            for call in self.messages[index].tool_calls:  # type: ignore[attr-defined]
                if call["id"] == message.tool_call_id:
                    return str(call["name"])
        return "tool"


def mask(
    messages: Sequence[BaseMessage],
    tokens: int,
    window: int,
    settings: MemorySettings,
    counter: TokenCounter,
    *,
    scan_from: int = 0,
    excluded: frozenset[str] = frozenset(),
    prefix_breaks: bool = False,
) -> Masking:
    """Mask every older tool output (all but the `masking_keep_recent` newest; none that its
    placeholder would not shrink) when the input is past the trigger and that clears at least
    `masking_batch_ratio` of the window and `pays` for its cache break
    (`masking_min_clear_ratio`, paying or not, once the input nears the compaction trigger);
    else change nothing. One large pass rewrites the transcript once,
    where small ones would break the prompt cache on call after call. When `prefix_breaks`
    (the call's request changes anyway), a pass clearing `masking_min_clear_ratio` runs from
    that share below the trigger: one the next turns would bring costs no cache here."""
    early = settings.masking_min_clear_ratio if prefix_breaks else 0.0
    if not settings.masking or tokens <= (settings.masking_trigger_ratio - early) * window:
        return Masking([], 0, scan_from)
    small = prefix_breaks or _urgent(tokens, window, settings)
    ratio = settings.masking_min_clear_ratio if small else settings.masking_batch_ratio
    protected_from = _recent_results(messages, settings.masking_keep_recent)
    skip = excluded | set(settings.masking_excluded_tools)
    names = _Names(messages)
    replacements: list[ToolMessage] = []
    freed = 0
    index = scan_from
    while index < protected_from:
        message = messages[index]
        index += 1
        if not isinstance(message, ToolMessage) or is_masked(message):
            continue
        name = names.of(message)
        if name in skip:
            continue
        before = counter.count_message(message)
        placeholder = ToolMessage(
            PLACEHOLDER.format(name=name, tokens=before, call_id=message.tool_call_id),
            id=message.id,
            tool_call_id=message.tool_call_id,
            name=name,
            status=message.status,
            response_metadata={**message.response_metadata, MASK_KEY: True},
        )
        saved = before - counter.count_message(placeholder)
        if saved <= 0:
            continue
        freed += saved
        replacements.append(placeholder)
    if freed < ratio * window or not (small or pays(freed, tokens, settings)):
        return Masking([], 0, scan_from)
    return Masking(replacements, freed, index)


def pays(freed: int, tokens: int, settings: MemorySettings) -> bool:
    """Whether a pass freeing `freed` of the transcript's `tokens` pays for its cache break:
    the rest of the request, re-billed once at the full price instead of the cached one,
    costs no more than the cached reads the pass saves over `masking_payback_calls` calls.
    Where cached input is cheap, a pass waits until it clears more."""
    cached = settings.prompt_cache_read_ratio
    saved = cached * freed * settings.masking_payback_calls
    return saved >= (1.0 - cached) * (tokens - freed)


def defers(settings: MemorySettings) -> bool:
    """Whether a pass near the compaction trigger may be left to compaction: compaction
    follows masking on the call (not under the recent-window policy)."""
    return settings.masking_defers_to_compaction and settings.thread_policy != RECENT_WINDOW


def _digest(value: Any) -> str:
    return hashlib.sha256(json.dumps(value, sort_keys=True, default=str).encode()).hexdigest()[:16]


def _urgent(tokens: int, window: int, settings: MemorySettings) -> bool:
    """Whether the input is within `masking_min_clear_ratio` of the compaction trigger: a
    smaller pass then still runs, so the input the model is sent stays clear of the window
    until compaction (which counts masked outputs at full size) comes."""
    margin = settings.summarization_trigger_ratio - settings.masking_min_clear_ratio
    return tokens >= margin * window


def snapshot_seen(info: dict[str, Any]) -> list[str]:
    """Digests of the memory snapshot the system message is built from, of the running
    summary (a compaction takes its own snapshot on the call that compacts), then of each
    update told since the snapshot."""
    told = [_digest(update.get("text")) for update in info.get(UPDATES) or []]
    return [_digest([info.get(FROZEN), info.get(SHOWN)]), _digest(info.get(SUMMARY) or ""), *told]


def resnapshotted(info: dict[str, Any]) -> bool:
    """Whether memory changed what the previous call was sent, without a compaction: a new
    snapshot (the system message differs) or an update told before dropped (a removal of
    memory only it told); this call's prompt cache breaks either way."""
    seen: list[str] | None = info.get(SNAPSHOT)
    now = snapshot_seen(info)
    if seen is None or seen[1] != now[1]:
        return False
    return seen[0] != now[0] or now[2 : len(seen)] != seen[2:]


class MaskingStep:
    """Masks older tool outputs past the trigger, once they are safe in the journal."""

    def __init__(
        self,
        model: BaseChatModel,
        counter: TokenCounter,
        excluded: frozenset[str],
        journal: Callable[[Turn], Plan[None]],
    ) -> None:
        self.model = model
        self.counter = counter
        self.excluded = excluded
        self.journal = journal

    def step(self, turn: Turn) -> Plan[bool]:
        """Count the new messages; past the trigger, mask (journaling the originals first), or
        leave the pass to a compaction on this call (due.py). Returns whether this call's
        request changes anyway (`resnapshotted`, or the pass left to compaction)."""
        counts, rewritten = tally(turn.messages, turn.info, self.counter)
        turn.record(counts)
        prefix_breaks = resnapshotted(turn.info)
        if turn.info.get(SNAPSHOT) != (seen := snapshot_seen(turn.info)):
            turn.record({SNAPSHOT: seen})
        if not reports_window(self.model):
            return prefix_breaks
        size = window(self.model, turn.settings)
        result = mask(
            turn.messages,
            counts["tokens"],
            size,
            turn.settings,
            self.counter,
            scan_from=0 if rewritten else int(turn.info.get(SCAN_FROM, 0)),
            excluded=self.excluded,
            prefix_breaks=prefix_breaks,
        )
        if not result.replacements:
            return prefix_breaks
        if defers(turn.settings) and leave_to_compaction(
            turn.messages, turn.info, turn.settings, size, self.counter
        ):
            turn.record({MASK_DEFERRED: counts[COUNTED_LAST]})
            return True
        yield from self.journal(turn)
        if not turn.journaled:
            return prefix_breaks
        turn.apply(result.replacements)
        emit(NAME, "masked", None, outputs=len(result.replacements), freed=result.freed_tokens)
        turn.record(
            {
                "tokens": counts["tokens"] - result.freed_tokens,
                SCAN_FROM: result.scan_from,
                MASKED: int(turn.info.get(MASKED, 0)) + len(result.replacements),
                MASKED_TOKENS: int(turn.info.get(MASKED_TOKENS, 0)) + result.freed_tokens,
            }
        )
        return prefix_breaks
