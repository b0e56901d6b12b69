"""Memory tools for the model over a scoped memory: remember, update_memory, recall.

The tools take no user, workspace or agent ids: the scope comes from the run's context. Bad
input and store failures come back to the model as a clear tool error, with memory unchanged.
Each tool's body is one plan, run by its sync and its async tool alike.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any, Protocol

from langchain_core.tools import BaseTool
from langgraph.prebuilt import ToolRuntime
from langgraph.store.base import BaseStore

from memory_plugin.errors import ConflictError
from memory_plugin.events import emit
from memory_plugin.plans import Plan
from memory_plugin.provenance import tool_origin
from memory_plugin.scope.context import MemoryContext
from memory_plugin.scope.identity import Membership
from memory_plugin.scoped.documents import Document, DocumentWrite
from memory_plugin.scoped.naming import NAME
from memory_plugin.scoped.notes import Note
from memory_plugin.scoped.recall import Hit
from memory_plugin.scoped.seen import UNSEEN, artifact, seen_version
from memory_plugin.scoped.seen import UPDATE_MEMORY as UPDATE_MEMORY_TOOL
from memory_plugin.tooling import plan_tool, runtime_store, tool_context

Answer = tuple[str, dict[str, int]]

REMEMBER = (
    "Save one durable fact (a preference, decision, or fact about the user or their work) as "
    "a dated note: one plain sentence per call. Recent notes are in <recent_memory_notes>."
)
UPDATE_MEMORY = (
    "Replace the whole <memory_document> with `content` (Markdown, kept concise): anything "
    "left out is removed. If it changed since you saw it, nothing is saved and you get the "
    "current one to merge into."
)
RECALL = "Search all memory notes, older ones included; k results (default 8, at most 20)."


class Scoped(Protocol):
    """What the tools ask of scoped memory (memory_plugin.scoped.api.ScopedMemory, whose
    `tools` these are)."""

    @property
    def store(self) -> BaseStore: ...

    def remember_plan(self, ctx: MemoryContext, text: Any) -> Plan[Note]: ...

    def read_document_plan(self, ctx: MemoryContext) -> Plan[Document | None]: ...

    def write_document_plan(
        self, ctx: MemoryContext, text: Any, expected: int | str | None
    ) -> Plan[DocumentWrite]: ...

    def recall_plan(self, ctx: MemoryContext, query: str, k: int | None) -> Plan[list[Hit]]: ...


def _noted(note: Note) -> str:
    emit(NAME, "note_stored", None, day=note.day, position=note.position)
    return f"Noted for {note.day} (note #{note.position})."


def _saved(write: DocumentWrite) -> Answer:
    doc = write.document
    emit(NAME, "document_saved", None, version=doc.version, compressed=write.compressed)
    text = f"Saved the memory document (version {doc.version}, {len(doc.text):,} characters)."
    if write.compressed:
        text += " It was over the hard limit, so it was compressed before saving."
    for warning in write.warnings:
        text += f" Warning: {warning}."
    return text, artifact(doc.version)


def _merge(current: Document | None, unseen: bool) -> Answer:
    """The answer when the model has not seen the current document: it, and a request to
    merge the change into it."""
    version = current.version if current else 0
    emit(NAME, "document_conflict", None, version=version)
    why = (
        "the memory document could not be loaded when this turn started, so you have not seen it"
        if unseen
        else f"the memory document changed since you last saw it (now version {version})"
    )
    body = current.text if current and current.text else "(empty)"
    text = (
        f"Memory not changed: {why}; nothing was saved. Merge your change into the current "
        "document below and call update_memory again with the complete merged document.\n"
        f'<memory_document version="{version}">\n{body}\n</memory_document>'
    )
    return text, artifact(version)


def _hits(query: str, hits: list[Hit]) -> str:
    emit(NAME, "recalled", None, hits=len(hits))
    if not hits:
        return f"No memory notes match {query!r}."
    return "\n".join(hit.note.render() for hit in hits)


def given(service: Scoped) -> Callable[[ToolRuntime[Any, Any]], Scoped]:
    """The resolver giving `service` to a tool call of a graph with a store."""

    def memory(runtime: ToolRuntime[Any, Any]) -> Scoped:
        runtime_store(runtime)
        return service

    return memory


def memory_tools(
    memory: Callable[[ToolRuntime[Any, Any]], Scoped], membership: Membership | None = None
) -> list[BaseTool]:
    """The tools over the thread's scope, resolved with `membership`, over the scoped memory
    `memory` gives a tool call (`given(service)`: a graph's configured one)."""

    def scoped_store(runtime: ToolRuntime[Any, Any]) -> BaseStore:
        return memory(runtime).store

    def _context(runtime: ToolRuntime[Any, Any]) -> MemoryContext:
        return tool_context(runtime, membership)

    def remember(text: str, runtime: ToolRuntime[Any, Any]) -> Plan[str]:
        ctx = _context(runtime)
        with tool_origin("remember", runtime, ctx.user_id):
            return _noted((yield from memory(runtime).remember_plan(ctx, text)))

    def update_memory(content: str, runtime: ToolRuntime[Any, Any]) -> Plan[Answer]:
        scoped, ctx, seen = memory(runtime), _context(runtime), seen_version(runtime.state)
        if seen != UNSEEN:
            try:
                with tool_origin(UPDATE_MEMORY_TOOL, runtime, ctx.user_id):
                    write = yield from scoped.write_document_plan(ctx, content, seen)
                return _saved(write)
            except ConflictError:
                pass
        return _merge((yield from scoped.read_document_plan(ctx)), seen == UNSEEN)

    def recall(query: str, runtime: ToolRuntime[Any, Any], k: int | None = None) -> Plan[str]:
        return _hits(query, (yield from memory(runtime).recall_plan(_context(runtime), query, k)))

    tool = functools.partial(
        plan_tool,
        refused="Memory not changed: ",
        unavailable="Memory is unavailable right now",
        store=scoped_store,
    )
    return [
        tool(remember, REMEMBER),
        tool(update_memory, UPDATE_MEMORY, response_format="content_and_artifact"),
        tool(recall, RECALL),
    ]
