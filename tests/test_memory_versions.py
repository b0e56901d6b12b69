"""Memory is read once per session and trusted until something changes it: an idle turn
checks the versions of what it read instead of reading it again, and any write, from this
graph, another door or another process, reaches the next model call."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import pytest
from langchain_core.messages import AIMessage, HumanMessage
from langgraph.store.base import GetOp, Op, PutOp, SearchOp

from memory_plugin import Backend, MemoryContext, create_memory_graph
from memory_plugin.backends.versions import Reads, ReadVersions
from memory_plugin.offline.demo import DemoModel
from memory_plugin.plans import run
from memory_plugin.scoped import ScopedMemory

ANN = MemoryContext(user_id="ann")
PROMPT = "You are Ann's assistant."
NOTES = ("memory_plugin", "personal", "ann", "notes")


class Reading:
    """Counts the memory reads (gets and searches outside thread journals) of a store."""

    def __init__(self, store: Any) -> None:
        self.reads = 0
        batch, abatch = store.batch, store.abatch

        def counted(ops: Iterable[Op]) -> list[Any]:
            ops = list(ops)
            self.count(ops)
            return batch(ops)

        async def acounted(ops: Iterable[Op]) -> list[Any]:
            ops = list(ops)
            self.count(ops)
            return await abatch(ops)

        store.batch, store.abatch = counted, acounted

    def count(self, ops: list[Op]) -> None:
        for op in ops:
            namespace = op.namespace if isinstance(op, GetOp) else None
            if isinstance(op, SearchOp):
                namespace = op.namespace_prefix
            if namespace is not None and namespace[:2] != ("memory_plugin", "thread"):
                self.reads += 1


def recorded_graph(backend: Backend, seen: list[str], script: list[Any] | None = None) -> Any:
    """The prebuilt graph answering `script` (else "ok" each time); every agent model input,
    joined, goes to `seen`."""

    class Recording(DemoModel):
        def _generate(self, messages: list[Any], *args: Any, **kwargs: Any) -> Any:
            if PROMPT in str(messages[0].content):
                seen.append("\n".join(str(m.content) for m in messages))
            return super()._generate(messages, *args, **kwargs)

    return create_memory_graph(
        Recording(script=script or ["ok"], repeat=script is None),
        store=backend.store,
        checkpointer=backend.checkpointer,
        system_prompt=PROMPT,
    )


def turn(graph: Any, text: str, thread: str = "t") -> list[Any]:
    out = graph.invoke(
        {"messages": [HumanMessage(text)]}, {"configurable": {"thread_id": thread}}, context=ANN
    )
    return list(out["messages"])


def test_an_idle_turn_reads_no_memory_and_a_write_elsewhere_reaches_the_next_turn(
    backend: Backend,
) -> None:
    seen: list[str] = []
    graph = recorded_graph(backend, seen)
    for text in ("one", "two"):
        turn(graph, text)
    reading = Reading(backend.store)
    turn(graph, "three")
    assert reading.reads == 0  # the versions are unchanged: nothing read again
    ScopedMemory(backend.store).remember(ANN, "The offsite moved to Lisbon")
    turn(graph, "four")
    assert reading.reads > 0  # a note was written since: read again
    assert "offsite moved to Lisbon" in seen[-1]


def test_a_removal_by_another_door_leaves_the_next_model_call(backend: Backend) -> None:
    memory = ScopedMemory(backend.store)
    memory.remember(ANN, "Ann's locker code is 4512")
    seen: list[str] = []
    graph = recorded_graph(backend, seen)
    for text in ("one", "two", "three"):
        turn(graph, text)
    assert "locker code is 4512" in seen[-1]
    (note,) = memory.list_notes(ANN)
    memory.delete_note(ANN, note.key)
    turn(graph, "four")
    assert "locker code is 4512" not in seen[-1]


@pytest.mark.parametrize("write", ["put", "delete"])
def test_every_write_under_a_namespace_changes_its_version(backend: Backend, write: str) -> None:
    store = backend.store
    store.put(NOTES, "a", {"text": "first"})
    reads = Reads(prefixes=(NOTES[:3],))
    before = run(store, iter_plan(ReadVersions(reads)))
    assert before is not None
    if write == "put":
        store.put(NOTES, "a", {"text": "second"})
    else:
        store.delete(NOTES, "a")
    after = run(store, iter_plan(ReadVersions(reads)))
    assert after is not None and after != before
    other = Reads(exact=(("memory_plugin", "personal", "bob", "notes"),))
    assert run(store, iter_plan(ReadVersions(other))) == []


def test_a_thread_journal_is_never_vouched_for(backend: Backend) -> None:
    journal = Reads(prefixes=(("memory_plugin", "thread", "t"),))
    assert run(backend.store, iter_plan(ReadVersions(journal))) is None


def iter_plan(request: Any) -> Any:
    """A plan of one request."""
    return (yield request)


def test_a_store_without_versions_is_read_every_turn() -> None:
    from langgraph.store.memory import InMemoryStore

    store = InMemoryStore()
    store.batch([PutOp(NOTES, "a", {"text": "x"})])
    assert run(store, iter_plan(ReadVersions(Reads(prefixes=(NOTES,))))) is None


def test_a_namespace_emptied_keeps_no_version_and_gets_a_new_one_when_written_again(
    backend: Backend,
) -> None:
    store = backend.store
    reads = Reads(exact=(NOTES,))
    store.put(NOTES, "a", {"text": "first"})
    (first,) = run(store, iter_plan(ReadVersions(reads)))
    store.delete(NOTES, "a")
    assert run(store, iter_plan(ReadVersions(reads))) == []  # nothing of ann's notes left
    store.put(NOTES, "a", {"text": "first"})
    (again,) = run(store, iter_plan(ReadVersions(reads)))
    assert again[1] > first[1]


def test_a_note_the_turn_wrote_is_read_once_and_told_next_turn(backend: Backend) -> None:
    seen: list[str] = []
    remember = AIMessage(
        "", tool_calls=[{"name": "remember", "args": {"text": "Parking is on level 3"}, "id": "r1"}]
    )
    graph = recorded_graph(backend, seen, ["ok", "ok", remember, "Noted.", "ok"])
    for text in ("one", "two"):
        turn(graph, text)
    reading = Reading(backend.store)
    turn(graph, "remember where I parked")
    assert reading.reads > 0  # the recheck after the tool step read the new note
    reading.reads = 0
    turn(graph, "four")
    assert reading.reads == 0  # that read is what the next turn compares with
    assert "Parking is on level 3" in seen[-1]
