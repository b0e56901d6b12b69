"""The model's `memory` tool over a bounded memory's targets; its body is one plan, run by the
sync and the async tool alike."""

from __future__ import annotations

from typing import Any, Literal, Protocol

from langchain_core.tools import BaseTool
from langgraph.prebuilt import ToolRuntime
from langgraph.store.base import BaseStore

from memory_plugin.bounded.naming import NAME
from memory_plugin.events import emit
from memory_plugin.plans import Plan
from memory_plugin.provenance import tool_origin
from memory_plugin.scope.context import MemoryContext
from memory_plugin.scope.identity import Membership
from memory_plugin.tooling import plan_tool, tool_context

MEMORY_TOOL = "memory"
DESCRIPTION = (
    "Edit your bounded long-term memory, shown in <memory_entries> (target memory: your own "
    "notes: environment facts, project conventions, tool quirks, lessons learned) and "
    "<user_entries> (target user: who the user is: name, role, preferences, communication "
    "style). Save proactively, without being asked, whenever something is worth remembering: "
    "corrections ('remember this', 'don't do that again'), stable preferences and personal "
    "details, environment facts (OS, installed tools, project structure), conventions and API "
    "quirks of the user's setup. Skip task progress, session outcomes, completed-work logs, "
    "temporary TODO state, raw data dumps and anything trivial or easy to find again; reusable "
    "procedures belong in a skill, not here. action add needs content; replace needs old_text "
    "(a short unique part of the entry) and content; remove needs old_text; read lists the "
    "target's entries as they are now (the blocks above show them as the session started). "
    "Space is limited (characters of all entries together): when a write would exceed the "
    "limit, replace or remove entries first, keeping by priority user preferences and "
    "corrections, then environment facts, then procedures; removing or shortening is always "
    "allowed. Changes are saved at once; what you add shows in the next session, what you "
    "remove or replace leaves the blocks at once."
)


class Bounded(Protocol):
    """What the tool asks of bounded memory (memory_plugin.bounded.api.BoundedMemory, whose
    `tools` this is)."""

    @property
    def store(self) -> BaseStore: ...

    def apply_plan(
        self,
        ctx: MemoryContext,
        action: str,
        target: str,
        content: str | None,
        old_text: str | None,
    ) -> Plan[str]: ...


def _done(action: str, target: str, answer: str) -> str:
    emit(NAME, f"entry_{action}", target)
    return answer


def memory_tools(bounded: Bounded, membership: Membership | None = None) -> list[BaseTool]:
    """The `memory` tool over `bounded`, resolved with `membership`."""

    def memory(
        action: Literal["add", "replace", "remove", "read"],
        target: Literal["memory", "user"],
        runtime: ToolRuntime[Any, Any],
        content: str | None = None,
        old_text: str | None = None,
    ) -> Plan[str]:
        ctx = tool_context(runtime, membership)
        with tool_origin(MEMORY_TOOL, runtime, ctx.user_id):
            answer = yield from bounded.apply_plan(ctx, action, target, content, old_text)
        return _done(action, target, answer)

    def bounded_store(runtime: ToolRuntime[Any, Any]) -> BaseStore:
        return bounded.store

    return [
        plan_tool(
            memory,
            DESCRIPTION,
            name=MEMORY_TOOL,
            refused="Memory not changed: ",
            unavailable="Memory is unavailable right now",
            store=bounded_store,
        )
    ]
