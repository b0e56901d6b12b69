"""Masking on a call whose request changes anyway (a new memory snapshot after a removal, or
an update dropped for one): the prompt cache breaks there regardless, so a smaller pass runs
on that call. Compaction counts masked outputs at their full size: masking lowers each
call's input between compactions, it does not postpone them."""

from __future__ import annotations

from datetime import UTC, datetime

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage
from langgraph.store.memory import InMemoryStore

from memory_plugin.context_management.compaction import compaction_plan
from memory_plugin.context_management.due import MASKED_TOKENS, compaction_due
from memory_plugin.context_management.masking import (
    SNAPSHOT,
    is_masked,
    mask,
    resnapshotted,
    snapshot_seen,
)
from memory_plugin.context_management.state import add_messages_batch
from memory_plugin.context_management.turn import SUMMARY
from memory_plugin.context_management.updates import SHOWN, UPDATES
from memory_plugin.plans import run
from memory_plugin.settings import MemorySettings
from memory_plugin.tokens import counter_for
from tests.fakes import CompactionModel

COUNTER = counter_for(None)
WINDOW = 10_000


def transcript(outputs: int, words: int) -> list[BaseMessage]:
    messages: list[BaseMessage] = [HumanMessage("read the pages", id="h")]
    for n in range(outputs):
        call = {"name": "fetch", "args": {"n": n}, "id": f"c{n}"}
        messages.append(AIMessage("", tool_calls=[call], id=f"a{n}"))
        messages.append(
            ToolMessage("page " * words, tool_call_id=f"c{n}", name="fetch", id=f"t{n}")
        )
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

    early = settings.masking_trigger_ratio - settings.masking_min_clear_ratio
    near = mask(messages, int(early * WINDOW) + 50, WINDOW, settings, COUNTER, prefix_breaks=True)
    assert len(near.replacements) == 6, "within the min-clear share below the trigger: masked"
    assert mask(messages, int(early * WINDOW) + 50, WINDOW, settings, COUNTER).replacements == []

    below = mask(messages, int(early * WINDOW), WINDOW, settings, COUNTER, prefix_breaks=True)
    assert below.replacements == [], "further below the trigger nothing is masked"


def test_a_new_snapshot_is_told_apart_from_a_compaction() -> None:
    info = {SHOWN: [{"name": "recent_memory_notes", "text": "a"}], SUMMARY: ""}
    assert not resnapshotted(info), "the thread's first call has nothing to compare"
    info[SNAPSHOT] = snapshot_seen(info)
    assert not resnapshotted(info)

    removed = {**info, SHOWN: []}
    assert resnapshotted(removed), "a note removed: the system message changes on this call"

    compacted = {**info, SHOWN: [], SUMMARY: "the summary"}
    assert not resnapshotted(compacted), "the compaction call itself already broke the cache"


def test_an_update_dropped_for_a_removal_is_a_break_and_one_told_is_not() -> None:
    first = {"text": "<memory_update>a</memory_update>", "before": "h1"}
    info = {SHOWN: [], SUMMARY: "", UPDATES: [first]}
    info[SNAPSHOT] = snapshot_seen(info)

    told = {**info, UPDATES: [first, {"text": "<memory_update>b</memory_update>"}]}
    assert not resnapshotted(told), "a new update goes after the request sent before"

    assert resnapshotted({**info, UPDATES: []}), "the removed memory's update leaves the request"
    retold = {**info, UPDATES: [{"text": "<memory_update>c</memory_update>", "before": "h2"}]}
    assert resnapshotted(retold), "dropped, then what is still new told again"


def test_compaction_counts_masked_outputs_at_full_size_and_starts_the_count_again() -> None:
    settings = MemorySettings()
    messages = transcript(outputs=30, words=100)
    window = COUNTER.count(messages)  # the unmasked thread fills the window
    passed = mask(messages, window, window, settings, COUNTER)
    assert passed.freed_tokens >= settings.masking_batch_ratio * window
    masked = add_messages_batch(messages, [passed.replacements])  # type: ignore[arg-type]
    sent = COUNTER.count(masked)
    assert sent < settings.summarization_trigger_ratio * window, "the input alone is below"

    info = {"tokens": sent, MASKED_TOKENS: passed.freed_tokens}
    assert not compaction_due({"tokens": sent}, settings, window, COUNTER)
    assert compaction_due(info, settings, window, COUNTER)

    plan = compaction_plan(
        masked,
        info,
        model=CompactionModel(),
        settings=settings,
        window=window,
        counter=COUNTER,
        kind="auto",
        now=datetime(2026, 12, 6, tzinfo=UTC),
        flush=None,
    )
    result = run(InMemoryStore(), plan)
    assert result.status == "compacted"
    context = result.updates["memory_context"]
    assert context[MASKED_TOKENS] == 0, "what was masked is summarized: the count starts again"
    assert not compaction_due(context, settings, window, COUNTER)
