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
from pydantic import SecretStr

from memory_plugin import Backend, MemoryContext, create_memory_graph
from memory_plugin.agent import AgentMemory
from memory_plugin.profile.memory import wait_for_profiles
from memory_plugin.settings import MemorySettings
from tests.anthropic_server import API_KEY, AnthropicServer, blocks, text_of
from tests.openai_server import call, text
from tests.provider_rules import anthropic_problems
from tests.remembered_fact import (
    FACT,
    FIRST_TURN,
    SECOND_TURN,
    SYSTEM,
    TOLD,
    Graph,
    ask,
    atell,
    check_second_turn,
    config,
    tell,
)

ANN_WITH_AGENT = MemoryContext(user_id="ann", workspace_id="acme", agent_id="helper")
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


def graph_on(server: AnthropicServer, streaming: bool, backend: Backend) -> Graph:
    """The prebuilt graph over ChatAnthropic, with the memory tools and the system prompt."""
    return create_memory_graph(
        claude(server, streaming),
        store=backend.store,
        checkpointer=backend.checkpointer,
        system_prompt=SYSTEM,
    )


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


@pytest.mark.slow
@pytest.mark.parametrize("streaming", [False, True], ids=["plain", "streaming"])
def test_a_remembered_fact_through_chatanthropic(
    backend: Backend, server: AnthropicServer, streaming: bool
) -> None:
    server.script(*FIRST_TURN)
    graph = graph_on(server, streaming, backend)
    tell(graph, backend.store)
    check_first_turn(server, streaming)
    server.script(*SECOND_TURN)
    ask(graph)
    check_second_turn(server.requests[3], ["user"])


@pytest.mark.slow
@pytest.mark.parametrize("streaming", [False, True], ids=["plain", "streaming"])
async def test_a_remembered_fact_through_chatanthropic_async(
    abackend: Backend, server: AnthropicServer, streaming: bool
) -> None:
    server.script(*FIRST_TURN)
    graph = graph_on(server, streaming, abackend)
    await atell(graph, abackend.store)
    check_first_turn(server, streaming)


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
