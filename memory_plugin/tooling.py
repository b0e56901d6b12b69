"""Building the model's tools: one sync and one async body, the same error contract, the
run's context as a tool sees it, and the limit on how many results a tool may ask for."""

from __future__ import annotations

import functools
import inspect
import logging
from collections.abc import Awaitable, Callable, Sequence
from types import CodeType
from typing import Any, Literal

from langchain_core.tools import BaseTool, StructuredTool, ToolException
from langgraph.prebuilt import ToolRuntime
from langgraph.store.base import BaseStore

from memory_plugin.context import MemoryContext
from memory_plugin.errors import MemoryPluginError, MemoryWriteError
from memory_plugin.identity import Membership

logger = logging.getLogger(__name__)

_schemas: dict[tuple[str, CodeType], Any] = {}


def tool_context(runtime: ToolRuntime[Any, Any], membership: Membership | None) -> MemoryContext:
    """The run's MemoryContext seen from a tool, its workspace checked with `membership`."""
    config = runtime.config
    return MemoryContext.from_run(
        runtime.context,
        config.get("configurable"),
        membership=membership,
        metadata=config.get("metadata"),
    )


def clamp_k(k: int | None, default: int, maximum: int) -> int:
    """The number of notes to return: default when None, at most `maximum`, at least 1."""
    if k is None:
        return min(default, maximum)
    if isinstance(k, bool) or not isinstance(k, int):
        raise MemoryWriteError(f"k must be a whole number, got {k!r}")
    if k <= 0:
        raise MemoryWriteError(f"k must be at least 1, got {k}")
    return min(k, maximum)


def runtime_store(runtime: ToolRuntime[Any, Any]) -> BaseStore:
    """The graph's store, or a clear error when the graph was compiled without one."""
    if runtime.store is None:
        raise MemoryPluginError("the graph has no store: compile it with store=...")
    return runtime.store


def twin_tool(
    name: str,
    description: str,
    func: Callable[..., Any],
    coroutine: Callable[..., Awaitable[Any]],
    *,
    refused: str,
    unavailable: str,
    response_format: Literal["content", "content_and_artifact"] = "content",
) -> BaseTool:
    """A tool whose plugin errors reach the model as `refused + message` and whose other
    failures (a store outage) are logged and reach it as `unavailable (ErrorType)`; with
    "content_and_artifact" its bodies return (text, artifact)."""

    def tool_error(exc: Exception) -> ToolException:
        if isinstance(exc, MemoryPluginError):
            return ToolException(f"{refused}{exc}")
        logger.exception("tool %s failed", name)
        return ToolException(f"{unavailable} ({type(exc).__name__}); nothing was changed.")

    @functools.wraps(func)
    def sync(*args: Any, **kwargs: Any) -> Any:
        try:
            return func(*args, **kwargs)
        except Exception as exc:
            raise tool_error(exc) from exc

    @functools.wraps(coroutine)
    async def asynchronous(*args: Any, **kwargs: Any) -> Any:
        try:
            return await coroutine(*args, **kwargs)
        except Exception as exc:
            raise tool_error(exc) from exc

    return StructuredTool.from_function(
        func=sync,
        coroutine=asynchronous,
        name=name,
        description=description,
        args_schema=args_schema(name, description, sync),
        handle_tool_error=True,
        response_format=response_format,
    )


def args_schema(name: str, description: str, func: Callable[..., Any]) -> Any:
    """The argument schema LangChain infers for a tool body, built once per body's code (each
    graph makes its tools afresh, and a pydantic model costs milliseconds to create)."""
    key = (name, inspect.unwrap(func).__code__)
    if key not in _schemas:
        inferred = StructuredTool.from_function(func=func, name=name, description=description)
        _schemas[key] = inferred.args_schema
    return _schemas[key]


Twin = tuple[Callable[..., Any], Callable[..., Awaitable[Any]], str]


def twin_tools(
    twins: Sequence[Twin], *, refused: str, unavailable: str, with_artifact: Sequence[str] = ()
) -> list[BaseTool]:
    """twin_tool for each (sync body, async body, description), named after the sync body;
    the tools named in `with_artifact` answer (text, artifact)."""
    return [
        twin_tool(
            func.__name__,
            doc,
            func,
            coro,
            refused=refused,
            unavailable=unavailable,
            response_format="content_and_artifact" if func.__name__ in with_artifact else "content",
        )
        for func, coro, doc in twins
    ]
