"""plan_tool: one plan body for the sync and the async tool, in a real graph over a real store
(in memory and SQLite), with the memory tools' error contract: a plugin error reaches the
model as the refusal text, a store failure as the unavailable text; a `with` block inside the
plan covers its store requests under invoke and ainvoke alike."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import pytest
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage
from langchain_core.runnables import RunnableLambda
from langchain_core.tools import BaseTool, StructuredTool
from langgraph.graph import START, MessagesState, StateGraph
from langgraph.prebuilt import ToolNode, ToolRuntime, tools_condition
from langgraph.store.base import BaseStore, GetOp, Item, Op, PutOp, Result

from memory_plugin import Backend, MemoryContext
from memory_plugin.errors import MemoryWriteError
from memory_plugin.plans import Plan
from memory_plugin.provenance import current, origin
from memory_plugin.scoped import ScopedMemory, scoped_memory_tools
from memory_plugin.scoped.notes import Note
from memory_plugin.tooling import plan_tool
from tests.conftest import url_for
from tests.faults import FaultyStore
from tests.scoped_helpers import ANN

NOTES = ("plan_tool_test",)
REFUSED = "Not kept: "
UNAVAILABLE = "Keeping is unavailable right now"


@pytest.fixture(params=["memory", "sqlite"])
def backend_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """The in-memory store and SQLite (this module's plan_tool needs no more than that)."""
    return url_for(request.param, request, tmp_path)


def keep(text: str, runtime: ToolRuntime[Any, Any], times: int = 1) -> Plan[str]:
    """Store `text` `times` times under an origin naming this tool, then read it back."""
    if not text.strip():
        raise MemoryWriteError("text is empty")
    with origin(source="tool", tool="keep", tool_call_id=runtime.tool_call_id):
        yield [PutOp(NOTES, "note", {"text": text * times, "by": current().to_json()})]
    (item,) = yield [GetOp(NOTES, "note")]
    return f"Kept {item.value['text']!r}."


def keep_tool() -> BaseTool:
    return plan_tool(keep, "Keep a text.", refused=REFUSED, unavailable=UNAVAILABLE)


def call(name: str, **args: Any) -> AIMessage:
    return AIMessage("", tool_calls=[{"name": name, "args": args, "id": f"call-{name}"}])


def graph_of(store: BaseStore, tools: list[BaseTool], *script: AIMessage) -> Any:
    """A real tool-calling graph whose model follows a script."""
    llm = GenericFakeChatModel(messages=iter([*script, AIMessage("done")]))

    def respond(state: MessagesState) -> dict[str, list[Any]]:
        return {"messages": [llm.invoke(state["messages"])]}

    async def arespond(state: MessagesState) -> dict[str, list[Any]]:
        return {"messages": [await llm.ainvoke(state["messages"])]}

    builder = StateGraph(MessagesState, context_schema=MemoryContext)
    builder.add_node("model", RunnableLambda(respond, arespond))
    builder.add_node("tools", ToolNode(tools))
    builder.add_edge(START, "model")
    builder.add_conditional_edges("model", tools_condition)
    builder.add_edge("tools", "model")
    return builder.compile(store=store)


INPUT = {"messages": [HumanMessage("hi")]}
CONFIG = {"configurable": {"thread_id": "t1"}}


def only_reply(result: dict[str, Any]) -> ToolMessage:
    (message,) = [m for m in result["messages"] if isinstance(m, ToolMessage)]
    return message


def turn(graph: Any) -> ToolMessage:
    """The one tool reply of a turn run with invoke."""
    return only_reply(graph.invoke(INPUT, CONFIG, context=ANN))


async def aturn(graph: Any) -> ToolMessage:
    """The one tool reply of a turn run with ainvoke."""
    return only_reply(await graph.ainvoke(INPUT, CONFIG, context=ANN))


class Watched(BaseStore):
    """A store that records which tool's origin was in effect at each batch of writes."""

    def __init__(self, inner: BaseStore) -> None:
        self.inner = inner
        self.origins: list[str | None] = []

    def _see(self, ops: Iterable[Op]) -> list[Op]:
        listed = list(ops)
        if any(isinstance(op, PutOp) for op in listed):
            self.origins.append(current().tool)
        return listed

    def batch(self, ops: Iterable[Op]) -> list[Result]:
        return self.inner.batch(self._see(ops))

    async def abatch(self, ops: Iterable[Op]) -> list[Result]:
        return await self.inner.abatch(self._see(ops))


def test_schema_is_the_bodys_arguments_less_the_runtime() -> None:
    tool = keep_tool()
    assert tool.name == "keep" and tool.description == "Keep a text."
    schema = tool.tool_call_schema.model_json_schema()
    assert set(schema["properties"]) == {"text", "times"} and schema["required"] == ["text"]


def test_a_body_without_a_runtime_is_refused() -> None:
    def bare(text: str) -> Plan[str]:
        yield []
        return text

    with pytest.raises(TypeError, match="runtime"):
        plan_tool(bare, "No runtime.", refused="", unavailable="")


def kept(store: BaseStore) -> tuple[BaseStore, Watched, Any]:
    watched = Watched(store)
    return store, watched, graph_of(watched, [keep_tool()], call("keep", text="ab", times=2))


def check_kept(stored: Item | None, watched: Watched, message: ToolMessage) -> None:
    assert message.status == "success" and message.content == "Kept 'abab'."
    assert stored is not None and stored.value["text"] == "abab"
    by = stored.value["by"]
    assert (by["tool"], by["tool_call_id"], by["thread_id"]) == ("keep", "call-keep", "t1")
    assert watched.origins == ["keep"]
    assert current().tool is None


def test_one_plan_runs_under_invoke(backend: Backend) -> None:
    store, watched, graph = kept(backend.store)
    message = turn(graph)
    check_kept(store.get(NOTES, "note"), watched, message)


async def test_one_plan_runs_under_ainvoke(abackend: Backend) -> None:
    store, watched, graph = kept(abackend.store)
    message = await aturn(graph)
    check_kept(await store.aget(NOTES, "note"), watched, message)


def refusing(store: BaseStore) -> Any:
    return graph_of(store, [keep_tool()], call("keep", text="  "))


def check_refused(message: ToolMessage, stored: Item | None) -> None:
    assert message.status == "error" and message.content == "Not kept: text is empty"
    assert stored is None


def test_a_plugin_error_reaches_the_model_as_the_refusal(backend: Backend) -> None:
    message = turn(refusing(backend.store))
    check_refused(message, backend.store.get(NOTES, "note"))


async def test_a_plugin_error_reaches_the_model_as_the_refusal_async(abackend: Backend) -> None:
    message = await aturn(refusing(abackend.store))
    check_refused(message, await abackend.store.aget(NOTES, "note"))


def failing(store: BaseStore) -> Any:
    down = FaultyStore(store)
    down.set("full")
    return graph_of(down, [keep_tool()], call("keep", text="tea"))


def check_unavailable(message: ToolMessage, logged: str, stored: Item | None) -> None:
    assert message.status == "error"
    assert message.content == f"{UNAVAILABLE} (OSError); nothing was changed."
    assert "tool keep failed" in logged
    assert stored is None
    assert current().tool is None


def test_a_store_failure_reaches_the_model_as_unavailable(
    backend: Backend, caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.ERROR, logger="memory_plugin.tooling"):
        message = turn(failing(backend.store))
    check_unavailable(message, caplog.text, backend.store.get(NOTES, "note"))


async def test_a_store_failure_reaches_the_model_as_unavailable_async(
    abackend: Backend, caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.ERROR, logger="memory_plugin.tooling"):
        message = await aturn(failing(abackend.store))
    check_unavailable(message, caplog.text, await abackend.store.aget(NOTES, "note"))


def remembering(store: BaseStore) -> tuple[Watched, Any]:
    watched = Watched(store)
    return watched, graph_of(watched, scoped_memory_tools(), call("remember", text="Prefers tea"))


def check_remembered(notes: list[Note], watched: Watched, message: ToolMessage) -> None:
    assert message.status == "success" and str(message.content).startswith("Noted for ")
    (note,) = notes
    assert note.body == "Prefers tea" and note.provenance is not None
    assert (note.provenance.source, note.provenance.tool) == ("tool", "remember")
    assert note.provenance.tool_call_id == "call-remember"
    assert (note.provenance.thread_id, note.provenance.actor) == ("t1", "ann")
    assert set(watched.origins) == {"remember"}


def test_remember_records_its_provenance(backend: Backend) -> None:
    watched, graph = remembering(backend.store)
    message = turn(graph)
    check_remembered(ScopedMemory(backend.store).list_notes(ANN), watched, message)


async def test_remember_records_its_provenance_async(abackend: Backend) -> None:
    watched, graph = remembering(abackend.store)
    message = await aturn(graph)
    check_remembered(await ScopedMemory(abackend.store).alist_notes(ANN), watched, message)


async def test_a_cancelled_async_tool_closes_its_plan(abackend: Backend) -> None:
    """A plan abandoned mid-way (the run cancelled while the store works) is closed by the
    tool, so its `with` blocks exit at once, in the tool's own task, not later wherever the
    garbage collector happens to run."""
    closed: list[tuple[Any, str | None]] = []

    def held(text: str, runtime: ToolRuntime[Any, Any]) -> Plan[str]:
        try:
            with origin(source="tool", tool="held"):
                yield [PutOp(NOTES, "note", {"text": text})]
        finally:
            closed.append((asyncio.current_task(), current().tool))
        return text

    slow = FaultyStore(abackend.store, slow_seconds=5.0)
    slow.set("slow")
    tool = plan_tool(held, "Hold.", refused=REFUSED, unavailable=UNAVAILABLE)
    runtime: ToolRuntime[Any, Any] = ToolRuntime(
        state={},
        context=None,
        config={},
        stream_writer=lambda _: None,
        tool_call_id="c1",
        store=slow,
    )
    assert isinstance(tool, StructuredTool) and tool.coroutine is not None
    task = asyncio.ensure_future(tool.coroutine(text="tea", runtime=runtime))
    await asyncio.sleep(0.1)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert closed == [(task, None)]
    assert await abackend.store.aget(NOTES, "note") is None
