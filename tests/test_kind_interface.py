"""The kind is the interface (issue 35, point 1): a kind class added to KINDS, and nothing else
changed, has its tools offered by the graph and the middleware, refused when its switch is off
for the run, refused while memory is off when it says it obeys that, and served over MCP when
it says so; on every backend, under invoke and ainvoke."""

from __future__ import annotations

from typing import Any

import pytest
from langchain.agents import create_agent
from langchain_core.language_models import GenericFakeChatModel
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage
from langchain_core.tools import BaseTool, StructuredTool
from langgraph.prebuilt import ToolRuntime
from mcp.server.fastmcp.exceptions import ToolError
from pydantic import Field

from memory_plugin import Backend, MemoryContext, create_memory_graph, kinds
from memory_plugin.base import MemoryService
from memory_plugin.mcp_gateway.identity import fixed
from memory_plugin.mcp_gateway.server import gateway_services
from memory_plugin.mcp_gateway.tools import call, mcp_tools
from memory_plugin.prebuilt.middleware import MemoryMiddleware
from memory_plugin.scope.identity import Membership
from memory_plugin.scope.nouser import off_reason
from memory_plugin.settings import MemorySettings

ANN = MemoryContext(user_id="ann", space_id="s1")
NOBODY = MemoryContext(space_id="s1")
ON = MemorySettings(web_search=True)
REGISTRY = kinds.KINDS
WRITE = {"name": "diary_write", "args": {"line": "Shipped the release"}, "id": "call-1"}


def _written(line: str, runtime: ToolRuntime[Any, Any]) -> str:
    user = runtime.context.user_id or "nobody"
    runtime.store.put(("diary", user), "today", {"line": line})
    return f"Noted: {line}"


async def _awritten(line: str, runtime: ToolRuntime[Any, Any]) -> str:
    user = runtime.context.user_id or "nobody"
    await runtime.store.aput(("diary", user), "today", {"line": line})
    return f"Noted: {line}"


class Diary(MemoryService):
    """A sixth kind for the test: one tool writing a line of the user's diary. Its switch is
    `web_search`, a setting no other kind takes (a real kind adds its own to MemorySettings)."""

    name = "web_search"
    obeys_memory_off = True
    over_mcp = True

    def tools(self, membership: Membership | None) -> list[BaseTool]:
        """diary_write."""
        made = StructuredTool.from_function(
            _written, coroutine=_awritten, name="diary_write", description="Write a diary line."
        )
        return [made]


class Careless(Diary):
    """The same kind, but it neither obeys "memory off" nor is served over MCP."""

    obeys_memory_off = False
    over_mcp = False


class Agent(GenericFakeChatModel):
    """A scripted model recording the tool names bound for each call."""

    bound: list[set[str]] = Field(default_factory=list)

    def bind_tools(self, tools: Any, **kwargs: Any) -> Agent:
        self.bound.append({getattr(t, "name", "") for t in tools})
        return self


def agent() -> Agent:
    return Agent(messages=iter([AIMessage("", tool_calls=[WRITE]), AIMessage("Noted.")]))


def registered(monkeypatch: pytest.MonkeyPatch, kind: type[MemoryService]) -> None:
    """The kind as one more row of the registry."""
    monkeypatch.setattr(kinds, "KINDS", (*REGISTRY, kind))


def diary(backend: Backend, user: str) -> str | None:
    item = backend.store.get(("diary", user), "today")
    return None if item is None else str(item.value["line"])


def tool_reply(out: dict[str, Any]) -> ToolMessage:
    (reply,) = [m for m in out["messages"] if isinstance(m, ToolMessage)]
    return reply


def _graph(backend: Backend, model: Agent, settings: MemorySettings) -> Any:
    return create_memory_graph(
        model, store=backend.store, checkpointer=backend.checkpointer, settings=settings
    )


def _middleware_agent(backend: Backend, model: Agent, settings: MemorySettings) -> Any:
    return create_agent(
        model,
        [],
        middleware=[MemoryMiddleware(model, settings=settings)],
        store=backend.store,
        checkpointer=backend.checkpointer,
        context_schema=MemoryContext,
    )


BUILDERS = {"graph": _graph, "middleware": _middleware_agent}
INPUT = {"messages": [HumanMessage("Note that I shipped the release")]}


def _config(thread: str) -> Any:
    return {"configurable": {"thread_id": thread}}


@pytest.mark.parametrize("door", BUILDERS)
def test_a_new_kinds_tool_is_offered_and_runs_under_invoke(
    backend: Backend, monkeypatch: pytest.MonkeyPatch, door: str
) -> None:
    registered(monkeypatch, Diary)
    model = agent()
    out = BUILDERS[door](backend, model, ON).invoke(INPUT, _config("t1"), context=ANN)
    assert "diary_write" in model.bound[0]
    assert tool_reply(out).content == "Noted: Shipped the release"
    assert diary(backend, "ann") == "Shipped the release"


@pytest.mark.parametrize("door", BUILDERS)
async def test_a_new_kinds_tool_is_offered_and_runs_under_ainvoke(
    abackend: Backend, monkeypatch: pytest.MonkeyPatch, door: str
) -> None:
    registered(monkeypatch, Diary)
    model = agent()
    graph = BUILDERS[door](abackend, model, ON)
    out = await graph.ainvoke(INPUT, _config("t1"), context=ANN)
    assert "diary_write" in model.bound[0]
    assert tool_reply(out).content == "Noted: Shipped the release"
    assert await abackend.store.aget(("diary", "ann"), "today") is not None


def test_a_new_kind_switched_off_for_the_scope_is_not_offered_and_its_call_is_refused(
    backend: Backend, monkeypatch: pytest.MonkeyPatch
) -> None:
    registered(monkeypatch, Diary)
    model = agent()
    graph = _graph(backend, model, ON)
    graph.invoke(INPUT, _config("warm"), context=ANN)
    Diary(backend.store, settings=ON).layered.update("space", ANN, set={"web_search": False})
    backend.store.delete(("diary", "ann"), "today")
    model.bound.clear()
    model.messages = iter([AIMessage("", tool_calls=[WRITE]), AIMessage("Not noted.")])
    out = graph.invoke(INPUT, _config("t2"), context=ANN)
    assert "diary_write" not in model.bound[0]
    reply = tool_reply(out)
    assert reply.status == "error"
    assert reply.content == (
        "Memory not changed: diary_write is unavailable because web_search is switched off here."
    )
    assert diary(backend, "ann") is None


@pytest.mark.parametrize(("kind", "refused"), [(Diary, True), (Careless, False)])
async def test_a_new_kind_obeys_memory_off_when_it_says_so(
    abackend: Backend, monkeypatch: pytest.MonkeyPatch, kind: type[Diary], refused: bool
) -> None:
    registered(monkeypatch, kind)
    model = agent()
    out = await _graph(abackend, model, ON).ainvoke(INPUT, _config("t1"), context=NOBODY)
    assert ("diary_write" not in set().union(*model.bound)) is refused
    reply = tool_reply(out)
    assert (reply.status == "error") is refused
    stored = await abackend.store.aget(("diary", "nobody"), "today")
    assert (stored is None) is refused
    if refused:
        assert reply.content == (
            f"Memory not changed: diary_write is unavailable because {off_reason(NOBODY)}."
        )


async def test_a_new_kind_is_served_over_mcp_when_it_says_so(
    abackend: Backend, monkeypatch: pytest.MonkeyPatch
) -> None:
    registered(monkeypatch, Diary)
    services = gateway_services(ON, store=abackend.store)
    served = {tool.name: tool for tool in mcp_tools(services, abackend.store, fixed(ANN))}
    assert "diary_write" in served
    (tool,) = [tool for tool in services.tools if tool.name == "diary_write"]
    said = await call(services, abackend.store, tool, ANN, {"line": "Over MCP"})
    assert said == "Noted: Over MCP"
    assert (await abackend.store.aget(("diary", "ann"), "today")) is not None
    with pytest.raises(ToolError, match="unavailable because"):
        await call(services, abackend.store, tool, NOBODY, {"line": "Nobody's"})
    assert await abackend.store.aget(("diary", "nobody"), "today") is None

    registered(monkeypatch, Careless)
    services = gateway_services(ON, store=abackend.store)
    served = {tool.name for tool in mcp_tools(services, abackend.store, fixed(ANN))}
    assert "diary_write" not in served and "remember" in served
