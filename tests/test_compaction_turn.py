"""An automatic compaction inside a turn keeps the user message that opened the turn: the
answer, the thread and the profile update after the turn still have what the user said
(found by the multi-process load test: at the default keep share a compaction mid-turn
summarized the turn's own message away, and the profile update then found nothing to read)."""

from __future__ import annotations

from typing import Any

from langchain_core.messages import AIMessage, HumanMessage

from memory_plugin import (
    Backend,
    MemoryContext,
    MemorySettings,
    OfflineModel,
    create_memory_graph,
)
from memory_plugin.offline.demo import DemoModel
from memory_plugin.profile.document import render
from memory_plugin.profile.memory import ProfileMemory, wait_for_profiles
from tests.thread_helpers import fetch

ANN: dict[str, Any] = {"user_id": "ann"}
SAID = "My name is Ann. Please read pages 1 to 4."


def reading_turn() -> list[AIMessage]:
    """The model fetches four large pages, one call at a time, then answers."""
    calls = [
        AIMessage("", tool_calls=[{"name": "fetch", "args": {"url": f"p{n}"}, "id": f"f{n}"}])
        for n in range(1, 5)
    ]
    return [*calls, AIMessage("All four pages read.")]


def test_a_compaction_inside_the_turn_keeps_the_turns_user_message(backend: Backend) -> None:
    settings = MemorySettings(
        masking=False, summarization_trigger_ratio=0.8, summarization_keep_ratio=0.1
    )
    graph = create_memory_graph(
        DemoModel(script=reading_turn(), profile={"max_input_tokens": 4_000}),
        [fetch],
        store=backend.store,
        checkpointer=backend.checkpointer,
        settings=settings,
        maintenance_model=OfflineModel(),
    )
    config: Any = {"configurable": {"thread_id": "reading"}}
    out = graph.invoke({"messages": [HumanMessage(SAID)]}, config, context=ANN)
    dividers = out["memory_context"]["dividers"]
    assert dividers and dividers[-1]["kind"] == "auto"
    assert [m.content for m in out["messages"] if isinstance(m, HumanMessage)] == [SAID]
    assert out["messages"][-1].content == "All four pages read."
    assert wait_for_profiles()
    profile = ProfileMemory(backend.store).read(MemoryContext(user_id="ann"))
    assert profile is not None and "Ann" in render(profile)
