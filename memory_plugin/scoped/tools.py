"""Memory tools for the model: remember, update_memory, recall.

The tools take no user, workspace or agent ids: the scope comes from the run's context. Bad
input and store failures come back to the model as a clear tool error, with memory unchanged.
"""

from __future__ import annotations

import functools
import logging
from collections.abc import Awaitable, Callable
from typing import Any, ParamSpec

from langchain_core.language_models import BaseChatModel
from langchain_core.tools import BaseTool, StructuredTool, ToolException
from langgraph.prebuilt import ToolRuntime

from memory_plugin.context import MemoryContext
from memory_plugin.errors import ConflictError, MemoryPluginError
from memory_plugin.scoped.api import ScopedMemory
from memory_plugin.scoped.documents import DocumentWrite
from memory_plugin.scoped.notes import Note
from memory_plugin.scoped.recall import Hit

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


def _sync_errors(fn: Callable[P, str]) -> Callable[P, str]:
    @functools.wraps(fn)
    def wrapper(*args: P.args, **kwargs: P.kwargs) -> str:
        try:
            return fn(*args, **kwargs)
        except Exception as exc:
            raise _tool_error(exc) from exc

    return wrapper


def _async_errors(fn: Callable[P, Awaitable[str]]) -> Callable[P, Awaitable[str]]:
    @functools.wraps(fn)
    async def wrapper(*args: P.args, **kwargs: P.kwargs) -> str:
        try:
            return await fn(*args, **kwargs)
        except Exception as exc:
            raise _tool_error(exc) from exc

    return wrapper


def _tool_error(exc: Exception) -> ToolException:
    if isinstance(exc, MemoryPluginError):
        return ToolException(f"Memory not changed: {exc}")
    logger.exception("memory tool failed")
    return ToolException(
        f"Memory is unavailable right now ({type(exc).__name__}); nothing was changed."
    )


def _noted(note: Note) -> str:
    return f"Noted for {note.day} (note #{note.position})."


def _saved(write: DocumentWrite) -> str:
    doc = write.document
    text = f"Saved the memory document (version {doc.version}, {len(doc.text):,} characters)."
    if write.compressed:
        text += " It was over the hard limit, so it was compressed before saving."
    for warning in write.warnings:
        text += f" Warning: {warning}."
    return text


def _hits(query: str, hits: list[Hit]) -> str:
    if not hits:
        return f"No memory notes match {query!r}."
    return "\n".join(hit.note.render() for hit in hits)


def scoped_memory_tools(*, model: BaseChatModel | None = None, **options: Any) -> list[BaseTool]:
    """The tools over the thread's scope; `model` compresses an over-long document."""

    def memory(runtime: ToolRuntime[Any, Any]) -> ScopedMemory:
        if runtime.store is None:
            raise MemoryPluginError("the graph has no store: compile it with store=...")
        return ScopedMemory(runtime.store, model=model, **options)

    @_sync_errors
    def remember(text: str, runtime: ToolRuntime[Any, Any]) -> str:
        return _noted(memory(runtime).remember(_context(runtime), text))

    @_async_errors
    async def aremember(text: str, runtime: ToolRuntime[Any, Any]) -> str:
        return _noted(await memory(runtime).aremember(_context(runtime), text))

    @_sync_errors
    def update_memory(content: str, runtime: ToolRuntime[Any, Any]) -> str:
        try:
            return _saved(memory(runtime).write_document(_context(runtime), content))
        except ConflictError as exc:
            raise MemoryPluginError(f"{exc}; read the current document and retry") from exc

    @_async_errors
    async def aupdate_memory(content: str, runtime: ToolRuntime[Any, Any]) -> str:
        try:
            return _saved(await memory(runtime).awrite_document(_context(runtime), content))
        except ConflictError as exc:
            raise MemoryPluginError(f"{exc}; read the current document and retry") from exc

    @_sync_errors
    def recall(query: str, runtime: ToolRuntime[Any, Any], k: int | None = None) -> str:
        return _hits(query, memory(runtime).recall(_context(runtime), query, k))

    @_async_errors
    async def arecall(query: str, runtime: ToolRuntime[Any, Any], k: int | None = None) -> str:
        return _hits(query, await memory(runtime).arecall(_context(runtime), query, k))

    specs = [
        (remember, aremember, "remember", REMEMBER),
        (update_memory, aupdate_memory, "update_memory", UPDATE_MEMORY),
        (recall, arecall, "recall", RECALL),
    ]
    return [
        StructuredTool.from_function(
            func=func, coroutine=coro, name=name, description=doc, handle_tool_error=True
        )
        for func, coro, name, doc in specs
    ]
