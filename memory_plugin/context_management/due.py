"""When compaction is due, and whether a masking pass was left to the compaction on the same
call: masking and compaction both ask, and masking runs first.

A masking pass rewrites the transcript from its first masked output, so the provider's prompt
cache breaks there; a compaction a few calls later breaks it again. When a pass would run
while the thread (masked outputs at full size) is already within `masking_min_clear_ratio`
of the compaction trigger, but not past it, masking leaves the call to compaction instead:
it records the call (`MASK_DEFERRED`, the last message counted), and compaction on that call
runs from that share below its trigger. The call breaks the cache once, where the compaction
leaves a small request, instead of twice. Past the trigger both run as before; a compaction
that failed this turn leaves masking to do its pass.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from langchain_core.messages import BaseMessage, HumanMessage

from memory_plugin.context_management.turn import SUMMARY
from memory_plugin.settings import MemorySettings
from memory_plugin.tokens import TokenCounter

PREFIX_TOKENS = "prefix_tokens"
MASKED_TOKENS = "masked_tokens"
MASK_DEFERRED = "mask_deferred_at"
COUNTED_LAST = "counted_last_id"
FAILED_IN = "compaction_failed_in"


def input_tokens(info: dict[str, Any], counter: TokenCounter) -> int:
    """The model's input as compaction counts it: the transcript with its masked outputs at
    full size, the running summary and the protected prefix load_memory counted."""
    before = int(info.get("tokens", 0)) + counter.count_text(str(info.get(SUMMARY, "")))
    return before + int(info.get(PREFIX_TOKENS, 0)) + int(info.get(MASKED_TOKENS, 0))


def compaction_due(
    info: dict[str, Any],
    settings: MemorySettings,
    window: int,
    counter: TokenCounter,
    *,
    prefix_breaks: bool = False,
) -> bool:
    """Whether the model's input (`input_tokens`) has crossed the trigger (`trigger_share`)."""
    return input_tokens(info, counter) >= trigger_share(info, settings, prefix_breaks) * window


def trigger_share(info: dict[str, Any], settings: MemorySettings, prefix_breaks: bool) -> float:
    """The share of the window compaction runs from: the trigger; `masking_min_clear_ratio`
    below it when masking left its pass to compaction on this call; `compaction_on_break_ratio`
    (at the latest that share below the trigger) when the call's request changes anyway."""
    trigger = settings.summarization_trigger_ratio
    early = trigger - settings.masking_min_clear_ratio
    if prefix_breaks:
        return min(early, settings.compaction_on_break_ratio)
    return early if deferred(info) else trigger


def deferred(info: dict[str, Any]) -> bool:
    """Whether masking left this call's pass to compaction (see the module docstring)."""
    last = info.get(COUNTED_LAST)
    return last is not None and info.get(MASK_DEFERRED) == last


def latest_user_index(messages: Sequence[BaseMessage]) -> int | None:
    """Index of the newest user message: during a turn, the one that opened it (an automatic
    compaction inside the turn keeps it, since the answer and the profile update need it)."""
    return next(
        (i for i in range(len(messages) - 1, -1, -1) if isinstance(messages[i], HumanMessage)),
        None,
    )


def latest_user_message_id(messages: Sequence[BaseMessage]) -> str | None:
    """The id of the newest user message: it opened the current turn."""
    index = latest_user_index(messages)
    return None if index is None else messages[index].id


def leave_to_compaction(
    messages: Sequence[BaseMessage],
    info: dict[str, Any],
    settings: MemorySettings,
    window: int,
    counter: TokenCounter,
) -> bool:
    """Whether a masking pass due on this call is better left to a compaction there: the
    thread is within `masking_min_clear_ratio` of the trigger but not past it (so the input
    stays under the trigger should the compaction fail), and no compaction failed this turn
    (it is not retried before the next one)."""
    opened_by = latest_user_message_id(messages)
    if opened_by is not None and info.get(FAILED_IN) == opened_by:
        return False
    trigger = settings.summarization_trigger_ratio
    tokens = input_tokens(info, counter)
    return (trigger - settings.masking_min_clear_ratio) * window <= tokens < trigger * window
