"""The prebuilt memory graph: everything wired, for `create_memory_graph(model)`.

    prepare_turn -> agent <-> tools -> manage_context -> agent ... -> finish_turn -> update_profile

`prepare_turn` loads memory (curated document, recent notes, profile) and manages context
(journal, masking, compaction); `manage_context` does the latter after each tool step;
`finish_turn` journals the answer (and starts the rolling summary under the recent-window
policy); `update_profile` consolidates the user profile after the answer. An input of
`{"memory_command": "summarize_now"}` goes to `summarize_now` instead.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage
from langchain_core.tools import BaseTool
from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.graph import END, START, StateGraph
from langgraph.graph.state import CompiledStateGraph
from langgraph.prebuilt import ToolNode
from langgraph.store.base import BaseStore

from memory_plugin.blocks import BlockSource
from memory_plugin.compat import RunnableCallable
from memory_plugin.context import MemoryContext
from memory_plugin.profile.memory import ProfileMemory
from memory_plugin.scoped.api import ScopedMemory
from memory_plugin.scoped.tools import scoped_memory_tools
from memory_plugin.settings import MemorySettings
from memory_plugin.thread.journal_tools import journal_tools
from memory_plugin.thread.nodes import SUMMARIZE_NOW, ContextManager
from memory_plugin.thread.state import MemoryState

PREPARE, AGENT, TOOLS, MANAGE, FINISH, PROFILE = (
    "prepare_turn",
    "agent",
    "tools",
    "manage_context",
    "finish_turn",
    "update_profile",
)


def memory_tools(model: BaseChatModel, settings: MemorySettings) -> list[BaseTool]:
    """The memory tools of the kinds that are on."""
    tools: list[BaseTool] = []
    if settings.scoped_memory:
        tools += scoped_memory_tools(model=model)
    if settings.context_management:
        tools += journal_tools()
    return tools


@dataclass(frozen=True)
class MemoryParts:
    """The pieces every enabled memory kind contributes, shared by the prebuilt graph and the
    create_agent middleware."""

    manager: ContextManager
    profile: ProfileMemory | None
    tools: list[BaseTool]
    start: RunnableCallable
    manage: RunnableCallable | None
    finish: RunnableCallable


def memory_parts(
    model: BaseChatModel,
    defaults: MemorySettings,
    *,
    store: BaseStore | None = None,
    system_prompt: str | None = None,
) -> MemoryParts:
    """Build the memory kinds that are on, their tools and the turn's start/finish nodes."""
    sources: list[BlockSource] = []
    if defaults.scoped_memory:
        sources.append(ScopedMemory(store, defaults=defaults, model=model))
    profile = ProfileMemory(store, model=model, defaults=defaults) if defaults.profile else None
    if profile is not None:
        sources.append(profile)
    manager = ContextManager(model, sources=sources, system_prompt=system_prompt, defaults=defaults)
    managed = defaults.context_management
    return MemoryParts(
        manager,
        profile,
        memory_tools(model, defaults),
        manager.start_turn if managed else manager.load_memory,
        manager.prepare_context if managed else None,
        manager.finish_turn if managed else manager.journal,
    )


def create_memory_graph(
    model: BaseChatModel,
    tools: Sequence[BaseTool | Callable[..., Any]] = (),
    *,
    store: BaseStore | None = None,
    checkpointer: BaseCheckpointSaver[Any] | None = None,
    settings: MemorySettings | None = None,
    system_prompt: str | None = None,
    name: str = "memory_agent",
) -> CompiledStateGraph[Any, Any, Any, Any]:
    """A compiled agent graph with every enabled memory kind wired in.

    Invoke with `{"messages": [...]}`, a `thread_id` in `config["configurable"]` and
    `context={"user_id": ..., ...}` (a MemoryContext). `settings` are the platform defaults
    (layers stored in the store still apply each turn); the memory tools of the enabled kinds
    are bound next to `tools`. Without `store`/`checkpointer` (LangGraph Server) the
    server's are used.
    """
    parts = memory_parts(
        model, settings or MemorySettings(), store=store, system_prompt=system_prompt
    )
    manager, profile = parts.manager, parts.profile
    all_tools = [*tools, *parts.tools]
    bound = model.bind_tools(all_tools) if all_tools else model

    def agent(state: MemoryState) -> dict[str, Any]:
        return {"messages": [bound.invoke(manager.model_input(dict(state)))]}

    async def aagent(state: MemoryState) -> dict[str, Any]:
        return {"messages": [await bound.ainvoke(manager.model_input(dict(state)))]}

    def after_agent(state: MemoryState) -> str:
        last = state["messages"][-1]
        return TOOLS if isinstance(last, AIMessage) and last.tool_calls else FINISH

    def route(state: MemoryState) -> str:
        return SUMMARIZE_NOW if state.get("memory_command") == SUMMARIZE_NOW else PREPARE

    builder = StateGraph(MemoryState, context_schema=MemoryContext)
    builder.add_node(PREPARE, parts.start)
    builder.add_node(SUMMARIZE_NOW, manager.summarize_now)
    builder.add_node(AGENT, RunnableCallable(agent, aagent, name=AGENT))
    builder.add_node(FINISH, parts.finish)
    builder.add_conditional_edges(START, route, [PREPARE, SUMMARIZE_NOW])
    builder.add_edge(SUMMARIZE_NOW, END)
    builder.add_edge(PREPARE, AGENT)
    builder.add_conditional_edges(AGENT, after_agent, [TOOLS, FINISH] if all_tools else [FINISH])
    if all_tools:
        builder.add_node(TOOLS, ToolNode(all_tools))
        if parts.manage is not None:
            builder.add_node(MANAGE, parts.manage)
            builder.add_edge(TOOLS, MANAGE)
            builder.add_edge(MANAGE, AGENT)
        else:
            builder.add_edge(TOOLS, AGENT)
    if profile is not None:
        builder.add_node(PROFILE, profile.consolidate_profile)
        builder.add_edge(FINISH, PROFILE)
        builder.add_edge(PROFILE, END)
    else:
        builder.add_edge(FINISH, END)
    return builder.compile(store=store, checkpointer=checkpointer, name=name)
