"""Building the model's tools: one body written as a plan for both the sync and the async
tool (`plan_tool`, the tools' counterpart of memory_plugin.graphnode.plan_node), the same
error contract, the run's context as a tool sees it, and the limit on how many results a tool
may ask for."""

from __future__ import annotations

import functools
import inspect
import logging
from collections.abc import Callable
from types import CodeType
from typing import Any, Literal

from langchain_core.tools import BaseTool, StructuredTool, ToolException
from langgraph.prebuilt import ToolRuntime
from langgraph.store.base import BaseStore
from pydantic import BaseModel, BeforeValidator, Field, create_model

from memory_plugin.errors import MemoryPluginError, MemoryWriteError
from memory_plugin.plans import Plan, arun, run
from memory_plugin.scope.context import MemoryContext
from memory_plugin.scope.identity import Membership

logger = logging.getLogger(__name__)

_schemas: dict[tuple[str, CodeType], Any] = {}

ToolPlan = Callable[..., Plan[Any]]
"""A tool's body, written once: called with the tool's arguments (the ToolRuntime among them,
as `runtime`), the plan that does the tool's work and returns its answer."""


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


def plan_tool(
    body: ToolPlan,
    description: str,
    *,
    refused: str,
    unavailable: str,
    name: str | None = None,
    response_format: Literal["content", "content_and_artifact"] = "content",
    store: Callable[[ToolRuntime[Any, Any]], BaseStore] = runtime_store,
) -> BaseTool:
    """A tool named `name` (default: the body's name) whose logic is written once, as `body`:
    given the tool's arguments, among them the ToolRuntime as `runtime`, it returns a plan
    (memory_plugin.plans), which the sync tool drives with `run` and the async one with
    `arun`, against `store(runtime)` (default: the graph's store). The model sees the body's
    arguments, less `runtime`. Plugin errors reach the model as `refused + message`; other
    failures (a store outage) are logged and reach it as "`unavailable` (ErrorType); nothing
    was changed." With "content_and_artifact" the plan returns (text, artifact).

    A `with` block inside the plan, around its `yield from`, covers the store requests the
    plan makes, under run and arun alike: a plan runs in the tool's own context (what
    provenance's `current()` reads), and one cut short (its run cancelled) is closed before
    the tool gives up, so its blocks exit there too."""
    label = name or body.__name__
    parameters = inspect.signature(body)
    if "runtime" not in parameters.parameters:
        raise TypeError(f"the body of tool {label} must take the ToolRuntime as `runtime`")

    def tool_error(exc: Exception) -> ToolException:
        if isinstance(exc, MemoryPluginError):
            return ToolException(f"{refused}{exc}")
        logger.exception("tool %s failed", label)
        return ToolException(f"{unavailable} ({type(exc).__name__}); nothing was changed.")

    def started(args: tuple[Any, ...], kwargs: dict[str, Any]) -> tuple[BaseStore, Plan[Any]]:
        runtime = parameters.bind(*args, **kwargs).arguments["runtime"]
        return store(runtime), body(*args, **kwargs)

    @functools.wraps(body)
    def sync(*args: Any, **kwargs: Any) -> Any:
        plan: Plan[Any] | None = None
        try:
            target, plan = started(args, kwargs)
            return run(target, plan)
        except Exception as exc:
            raise tool_error(exc) from exc
        finally:
            if plan is not None:
                plan.close()

    @functools.wraps(body)
    async def asynchronous(*args: Any, **kwargs: Any) -> Any:
        plan: Plan[Any] | None = None
        try:
            target, plan = started(args, kwargs)
            return await arun(target, plan)
        except Exception as exc:
            raise tool_error(exc) from exc
        finally:
            if plan is not None:
                plan.close()

    return StructuredTool.from_function(
        func=sync,
        coroutine=asynchronous,
        name=label,
        description=description,
        args_schema=args_schema(label, description, sync),
        handle_tool_error=True,
        response_format=response_format,
    )


def args_schema(name: str, description: str, func: Callable[..., Any]) -> Any:
    """The argument schema LangChain infers for a tool body, its optional arguments made
    `null_means_default`, built once per body's code (each graph makes its tools afresh, and a
    pydantic model costs milliseconds to create)."""
    key = (name, inspect.unwrap(func).__code__)
    if key not in _schemas:
        inferred = StructuredTool.from_function(func=func, name=name, description=description)
        schema = inferred.args_schema
        assert isinstance(schema, type) and issubclass(schema, BaseModel)
        _schemas[key] = null_means_default(schema)
    return _schemas[key]


def null_means_default(model: type[BaseModel]) -> type[BaseModel]:
    """`model` with each optional argument also taking null, which stands for its default, and
    its JSON schema naming no `default`: strict function calling (OpenAI's and Anthropic's)
    makes the model send every argument, null for one it leaves out, and takes no `default`
    keyword (the tool's description says what a default is)."""
    optional: dict[str, Any] = {}
    for name, field in model.model_fields.items():
        if field.is_required():
            continue
        default = field.get_default(call_default_factory=True)
        kind: Any = field.annotation
        described = Field(default_factory=functools.partial(_same, default))
        described.description = field.description
        described.metadata.append(BeforeValidator(functools.partial(_or_default, default)))
        optional[name] = (kind | None, described)
    if not optional:
        return model
    return create_model(model.__name__, __base__=model, __doc__=model.__doc__, **optional)


def _or_default(default: Any, value: Any) -> Any:
    return default if value is None else value


def _same(value: Any) -> Any:
    return value
