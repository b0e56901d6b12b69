"""Provenance: every note and document version records where it came from (thread, turn, tool
call or job) and when; values written before provenance existed read back as None."""

from __future__ import annotations

from typing import Any

import pytest
from langchain_core.messages import AIMessage, HumanMessage
from langgraph.store.base import PutOp

from memory_plugin import Backend
from memory_plugin.provenance import Provenance, current, origin
from memory_plugin.scope import thread_scope
from memory_plugin.scoped import ScopedMemory
from memory_plugin.scoped.documents import CURRENT, DOCUMENT, HISTORY, history_key
from memory_plugin.scoped.notes import NOTES
from tests.scoped_helpers import ANN, ANN_TEAM
from tests.test_scoped_tools import agent, call


def config(turn: int) -> dict[str, Any]:
    """Thread t1, with a run id per turn in `configurable` as LangGraph Server sets it."""
    return {"configurable": {"thread_id": "t1", "run_id": f"run-{turn}"}}


TURNS = [HumanMessage("hello"), HumanMessage("remember this")]


def tool_script() -> list[AIMessage]:
    """Turn 1 answers; turn 2 calls remember then update_memory."""
    return [
        AIMessage("hi there"),
        call("remember", text="Prefers tea over coffee"),
        call("update_memory", content="# Ann\n- Prefers tea"),
    ]


def check_tool_provenance(memory: ScopedMemory, notes: list[Any], history: list[Any]) -> None:
    (note,) = notes
    assert note.provenance is not None
    assert note.provenance.source == "tool"
    assert note.provenance.tool == "remember"
    assert note.provenance.tool_call_id == "call-remember"
    assert note.provenance.thread_id == "t1"
    assert note.provenance.turn == 2
    assert note.provenance.run_id == "run-2"
    assert note.provenance.actor == "ann"
    assert note.provenance.at.startswith(note.day)
    document = history[0]
    assert document.provenance is not None
    assert document.provenance.tool == "update_memory"
    assert document.provenance.tool_call_id == "call-update_memory"
    assert (document.provenance.thread_id, document.provenance.turn) == ("t1", 2)


def test_tool_writes_record_thread_turn_and_tool_call(backend: Backend) -> None:
    graph = agent(backend, *tool_script())
    for n, message in enumerate(TURNS, start=1):
        graph.invoke({"messages": [message]}, config(n), context=ANN)
    memory = ScopedMemory(backend.store)
    check_tool_provenance(memory, memory.list_notes(ANN), memory.history(ANN))
    assert memory.read_document(ANN).provenance == memory.history(ANN)[0].provenance  # type: ignore[union-attr]


async def test_tool_writes_record_provenance_async(abackend: Backend) -> None:
    graph = agent(abackend, *tool_script())
    for n, message in enumerate(TURNS, start=1):
        await graph.ainvoke({"messages": [message]}, config(n), context=ANN_TEAM)
    memory = ScopedMemory(abackend.store)
    notes = await memory.alist_notes(ANN_TEAM)
    history = await memory.ahistory(ANN_TEAM)
    check_tool_provenance(memory, notes, history)


def test_code_writes_and_origin_blocks(backend: Backend) -> None:
    memory = ScopedMemory(backend.store)
    plain = memory.remember(ANN, "Lives in Zurich")
    with origin(source="api", actor="ann"):
        by_api = memory.remember(ANN, "Has a dog")
        with origin(job="import"):
            imported = memory.import_notes(ANN, [("2026-11-01", "Started at Acme")])
    assert plain.provenance is not None and plain.provenance.source == "code"
    assert plain.provenance.actor == "ann"
    assert plain.provenance.thread_id is None and plain.provenance.tool is None
    assert by_api.provenance is not None
    assert (by_api.provenance.source, by_api.provenance.actor) == ("api", "ann")
    assert imported[0].provenance is not None
    assert imported[0].provenance.job == "import"
    assert imported[0].provenance.source == "api"
    stored = {n.key: n.provenance for n in memory.list_notes(ANN)}
    assert stored[by_api.key] == by_api.provenance
    assert stored[imported[0].key] == imported[0].provenance
    hits = {hit.note.key: hit.note.provenance for hit in memory.recall(ANN, "dog")}
    assert hits[by_api.key] == by_api.provenance


async def test_document_versions_from_write_and_restore(abackend: Backend) -> None:
    memory = ScopedMemory(abackend.store)
    await memory.awrite_document(ANN, "first")
    with origin(source="api", actor="ann"):
        await memory.awrite_document(ANN, "second")
        restored = await memory.arestore(ANN, 1)
    assert restored.document.provenance is not None
    assert restored.document.provenance.source == "api"
    history = await memory.ahistory(ANN)
    assert [d.text for d in history] == ["first", "second", "first"]
    sources = [d.provenance.source if d.provenance else None for d in history]
    assert sources == ["api", "api", "code"]


def test_values_written_before_provenance_read_as_none(backend: Backend) -> None:
    scope = thread_scope(ANN)
    old_note = {
        "text": "- Old fact",
        "day": "2026-10-01",
        "position": 1,
        "created_at": "2026-10-01T09:00:00+00:00",
        "consolidated": False,
        "version": 1,
    }
    old_doc = {"text": "old", "updated_at": "2026-10-01T09:00:00+00:00", "folded": [], "version": 1}
    backend.store.batch(
        [
            PutOp(scope.child(NOTES), "2026-10-01#000001", old_note),
            PutOp(scope.child(DOCUMENT), CURRENT, old_doc),
            PutOp(scope.child(HISTORY), history_key(1), old_doc),
        ]
    )
    memory = ScopedMemory(backend.store)
    (note,) = memory.list_notes(ANN)
    assert note.body == "Old fact" and note.provenance is None
    assert memory.read_document(ANN).provenance is None  # type: ignore[union-attr]
    assert [d.provenance for d in memory.history(ANN)] == [None]


def test_provenance_json_round_trip_and_garbage() -> None:
    with origin(source="job", job="consolidation", job_run="r1"):
        found = current()
    assert Provenance.from_json(found.to_json()) == found
    assert "thread_id" not in found.to_json()
    for garbage in (None, "x", {"source": "alien", "at": "now"}, {"source": "tool"}, [1]):
        assert Provenance.from_json(garbage) is None
    odd = Provenance.from_json({"source": "tool", "at": "t", "turn": "3", "tool": 5})
    assert odd == Provenance("tool", "t")


def test_origin_refuses_unknown_fields_and_sources() -> None:
    with pytest.raises(TypeError, match="colour"), origin(colour="red"):
        pass
    with pytest.raises(ValueError, match="source"), origin(source="alien"):
        pass
    with origin(source="api"):
        pass
    assert current().source == "code"
