"""A memory event's kind is the name of the kind that did it (issue 35, point 1): the names of
memory_plugin.kinds.KINDS and nothing else, a kind added to KINDS emits under its own name, and
no emitter spells a kind by hand."""

from __future__ import annotations

import ast
from pathlib import Path
from typing import Any

import pytest
from langchain_core.language_models import GenericFakeChatModel
from langchain_core.messages import AIMessage, HumanMessage
from langchain_core.tools import BaseTool, StructuredTool
from langgraph.prebuilt import ToolRuntime

import memory_plugin
from memory_plugin import Backend, MemoryContext, MemoryEvent, create_memory_graph, kinds
from memory_plugin.base import MemoryService
from memory_plugin.events import emit
from memory_plugin.scope.identity import Membership
from memory_plugin.settings import MemorySettings

ANN = MemoryContext(user_id="ann")
NAMES = {kind.name for kind in kinds.KINDS}
REMEMBER = {"name": "remember", "args": {"text": "The freeze starts Friday"}, "id": "call-1"}
WRITE = {"name": "diary_write", "args": {"line": "Shipped"}, "id": "call-1"}


class Diary(MemoryService):
    """A sixth kind: one tool that says what it did as a memory event under the kind's name."""

    name = "web_search"

    def tools(self, membership: Membership | None) -> list[BaseTool]:
        """diary_write."""

        def diary_write(line: str, runtime: ToolRuntime[Any, Any]) -> str:
            emit(self.name, "line_written", None, line=line)
            return "Noted."

        return [StructuredTool.from_function(diary_write, description="Write a diary line.")]


class Agent(GenericFakeChatModel):
    """A scripted model that takes any tools."""

    def bind_tools(self, tools: Any, **kwargs: Any) -> Agent:
        return self


def model(call: dict[str, Any]) -> Agent:
    return Agent(messages=iter([AIMessage("", tool_calls=[call]), AIMessage("Ok.")]))


def events(graph: Any, thread: str) -> list[MemoryEvent]:
    """One turn's memory events, each read back as the public model."""
    return [
        MemoryEvent.model_validate(chunk)
        for chunk in graph.stream(
            {"messages": [HumanMessage("Note it")]},
            {"configurable": {"thread_id": thread}},
            context=ANN,
            stream_mode="custom",
        )
    ]


def test_a_turns_events_carry_the_names_of_the_kinds(backend: Backend) -> None:
    graph = create_memory_graph(
        model(REMEMBER), store=backend.store, checkpointer=backend.checkpointer
    )
    seen = {(event.kind, event.action) for event in events(graph, "t1")}
    assert {kind for kind, _ in seen} <= NAMES, seen
    assert {("scoped_memory", "note_stored"), ("context_management", "loaded")} <= seen
    assert ("context_management", "journaled") in seen


async def test_memory_off_is_said_under_the_kind_that_says_it(abackend: Backend) -> None:
    graph = create_memory_graph(
        model(REMEMBER), store=abackend.store, checkpointer=abackend.checkpointer
    )
    said = [
        chunk
        async for chunk in graph.astream(
            {"messages": [HumanMessage("Note it")]},
            {"configurable": {"thread_id": "t1"}},
            context=MemoryContext(),
            stream_mode="custom",
        )
        if chunk["action"] == "disabled"
    ]
    assert [chunk["kind"] for chunk in said] == ["context_management"]


def test_a_kind_added_to_kinds_emits_under_its_own_name(
    backend: Backend, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(kinds, "KINDS", (*kinds.KINDS, Diary))
    graph = create_memory_graph(
        model(WRITE),
        store=backend.store,
        checkpointer=backend.checkpointer,
        settings=MemorySettings(web_search=True),
    )
    written = [e for e in events(graph, "t1") if e.action == "line_written"]
    assert [(e.kind, e.details) for e in written] == [("web_search", {"line": "Shipped"})]


def _kinds_spelled(source: str, where: str) -> list[str]:
    """Each `emit` call in the source whose kind is a string literal, as where:line."""
    return [
        f"{where}:{node.lineno}"
        for node in ast.walk(ast.parse(source))
        if isinstance(node, ast.Call)
        and getattr(node.func, "id", None) == "emit"
        and node.args
        and isinstance(node.args[0], ast.Constant)
    ]


def test_no_emitter_spells_a_kind_by_hand() -> None:
    assert _kinds_spelled('emit("scoped", "loaded", None)', "old") == ["old:1"]
    root = Path(memory_plugin.__file__).parent
    sources = {
        str(path.relative_to(root)): path.read_text(encoding="utf-8") for path in root.rglob("*.py")
    }
    emitting = {where: source for where, source in sources.items() if "emit(" in source}
    assert "scoped/toolkit.py" in emitting
    assert [hit for where, src in emitting.items() for hit in _kinds_spelled(src, where)] == []
