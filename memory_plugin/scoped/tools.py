"""Memory tools for the model: remember, update_memory, recall.

The tools take no user, workspace or agent ids: the scope comes from the run's context. Bad
input and store failures come back to the model as a clear tool error, with memory unchanged.
"""

from __future__ import annotations

import logging
from typing import Any, ParamSpec

from langchain_core.language_models import BaseChatModel
from langchain_core.tools import BaseTool
from langgraph.prebuilt import ToolRuntime

from memory_plugin.context import MemoryContext
from memory_plugin.errors import ConflictError, MemoryPluginError
from memory_plugin.events import emit
from memory_plugin.scoped.api import ScopedMemory
from memory_plugin.scoped.documents import DocumentWrite
from memory_plugin.scoped.notes import Note
from memory_plugin.scoped.recall import Hit
from memory_plugin.tooling import Twin, runtime_store, twin_tools

logger = logging.getLogger(__name__)
P = ParamSpec("P")

REMEMBER = (
    "Save one durable fact to long-term memory as a dated note: a preference, a decision, a "
    "fact about the user, their work or this workspace that matters beyond this conversation. "
    "One fact per call, one line, plain sentence (no headings, no lists). Recent notes appear "
    "in <recent_memory_notes>; older ones are found with recall."
)
UPDATE_MEMORY = (
    "Replace the whole curated memory document shown in <memory_document> with `content` "
    "(Markdown). Send the complete new document: anything you leave out is removed. Keep it "
    "concise and organised; it is injected into every conversation."
)
RECALL = (
    "Search long-term memory notes, including older ones not shown in <recent_memory_notes>. "
    "Returns the best matching notes with their dates; k is how many (default 8, at most 20)."
)


def _context(runtime: ToolRuntime[Any, Any]) -> MemoryContext:
    return MemoryContext.from_run(runtime.context, runtime.config.get("configurable"))


def _noted(note: Note) -> str:
    emit("scoped", "note_stored", None, day=note.day, position=note.position)
    return f"Noted for {note.day} (note #{note.position})."


def _saved(write: DocumentWrite) -> str:
    doc = write.document
    emit("scoped", "document_saved", None, version=doc.version, compressed=write.compressed)
    text = f"Saved the memory document (version {doc.version}, {len(doc.text):,} characters)."
    if write.compressed:
        text += " It was over the hard limit, so it was compressed before saving."
    for warning in write.warnings:
        text += f" Warning: {warning}."
    return text


def _hits(query: str, hits: list[Hit]) -> str:
    emit("scoped", "recalled", None, hits=len(hits))
    if not hits:
        return f"No memory notes match {query!r}."
    return "\n".join(hit.note.render() for hit in hits)


def scoped_memory_tools(*, model: BaseChatModel | None = None, **options: Any) -> list[BaseTool]:
    """The tools over the thread's scope; `model` compresses an over-long document."""

    by_store: dict[int, ScopedMemory] = {}

    def memory(runtime: ToolRuntime[Any, Any]) -> ScopedMemory:
        store = runtime_store(runtime)
        found = by_store.get(id(store))
        if found is None or found.store is not store:
            found = by_store[id(store)] = ScopedMemory(store, model=model, **options)
        return found

    def remember(text: str, runtime: ToolRuntime[Any, Any]) -> str:
        return _noted(memory(runtime).remember(_context(runtime), text))

    async def aremember(text: str, runtime: ToolRuntime[Any, Any]) -> str:
        return _noted(await memory(runtime).aremember(_context(runtime), text))

    def update_memory(content: str, runtime: ToolRuntime[Any, Any]) -> str:
        try:
            return _saved(memory(runtime).write_document(_context(runtime), content))
        except ConflictError as exc:
            raise MemoryPluginError(f"{exc}; read the current document and retry") from exc

    async def aupdate_memory(content: str, runtime: ToolRuntime[Any, Any]) -> str:
        try:
            return _saved(await memory(runtime).awrite_document(_context(runtime), content))
        except ConflictError as exc:
            raise MemoryPluginError(f"{exc}; read the current document and retry") from exc

    def recall(query: str, runtime: ToolRuntime[Any, Any], k: int | None = None) -> str:
        return _hits(query, memory(runtime).recall(_context(runtime), query, k))

    async def arecall(query: str, runtime: ToolRuntime[Any, Any], k: int | None = None) -> str:
        return _hits(query, await memory(runtime).arecall(_context(runtime), query, k))

    twins: list[Twin] = [
        (remember, aremember, REMEMBER),
        (update_memory, aupdate_memory, UPDATE_MEMORY),
        (recall, arecall, RECALL),
    ]
    return twin_tools(
        twins, refused="Memory not changed: ", unavailable="Memory is unavailable right now"
    )
