"""The prebuilt memory graph: everything wired, for `create_memory_graph(model)`.

    agent <-> tools

`agent` opens the turn (loads memory: curated document, recent notes, profile; manages the
context: journal, masking, compaction), asks the model, and, once the answer is final, closes
the turn (journals the answer, starts the rolling summary under the recent-window policy) and
starts the profile's consolidation in the background; after each tool step it manages the
context again before asking the model (see memory_plugin/prebuilt/agent_step.py). An input of
`{"memory_command": "summarize_now"}` goes to `summarize_now` instead.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage
from langchain_core.tools import BaseTool
from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.graph import END, START, StateGraph
from langgraph.graph.state import CompiledStateGraph
from langgraph.prebuilt import ToolNode
from langgraph.store.base import BaseStore

from memory_plugin.context_management.nodes import SUMMARIZE_NOW
from memory_plugin.context_management.run_end import with_run_end
from memory_plugin.context_management.state import MemoryState
from memory_plugin.prebuilt.agent_step import AgentStep
from memory_plugin.prebuilt.services import TurnTools, build_services
from memory_plugin.safety.staged import Check
from memory_plugin.scope.context import MemoryContext
from memory_plugin.scope.identity import Membership
from memory_plugin.settings import MemorySettings, SettingsCache

AGENT, TOOLS = "agent", "tools"


def create_memory_graph(
    model: BaseChatModel,
    tools: Sequence[BaseTool | Callable[..., Any]] = (),
    *,
    store: BaseStore | None = None,
    checkpointer: BaseCheckpointSaver[Any] | None = None,
    settings: MemorySettings | SettingsCache | None = None,
    system_prompt: str | None = None,
    membership: Membership | None = None,
    maintenance_model: BaseChatModel | None = None,
    screen: Check | None = None,
    name: str = "memory_agent",
    tool_binding: Mapping[str, Any] | None = None,
) -> CompiledStateGraph[Any, Any, Any, Any]:
    """A compiled agent graph with every enabled memory kind wired in.

    Invoke with `{"messages": [...]}`, a `thread_id` in `config["configurable"]` and
    `context={"user_id": ..., ...}` (a MemoryContext). `settings` are the platform defaults
    (or a SettingsCache shared with another surface over the same store, as the console does);
    `MEMORY_<SETTING>` environment variables override and lock them, and the layers stored in
    the store apply each turn (a bad value in code or the environment raises SettingsError
    here). Each turn the model gets `tools` and the memory tools of the kinds that are on for
    the run's scope, the journal tools from the first call whose prompt had something masked
    or summarized (the tools node runs them whenever the model calls them).
    `membership(user_id, workspace_id)` admits a workspace the run names.
    `maintenance_model` (default: `model`, never its tool-bound instance; the
    `maintenance_model` setting names another) writes summaries and flush notes, consolidates
    the profile and compresses documents. `screen(text, visibility)` is an extra safety check
    every memory write of this graph runs after the built-in rules (a reason string refuses
    the write, None passes it; see docs/safety.md), before the judge the `screen_judge`
    setting turns on. `tool_binding`: keyword arguments the model's `bind_tools` gets each
    turn (`{"strict": True}`: OpenAI's or Anthropic's strict function calling). Without
    `store`/`checkpointer` (LangGraph Server) the server's are used.
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
    all_tools = [*tools, *services.tools]
    step = AgentStep(services, TurnTools(model, list(tools), services, dict(tool_binding or {})))

    def after_agent(state: MemoryState) -> str:
        last = state["messages"][-1]
        return TOOLS if isinstance(last, AIMessage) and last.tool_calls else END

    def route(state: MemoryState) -> str:
        return SUMMARIZE_NOW if state.get("memory_command") == SUMMARIZE_NOW else AGENT

    builder = StateGraph(MemoryState, context_schema=MemoryContext)
    builder.add_node(AGENT, step.node(AGENT))
    builder.add_node(SUMMARIZE_NOW, services.summarize_now)
    builder.add_conditional_edges(START, route, [AGENT, SUMMARIZE_NOW])
    builder.add_edge(SUMMARIZE_NOW, END)
    if all_tools:
        builder.add_node(
            TOOLS, ToolNode(all_tools, wrap_tool_call=services.gate, awrap_tool_call=services.agate)
        )
        builder.add_conditional_edges(AGENT, after_agent, [TOOLS, END])
        builder.add_edge(TOOLS, AGENT)
    else:
        builder.add_edge(AGENT, END)
    return with_run_end(builder.compile(store=store, checkpointer=checkpointer, name=name))
