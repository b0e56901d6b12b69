"""The prebuilt graph's memory as LangChain v1 middleware, for agents built with create_agent.

    agent = create_agent(model, tools, middleware=[MemoryMiddleware(model)], store=store,
                         checkpointer=checkpointer, context_schema=MemoryContext)

Invoke it as the prebuilt graph: a `thread_id` in `config["configurable"]`, the ids in
`context=`. The hooks run the very steps `create_memory_graph` runs in its agent step:

    before_agent   open the turn (load memory; mask, compact)  | summarize_now
    before_model   after a tool step: removed memory out of the prompt; mask, compact
    wrap_model_call  the protected prefix (system prompt, memory blocks, summary) in front, and
                   only the memory tools of the kinds that are on for this turn's scope (the
                   journal tools once something was masked or summarized)
    wrap_tool_call   a call to a memory tool whose kind is off is refused
    after_agent    close the turn (journal it, rolling summary), then start the profile's
                   consolidation in the background

create_agent stores `messages` with plain add_messages; pass it `state_schema=MemoryState` to
keep the prebuilt graph's delta-stored transcript. Installed with the `langchain` extra.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Annotated, Any, NotRequired

from langchain.agents.middleware import (
    AgentMiddleware,
    AgentState,
    ModelRequest,
    ModelResponse,
    hook_config,
)
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import SystemMessage, ToolMessage
from langchain_core.tools import BaseTool
from langgraph.prebuilt.tool_node import ToolCallRequest
from langgraph.runtime import Runtime

from memory_plugin.compat import RunnableCallable
from memory_plugin.context_management.nodes import SUMMARIZE_NOW
from memory_plugin.context_management.state import merge_info
from memory_plugin.context_management.updates import UPDATES, place
from memory_plugin.prebuilt.services import AsyncExecute, Execute, Result, build_services
from memory_plugin.safety.staged import Check
from memory_plugin.scope.identity import Membership
from memory_plugin.settings import MemorySettings, SettingsCache

Update = dict[str, Any]
Handler = Callable[[ModelRequest[Any]], ModelResponse[Any]]
AsyncHandler = Callable[[ModelRequest[Any]], Awaitable[ModelResponse[Any]]]


class MemoryAgentState(AgentState[Any]):
    """AgentState plus the keys the memory nodes keep with the thread (as in MemoryState)."""

    memory_context: NotRequired[Annotated[dict[str, Any], merge_info]]
    memory_blocks: NotRequired[list[dict[str, str]]]
    memory_command: NotRequired[str | None]


def _invoke(node: RunnableCallable, state: Update) -> Update:
    """Run a memory node inside the current hook, on the agent's store and run context."""
    update: Update = node.invoke(state)
    return update


async def _ainvoke(node: RunnableCallable, state: Update) -> Update:
    """Async twin of _invoke."""
    update: Update = await node.ainvoke(state)
    return update


def _after_tools(state: Update) -> bool:
    """Whether the model is about to read tool results (not the turn's first call)."""
    messages = state.get("messages") or []
    return bool(messages) and isinstance(messages[-1], ToolMessage)


def _joined(first: SystemMessage | None, second: SystemMessage) -> SystemMessage:
    """The agent's own system message followed by the memory prefix, as one message."""
    if first is None:
        return second
    if isinstance(first.content, str):
        return SystemMessage(f"{first.content}\n\n{second.text}")
    return SystemMessage([*first.content, {"type": "text", "text": second.text}])


class MemoryMiddleware(AgentMiddleware[MemoryAgentState, Any, Any]):
    """Every enabled memory kind for a create_agent agent: the prebuilt graph's nodes as hooks.

    `model` gives the context window and, unless `maintenance_model` (or the
    `maintenance_model` setting) names another, does memory's own model work (summaries,
    flush notes, profile consolidation, document compression); `settings` are the platform defaults
    (environment variables override and lock them, layers in the store still apply each turn;
    a bad value raises SettingsError here); `system_prompt` opens the protected prefix, after
    create_agent's own system prompt if it has one; `membership(user_id, workspace_id)` admits
    a workspace the run names; `screen(text, visibility)` is an extra safety check every memory
    write runs after the built-in rules (see create_memory_graph and docs/safety.md).
    """

    state_schema = MemoryAgentState

    def __init__(
        self,
        model: BaseChatModel,
        *,
        settings: MemorySettings | SettingsCache | None = None,
        system_prompt: str | None = None,
        membership: Membership | None = None,
        maintenance_model: BaseChatModel | None = None,
        screen: Check | None = None,
    ) -> None:
        services = build_services(
            model,
            settings,
            system_prompt=system_prompt,
            membership=membership,
            maintenance_model=maintenance_model,
            screen=screen,
        )
        self.services = services
        self.manager, self.tools = services.manager, services.tools
        self._start, self._manage, self._finish = services.start, services.manage, services.finish
        self._summarize, self._consolidate = services.summarize_now, services.consolidate

    @staticmethod
    def _summarized(update: Update) -> Update:
        """summarize_now's update, ending the run; the command stays set for after_agent."""
        return {**update, "memory_command": SUMMARIZE_NOW, "jump_to": "end"}

    @hook_config(can_jump_to=["end"])
    def before_agent(self, state: MemoryAgentState, runtime: Runtime[Any]) -> Update | None:
        """Load memory and manage the context (journal, mask, compact), or summarize now."""
        if state.get("memory_command") == SUMMARIZE_NOW:
            return self._summarized(_invoke(self._summarize, dict(state)))
        return _invoke(self._start, dict(state))

    @hook_config(can_jump_to=["end"])
    async def abefore_agent(self, state: MemoryAgentState, runtime: Runtime[Any]) -> Update | None:
        """Async twin of before_agent."""
        if state.get("memory_command") == SUMMARIZE_NOW:
            return self._summarized(await _ainvoke(self._summarize, dict(state)))
        return await _ainvoke(self._start, dict(state))

    def before_model(self, state: MemoryAgentState, runtime: Runtime[Any]) -> Update | None:
        """After a tool step, take memory removed meanwhile out of the prompt, then journal,
        mask older tool outputs and compact when due."""
        if not _after_tools(dict(state)):
            return None
        return _invoke(self._manage, dict(state))

    async def abefore_model(self, state: MemoryAgentState, runtime: Runtime[Any]) -> Update | None:
        """Async twin of before_model."""
        if not _after_tools(dict(state)):
            return None
        return await _ainvoke(self._manage, dict(state))

    def _offered(self, request: ModelRequest[Any]) -> list[BaseTool | dict[str, Any]]:
        """The request's tools less the memory tools this turn does not offer (their kind is
        off, memory is off, or the kind needs an agent the run does not name)."""
        services = self.services
        offered = {tool.name for tool in services.this_turn(request.state)}
        return [
            tool
            for tool in request.tools
            if not isinstance(tool, BaseTool)
            or tool.name not in services.owners
            or tool.name in offered
        ]

    def _with_memory(self, request: ModelRequest[Any]) -> ModelRequest[Any]:
        """The request with the protected prefix in front of its messages, what memory
        learned during the session told in them (`<memory_update>`), and this turn's memory
        tools (a new request)."""
        request = request.override(tools=self._offered(request))
        state: dict[str, Any] = {**request.state}
        prefix = self.manager.model_input({**state, "messages": []})
        if not prefix or not isinstance(prefix[0], SystemMessage):
            return request
        system = _joined(request.system_message, prefix[0])
        extra = [m for m in prefix[1:] if isinstance(m, SystemMessage)]  # the rolling summary
        told = (state.get("memory_context") or {}).get(UPDATES) or []
        messages: list[Any] = place(request.messages, told)
        return request.override(system_message=system, messages=[*extra, *messages])

    def wrap_model_call(self, request: ModelRequest[Any], handler: Handler) -> ModelResponse[Any]:
        """Call the model with the memory prefix (system prompt, blocks, summary)."""
        return handler(self._with_memory(request))

    async def awrap_model_call(
        self, request: ModelRequest[Any], handler: AsyncHandler
    ) -> ModelResponse[Any]:
        """Async twin of wrap_model_call."""
        return await handler(self._with_memory(request))

    def wrap_tool_call(self, request: ToolCallRequest, handler: Execute) -> Result:
        """Refuse a call to a memory tool whose kind is off for this turn's scope."""
        return self.services.gate(request, handler)

    async def awrap_tool_call(self, request: ToolCallRequest, handler: AsyncExecute) -> Result:
        """Async twin of wrap_tool_call."""
        return await self.services.agate(request, handler)

    def _profile_state(self, state: Update, update: Update) -> Update:
        """The state the profile's consolidation starts from: the closing's memory_context
        applied."""
        info = merge_info(state.get("memory_context"), update.get("memory_context"))
        return {**state, "memory_context": info}

    def after_agent(self, state: MemoryAgentState, runtime: Runtime[Any]) -> Update | None:
        """Journal the answer (and start the rolling summary), then start the user profile's
        consolidation in the background (the hook does not wait for it)."""
        if state.get("memory_command") == SUMMARIZE_NOW:
            return {"memory_command": None}
        update = _invoke(self._finish, dict(state))
        if self._consolidate is not None:
            _invoke(self._consolidate, self._profile_state(dict(state), update))
        return update

    async def aafter_agent(self, state: MemoryAgentState, runtime: Runtime[Any]) -> Update | None:
        """Async twin of after_agent."""
        if state.get("memory_command") == SUMMARIZE_NOW:
            return {"memory_command": None}
        update = await _ainvoke(self._finish, dict(state))
        if self._consolidate is not None:
            state_now = self._profile_state(dict(state), update)
            await _ainvoke(self._consolidate, state_now)
        return update
