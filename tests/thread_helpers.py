"""A real graph wired with the context-management nodes, for the thread-memory tests."""

from __future__ import annotations

from typing import Any

from langchain_core.language_models import BaseChatModel
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage, ToolMessage
from langchain_core.runnables import RunnableLambda
from langchain_core.tools import tool
from langgraph.graph import END, START, StateGraph
from langgraph.prebuilt import ToolNode
from pydantic import Field

from memory_plugin import Backend, LayeredSettings, MemoryContext
from memory_plugin.context_management.journal_tools import journal_tools
from memory_plugin.context_management.nodes import ContextManager, route_start
from memory_plugin.context_management.state import MemoryState
from memory_plugin.scoped import ScopedMemory


@tool
def fetch(url: str) -> str:
    """Fetch a page (returns a large body)."""
    return f"<page {url}> " + "lorem ipsum dolor sit amet " * 120


@tool
def write_todos(todos: list[str]) -> str:
    """Record the plan."""
    return "plan saved: " + "; ".join(todos)


def fetch_turn(n: int) -> list[AIMessage]:
    """A model turn that fetches a page, then answers."""
    call = {"name": "fetch", "args": {"url": f"https://example.com/{n}"}, "id": f"fetch-{n}"}
    return [AIMessage("", tool_calls=[call]), AIMessage(f"Page {n} read.")]


class RecordingChat(GenericFakeChatModel):
    """A scripted chat model (the graph's LLM) that records each input it is given."""

    inputs: list[list[Any]] = Field(default_factory=list)

    def _generate(self, messages: list[Any], *args: Any, **kwargs: Any) -> Any:
        self.inputs.append(list(messages))
        return super()._generate(messages, *args, **kwargs)


def chat(script: list[AIMessage], window: int | None) -> RecordingChat:
    """The graph's model; `window` is what its profile reports (None: no profile)."""
    profile = {"max_input_tokens": window} if window else None
    return RecordingChat(messages=iter(script), profile=profile)


def model_node(model: BaseChatModel, manager: ContextManager) -> RunnableLambda[Any, Any]:
    """The graph's model call on the protected prefix, sync and async."""

    def respond(state: MemoryState) -> dict[str, Any]:
        return {"messages": [model.invoke(manager.model_input(dict(state)))]}

    async def arespond(state: MemoryState) -> dict[str, Any]:
        return {"messages": [await model.ainvoke(manager.model_input(dict(state)))]}

    return RunnableLambda(respond, arespond)


def after_model(done: str) -> Any:
    """Route to the tools while the model calls them, else to `done`."""

    def route(state: MemoryState) -> str:
        last = state["messages"][-1]
        return "tools" if isinstance(last, AIMessage) and last.tool_calls else done

    return route


def build_graph(
    backend: Backend,
    model: BaseChatModel,
    *,
    summary_model: BaseChatModel | None = None,
    system_prompt: str = "You are a helpful assistant.",
    platform: dict[str, Any] | None = None,
    combined: bool = False,
) -> tuple[Any, ContextManager]:
    """load_memory -> journal -> mask -> summarize -> model <-> tools, journal after each step
    (`combined`: the single prepare_context node instead of the three); `platform` settings
    are written to the platform layer first."""
    if platform:
        LayeredSettings(backend.store).update("platform", MemoryContext(), set=platform)
    manager = ContextManager(
        model,
        sources=[ScopedMemory(backend.store)],
        summary_model=summary_model,
        system_prompt=system_prompt,
    )

    builder = StateGraph(MemoryState, context_schema=MemoryContext)
    builder.add_node("load_memory", manager.load_memory)
    builder.add_node("summarize_now", manager.summarize_now)
    if combined:
        builder.add_node("journal", manager.prepare_context)
    else:
        builder.add_node("journal", manager.journal)
        builder.add_node("mask_tool_outputs", manager.mask_tool_outputs)
        builder.add_node("summarize", manager.summarize)
    builder.add_node("model", model_node(model, manager))
    builder.add_node("tools", ToolNode([fetch, write_todos, *journal_tools()]))
    builder.add_node("journal_reply", manager.journal)
    builder.add_node("rolling_summary", manager.rolling_summary)
    builder.add_conditional_edges(START, route_start)
    builder.add_edge("summarize_now", END)
    builder.add_edge("load_memory", "journal")
    if combined:
        builder.add_edge("journal", "model")
    else:
        builder.add_edge("journal", "mask_tool_outputs")
        builder.add_edge("mask_tool_outputs", "summarize")
        builder.add_edge("summarize", "model")
    builder.add_conditional_edges("model", after_model("journal_reply"))
    builder.add_edge("tools", "journal")
    builder.add_edge("journal_reply", "rolling_summary")
    builder.add_edge("rolling_summary", END)
    graph = builder.compile(store=backend.store, checkpointer=backend.checkpointer)
    return graph, manager


def build_turn_graph(
    backend: Backend, model: BaseChatModel, *, summary_model: BaseChatModel | None = None
) -> tuple[Any, ContextManager]:
    """The same graph with the fewest steps: start_turn -> model <-> (tools -> prepare_context)
    -> finish_turn."""
    manager = ContextManager(
        model,
        sources=[ScopedMemory(backend.store)],
        summary_model=summary_model,
        system_prompt="You are a helpful assistant.",
    )

    builder = StateGraph(MemoryState, context_schema=MemoryContext)
    builder.add_node("start_turn", manager.start_turn)
    builder.add_node("summarize_now", manager.summarize_now)
    builder.add_node("model", model_node(model, manager))
    builder.add_node("tools", ToolNode([fetch, write_todos, *journal_tools()]))
    builder.add_node("prepare_context", manager.prepare_context)
    builder.add_node("finish_turn", manager.finish_turn)
    builder.add_conditional_edges(
        START, route_start, {"load_memory": "start_turn", "summarize_now": "summarize_now"}
    )
    builder.add_edge("summarize_now", END)
    builder.add_edge("start_turn", "model")
    builder.add_conditional_edges("model", after_model("finish_turn"))
    builder.add_edge("tools", "prepare_context")
    builder.add_edge("prepare_context", "model")
    builder.add_edge("finish_turn", END)
    graph = builder.compile(store=backend.store, checkpointer=backend.checkpointer)
    return graph, manager


def tool_messages(state: dict[str, Any]) -> list[ToolMessage]:
    """The tool results in a thread's state."""
    return [m for m in state["messages"] if isinstance(m, ToolMessage)]
