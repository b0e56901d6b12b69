"""Masking on a call whose system message changes anyway (a new memory snapshot after a
removal): the prompt cache breaks there regardless, so a smaller pass runs on that call."""

from __future__ import annotations

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage

from memory_plugin.context_management.masking import (
    SNAPSHOT,
    is_masked,
    mask,
    resnapshotted,
    snapshot_seen,
)
from memory_plugin.context_management.turn import SUMMARY
from memory_plugin.context_management.updates import SHOWN
from memory_plugin.settings import MemorySettings
from memory_plugin.tokens import counter_for

COUNTER = counter_for(None)
WINDOW = 10_000


def transcript(outputs: int, words: int) -> list[BaseMessage]:
    messages: list[BaseMessage] = [HumanMessage("read the pages")]
    for n in range(outputs):
        call = {"name": "fetch", "args": {"n": n}, "id": f"c{n}"}
        messages.append(AIMessage("", tool_calls=[call], id=f"a{n}"))
        messages.append(ToolMessage("page " * words, tool_call_id=f"c{n}", name="fetch"))
    return messages


def test_a_pass_below_the_batch_share_runs_only_where_the_prefix_breaks_anyway() -> None:
    settings = MemorySettings()
    messages = transcript(outputs=11, words=300)  # 6 older outputs: about 20% to clear
    tokens = int(0.6 * WINDOW)  # past the trigger, not yet near compaction
    assert settings.masking_min_clear_ratio < 0.2 < settings.masking_batch_ratio

    alone = mask(messages, tokens, WINDOW, settings, COUNTER)
    assert alone.replacements == [] and alone.freed_tokens == 0

    broken = mask(messages, tokens, WINDOW, settings, COUNTER, prefix_breaks=True)
    assert len(broken.replacements) == 6 and all(is_masked(m) for m in broken.replacements)
    assert settings.masking_min_clear_ratio * WINDOW <= broken.freed_tokens
    assert broken.freed_tokens < settings.masking_batch_ratio * WINDOW

    below = mask(messages, int(0.5 * WINDOW), WINDOW, settings, COUNTER, prefix_breaks=True)
    assert below.replacements == [], "below the trigger nothing is masked"


def test_a_new_snapshot_is_told_apart_from_a_compaction() -> None:
    info = {SHOWN: [{"name": "recent_memory_notes", "text": "a"}], SUMMARY: ""}
    assert not resnapshotted(info), "the thread's first call has nothing to compare"
    info[SNAPSHOT] = snapshot_seen(info)
    assert not resnapshotted(info)

    removed = {**info, SHOWN: []}
    assert resnapshotted(removed), "a note removed: the system message changes on this call"

    compacted = {**info, SHOWN: [], SUMMARY: "the summary"}
    assert not resnapshotted(compacted), "the compaction call itself already broke the cache"
