"""A run with no user_id: the turn runs, the thread is kept, and memory says once, with the
reason, that it is off for the run (a `scoped` `disabled` event each turn and one log line per
process) instead of failing; the same under LangGraph Server's unauthenticated user."""

from __future__ import annotations

import logging
from typing import Any

import pytest
from langchain.agents import create_agent
from langchain_core.language_models import GenericFakeChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage
from langchain_core.outputs import ChatResult
from langgraph_api.auth.noop import UnauthenticatedUser
from pydantic import Field

from memory_plugin import Backend, MemoryContext, create_memory_graph
from memory_plugin.prebuilt.middleware import MemoryMiddleware
from memory_plugin.scope import nouser
from memory_plugin.scoped import ScopedMemory

SCOPED_TOOLS = {"remember", "update_memory", "recall"}
REMEMBER = {"name": "remember", "args": {"text": "Likes tea"}, "id": "call-1"}
LOCAL: dict[str, Any] = {}
SERVER = {"langgraph_auth_user": UnauthenticatedUser(), "langgraph_auth_user_id": ""}


class Agent(GenericFakeChatModel):
    """A scripted model recording the tool names bound for each turn and every input."""

    bound: list[set[str]] = Field(default_factory=list)
    inputs: list[list[BaseMessage]] = Field(default_factory=list)

    def bind_tools(self, tools: Any, **kwargs: Any) -> Agent:
        self.bound.append({getattr(t, "name", "") for t in tools})
        return self

    def _generate(self, messages: list[BaseMessage], *args: Any, **kwargs: Any) -> ChatResult:
        self.inputs.append(list(messages))
        return super()._generate(messages, *args, **kwargs)


def agent(*replies: AIMessage) -> Agent:
    return Agent(messages=iter(replies))


@pytest.fixture(autouse=True)
def fresh_log(monkeypatch: pytest.MonkeyPatch) -> None:
    """Each test is a fresh process as far as the once-per-process log line goes."""
    monkeypatch.setattr(nouser, "_logged", set())


def config(thread: str, server: dict[str, Any]) -> dict[str, Any]:
    return {"configurable": {"thread_id": thread, **server}}


def turn(graph: Any, text: str, thread: str, server: dict[str, Any]) -> tuple[Any, list[Any]]:
    """One turn without a user: the final state and the memory events streamed."""
    events, state = [], None
    for mode, chunk in graph.stream(
        {"messages": [HumanMessage(text)]},
        config(thread, server),
        stream_mode=["custom", "values"],
    ):
        if mode == "custom":
            events.append(chunk)
        else:
            state = chunk
    return state, events


async def aturn(
    graph: Any, text: str, thread: str, server: dict[str, Any]
) -> tuple[Any, list[Any]]:
    """Async twin of turn."""
    events, state = [], None
    async for mode, chunk in graph.astream(
        {"messages": [HumanMessage(text)]},
        config(thread, server),
        stream_mode=["custom", "values"],
    ):
        if mode == "custom":
            events.append(chunk)
        else:
            state = chunk
    return state, events


def disabled(events: list[Any]) -> list[str]:
    """The reasons of the turn's memory-off events."""
    return [
        e["details"]["reason"]
        for e in events
        if (e["kind"], e["action"]) == ("context_management", "disabled")
    ]


def assert_memory_off(model: Agent, turns: list[tuple[Any, list[Any]]], caplog: Any) -> None:
    """Each turn answered and said once why memory is off; the thread was kept; no memory
    tool was offered, no profile work tried, one log line in all."""
    for n, (state, events) in enumerate(turns):
        assert state["messages"][-1].content == f"Answer {n}."
        (reason,) = disabled(events)
        assert "memory is off for this run" in reason and "user_id" in reason
        assert not [e for e in events if e["kind"] == "profile"], events
    assert [m.content for m in model.inputs[-1] if isinstance(m, HumanMessage)] == [
        "Hello",
        "Hello again",
    ]
    assert not any(names & SCOPED_TOOLS for names in model.bound)  # no tool is bound at all here
    lines = [r for r in caplog.records if "memory is off for this run" in r.getMessage()]
    assert len(lines) == 1


@pytest.mark.parametrize("server", [LOCAL, SERVER], ids=["local", "server"])
def test_a_run_without_a_user_says_once_that_memory_is_off(
    backend: Backend, server: dict[str, Any], caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.WARNING, logger="memory_plugin.scope.nouser")
    model = agent(AIMessage("Answer 0."), AIMessage("Answer 1."))
    graph = create_memory_graph(model, store=backend.store, checkpointer=backend.checkpointer)
    turns = [turn(graph, text, "anon", server) for text in ("Hello", "Hello again")]
    assert_memory_off(model, turns, caplog)


@pytest.mark.slow
@pytest.mark.parametrize("server", [LOCAL, SERVER], ids=["local", "server"])
async def test_a_run_without_a_user_under_ainvoke(
    abackend: Backend, server: dict[str, Any], caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.WARNING, logger="memory_plugin.scope.nouser")
    model = agent(AIMessage("Answer 0."), AIMessage("Answer 1."))
    graph = create_memory_graph(model, store=abackend.store, checkpointer=abackend.checkpointer)
    turns = [await aturn(graph, text, "anon", server) for text in ("Hello", "Hello again")]
    assert_memory_off(model, turns, caplog)


def test_a_memory_tool_called_anyway_is_refused_with_the_reason(backend: Backend) -> None:
    model = agent(AIMessage("", tool_calls=[REMEMBER]), AIMessage("Answer 0."))
    graph = create_memory_graph(model, store=backend.store, checkpointer=backend.checkpointer)
    state, events = turn(graph, "Remember that I like tea", "anon-tool", LOCAL)
    (refused,) = [m for m in state["messages"] if isinstance(m, ToolMessage)]
    assert refused.status == "error"
    assert "Memory not changed" in str(refused.content) and "user_id" in str(refused.content)
    assert state["messages"][-1].content == "Answer 0."
    assert len(disabled(events)) == 1
    assert ScopedMemory(backend.store).list_notes(MemoryContext(user_id="anon")) == []


def test_a_run_with_a_user_says_nothing_of_the_kind(backend: Backend) -> None:
    model = agent(AIMessage("Answer 0."))
    graph = create_memory_graph(model, store=backend.store, checkpointer=backend.checkpointer)
    events = [
        chunk
        for chunk in graph.stream(
            {"messages": [HumanMessage("Hello")]},
            config("ann", LOCAL),
            context=MemoryContext(user_id="ann"),
            stream_mode="custom",
        )
    ]
    assert disabled(events) == []
    assert model.bound[-1] >= SCOPED_TOOLS


def middleware_agent(model: Agent, backend: Backend) -> Any:
    return create_agent(
        model,
        tools=[],
        middleware=[MemoryMiddleware(model)],
        checkpointer=backend.checkpointer,
        store=backend.store,
        context_schema=MemoryContext,
    )


def test_the_middleware_says_once_that_memory_is_off(
    backend: Backend, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.WARNING, logger="memory_plugin.scope.nouser")
    model = agent(AIMessage("Answer 0."), AIMessage("Answer 1."))
    graph = middleware_agent(model, backend)
    turns = [turn(graph, text, "anon-mw", SERVER) for text in ("Hello", "Hello again")]
    assert_memory_off(model, turns, caplog)


async def test_the_middleware_says_once_that_memory_is_off_under_ainvoke(
    abackend: Backend, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.WARNING, logger="memory_plugin.scope.nouser")
    model = agent(AIMessage("Answer 0."), AIMessage("Answer 1."))
    graph = middleware_agent(model, abackend)
    turns = [await aturn(graph, text, "anon-mw", LOCAL) for text in ("Hello", "Hello again")]
    assert_memory_off(model, turns, caplog)
