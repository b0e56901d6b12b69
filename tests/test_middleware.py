"""MemoryMiddleware: a create_agent agent gets the prebuilt graph's memory, on every backend."""

from __future__ import annotations

from typing import Any

import pytest
from langchain.agents import create_agent
from langchain_core.messages import AIMessage, BaseMessage
from pydantic import Field

from memory_plugin import Backend
from memory_plugin.context_management.nodes import summarize_now
from memory_plugin.context_management.state import MemoryState
from memory_plugin.offline.demo import DemoModel
from memory_plugin.prebuilt.middleware import MemoryMiddleware
from memory_plugin.profile.memory import await_profiles, wait_for_profiles
from memory_plugin.scope.context import MemoryContext
from memory_plugin.settings import MemorySettings

PROMPT = "You are Pal, a friendly assistant."
ANN, BOB = MemoryContext(user_id="ann"), MemoryContext(user_id="bob")


class RecordingModel(DemoModel):
    """The demo model, keeping every input of the agent's own model calls."""

    inputs: list[list[BaseMessage]] = Field(default_factory=list)

    def _generate(self, messages: list[BaseMessage], *args: Any, **kwargs: Any) -> Any:
        if messages and str(messages[0].content).startswith(PROMPT):
            self.inputs.append(list(messages))
        return super()._generate(messages, *args, **kwargs)

    def system(self) -> str:
        """The system prompt of the agent's latest model call."""
        return str(self.inputs[-1][0].content)


def thread(thread_id: str) -> dict[str, Any]:
    return {"configurable": {"thread_id": thread_id}}


def say(text: str) -> dict[str, Any]:
    return {"messages": [{"role": "user", "content": text}]}


def remembering_model() -> RecordingModel:
    """Thread 1: store a fact with `remember`, then answer; then one answer per later turn."""
    call = {"name": "remember", "args": {"text": "Prefers green tea"}, "id": "call-1"}
    return RecordingModel(
        script=[
            AIMessage("", tool_calls=[call]),
            AIMessage("Nice to meet you, Ann."),
            AIMessage("Welcome back."),
            AIMessage("Hello."),
        ]
    )


def agent_for(
    model: RecordingModel, backend: Backend, state_schema: Any = None, **options: Any
) -> Any:
    return create_agent(
        model,
        tools=[],
        middleware=[MemoryMiddleware(model, **options)],
        checkpointer=backend.checkpointer,
        store=backend.store,
        context_schema=MemoryContext,
        state_schema=state_schema,
    )


def assert_remembered(model: RecordingModel) -> None:
    system = model.system()
    assert "What I know about you" in system
    assert "Name is Ann." in system
    assert "<recent_memory_notes>" in system
    assert "Prefers green tea" in system


def assert_forgotten(model: RecordingModel) -> None:
    system = model.system()
    assert "What I know about you" not in system
    assert "Name is Ann." not in system
    assert "Prefers green tea" not in system


def test_agent_remembers_the_user_in_a_new_thread(backend: Backend) -> None:
    model = remembering_model()
    agent = agent_for(model, backend, system_prompt=PROMPT)

    first = agent.invoke(say("Hi, my name is Ann."), thread("ann-1"), context=ANN)
    assert first["messages"][-1].content == "Nice to meet you, Ann."
    assert "Noted for" in first["messages"][-2].content
    assert "Name is Ann." not in model.inputs[0][0].content
    assert wait_for_profiles()  # the profile is consolidated in the background

    agent.invoke(say("Do you remember me?"), thread("ann-2"), context=ANN)
    assert_remembered(model)
    assert model.inputs[-1][-1].content == "Do you remember me?"

    agent.invoke(say("Do you remember me?"), thread("bob-1"), context=BOB)
    assert_forgotten(model)


async def test_async_agent_remembers_the_user_in_a_new_thread(abackend: Backend) -> None:
    model = remembering_model()
    agent = create_agent(
        model,
        tools=[],
        system_prompt=PROMPT,
        middleware=[MemoryMiddleware(model)],
        checkpointer=abackend.checkpointer,
        store=abackend.store,
        context_schema=MemoryContext,
    )

    await agent.ainvoke(say("Hi, my name is Ann."), thread("ann-1"), context=ANN)
    await await_profiles()  # the profile is consolidated in the background
    await agent.ainvoke(say("Do you remember me?"), thread("ann-2"), context=ANN)
    assert_remembered(model)
    assert model.system().index(PROMPT) < model.system().index("What I know about you")

    await agent.ainvoke(say("Do you remember me?"), thread("bob-1"), context=BOB)
    assert_forgotten(model)


@pytest.mark.parametrize("state_schema", [None, MemoryState])
def test_agent_searches_its_whole_transcript(backend: Backend, state_schema: Any) -> None:
    search = {"name": "journal_message_search", "args": {"query": "Lisbon"}, "id": "call-1"}
    model = RecordingModel(
        script=["Lisbon is lovely in May.", AIMessage("", tool_calls=[search]), "Found it."]
    )
    agent = agent_for(model, backend, state_schema=state_schema, system_prompt=PROMPT)

    agent.invoke(say("I am planning a trip to Lisbon."), thread("t"), context=ANN)
    out = agent.invoke(say("Where did I say I was going?"), thread("t"), context=ANN)

    found = out["messages"][-2].content
    assert "human: I am planning a trip to Lisbon." in found
    assert "ai: Lisbon is lovely in May." in found
    assert out["messages"][-1].content == "Found it."


def test_summarize_now_compacts_an_agent_thread(backend: Backend) -> None:
    settings = MemorySettings(
        compaction_manual=True, fallback_context_window=4_096, summarization_keep_ratio=0.01
    )
    model = RecordingModel(
        script=["Paris is the capital of France. " * 10, "Lyon is on the Rhone. " * 10, "Yes."]
    )
    agent = agent_for(model, backend, settings=settings, system_prompt=PROMPT)
    agent.invoke(say("Tell me about Paris, in some detail."), thread("t"), context=ANN)
    agent.invoke(say("And about Lyon?"), thread("t"), context=ANN)

    report = summarize_now(agent, thread("t"), context=ANN)
    assert report["status"] == "compacted"
    assert len(model.inputs) == 2

    agent.invoke(say("Did I ask about Paris?"), thread("t"), context=ANN)
    assert "<conversation_summary>" in model.system()
    assert "Tell me about Paris" in model.system()
    assert not any("Tell me about Paris" in str(m.content) for m in model.inputs[-1][1:])


def test_switched_off_memory_kinds_stay_out_of_the_agent(backend: Backend) -> None:
    settings = MemorySettings(scoped_memory=False, profile=False)
    model = RecordingModel(script=["Hi Ann.", "Hello."])
    middleware = MemoryMiddleware(model, settings=settings, system_prompt=PROMPT)
    assert {tool.name for tool in middleware.tools} == {
        "journal_message_search",
        "journal_tool_call_view",
    }
    agent = agent_for(model, backend, settings=settings, system_prompt=PROMPT)

    agent.invoke(say("Hi, my name is Ann."), thread("ann-1"), context=ANN)
    agent.invoke(say("Do you remember me?"), thread("ann-2"), context=ANN)
    assert model.system() == PROMPT
