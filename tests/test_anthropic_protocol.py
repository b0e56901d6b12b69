"""The path of users on Claude: langchain-anthropic's ChatAnthropic, speaking the Messages API
(tool use included, streaming on and off) to a local scripted server (tests/anthropic_server.py)
through the prebuilt graph, with the memory tools bound plain and strict: what the server got
(the tools, the tool_use and tool_result round trip, the profile request) and what the real
store kept."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from langchain_anthropic import ChatAnthropic
from langchain_core.messages import HumanMessage
from langchain_core.runnables import RunnableConfig
from pydantic import SecretStr

from memory_plugin import Backend, MemoryContext, create_memory_graph
from memory_plugin.agent import AgentMemory
from memory_plugin.profile.memory import ProfileMemory, await_profiles, wait_for_profiles
from memory_plugin.scoped import ScopedMemory
from memory_plugin.settings import MemorySettings
from tests.anthropic_server import API_KEY, AnthropicServer, blocks, text_of
from tests.openai_server import call, text
from tests.provider_rules import anthropic_problems

ANN = MemoryContext(user_id="ann", workspace_id="acme")
ANN_WITH_AGENT = MemoryContext(user_id="ann", workspace_id="acme", agent_id="helper")
SYSTEM = "You are a helpful assistant with durable memory."
TOLD = "I'm Ann. Remember that the release freeze starts on Friday."
FACT = "The release freeze starts on Friday"
ANSWER = "Noted: the release freeze starts on Friday."
PROFILE = """# User Memory

## Identity
- Name is Ann.

## Communication Preferences
_(empty)_

## Work Context
- Release freeze starts on Friday.

## Skills & Expertise
_(empty)_

## Recent Topics
_(empty)_

## Open Questions / Follow-ups
_(empty)_"""
FIRST_TURN = [call("remember", text=FACT), text(ANSWER), text(PROFILE)]
SECOND_TURN = [text("From memory: the freeze starts on Friday."), text("NOOP")]
STORE_WITH_NULLS = call(
    "memory_store",
    key="freeze",
    content=FACT,
    category=None,
    visibility=None,
    importance=None,
    expires_in_days=None,
)


@pytest.fixture
def server() -> Iterator[AnthropicServer]:
    """A scripted Messages API server on a free 127.0.0.1 port."""
    with AnthropicServer(lifetime=300) as running:
        yield running


def claude(server: AnthropicServer, streaming: bool) -> ChatAnthropic:
    """The real client, pointed at the server with a key, as users configure it."""
    return ChatAnthropic(  # type: ignore[call-arg]
        model_name="claude-test",
        base_url=server.base_url,
        api_key=SecretStr(API_KEY),
        streaming=streaming,
        max_retries=0,
    )


def config(thread: str) -> RunnableConfig:
    return {"configurable": {"thread_id": thread}}


def check_first_turn(server: AnthropicServer, streaming: bool) -> None:
    """What the client sent: the memory tools, the tool_use answered by its tool_result, and
    the profile consolidation as a separate, tool-free request."""
    assert server.refused == [] and server.unanswered == []
    first, second, profile = server.requests
    assert all(r.body.get("stream", False) is streaming for r in server.requests)
    assert all(
        API_KEY in (r.key, r.bearer) and r.headers["anthropic-version"] for r in server.requests
    )
    assert {"remember", "recall", "update_memory"} <= set(first.tool_names)
    remember = first.tool("remember")
    assert remember["input_schema"]["required"] == ["text"]
    assert set(remember["input_schema"]["properties"]) == {"text"}
    assert anthropic_problems(first.body["tools"]) == []
    assert SYSTEM in first.system
    assert [m["role"] for m in first.messages] == ["user"]
    assert text_of(first.messages[0]["content"]) == TOLD
    assistant, result = second.messages[-2:]
    (use,) = [b for b in blocks(assistant) if b["type"] == "tool_use"]
    assert use == {
        "type": "tool_use",
        "id": "toolu_0_remember",
        "name": "remember",
        "input": {"text": FACT},
    }
    (answer,) = blocks(result)
    assert answer["type"] == "tool_result" and answer["tool_use_id"] == "toolu_0_remember"
    assert text_of(answer["content"]).startswith("Noted for ")
    assert "tools" not in profile.body
    assert "durable profile of one user" in profile.system


def check_second_turn(server: AnthropicServer) -> None:
    """The next thread's request carries the note and the profile in its system prompt."""
    request = server.requests[3]
    assert "<recent_memory_notes>" in request.system and FACT in request.system
    assert "<user_memory>" in request.system and "- Name is Ann." in request.system
    assert [m["role"] for m in request.messages] == ["user"]


@pytest.mark.slow
@pytest.mark.parametrize("streaming", [False, True], ids=["plain", "streaming"])
def test_a_remembered_fact_through_chatanthropic(
    backend: Backend, server: AnthropicServer, streaming: bool
) -> None:
    server.script(*FIRST_TURN)
    graph = create_memory_graph(
        claude(server, streaming),
        store=backend.store,
        checkpointer=backend.checkpointer,
        system_prompt=SYSTEM,
    )
    out = graph.invoke({"messages": [HumanMessage(TOLD)]}, config("t1"), context=ANN)
    assert out["messages"][-1].text == ANSWER
    assert wait_for_profiles()  # the profile request is made in the background
    check_first_turn(server, streaming)
    assert [n.text for n in ScopedMemory(backend.store).list_notes(ANN)] == [f"- {FACT}"]
    profile = ProfileMemory(backend.store).read(ANN)
    assert profile is not None and profile.sections["Identity"] == ("Name is Ann.",)
    server.script(*SECOND_TURN)
    ask = {"messages": [HumanMessage("When does the freeze start?")]}
    out = graph.invoke(ask, config("t2"), context=ANN)
    assert out["messages"][-1].text == "From memory: the freeze starts on Friday."
    check_second_turn(server)


@pytest.mark.slow
@pytest.mark.parametrize("streaming", [False, True], ids=["plain", "streaming"])
async def test_a_remembered_fact_through_chatanthropic_async(
    abackend: Backend, server: AnthropicServer, streaming: bool
) -> None:
    server.script(*FIRST_TURN)
    graph = create_memory_graph(
        claude(server, streaming),
        store=abackend.store,
        checkpointer=abackend.checkpointer,
        system_prompt=SYSTEM,
    )
    out = await graph.ainvoke({"messages": [HumanMessage(TOLD)]}, config("t1"), context=ANN)
    assert out["messages"][-1].text == ANSWER
    await await_profiles()  # the profile request is made in the background
    check_first_turn(server, streaming)
    notes = await ScopedMemory(abackend.store).alist_notes(ANN)
    assert [n.text for n in notes] == [f"- {FACT}"]


def check_strict(request: Any) -> None:
    """Every tool of the request is strict and within Anthropic's strict rules."""
    tools = request.body["tools"]
    assert {"remember", "memory_store", "memory"} <= {t["name"] for t in tools}
    assert all(t["strict"] is True for t in tools)
    assert anthropic_problems(tools) == []


@pytest.mark.slow
@pytest.mark.parametrize("streaming", [False, True], ids=["plain", "streaming"])
def test_strict_tools_through_chatanthropic_take_nulls_for_defaults(
    backend: Backend, server: AnthropicServer, streaming: bool
) -> None:
    """Bound strict (`tool_binding`), the tools pass Anthropic's strict rules, and a call
    sending null for every optional argument (as strict decoding does) stores the defaults."""
    server.script(STORE_WITH_NULLS, text("Stored."), text("NOOP"))
    graph = create_memory_graph(
        claude(server, streaming),
        store=backend.store,
        checkpointer=backend.checkpointer,
        settings=MemorySettings(agent_memory=True, bounded_memory=True),
        tool_binding={"strict": True},
    )
    out = graph.invoke({"messages": [HumanMessage(TOLD)]}, config("t1"), context=ANN_WITH_AGENT)
    assert out["messages"][-1].text == "Stored."
    assert wait_for_profiles()
    assert server.refused == [] and server.unanswered == []
    check_strict(server.requests[0])
    (result,) = blocks(server.requests[1].messages[-1])
    assert text_of(result["content"]) == "Stored entry 'freeze' (private)."
    (entry,) = AgentMemory(backend.store).entries(ANN_WITH_AGENT)
    assert (entry.key, entry.content) == ("freeze", FACT)
    assert (entry.category, entry.visibility, entry.importance) == ("general", "private", 0.5)
    assert entry.expires_at is None


def test_the_server_refuses_what_anthropic_refuses(server: AnthropicServer) -> None:
    """The stub is strict where Anthropic is: a tool_use left unanswered is a 400 that reaches
    the caller as the SDK's BadRequestError, and nothing scripted is used up."""
    from anthropic import BadRequestError
    from langchain_core.messages import AIMessage

    server.script(text("never sent"))
    unanswered = AIMessage("", tool_calls=[{"name": "remember", "args": {}, "id": "toolu_x"}])
    with pytest.raises(BadRequestError, match="without `tool_result`"):
        claude(server, streaming=False).invoke([HumanMessage("Hi"), unanswered, HumanMessage("?")])
    assert len(server.refused) == 1 and len(server.unanswered) == 1
