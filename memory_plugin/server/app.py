"""The REST app for operators: GET and POST /memory over the bounded entries of the caller."""

from __future__ import annotations

import os
from collections.abc import AsyncIterator, Mapping
from contextlib import asynccontextmanager
from typing import Annotated, Any, Literal

from fastapi import Depends, FastAPI, Header, HTTPException, Request
from langgraph.store.base import BaseStore
from pydantic import BaseModel, ConfigDict

from memory_plugin.backends import aconnect
from memory_plugin.context import MemoryContext
from memory_plugin.errors import (
    BackendUnavailableError,
    ConflictError,
    MemoryPluginError,
)
from memory_plugin.server.tokens import bearer, load_tokens
from memory_plugin.settings import MemorySettings


class MemoryWrite(BaseModel):
    """The `memory` tool's arguments; any other field (a user, an agent) is refused."""

    model_config = ConfigDict(extra="forbid")

    action: Literal["add", "replace", "remove"]
    target: Literal["memory", "user"]
    content: str | None = None
    old_text: str | None = None


def target_json(view: Any) -> dict[str, Any]:
    """One target as JSON: its entries, characters used, limit and usage string."""
    return {
        "entries": list(view.entries),
        "used": view.used,
        "limit": view.limit,
        "usage": view.usage,
    }


def http_error(exc: MemoryPluginError) -> HTTPException:
    """The HTTP answer to a refused or failed memory call, naming what was wrong."""
    if isinstance(exc, BackendUnavailableError):
        status = 503
    elif isinstance(exc, ConflictError):
        status = 409
    else:
        status = 400
    return HTTPException(status_code=status, detail=str(exc))


def authenticated(
    request: Request, authorization: Annotated[str | None, Header()] = None
) -> MemoryContext:
    """The caller of a request: the user and agent of its bearer token, else 401."""
    ctx = bearer(authorization, request.app.state.tokens)
    if ctx is None:
        raise HTTPException(
            status_code=401,
            detail="missing or unknown bearer token",
            headers={"WWW-Authenticate": "Bearer"},
        )
    return ctx


Caller = Annotated[MemoryContext, Depends(authenticated)]


def create_app(
    store: BaseStore | None = None,
    *,
    tokens: Mapping[str, Mapping[str, Any]] | str | os.PathLike[str] | None = None,
    url: str | None = None,
    settings: MemorySettings | None = None,
) -> FastAPI:
    """A FastAPI app over `store`, or over the backend `url` opens (memory_plugin.connect's
    default without one); callers authenticate with bearer tokens from `tokens` (a mapping, a
    JSON file, else $MEMORY_AUTH_TOKENS); `settings` are the defaults under the store's layers."""
    from memory_plugin.bounded import BoundedMemory

    table = load_tokens(tokens)

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        if store is not None:
            yield
            return
        async with aconnect(url, settings=settings) as backend:
            app.state.memory = BoundedMemory(backend.store, settings=settings)
            yield

    app = FastAPI(title="memory_plugin", lifespan=lifespan)
    app.state.tokens = table
    if store is not None:
        app.state.memory = BoundedMemory(store, settings=settings)

    async def targets(ctx: MemoryContext) -> dict[str, Any]:
        views = await app.state.memory.aread(ctx)
        return {name: target_json(view) for name, view in views.items()}

    @app.get("/memory")
    async def read_memory(ctx: Caller) -> dict[str, Any]:
        """Both bounded targets of the token's user and agent, with their usage."""
        try:
            return {"user_id": ctx.user_id, "agent_id": ctx.agent_id, **await targets(ctx)}
        except MemoryPluginError as exc:
            raise http_error(exc) from exc

    @app.post("/memory")
    async def write_memory(body: MemoryWrite, ctx: Caller) -> dict[str, Any]:
        """Add, replace or remove one entry, through the `memory` tool's write path."""
        try:
            message = await app.state.memory.aapply(
                ctx, body.action, body.target, body.content, body.old_text
            )
            return {"message": message, **await targets(ctx)}
        except MemoryPluginError as exc:
            raise http_error(exc) from exc

    return app
