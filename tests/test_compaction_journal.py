"""The journal around a compaction, on the shipped graph: a compaction turn writes the journal
once (what it takes out is journaled already, the turn's new messages wait for its last write);
what a compaction takes out of the thread unjournaled (the turn's own tool results) is
journaled before it, and a journal write that fails after a compaction is made up on the next
turn. Every message the thread ever held
ends up in the journal, once, in order."""

from __future__ import annotations

from typing import Any

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage

from memory_plugin import Backend, MemorySettings, create_memory_graph
from memory_plugin.context_management.journal import tail_plan
from memory_plugin.offline.demo import DemoModel
from memory_plugin.offline.model import OfflineModel
from memory_plugin.plans import arun, run
from tests.faults import FaultyStore
from tests.thread_helpers import fetch

ANN: dict[str, Any] = {"user_id": "ann"}
WINDOW = 4_000
WORDS = "lorem ipsum dolor sit amet " * 60


def graph_on(store: Any, backend: Backend, script: list[AIMessage], maintenance: Any = None) -> Any:
    """The shipped graph, masking off, on `store` (the backend's, or a wrapper of it)."""
    return create_memory_graph(
        DemoModel(script=script, profile={"max_input_tokens": WINDOW}),
        [fetch],
        store=store,
        checkpointer=backend.checkpointer,
        settings=MemorySettings(masking=False),
        maintenance_model=maintenance or OfflineModel(),
    )


def ask(graph: Any, text: str) -> list[str]:
    """One turn; the actions of the context-management events it streamed."""
    stream = graph.stream(
        {"messages": [HumanMessage(text, id=f"q-{text[:12]}")]},
        {"configurable": {"thread_id": "t"}},
        context=ANN,
        stream_mode="custom",
    )
    return [c["action"] for c in stream if c["kind"] == "context_management"]


def journaled_humans(store: Any) -> list[str]:
    entries = run(store, tail_plan("t", 10_000, 10_000))
    assert [e.seq for e in entries] == list(range(len(entries)))
    return [e.text for e in entries if e.role == "human"]


def said(n: int) -> str:
    return f"question {n} {WORDS}"


def test_a_compaction_turn_writes_the_journal_once(backend: Backend) -> None:
    graph = graph_on(backend.store, backend, [AIMessage(f"answer {n}") for n in range(12)])
    asked, actions = [], []
    while "compacted" not in actions:
        asked.append(said(len(asked)))
        actions = ask(graph, asked[-1])
        assert len(asked) < 12, "the thread never compacted"
    assert actions.count("journaled") == 1
    assert actions.index("compacted") < actions.index("journaled")
    assert journaled_humans(backend.store) == asked
    state = graph.get_state({"configurable": {"thread_id": "t"}}).values
    assert state["memory_context"]["journal_last_id"] == state["messages"][-1].id


def test_messages_of_the_turn_that_are_summarized_are_journaled_first(
    backend: Backend,
) -> None:
    calls = [
        AIMessage("", tool_calls=[{"name": "fetch", "args": {"url": f"p{n}"}, "id": f"f{n}"}])
        for n in range(1, 7)
    ]
    graph = graph_on(backend.store, backend, [*calls, AIMessage("All pages read.")])
    actions = ask(graph, "Please read pages 1 to 6.")
    assert "compacted" in actions
    entries = run(backend.store, tail_plan("t", 10_000, 10_000))
    assert [e.seq for e in entries] == list(range(len(entries)))
    assert [e.tool_call_id for e in entries if e.role == "tool"] == [f"f{n}" for n in range(1, 7)]
    assert entries[-1].text == "All pages read."


class FaultAfterSummary(OfflineModel):
    """The maintenance model: switches the store's fault on once it writes a summary."""

    store: Any = None

    def _generate(self, messages: list[BaseMessage], *args: Any, **kwargs: Any) -> Any:
        if "running summary" in str(messages[0].content):
            self.store.set("full")
        return super()._generate(messages, *args, **kwargs)


def test_a_failed_write_after_a_compaction_is_made_up_next_turn(backend: Backend) -> None:
    store = FaultyStore(backend.store)
    script = [AIMessage(f"answer {n}") for n in range(12)]
    graph = graph_on(store, backend, script, FaultAfterSummary(store=store))
    asked: list[str] = []
    actions: list[str] = []
    while "compacted" not in actions:
        asked.append(said(len(asked)))
        actions = ask(graph, asked[-1])
        assert len(asked) < 12, "the thread never compacted"
    assert "journal_failed" in actions
    store.set(None)
    asked.append(said(len(asked)))
    ask(graph, asked[-1])
    assert journaled_humans(backend.store) == asked


async def test_a_failed_write_after_a_compaction_is_made_up_next_turn_under_ainvoke(
    abackend: Backend,
) -> None:
    store = FaultyStore(abackend.store)
    script = [AIMessage(f"answer {n}") for n in range(12)]
    graph = graph_on(store, abackend, script, FaultAfterSummary(store=store))
    config: Any = {"configurable": {"thread_id": "t"}}
    asked: list[str] = []
    out: dict[str, Any] = {}
    while not out.get("memory_context", {}).get("dividers"):
        asked.append(said(len(asked)))
        out = await graph.ainvoke({"messages": [HumanMessage(asked[-1])]}, config, context=ANN)
        assert len(asked) < 12, "the thread never compacted"
    missed = await arun(abackend.store, tail_plan("t", 10_000, 10_000))
    answer = out["messages"][-1].content
    assert answer not in [e.text for e in missed], "the turn's last write did not fail"
    store.set(None)
    asked.append(said(len(asked)))
    await graph.ainvoke({"messages": [HumanMessage(asked[-1])]}, config, context=ANN)
    entries = await arun(abackend.store, tail_plan("t", 10_000, 10_000))
    assert [e.seq for e in entries] == list(range(len(entries)))
    assert [e.text for e in entries if e.role == "human"] == asked
