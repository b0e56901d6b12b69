"""Provenance of bounded entries (one per entry, parallel to the entries), agent entries and
what the pre-compaction flush writes; every backend, invoke and ainvoke."""

from __future__ import annotations

from langchain_core.messages import HumanMessage
from langgraph.store.base import PutOp

from memory_plugin import Backend, MemoryContext, create_memory_graph
from memory_plugin.agent import AgentMemory
from memory_plugin.bounded import BoundedMemory
from memory_plugin.provenance import Provenance, origin
from memory_plugin.scope import bounded_namespace
from memory_plugin.scoped import ScopedMemory
from memory_plugin.settings import MemorySettings
from tests.test_agent_entries import ON as AGENT_ON
from tests.test_agent_entries import call, flush_graph, graph_of
from tests.test_bounded_graph import ON as BOUNDED_ON
from tests.test_bounded_graph import SeeingModel, add_call

ANN = MemoryContext(user_id="ann", agent_id="helper")


def by_tool(found: Provenance | None, tool: str, call_id: str, thread: str, turn: int) -> None:
    assert found is not None
    assert (found.source, found.tool, found.tool_call_id) == ("tool", tool, call_id)
    assert (found.thread_id, found.turn) == (thread, turn)


def test_bounded_entries_record_the_tool_call_then_follow_their_entry(backend: Backend) -> None:
    model = SeeingModel(script=["Hello.", add_call(7, "user", "Ann is on call Mondays"), "Ok."])
    graph = create_memory_graph(
        model, store=backend.store, checkpointer=backend.checkpointer, settings=BOUNDED_ON
    )
    config = {"configurable": {"thread_id": "b"}}
    for text in ("hello", "remember my on-call day"):
        graph.invoke({"messages": [HumanMessage(text)]}, config, context=ANN)
    memory = BoundedMemory(backend.store)
    user = memory.read(ANN)["user"]
    by_tool(user.provenance[0], "memory", "m7", "b", 2)
    with origin(source="api", actor="ann"):
        memory.apply(ANN, "add", "user", "Ann prefers short answers")
    memory.apply(ANN, "add", "user", "Ann lives in Bern")
    first, second, third = memory.read(ANN)["user"].provenance
    by_tool(first, "memory", "m7", "b", 2)
    assert second is not None and (second.source, second.actor) == ("api", "ann")
    assert third is not None and third.source == "code"
    memory.apply(ANN, "replace", "user", "Ann is on call Tuesdays", old_text="Mondays")
    memory.apply(ANN, "remove", "user", old_text="short answers")
    view = memory.read(ANN)["user"]
    assert view.entries == ["Ann is on call Tuesdays", "Ann lives in Bern"]
    rewritten, kept = view.provenance
    assert rewritten is not None and rewritten.source == "code" and rewritten.tool is None
    assert kept == third
    assert memory.read(ANN)["memory"].provenance == ()


async def test_bounded_entries_written_before_provenance_read_as_none(abackend: Backend) -> None:
    namespace = bounded_namespace(ANN)
    old = {"entries": ["Ann uses a Mac", "Ann writes Go"], "version": 1}
    await abackend.store.abatch([PutOp(namespace, "user", old)])
    memory = BoundedMemory(abackend.store)
    assert (await memory.aread(ANN))["user"].provenance == (None, None)
    await memory.aapply(ANN, "add", "user", "Ann lives in Bern")
    view = (await memory.aread(ANN))["user"]
    assert view.provenance[:2] == (None, None)
    assert view.provenance[2] is not None and view.provenance[2].source == "code"


def test_agent_entries_record_the_tool_call(backend: Backend) -> None:
    script = (
        call("memory_store", 1, key="diet", content="Ann is vegetarian"),
        "Done.",
    )
    _, graph = graph_of(backend, *script)
    graph.invoke(
        {"messages": [HumanMessage("I am vegetarian")]},
        {"configurable": {"thread_id": "g"}},
        context=ANN,
    )
    memory = AgentMemory(backend.store, defaults=AGENT_ON)
    (entry,) = memory.entries(ANN)
    by_tool(entry.provenance, "memory_store", "memory_store-1", "g", 1)
    assert entry.provenance is not None and entry.provenance.actor == "ann"
    with origin(source="api", actor="ann"):
        stored = memory.store_entry(ANN, "diet", "Ann is vegan now")
    assert stored.provenance is not None and stored.provenance.source == "api"
    assert memory.entries(ANN)[0].provenance == stored.provenance


async def test_agent_entries_from_code_async(abackend: Backend) -> None:
    memory = AgentMemory(abackend.store, defaults=AGENT_ON)
    stored = await memory.astore_entry(ANN, "editor", "The team edits in vim", visibility="shared")
    (found,) = await memory.aentries(ANN)
    assert found.provenance == stored.provenance
    assert found.provenance is not None
    assert (found.provenance.source, found.provenance.actor) == ("code", "ann")


def test_the_flush_marks_its_note_and_entries(backend: Backend) -> None:
    """Three turns, then "summarize now" folds the first two: the flush names turn 2."""
    on = {"agent_memory": True, "compaction_manual": True, "profile": False}
    _, entries = flush_graph(backend, MemorySettings(**on))
    (note,) = ScopedMemory(backend.store).list_notes(ANN)
    for found in (note.provenance, entries[0].provenance):
        assert found is not None
        assert (found.source, found.job, found.thread_id) == ("node", "flush", "f")
        assert (found.turn, found.actor) == (2, "ann")
    assert note.provenance == entries[0].provenance
