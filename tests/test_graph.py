"""create_memory_graph: the prebuilt graph, its switches, and the memory events it streams."""

from __future__ import annotations

from typing import Any

import pytest
from langchain.agents import create_agent
from langchain_core.messages import AIMessage, HumanMessage
from langchain_core.tools import tool
from pydantic import Field

from memory_plugin import Backend, LayeredSettings, MemoryContext, create_memory_graph
from memory_plugin.background import wait_all
from memory_plugin.offline.demo import DemoModel
from memory_plugin.profile.memory import ProfileMemory
from memory_plugin.scoped import ScopedMemory
from memory_plugin.settings import MemorySettings

ANN = MemoryContext(user_id="ann", workspace_id="acme")


@tool
def lookup(term: str) -> str:
    """Look a term up (returns a long glossary entry)."""
    return f"{term}: " + "a long glossary entry about the term and its history. " * 60


def call(name: str, n: int, **args: Any) -> AIMessage:
    return AIMessage("", tool_calls=[{"name": name, "args": args, "id": f"{name}-{n}"}])


def tool_names(graph: Any) -> set[str]:
    return set(graph.nodes["tools"].bound.tools_by_name) if "tools" in graph.nodes else set()


def run(graph: Any, text: str, thread: str, ctx: MemoryContext = ANN) -> list[tuple[str, str]]:
    """One turn; the (kind, action) of every memory event it streamed."""
    events = []
    for mode, chunk in graph.stream(
        {"messages": [HumanMessage(text)]},
        {"configurable": {"thread_id": thread}},
        context=ctx,
        stream_mode=["custom", "updates"],
    ):
        if mode == "custom":
            assert chunk["type"] == "memory_event"
            events.append((chunk["kind"], chunk["action"]))
    return events


def test_nodes_tools_and_a_remembered_fact_across_threads(backend: Backend) -> None:
    model = DemoModel(
        script=[
            call("remember", 1, text="The release freeze starts Friday"),
            "Noted.",
            "Hello again!",
        ]
    )
    graph = create_memory_graph(
        model, [lookup], store=backend.store, checkpointer=backend.checkpointer
    )
    nodes = set(graph.get_graph().nodes)
    assert nodes == {"__start__", "agent", "tools", "summarize_now", "__end__"}
    assert tool_names(graph) == {
        "lookup",
        "remember",
        "update_memory",
        "recall",
        "journal_message_search",
        "journal_tool_call_view",
    }
    events = run(graph, "Hi, my name is Ann. Remember the release freeze starts Friday.", "t1")
    assert ("scoped_memory", "note_stored") in events
    assert ("context_management", "loaded") in events and ("scoped_memory", "loaded") in events
    assert wait_all()
    run(graph, "hello", "t2")
    assert "Name is Ann." in ProfileMemory(backend.store).read(ANN).bullets("Identity")  # type: ignore[union-attr]
    state = graph.get_state({"configurable": {"thread_id": "t2"}}).values
    injected = "\n".join(block["text"] for block in state["memory_blocks"])
    assert "release freeze starts Friday" in injected and "Name is Ann." in injected


async def test_prebuilt_graph_under_ainvoke(abackend: Backend) -> None:
    model = DemoModel(script=[call("remember", 1, text="Likes green tea"), "Noted."])
    graph = create_memory_graph(model, store=abackend.store, checkpointer=abackend.checkpointer)
    out = await graph.ainvoke(
        {"messages": [HumanMessage("Remember I like green tea")]},
        {"configurable": {"thread_id": "a"}},
        context=ANN,
    )
    assert out["messages"][-1].content == "Noted."
    notes = await ScopedMemory(abackend.store).alist_notes(ANN)
    assert [n.body for n in notes] == ["Likes green tea"]


def test_a_turn_takes_as_many_steps_as_a_plain_agent(backend: Backend) -> None:
    script = [call("lookup", 1, term="freeze"), "Noted."]
    ours = create_memory_graph(
        DemoModel(script=list(script)),
        [lookup],
        store=backend.store,
        checkpointer=backend.checkpointer,
    )
    plain = create_agent(
        DemoModel(script=list(script)), [lookup], checkpointer=backend.checkpointer
    )
    for graph, thread in ((ours, "ours"), (plain, "plain")):
        graph.invoke(
            {"messages": [HumanMessage("What is the freeze?")]},
            {"configurable": {"thread_id": thread}},
            context=ANN,
        )
    steps = {
        thread: len(list(graph.get_state_history({"configurable": {"thread_id": thread}})))
        for graph, thread in ((ours, "ours"), (plain, "plain"))
    }
    assert steps["ours"] == steps["plain"] == 5
    state = ours.get_state({"configurable": {"thread_id": "ours"}}).values
    assert state["messages"][-1].content == "Noted." and state["memory_context"]["journal_seq"] == 4


@pytest.mark.parametrize(
    ("switches", "absent_tools"),
    [
        ({"scoped_memory": False}, {"remember", "update_memory", "recall"}),
        ({"profile": False}, set()),
        ({"context_management": False}, {"journal_message_search"}),
    ],
)
def test_memory_kinds_can_be_switched_off(
    backend: Backend, switches: dict[str, bool], absent_tools: set[str]
) -> None:
    graph = create_memory_graph(
        DemoModel(script=["Hi."]),
        [lookup],
        store=backend.store,
        checkpointer=backend.checkpointer,
        settings=MemorySettings(**switches),
    )
    assert not absent_tools & tool_names(graph) and "lookup" in tool_names(graph)
    run(graph, "Hi, my name is Ann.", "t1")
    state = graph.get_state({"configurable": {"thread_id": "t1"}}).values
    names = {block["name"] for block in state.get("memory_blocks") or []}
    if switches.get("scoped_memory") is False:
        assert "memory_document" not in names
    if switches.get("profile") is False:
        assert ProfileMemory(backend.store).read(ANN) is None


def long_thread(
    backend: Backend, window: int, turns: int, thread: str, **settings: Any
) -> list[tuple[str, str]]:
    """Turns that each look up a long entry, on a model reporting `window`; their events."""
    script: list[Any] = []
    for n in range(turns):
        script += [call("lookup", n, term=f"term {n}"), f"Looked up {n}."]
    model = DemoModel(script=script, profile={"max_input_tokens": window})
    graph = create_memory_graph(
        model,
        [lookup],
        store=backend.store,
        checkpointer=backend.checkpointer,
        settings=MemorySettings(**settings),
    )
    events: list[tuple[str, str]] = []
    for n in range(turns):
        events += run(graph, f"look up term {n}", thread)
    return events


def test_masking_is_streamed(backend: Backend) -> None:
    events = long_thread(
        backend, window=9_000, turns=7, thread="masking", masking_defers_to_compaction=False
    )
    assert ("context_management", "masked") in events
    assert ("context_management", "compacted") not in events


def test_compaction_is_streamed_and_flushes_one_note_after_the_answer(
    backend: Backend,
) -> None:
    events = long_thread(backend, window=5_000, turns=6, thread="compaction")
    assert events.count(("context_management", "compacted")) == 1
    assert wait_all()
    notes = ScopedMemory(backend.store).list_notes(ANN)
    assert len(notes) == 1


def test_summarize_now_through_the_prebuilt_graph(backend: Backend) -> None:
    from memory_plugin.context_management.nodes import summarize_now

    LayeredSettings(backend.store).update("platform", ANN, set={"compaction_manual": True})
    script: list[Any] = []
    for n in range(3):
        script += [call("lookup", n, term=f"t{n}"), f"Done {n}."]
    model = DemoModel(script=script, profile={"max_input_tokens": 8_000})
    graph = create_memory_graph(
        model, [lookup], store=backend.store, checkpointer=backend.checkpointer
    )
    config = {"configurable": {"thread_id": "m"}}
    assert summarize_now(graph, config, context=ANN)["message"] == "nothing to compact yet"
    for n in range(3):
        run(graph, f"look up t{n}", "m")
    before = len(graph.get_state(config).values["messages"])
    report = summarize_now(graph, config, context=ANN)
    assert report["status"] == "compacted"
    after = graph.get_state(config).values
    assert len(after["messages"]) < before
    assert after["messages"][-1].content == "Done 2."


def test_tool_events_are_streamed(backend: Backend) -> None:
    model = DemoModel(
        script=[
            call("update_memory", 1, content="# Ann\n- Likes tea"),
            call("recall", 2, query="tea"),
            "Done.",
        ]
    )
    graph = create_memory_graph(model, store=backend.store, checkpointer=backend.checkpointer)
    events = run(graph, "Write down that I like tea, then check my notes.", "tools")
    assert ("scoped_memory", "document_saved") in events and ("scoped_memory", "recalled") in events
    assert ScopedMemory(backend.store).read_document(ANN).text == "# Ann\n- Likes tea"  # type: ignore[union-attr]


def _tool_turn_graph(store: Any, checkpointer: Any) -> Any:
    model = DemoModel(
        script=[call("recall", 1, query="tea"), call("recall", 2, query="tea"), "Done."]
    )
    return create_memory_graph(model, store=store, checkpointer=checkpointer)


def test_a_turn_of_tool_steps_streams_loaded_once(backend: Backend) -> None:
    events = run(_tool_turn_graph(backend.store, backend.checkpointer), "Check my notes.", "t")
    assert events.count(("scoped_memory", "recalled")) == 2
    # the re-checks after tool steps are quiet
    assert events.count(("scoped_memory", "loaded")) == 1


async def test_a_turn_of_tool_steps_streams_loaded_once_async(abackend: Backend) -> None:
    graph = _tool_turn_graph(abackend.store, abackend.checkpointer)
    events = [
        (chunk["kind"], chunk["action"])
        async for chunk in graph.astream(
            {"messages": [HumanMessage("Check my notes.")]},
            {"configurable": {"thread_id": "t"}},
            context=ANN,
            stream_mode="custom",
        )
    ]
    assert events.count(("scoped_memory", "recalled")) == 2
    assert events.count(("scoped_memory", "loaded")) == 1


def test_events_match_the_documented_schema(backend: Backend) -> None:
    from memory_plugin.events import MemoryEvent

    graph = create_memory_graph(
        DemoModel(script=["Hi."]), store=backend.store, checkpointer=backend.checkpointer
    )
    chunks = [
        chunk
        for mode, chunk in graph.stream(
            {"messages": [HumanMessage("Hi, my name is Ann.")]},
            {"configurable": {"thread_id": "schema"}},
            context=ANN,
            stream_mode=["custom", "updates"],
        )
        if mode == "custom"
    ]
    assert chunks and all(MemoryEvent.model_validate(c).model_dump() == c for c in chunks)


class RecordingDemo(DemoModel):
    """The demo model, recording what the agent was sent (memory's own calls left out)."""

    sent: list[list[Any]] = Field(default_factory=list)

    def _generate(self, messages: list[Any], *args: Any, **kwargs: Any) -> Any:
        if messages and str(messages[0].content).startswith("Answer briefly."):
            self.sent.append(list(messages))
        return super()._generate(messages, *args, **kwargs)


async def test_a_note_reaches_the_next_turn_after_the_history(abackend: Backend) -> None:
    model = RecordingDemo(
        script=[call("remember", 1, text="The offsite is in Porto"), "Noted.", "Porto."]
    )
    graph = create_memory_graph(
        model,
        store=abackend.store,
        checkpointer=abackend.checkpointer,
        system_prompt="Answer briefly.",
    )
    config = {"configurable": {"thread_id": "t1"}}
    for text in ("Remember the offsite is in Porto.", "Where is the offsite?"):
        await graph.ainvoke({"messages": [HumanMessage(text)]}, config, context=ANN)
    before, after = model.sent[-2], model.sent[-1]
    assert after[0].content == before[0].content and "Porto" not in str(after[0].content)
    assert [m.content for m in after[: len(before)]] == [m.content for m in before]
    told = [m for m in after[len(before) :] if "Porto" in str(m.content)]
    assert told == [after[-1]] and str(told[0].content).startswith("<memory_update>")
    assert str(after[-1].content).endswith("</memory_update>\n\nWhere is the offsite?")
    stored = (await graph.aget_state(config)).values["messages"]
    assert stored[-2].content == "Where is the offsite?"
