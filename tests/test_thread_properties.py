"""Properties over random transcripts with tool calls: masking and compaction never break a
tool call from its result, keep the protected prefix byte-identical, and are idempotent."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage
from langgraph.store.memory import InMemoryStore

from memory_plugin.blocks import PromptBlock, assemble
from memory_plugin.context_management.compaction import compaction_plan
from memory_plugin.context_management.masking import is_masked, mask
from memory_plugin.context_management.pairs import TODOS_TOOL, unpaired
from memory_plugin.context_management.state import add_messages_batch
from memory_plugin.plans import run
from memory_plugin.settings import MemorySettings
from memory_plugin.tokens import TokenCounter
from tests.fakes import CompactionModel

COUNTER = TokenCounter()
BLOCKS = [
    PromptBlock("memory_document", "per_turn", "<memory_document>\n# Ann\n</memory_document>"),
    PromptBlock(
        "recent_memory_notes", "recent_notes", "<recent_memory_notes>\n</recent_memory_notes>"
    ),
    PromptBlock("pinned", "frozen", "<pinned>likes tea</pinned>"),
]


@st.composite
def transcripts(draw: st.DrawFn) -> list[BaseMessage]:
    """Turns of: a question, tool-calling steps (1-3 calls each, results in any order,
    sometimes write_todos), and an answer."""
    messages: list[BaseMessage] = []
    ids = iter(range(10_000))
    for turn in range(draw(st.integers(1, 8))):
        messages.append(
            HumanMessage(f"question {turn} " * draw(st.integers(1, 30)), id=f"h{next(ids)}")
        )
        for _ in range(draw(st.integers(0, 3))):
            names = draw(
                st.lists(st.sampled_from(["search", "fetch", TODOS_TOOL]), min_size=1, max_size=3)
            )
            calls = [{"name": n, "args": {"q": turn}, "id": f"c{next(ids)}"} for n in names]
            messages.append(AIMessage("", tool_calls=calls, id=f"a{next(ids)}"))
            for call in draw(st.permutations(calls)):
                size = draw(st.integers(1, 600))
                messages.append(
                    ToolMessage(
                        "out " * size,
                        tool_call_id=call["id"],
                        name=call["name"],
                        id=f"t{next(ids)}",
                    )
                )
        messages.append(AIMessage(f"answer {turn}", id=f"r{next(ids)}"))
    return messages


def apply(messages: list[BaseMessage], updates: list[Any]) -> list[BaseMessage]:
    return add_messages_batch(messages, [updates])


def run_masking(
    messages: list[BaseMessage], window: int, config: MemorySettings
) -> list[BaseMessage]:
    result = mask(messages, COUNTER.count(messages), window, config, COUNTER)
    return apply(messages, list(result.replacements))


def compact(
    messages: list[BaseMessage], window: int, config: MemorySettings, summary: str = ""
) -> Any:
    plan = compaction_plan(
        messages,
        {"summary": summary, "tokens": COUNTER.count(messages)},
        model=CompactionModel(),
        settings=config,
        window=window,
        counter=COUNTER,
        kind="auto",
        now=datetime(2026, 11, 29, tzinfo=UTC),
        flush=None,
    )
    return run(InMemoryStore(), plan)


windows = st.integers(500, 40_000)
policies = st.builds(
    lambda trigger, keep: MemorySettings(masking_trigger_ratio=trigger, masking_keep_recent=keep),
    st.floats(0.05, 0.95),
    st.integers(1, 8),
)


@pytest.mark.slow
@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(transcripts(), windows, policies)
def test_masking_keeps_pairs_and_recent_results_and_reaches_a_fixpoint(
    messages: list[BaseMessage], window: int, config: MemorySettings
) -> None:
    masked = run_masking(messages, window, config)
    assert unpaired(masked) == []
    assert [m.id for m in masked] == [m.id for m in messages]
    recent = [m for m in messages if isinstance(m, ToolMessage)][-config.masking_keep_recent :]
    by_id = {m.id: m for m in masked}
    assert all(by_id[m.id].content == m.content for m in recent)
    for _ in range(len(messages)):
        again = run_masking(masked, window, config)
        if [m.content for m in again] == [m.content for m in masked]:
            break
        masked = again
    assert [m.content for m in run_masking(masked, window, config)] == [m.content for m in masked]
    assert all(is_masked(m) or m.content == by_id[m.id].content for m in masked)


@pytest.mark.slow
@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(transcripts(), windows, st.floats(0.3, 0.95), st.floats(0.01, 0.3))
def test_compaction_keeps_pairs_todos_and_the_protected_prefix(
    messages: list[BaseMessage], window: int, trigger: float, keep: float
) -> None:
    config = MemorySettings(summarization_trigger_ratio=trigger, summarization_keep_ratio=keep)
    before = assemble("System prompt.", BLOCKS, "", messages)
    result = compact(messages, window, config)
    if result.status != "compacted":
        return
    kept = apply(messages, result.updates["messages"])
    assert 0 < len(kept) < len(messages)
    assert all(k is m for k in kept for m in messages if m.id == k.id)
    assert unpaired(kept) == []
    assert kept[-1].id == messages[-1].id
    assert [m.id for m in kept] == [m.id for m in messages if m.id in {k.id for k in kept}]
    todos = [
        m
        for m in messages
        if isinstance(m, AIMessage) and any(c["name"] == TODOS_TOOL for c in m.tool_calls)
    ]
    if todos:
        assert todos[-1].id in {m.id for m in kept}
    summary = result.updates["memory_context"]["summary"]
    after = assemble("System prompt.", BLOCKS, summary, kept)
    prefix = str(before[0].content)
    assert str(after[0].content).startswith(prefix)
    assert str(after[0].content)[len(prefix) :].startswith("\n\n<conversation_summary>")
    again = compact(kept, window, config, summary)
    if result.updates["memory_context"]["tokens"] < trigger * window:
        assert again.status == "nothing_to_compact"


@pytest.mark.slow
@settings(max_examples=100, deadline=None)
@given(transcripts(), windows)
def test_masking_then_compaction_keeps_every_pair(messages: list[BaseMessage], window: int) -> None:
    config = MemorySettings()
    masked = run_masking(messages, window, config)
    result = compact(masked, window, config)
    if result.status == "compacted":
        masked = apply(masked, result.updates["messages"])
    assert unpaired(masked) == []
    assert unpaired(run_masking(masked, window, config)) == []
