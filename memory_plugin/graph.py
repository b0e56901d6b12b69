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
from typing import Any

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage
from langchain_core.tools import BaseTool
from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.graph import END, START, StateGraph
from langgraph.graph.state import CompiledStateGraph
from langgraph.prebuilt import ToolNode
from langgraph.store.base import BaseStore

from memory_plugin.compat import RunnableCallable
from memory_plugin.context import MemoryContext
from memory_plugin.identity import Membership
from memory_plugin.safety.staged import Check
from memory_plugin.services import TurnTools, build_services
from memory_plugin.settings import MemorySettings
from memory_plugin.thread.nodes import SUMMARIZE_NOW
from memory_plugin.thread.state import MemoryState

PREPARE, AGENT, TOOLS, MANAGE, FINISH, PROFILE = (
    "prepare_turn",
    "agent",
    "tools",
    "manage_context",
    "finish_turn",
    "update_profile",
)


def create_memory_graph(
    model: BaseChatModel,
    tools: Sequence[BaseTool | Callable[..., Any]] = (),
    *,
    store: BaseStore | None = None,
    checkpointer: BaseCheckpointSaver[Any] | None = None,
    settings: MemorySettings | None = None,
    system_prompt: str | None = None,
    membership: Membership | None = None,
    maintenance_model: BaseChatModel | None = None,
    screen: Check | None = None,
    name: str = "memory_agent",
) -> CompiledStateGraph[Any, Any, Any, Any]:
    """A compiled agent graph with every enabled memory kind wired in.

    Invoke with `{"messages": [...]}`, a `thread_id` in `config["configurable"]` and
    `context={"user_id": ..., ...}` (a MemoryContext). `settings` are the platform defaults;
    `MEMORY_<SETTING>` environment variables override and lock them, and the layers stored in
    the store apply each turn (a bad value in code or the environment raises SettingsError
    here). Each turn the model gets `tools` and the memory tools of the kinds that are on for
    the run's scope. `membership(user_id, workspace_id)` admits a workspace the run names.
    `maintenance_model` (default: `model`, never its tool-bound instance; the
    `maintenance_model` setting names another) writes summaries and flush notes, consolidates
    the profile and compresses documents. `screen(text, visibility)` is an extra safety check
    every memory write of this graph runs after the built-in rules (a reason string refuses
    the write, None passes it; see docs/safety.md), before the judge the `screen_judge`
    setting turns on. Without `store`/`checkpointer` (LangGraph Server)
    the server's are used.
    """
    services = build_services(
        model,
        settings,
        store=store,
        system_prompt=system_prompt,
        membership=membership,
        maintenance_model=maintenance_model,
        screen=screen,
    )
    manager = services.manager
    all_tools = [*tools, *services.tools]
    bound = TurnTools(model, list(tools), services)

    def agent(state: MemoryState) -> dict[str, Any]:
        return {"messages": [bound(state).invoke(manager.model_input(dict(state)))]}

    async def aagent(state: MemoryState) -> dict[str, Any]:
        return {"messages": [await bound(state).ainvoke(manager.model_input(dict(state)))]}

    def after_agent(state: MemoryState) -> str:
        last = state["messages"][-1]
        return TOOLS if isinstance(last, AIMessage) and last.tool_calls else FINISH

    def route(state: MemoryState) -> str:
        return SUMMARIZE_NOW if state.get("memory_command") == SUMMARIZE_NOW else PREPARE

    builder = StateGraph(MemoryState, context_schema=MemoryContext)
    builder.add_node(PREPARE, services.start)
    builder.add_node(SUMMARIZE_NOW, services.summarize_now)
    builder.add_node(AGENT, RunnableCallable(agent, aagent, name=AGENT))
    builder.add_node(FINISH, services.finish)
    builder.add_conditional_edges(START, route, [PREPARE, SUMMARIZE_NOW])
    builder.add_edge(SUMMARIZE_NOW, END)
    builder.add_edge(PREPARE, AGENT)
    builder.add_conditional_edges(AGENT, after_agent, [TOOLS, FINISH] if all_tools else [FINISH])
    if all_tools:
        builder.add_node(
            TOOLS, ToolNode(all_tools, wrap_tool_call=services.gate, awrap_tool_call=services.agate)
        )
        manage = services.manage
        if manage is not None:
            builder.add_node(MANAGE, manage)
            builder.add_edge(TOOLS, MANAGE)
            builder.add_edge(MANAGE, AGENT)
        else:
            builder.add_edge(TOOLS, AGENT)
    consolidate = services.consolidate
    if consolidate is not None:
        builder.add_node(PROFILE, consolidate)
        builder.add_edge(FINISH, PROFILE)
        builder.add_edge(PROFILE, END)
    else:
        builder.add_edge(FINISH, END)
    return builder.compile(store=store, checkpointer=checkpointer, name=name)
