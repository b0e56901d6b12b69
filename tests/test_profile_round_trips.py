"""Issue 37, point 1: the profile job of a turn with nothing new costs no store round trip; a
change costs one conditional write, still safe against a concurrent writer; and an exchange
answered NOOP in a process that then exits is consolidated again, never skipped. Counted on a
real SQLite store (its connection's trace), through create_memory_graph; only the models are
fakes."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from langchain_core.messages import HumanMessage

from memory_plugin import Backend, MemoryContext, connect, create_memory_graph
from memory_plugin.offline.demo import DemoModel
from memory_plugin.profile.document import SECTIONS
from memory_plugin.profile.memory import ProfileMemory, wait_for_profiles
from tests.fakes import ProfileModel

ANN = MemoryContext(user_id="ann")
FACTS = {
    "Lisbon": {"op": "ADD", "section": "Identity", "bullet": "Lives in Lisbon."},
    "Rust": {"op": "ADD", "section": "Skills & Expertise", "bullet": "Writes Rust."},
    "tea": {"op": "ADD", "section": "Communication Preferences", "bullet": "Likes tea."},
}
JOB_THREAD = "memory-plugin-profile"


@pytest.fixture
def sqlite(tmp_path: Path) -> Iterator[Backend]:
    backend = connect(f"sqlite:///{tmp_path / 'memory.db'}")
    try:
        yield backend
    finally:
        backend.close()


class JobStatements:
    """The SQL statements the profile's background jobs run on the store's connection."""

    def __init__(self, backend: Backend) -> None:
        self.seen: list[str] = []
        backend.store.conn.set_trace_callback(self._traced)  # type: ignore[attr-defined]

    def _traced(self, statement: str) -> None:
        if threading.current_thread().name == JOB_THREAD:
            self.seen.append(statement)

    def during(self, graph: Any, text: str) -> list[str]:
        """The statements of the job started by one turn."""
        self.seen.clear()
        turn(graph, text)
        assert wait_for_profiles()
        return list(self.seen)


def graph_for(backend: Backend, model: ProfileModel) -> Any:
    return create_memory_graph(
        DemoModel(script=[f"Answer {n}." for n in range(8)]),
        store=backend.store,
        checkpointer=backend.checkpointer,
        maintenance_model=model,
    )


def turn(graph: Any, text: str) -> None:
    config = {"configurable": {"thread_id": "t"}}
    graph.invoke({"messages": [HumanMessage(text)]}, config, context=ANN)


def bullets(backend: Backend) -> dict[str, tuple[str, ...]]:
    stored = ProfileMemory(backend.store).read(ANN)
    assert stored is not None
    return {s: stored.bullets(s) for s in SECTIONS}


@pytest.mark.slow
def test_a_turn_with_nothing_new_runs_no_statement_and_a_change_one_write(
    sqlite: Backend,
) -> None:
    model = ProfileModel(plan=FACTS)
    graph = graph_for(sqlite, model)
    statements = JobStatements(sqlite)
    assert statements.during(graph, "I just moved to Lisbon")  # the first job reads, writes
    for text in ("what time is it?", "thanks!"):
        asked = len(model.calls)
        assert statements.during(graph, text) == []
        assert len(model.calls) == asked + 1  # the model was asked, and answered NOOP
    change = statements.during(graph, "I write Rust at work")
    assert change and change[0].lstrip().upper().startswith("BEGIN")  # no read before it
    assert sum(s.lstrip().upper().startswith("BEGIN") for s in change) == 1
    assert bullets(sqlite)["Skills & Expertise"] == ("Writes Rust.",)
    assert statements.during(graph, "see you") == []


@pytest.mark.slow
def test_a_change_made_meanwhile_by_another_writer_is_kept(sqlite: Backend) -> None:
    gate = threading.Event()
    model = ProfileModel(plan=FACTS)
    graph = graph_for(sqlite, model)
    turn(graph, "I just moved to Lisbon")
    turn(graph, "what time is it?")
    assert wait_for_profiles()
    model.gate = gate
    try:
        turn(graph, "I write Rust at work")  # its job waits in the model
        other = ProfileMemory(sqlite.store, model=ProfileModel(plan=FACTS))
        assert other.consolidate(ANN, "I like tea", "Noted.").status == "updated"
    finally:
        gate.set()
    assert wait_for_profiles()
    held = bullets(sqlite)
    assert held["Identity"] == ("Lives in Lisbon.",)
    assert held["Skills & Expertise"] == ("Writes Rust.",)
    assert held["Communication Preferences"] == ("Likes tea.",)


@pytest.mark.slow
def test_exchanges_answered_noop_before_a_restart_are_asked_again_never_skipped(
    sqlite: Backend,
) -> None:
    graph = graph_for(sqlite, ProfileModel(plan=FACTS))
    turn(graph, "I just moved to Lisbon")
    turn(graph, "what time is it?")
    assert wait_for_profiles()
    restarted = ProfileModel(plan=FACTS)  # a new process: nothing known in memory
    turn(graph_for(sqlite, restarted), "I write Rust at work")
    assert wait_for_profiles()
    asked = [call for call in restarted.calls if "<exchange>" in call]
    assert any("what time is it?" in call for call in asked)
    assert any("I write Rust at work" in call for call in asked)
    assert bullets(sqlite)["Skills & Expertise"] == ("Writes Rust.",)
