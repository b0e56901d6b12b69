"""Journal tools for the model: search this thread's transcript, view an earlier tool call.

The thread comes from the run's config, never from the model. Bad input and store failures
come back to the model as a clear tool error. Each tool's body is one plan, run by its sync
and its async tool alike.
"""

from __future__ import annotations

import contextlib
import functools
import json
import re
from collections.abc import Mapping
from datetime import UTC, date, datetime
from typing import Any

from langchain_core.tools import BaseTool
from langgraph.prebuilt import ToolRuntime

from memory_plugin.base import MemoryService
from memory_plugin.context_management.journal import JournalEntry, search_plan, tool_call_plan
from memory_plugin.context_management.masking import MASKED
from memory_plugin.context_management.turn import SUMMARY, thread_id_of
from memory_plugin.context_management.window import WINDOW_FROM
from memory_plugin.errors import MemoryPluginError, MemoryWriteError
from memory_plugin.plans import Plan
from memory_plugin.scope.identity import Membership
from memory_plugin.tooling import plan_tool

PREVIEW_CHARS = 300
_DATE = re.compile(r"\d{4}-\d{2}-\d{2}")

SEARCH = (
    "Search this conversation's full transcript, messages no longer in your context included. "
    "Filters: role (human, ai, tool, system); after and before, UTC dates YYYY-MM-DD, "
    "inclusive. An empty query with a filter lists the newest matches. Returns up to `limit` "
    "(default 10, at most 50), best first, each with its seq and any tool_call_id."
)
VIEW = "Show an earlier tool call's full arguments and untruncated result, by its tool_call_id."


Found = tuple[JournalEntry | None, JournalEntry | None]


def journal_holds_more(info: Mapping[str, Any] | None) -> bool:
    """Whether the thread's journal holds what its prompt no longer shows (a summary stands
    for older messages, an output was masked, or messages left the recent window): before
    that, the journal tools find nothing the model cannot read already."""
    info = info or {}
    return bool(info.get(SUMMARY) or info.get(MASKED) or info.get(WINDOW_FROM))


def _date(value: str | None, what: str) -> date | None:
    if value is None or not value.strip():
        return None
    text = value.strip()
    if _DATE.fullmatch(text):
        with contextlib.suppress(ValueError):
            return date.fromisoformat(text)
    raise MemoryWriteError(f"{what} must be a date as YYYY-MM-DD, got {value!r}")


def _search(
    runtime: ToolRuntime[Any, Any],
    query: str,
    role: str | None,
    after: str | None,
    before: str | None,
    limit: int,
) -> Plan[list[JournalEntry]]:
    return search_plan(
        thread_id_of(runtime.config, "the journal"),
        query,
        role=role,
        after=_date(after, "after"),
        before=_date(before, "before"),
        limit=limit,
    )


def _line(entry: JournalEntry) -> str:
    when = datetime.fromisoformat(entry.created_at).astimezone(UTC).strftime("%Y-%m-%d %H:%M")
    who = entry.role
    if entry.role == "tool":
        who = " ".join(filter(None, ["tool", entry.name, f"({entry.tool_call_id})"]))
    text = " ".join(entry.text.split())
    if len(text) > PREVIEW_CHARS:
        text = text[:PREVIEW_CHARS].rstrip() + "…"
    if entry.tool_calls:
        calls = ", ".join(f"{call['name']} ({call['id']})" for call in entry.tool_calls)
        text = f"{text} [called {calls}]".lstrip()
    return f"[seq {entry.seq}] {when} {who}: {text}"


def _hits(query: str, entries: list[JournalEntry]) -> str:
    if not entries:
        wanted = f"{query!r}" if query.strip() else "these filters"
        return f"No messages in this thread's journal match {wanted}."
    return "\n".join(_line(entry) for entry in entries)


def _view(tool_call_id: str, found: Found) -> str:
    call, result = found
    if call is None and result is None:
        raise MemoryPluginError(f"no tool call {tool_call_id} in this thread's journal")
    spec = next((c for c in call.tool_calls if c["id"] == tool_call_id), None) if call else None
    name = spec["name"] if spec else result.name if result else None
    lines = [f"Tool call {tool_call_id} to {name or 'an unknown tool'}", "Arguments:"]
    if spec is None:
        lines.append("(not in the journal)")
    else:
        lines.append(json.dumps(spec["args"], indent=2, ensure_ascii=False, sort_keys=True))
    if result is None:
        lines.append("Result: (none recorded)")
    else:
        failed = result.message["data"].get("status") == "error"
        lines += [f"Result{' (error)' if failed else ''}:", result.text]
    return "\n".join(lines)


def journal_tools(
    service: MemoryService | None = None, membership: Membership | None = None
) -> list[BaseTool]:
    """The journal tools over the current thread: message search and tool call view. They
    read the thread's journal in the graph's store, so they need neither the graph's
    ContextManager (`service`) nor `membership`: both are taken so that every memory kind's
    tools are made alike."""

    def journal_message_search(
        query: str,
        runtime: ToolRuntime[Any, Any],
        role: str | None = None,
        after: str | None = None,
        before: str | None = None,
        limit: int = 10,
    ) -> Plan[str]:
        return _hits(query, (yield from _search(runtime, query, role, after, before, limit)))

    def journal_tool_call_view(tool_call_id: str, runtime: ToolRuntime[Any, Any]) -> Plan[str]:
        thread_id = thread_id_of(runtime.config, "the journal")
        return _view(tool_call_id, (yield from tool_call_plan(thread_id, tool_call_id)))

    tool = functools.partial(plan_tool, refused="", unavailable="Memory is unavailable right now")
    return [tool(journal_message_search, SEARCH), tool(journal_tool_call_view, VIEW)]
