"""The agent memory tools: memory_store, memory_recall, memory_forget.

They take no user or agent ids: the run's context names the agent and the user. Bad input
and refusals come back to the model as a clear tool error, with memory unchanged. Each tool's
body is one plan, run by its sync and its async tool alike.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from datetime import datetime
from typing import Any, Literal, Protocol

from langchain_core.tools import BaseTool
from langgraph.prebuilt import ToolRuntime

from memory_plugin.agent.entries import Entry, expiry
from memory_plugin.agent.naming import NAME
from memory_plugin.agent.recall import EntryHit
from memory_plugin.events import emit
from memory_plugin.plans import Plan
from memory_plugin.provenance import tool_origin
from memory_plugin.scope.context import MemoryContext
from memory_plugin.scope.identity import Membership
from memory_plugin.tooling import plan_tool, tool_context

STORE = (
    "Store one durable fact as an agent memory entry under a short `key` (storing a key again "
    "replaces it). `category` groups entries (default general; user_profile for facts about "
    "the user); `visibility` is private (this user only, the default) or shared (every user "
    "of this agent); `importance` 0..1 (default 0.5); `expires_in_days` for facts that go "
    "stale. Read-only entries cannot be changed."
)
RECALL = "Search agent memory entries; returns the best matches, k of them (default 8)."
FORGET = "Forget the agent memory entry stored under `key` (read-only entries cannot be)."


class Entries(Protocol):
    """What the tools ask of agent memory (memory_plugin.agent.api.AgentMemory, whose `tools`
    are these)."""

    clock: Callable[[], datetime]

    def store_plan(
        self,
        ctx: MemoryContext,
        key: Any,
        content: Any,
        *,
        category: Any = ...,
        visibility: Any = ...,
        importance: Any = ...,
        expires_at: datetime | None = ...,
        model: bool = ...,
    ) -> Plan[Entry]: ...

    def recall_plan(
        self, ctx: MemoryContext, query: Any, k: int | None
    ) -> Plan[list[EntryHit]]: ...

    def forget_plan(
        self, ctx: MemoryContext, key: Any, *, model: bool = ..., visibility: Any = ...
    ) -> Plan[Any]: ...


def _stored(entry: Entry) -> str:
    emit(NAME, "entry_stored", entry.visibility, key=entry.key)
    return f"Stored entry {entry.key!r} ({entry.visibility})."


def _hits(query: str, hits: list[EntryHit]) -> str:
    emit(NAME, "recalled", None, hits=len(hits))
    if not hits:
        return f"No agent memory entries match {query!r}."
    return "\n".join(hit.entry.render() for hit in hits)


def _forgot(key: str) -> str:
    emit(NAME, "entry_forgotten", None, key=key)
    return f"Forgot entry {key!r}."


def agent_memory_tools(service: Entries, membership: Membership | None = None) -> list[BaseTool]:
    """The three tools over `service` (one graph's AgentMemory)."""

    def memory_store(
        key: str,
        content: str,
        runtime: ToolRuntime[Any, Any],
        category: str = "general",
        visibility: Literal["private", "shared"] = "private",
        importance: float = 0.5,
        expires_in_days: float | None = None,
    ) -> Plan[str]:
        plan = service.store_plan(
            tool_context(runtime, membership),
            key,
            content,
            category=category,
            visibility=visibility,
            importance=importance,
            expires_at=expiry(expires_in_days, service.clock()),
            model=True,
        )
        with tool_origin("memory_store", runtime):
            return _stored((yield from plan))

    def memory_recall(
        query: str, runtime: ToolRuntime[Any, Any], k: int | None = None
    ) -> Plan[str]:
        plan = service.recall_plan(tool_context(runtime, membership), query, k)
        return _hits(query, (yield from plan))

    def memory_forget(key: str, runtime: ToolRuntime[Any, Any]) -> Plan[str]:
        yield from service.forget_plan(tool_context(runtime, membership), key, model=True)
        return _forgot(key)

    tool = functools.partial(
        plan_tool,
        refused="Memory not changed: ",
        unavailable="Agent memory is unavailable right now",
    )
    return [tool(memory_store, STORE), tool(memory_recall, RECALL), tool(memory_forget, FORGET)]
