"""The memory tools as MCP tools: the graph's own tools (built from the registry of kinds by
`build_services`), called with a ToolRuntime whose context is the session's identity, so
their schemas never take a user, workspace or org. A kind's settings switch and memory being
off for the caller refuse a call exactly as the graph's tool gate does (`refusal`); every call
runs under the graph's one screen. Only the tools of a kind that says `over_mcp` are served
(context management's journal tools: never).

update_memory's compare-and-swap reads the document version the model saw from the graph's
state; over MCP the client says it, as the optional `version` argument (0: no document yet),
and a document changed since comes back to merge into, nothing saved."""

from __future__ import annotations

import uuid
from typing import Any

from langchain_core.tools import BaseTool, ToolException
from langgraph.prebuilt import ToolRuntime
from langgraph.store.base import BaseStore
from mcp.server.fastmcp.exceptions import ToolError
from mcp.server.fastmcp.tools import Tool
from mcp.server.fastmcp.utilities.func_metadata import ArgModelBase, FuncMetadata
from pydantic import BaseModel, Field, create_model

from memory_plugin.mcp_gateway.identity import Identity, anonymous
from memory_plugin.prebuilt.services import MemoryServices
from memory_plugin.safety import screening
from memory_plugin.scope.context import MemoryContext
from memory_plugin.scope.nouser import off_reason
from memory_plugin.scoped.blocks import DOCUMENT_BLOCK

SEEN = "version"
SEEN_TOOL = "update_memory"
SEEN_FIELD = Field(
    None,
    ge=0,
    description="the document version you last read (0: there was none); when the document "
    "changed since, nothing is saved and the current one comes back to merge into. Omit it "
    "to replace whatever is there.",
)


def exposed(services: MemoryServices) -> list[BaseTool]:
    """The graph's memory tools of the kinds served over MCP (`over_mcp`) on in the base
    settings."""
    return [tool for tool in services.tools if services.owners[tool.name].over_mcp]


def _arguments(tool: BaseTool) -> type[ArgModelBase]:
    """The tool's arguments as the model sees them (no runtime), as the SDK's argument model."""
    schema = tool.tool_call_schema
    assert isinstance(schema, type) and issubclass(schema, BaseModel)
    fields: dict[str, Any] = {
        name: (field.annotation, field) for name, field in schema.model_fields.items()
    }
    if tool.name == SEEN_TOOL:
        fields[SEEN] = (int | None, SEEN_FIELD)
    return create_model(f"{tool.name}Arguments", __base__=ArgModelBase, **fields)


async def call(
    services: MemoryServices,
    store: BaseStore,
    tool: BaseTool,
    ctx: MemoryContext,
    arguments: dict[str, Any],
) -> str:
    """Run one memory tool for `ctx`: refused as the graph refuses it (its kind switched off
    for the caller's scope, or memory off for a caller without a user), else under the screen.
    An anonymous caller's private entry is stored shared (docs/mcp.md)."""
    settings = (await services.settings.for_store(store).aget(ctx)).values
    why = services.refusal(tool.name, settings, off_reason(ctx))
    if why is not None:
        raise ToolError(why)
    if anonymous(ctx) and tool.name == "memory_store" and arguments.get("visibility") == "private":
        arguments = {**arguments, "visibility": "shared"}
    state: dict[str, Any] = {}
    if tool.name == SEEN_TOOL:
        arguments = dict(arguments)
        seen = arguments.pop(SEEN, None)
        if seen is not None:
            state["memory_blocks"] = [{"name": DOCUMENT_BLOCK, "version": seen}]
    runtime: ToolRuntime[Any, Any] = ToolRuntime(
        state=state,
        context=ctx,
        config={},
        stream_writer=lambda _: None,
        tool_call_id=f"mcp-{uuid.uuid4().hex}",
        store=store,
    )
    coroutine = getattr(tool, "coroutine", None)
    assert coroutine is not None, f"tool {tool.name} has no async body"
    with screening(services.screen):
        try:
            result = await coroutine(**arguments, runtime=runtime)
        except ToolException as exc:
            raise ToolError(str(exc)) from exc
    if tool.response_format == "content_and_artifact":
        result = result[0]
    return str(result)


def mcp_tools(services: MemoryServices, store: BaseStore, identity: Identity) -> list[Tool]:
    """The exposed memory tools as the SDK's tools, each answering for `identity()`."""
    made: list[Tool] = []
    for tool in exposed(services):
        model = _arguments(tool)

        def runner(tool: BaseTool = tool) -> Any:
            async def run(**arguments: Any) -> str:
                return await call(services, store, tool, identity(), arguments)

            return run

        made.append(
            Tool(
                fn=runner(),
                name=tool.name,
                title=None,
                description=tool.description,
                parameters=model.model_json_schema(by_alias=True),
                fn_metadata=FuncMetadata(arg_model=model),
                is_async=True,
                context_kwarg=None,
                annotations=None,
            )
        )
    return made
