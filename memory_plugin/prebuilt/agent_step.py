"""The prebuilt graph's agent step: a turn's memory work folded into the model call's step.

A call that follows the user's input opens the turn (loads memory and manages the context); one
that follows a tool step takes memory removed meanwhile out of the prompt and manages the
context; then the model answers; a reply without tool calls closes the turn (journals it,
starts the rolling summary) and starts the profile's consolidation, which runs in the
background. One super-step where separate nodes took four:
each step is a checkpoint write, so a turn makes fewer database round trips.
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from langchain_core.messages import AIMessage, BaseMessage, ToolMessage
from langchain_core.runnables import RunnableConfig
from langgraph.config import get_store

from memory_plugin.compat import RunnableCallable
from memory_plugin.context_management.cache_share import AgentView, LastRequests, agent_view
from memory_plugin.context_management.state import add_messages_batch, merge_info
from memory_plugin.graphnode import NodePlan, State, run_context
from memory_plugin.plans import arun, run
from memory_plugin.prebuilt.services import MemoryServices, TurnTools
from memory_plugin.profile.memory import ProfileMemory
from memory_plugin.safety.staged import screening

_REDUCED = frozenset({"messages", "memory_context"})


def follows_tools(state: Mapping[str, Any]) -> bool:
    """Whether this model call follows a tool step (the thread ends with a tool result)."""
    messages = state.get("messages") or []
    return bool(messages) and isinstance(messages[-1], ToolMessage)


def applied(state: State, update: State) -> State:
    """The state as the graph will hold it once `update` is written."""
    if not update:
        return state
    local = {**state, **{k: v for k, v in update.items() if k not in _REDUCED}}
    if update.get("messages"):
        local["messages"] = add_messages_batch(state["messages"], [list(update["messages"])])
    if "memory_context" in update:
        local["memory_context"] = merge_info(state.get("memory_context"), update["memory_context"])
    return local


def _identified(reply: BaseMessage) -> BaseMessage:
    """The reply with an id (the journal's cursor names the last message it wrote)."""
    return reply if reply.id else reply.model_copy(update={"id": str(uuid.uuid4())})


def combined(opened: State, reply: BaseMessage, closed: State) -> State:
    """The step's update: the opening's changes, the reply, then the closing's changes."""
    update: State = {**opened, **{k: v for k, v in closed.items() if k not in _REDUCED}}
    update["messages"] = [*opened.get("messages", ()), reply, *closed.get("messages", ())]
    context = {**opened.get("memory_context", {}), **closed.get("memory_context", {})}
    if context:
        update["memory_context"] = context
    return update


@dataclass
class AgentStep:
    """The agent node of `create_memory_graph`, sync and async."""

    services: MemoryServices
    model: TurnTools
    requests: LastRequests = field(default_factory=LastRequests)

    def node(self, name: str) -> RunnableCallable:
        """The step as an untraced LangGraph node."""
        return RunnableCallable(self.invoke, self.ainvoke, name=name, trace=False)

    def _opening(self, state: State) -> NodePlan:
        manager, managed = self.services.manager, self.services.managed
        if follows_tools(state):
            return manager.after_tools_plan if managed else manager.recheck_plan
        return manager.start_turn_plan if managed else manager.load_memory_plan

    def _closing(self) -> NodePlan:
        manager = self.services.manager
        return manager.finish_turn_plan if self.services.managed else manager.journal_plan

    @staticmethod
    def _done(reply: BaseMessage) -> bool:
        return not (isinstance(reply, AIMessage) and reply.tool_calls)

    @staticmethod
    def _thread(config: RunnableConfig) -> str | None:
        thread_id = (config.get("configurable") or {}).get("thread_id")
        return str(thread_id) if thread_id else None

    def _view(self, state: State, thread_id: str | None) -> AgentView | None:
        """The thread's last request, offered to a compaction this call's opening runs."""
        last = self.requests.get(thread_id) if thread_id else None
        if last is None:
            return None
        manager = self.services.manager

        def render(messages: list[BaseMessage], info: dict[str, Any]) -> list[BaseMessage]:
            return manager.model_input({**state, "messages": messages, "memory_context": info})

        return AgentView(last, render)

    def invoke(self, state: State, config: RunnableConfig) -> State:
        """Open or manage, answer, and close the turn when the answer is final."""
        store, ctx, services = get_store(), run_context(self.services.membership), self.services
        thread_id = self._thread(config)
        with screening(services.screen), agent_view(self._view(state, thread_id)):
            opened = run(store, self._opening(state)(state, config, ctx))
            local = applied(state, opened)
            model = self.model(local)
            sent = services.manager.model_input(local)
            reply = _identified(model.invoke(sent))
            if thread_id:
                self.requests.record(thread_id, model, sent)
            if not self._done(reply):
                return combined(opened, reply, {})
            ended = {**local, "messages": [*local["messages"], reply]}
            closed = run(store, self._closing()(ended, config, ctx))
            if (profile := services.of(ProfileMemory)) is not None:
                profile.start_consolidation(applied(ended, closed), config, ctx, store)
        return combined(opened, reply, closed)

    async def ainvoke(self, state: State, config: RunnableConfig) -> State:
        """Async twin of invoke."""
        store, ctx, services = get_store(), run_context(self.services.membership), self.services
        thread_id = self._thread(config)
        with screening(services.screen), agent_view(self._view(state, thread_id)):
            opened = await arun(store, self._opening(state)(state, config, ctx))
            local = applied(state, opened)
            model = self.model(local)
            sent = services.manager.model_input(local)
            reply = _identified(await model.ainvoke(sent))
            if thread_id:
                self.requests.record(thread_id, model, sent)
            if not self._done(reply):
                return combined(opened, reply, {})
            ended = {**local, "messages": [*local["messages"], reply]}
            closed = await arun(store, self._closing()(ended, config, ctx))
            if (profile := services.of(ProfileMemory)) is not None:
                profile.start_consolidation(applied(ended, closed), config, ctx, store)
        return combined(opened, reply, closed)
