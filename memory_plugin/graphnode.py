"""Turning a plan into a LangGraph node that works under invoke and ainvoke (a model's tool
written as one plan is memory_plugin.tooling.plan_tool)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from langchain_core.runnables import RunnableConfig
from langgraph.config import get_store

from memory_plugin.compat import RunnableCallable
from memory_plugin.plans import Plan, arun, run
from memory_plugin.scope.context import MemoryContext, current_context
from memory_plugin.scope.identity import Membership

State = dict[str, Any]
NodePlan = Callable[[State, RunnableConfig, MemoryContext], Plan[State]]


def run_context(membership: Membership | None = None) -> MemoryContext:
    """The run's MemoryContext (its workspace checked with `membership`), or an empty one
    outside a LangGraph run."""
    try:
        return current_context(membership)
    except RuntimeError:
        return MemoryContext()


def plan_node(
    fn: NodePlan, name: str | None = None, *, membership: Membership | None = None
) -> RunnableCallable:
    """A graph node driving a plan against the graph's store, sync or async, in the run's
    context resolved with `membership`. LangGraph's own callable wrapper, untraced: the node
    run is already traced, and a traced RunnableLambda would cost more than the node's work."""

    def sync(state: State, config: RunnableConfig) -> State:
        return run(get_store(), fn(state, config, run_context(membership)))

    async def asynchronous(state: State, config: RunnableConfig) -> State:
        return await arun(get_store(), fn(state, config, run_context(membership)))

    label = name or getattr(fn, "__name__", "memory_node").lstrip("_")
    return RunnableCallable(sync, asynchronous, name=label, trace=False)
