"""The recent-window policy: the model sees the journal's tail from a turn boundary, and a
rolling summary is written progressively in the background."""

from __future__ import annotations

import threading
from typing import Any

import pytest
from langchain_core.messages import AIMessage, HumanMessage, SystemMessage

from memory_plugin import Backend
from memory_plugin.context_management.journal import tail_plan
from memory_plugin.context_management.window import summary_plan
from memory_plugin.errors import SettingsError
from memory_plugin.plans import run
from memory_plugin.scoped import ScopedMemory
from tests.fakes import CompactionModel
from tests.scoped_helpers import ANN
from tests.thread_helpers import build_graph, chat, fetch_turn

WINDOW = {"thread_policy": "recent_window", "masking": False}


def ask(graph: Any, text: str, **configurable: Any) -> dict[str, Any]:
    config = {"configurable": {"thread_id": "w1", **configurable}}
    return graph.invoke({"messages": [HumanMessage(text)]}, config, context=ANN)  # type: ignore[no-any-return]


def script(n: int) -> list[AIMessage]:
    return [m for k in range(n) for m in fetch_turn(k)]


def test_model_sees_the_journal_tail_from_a_turn_boundary(backend: Backend) -> None:
    model = chat(script(6), window=None)
    graph, manager = build_graph(backend, model, summary_model=CompactionModel(), platform=WINDOW)
    for n in range(6):
        ask(graph, f"read page {n}", recent_window_messages=6)
    manager.wait_for_background()
    last = model.inputs[-1]
    assert isinstance(last[0], SystemMessage)
    window = [m for m in last if not isinstance(m, SystemMessage)]
    assert isinstance(window[0], HumanMessage)
    told_first = str(window[0].content).rpartition("</memory_update>\n\n")[2]
    assert told_first == "read page 5", "the window starts at a turn (after any memory update)"
    assert len(window) <= 6
    state = graph.get_state({"configurable": {"thread_id": "w1"}}).values
    assert len(state["messages"]) <= 6
    entries = run(backend.store, tail_plan("w1", 1_000, 1_000))
    assert len(entries) == 6 * 4


def test_per_thread_override_can_only_lower_the_cap(backend: Backend) -> None:
    model = chat(script(7), window=None)
    graph, manager = build_graph(backend, model, summary_model=CompactionModel(), platform=WINDOW)
    for n in range(6):
        ask(graph, f"read page {n}", recent_window_messages=500)
    manager.wait_for_background()
    window = [m for m in model.inputs[-1] if not isinstance(m, SystemMessage)]
    assert 12 < len(window) <= 20
    with pytest.raises(SettingsError, match="recent_window_messages"):
        ask(graph, "again", recent_window_messages=0)


def test_rolling_summary_is_progressive_and_never_delays_the_reply(backend: Backend) -> None:
    gate = threading.Event()
    summarizer = CompactionModel(gate=gate)
    model = chat(script(8), window=None)
    graph, manager = build_graph(backend, model, summary_model=summarizer, platform=WINDOW)
    for n in range(5):
        ask(graph, f"read page {n}", recent_window_messages=4)
    assert run(backend.store, summary_plan("w1"))["text"] == ""
    gate.set()
    manager.wait_for_background()
    first = run(backend.store, summary_plan("w1"))
    assert first["text"].startswith("Summary 1") and first["upto_seq"] > 0
    for n in range(5, 8):
        ask(graph, f"read page {n}", recent_window_messages=4)
    manager.wait_for_background()
    second = run(backend.store, summary_plan("w1"))
    assert second["upto_seq"] > first["upto_seq"]
    assert any("<previous_summary>\nSummary 1" in p for p in summarizer.prompts)
    ask_input = model.inputs[-1]
    assert isinstance(ask_input[1], SystemMessage) and "Summary" in str(ask_input[1].content)
    assert ScopedMemory(backend.store).list_notes(ANN), "a flush note precedes each pass"


async def test_recent_window_under_ainvoke(
    abackend: Backend, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MEMORY_THREAD_POLICY", "recent_window")
    monkeypatch.setenv("MEMORY_MASKING", "off")
    model = chat(script(6), window=None)
    graph, manager = build_graph(abackend, model, summary_model=CompactionModel())
    config = {"configurable": {"thread_id": "w2", "recent_window_messages": 4}}
    for n in range(6):
        await graph.ainvoke({"messages": [HumanMessage(f"read page {n}")]}, config, context=ANN)
        await manager.await_background()
    window = [m for m in model.inputs[-1] if not isinstance(m, SystemMessage)]
    assert isinstance(window[0], HumanMessage) and len(window) <= 4
    state = (await graph.aget_state(config)).values
    assert state["memory_context"]["summary"].startswith("Summary")
