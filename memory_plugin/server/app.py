"""The console app: REST over every memory kind (and GET/POST /memory over the bounded
entries), bearer auth, one OpenAPI schema."""

from __future__ import annotations

import os
from collections.abc import AsyncIterator, Mapping
from contextlib import asynccontextmanager
from typing import Any
from urllib.parse import quote

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from langchain_core.language_models import BaseChatModel
from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.store.base import BaseStore
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.types import ASGIApp, Receive, Scope, Send

from memory_plugin.connection import aconnect
from memory_plugin.errors import MemoryPluginError
from memory_plugin.safety.staged import Check, Screen, prepare_screen, screening
from memory_plugin.server import (
    entries,
    forget,
    jobs,
    memberships,
    privacy,
    profile,
    scoped,
    threads,
)
from memory_plugin.server import settings as layers
from memory_plugin.server.access import (
    NOT_FOUND,
    STORE_DOWN,
    Caller,
    CallerDep,
    NotFound,
    internal_answer,
    invalid_answer,
    not_found_answer,
    refused_answer,
    unavailable_answer,
)
from memory_plugin.server.console import Console, default_model
from memory_plugin.server.headers import SecurityHeaders
from memory_plugin.server.limits import RequestLimits
from memory_plugin.server.page import mount_page
from memory_plugin.server.schemas import Error, Me
from memory_plugin.server.tokens import Authenticate, load_tokens
from memory_plugin.settings import MemorySettings

ERRORS: dict[int | str, dict[str, Any]] = {
    status: {"model": Error, "description": what}
    for status, what in (
        (400, "refused by a write path (the library's message)"),
        (401, "missing, unknown or non-bearer token"),
        (403, "visible, but not yours to change (the reason)"),
        (404, "not found, or not yours to see: the same answer"),
        (409, "version conflict: someone saved first"),
        (413, "the request body is over the byte cap"),
        (503, "the store is unavailable"),
    )
}


def me_json(caller: Caller) -> dict[str, Any]:
    """Who the token is, and the scopes it reaches: personal memory in each of the caller's
    workspaces, then outside them, then each workspace's team memory."""
    scopes: list[dict[str, Any]] = [
        {
            "kind": "personal",
            "workspace": workspace,
            "label": "MEMORY.md",
            "path": f"{scoped.PERSONAL}?workspace={quote(workspace, safe='')}",
        }
        for workspace in caller.workspaces
    ]
    scopes.append(
        {"kind": "personal", "workspace": None, "label": "MEMORY.md", "path": scoped.PERSONAL}
    )
    scopes += [
        {
            "kind": "team",
            "workspace": workspace,
            "label": "TEAM_MEMORY.md",
            "path": f"/api/team/{quote(workspace, safe='')}",
        }
        for workspace in caller.workspaces
    ]
    return {
        "user_id": caller.user_id,
        "org_id": caller.org_id,
        "agent_id": caller.agent_id,
        "workspaces": list(caller.workspaces),
        "admin": list(caller.admin),
        "scopes": scopes,
    }


async def http_answer(request: Request, exc: Exception) -> JSONResponse:
    """FastAPI's own HTTP errors; its 404 says exactly what every other 404 says."""
    assert isinstance(exc, StarletteHTTPException)
    detail = NOT_FOUND if exc.status_code == 404 else exc.detail
    return JSONResponse({"detail": detail}, status_code=exc.status_code, headers=exc.headers)


class Screening:
    """ASGI middleware: each request runs under the console's safety screen (the route's
    writes, and tasks or threads started from it, see it as the active screen)."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        state = getattr(scope.get("app"), "state", None)
        console = getattr(state, "console", None)
        if console is None:
            await self.app(scope, receive, send)
            return
        with screening(console.screen):
            await self.app(scope, receive, send)


def create_app(
    store: BaseStore | None = None,
    *,
    tokens: Mapping[str, Mapping[str, Any]] | str | os.PathLike[str] | None = None,
    url: str | None = None,
    settings: MemorySettings | None = None,
    checkpointer: BaseCheckpointSaver[Any] | None = None,
    model: BaseChatModel | None = None,
    authenticate: Authenticate | None = None,
    workspaces_from_store: bool = False,
    screen: Check | None = None,
) -> FastAPI:
    """The console over `store` (and `checkpointer`, for Summarize now), or over the backend
    `url` opens (memory_plugin.connect's default without one). Callers authenticate with
    bearer tokens: `authenticate(token)` gives the user mapping, by default the token table
    `tokens` (a mapping, a JSON file, else $MEMORY_AUTH_TOKENS). `model` compresses,
    consolidates and summarizes (default: $MEMORY_MAINTENANCE_MODEL, else $MEMORY_MODEL, else
    the offline model); `settings` are the defaults under the store's layers. A caller is a
    member of exactly the workspaces their token names; with `workspaces_from_store` also of
    every workspace where the store holds personal memory of theirs or a thread they own (the
    development token of `memory-plugin serve`, which like the chatbot trusts the workspace a
    run names).
    `screen(text, visibility)` is an extra safety check every write runs after the built-in
    rules, before the judge the `screen_judge` setting turns on (see docs/safety.md); one
    that is not callable raises TypeError here, and a damaged classifier file ModelFileError."""
    Screen(check=screen)  # a check that is not callable raises TypeError now, not at startup
    prepare_screen()
    if authenticate is None:
        authenticate = load_tokens(tokens).get
    chosen = model or default_model()

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        if store is not None:
            yield
            return
        async with aconnect(url, settings=settings) as backend:
            app.state.console = Console(
                backend.store, chosen, backend.checkpointer, settings, check=screen
            )
            yield

    app = FastAPI(title="memory_plugin console", lifespan=lifespan, responses=ERRORS)
    app.add_middleware(RequestLimits)
    app.add_middleware(SecurityHeaders)
    app.add_middleware(Screening)
    app.state.authenticate = authenticate
    app.state.workspaces_from_store = workspaces_from_store
    if store is not None:
        app.state.console = Console(store, chosen, checkpointer, settings, check=screen)
    app.add_exception_handler(NotFound, not_found_answer)
    app.add_exception_handler(RequestValidationError, invalid_answer)
    app.add_exception_handler(MemoryPluginError, refused_answer)
    app.add_exception_handler(Exception, internal_answer)
    for failure in STORE_DOWN:
        app.add_exception_handler(failure, unavailable_answer)
    app.add_exception_handler(StarletteHTTPException, http_answer)

    @app.get("/api/me", response_model=Me, tags=["me"])
    async def me(caller: CallerDep) -> dict[str, Any]:
        """Who the token is, and the memory scopes it reaches."""
        return me_json(caller)

    for router in (
        memberships.router,
        scoped.personal_router,
        scoped.team_router,
        profile.router,
        entries.router,
        entries.memory_router,
        layers.router,
        threads.router,
        jobs.router,
        forget.router,
        privacy.router,
    ):
        app.include_router(router)
    mount_page(app)
    return app
