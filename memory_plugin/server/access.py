"""Who is calling and what they may reach: callers from bearer tokens, the 404 and 403 rules.

A scope, thread, note, version or run the caller cannot see answers 404 `{"detail": "not
found"}`, byte for byte like one that does not exist; a visible resource the caller may not
change answers 403 with the reason.
"""

from __future__ import annotations

import dataclasses
import logging
import sqlite3
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Annotated, Any

import psycopg
from fastapi import Depends, Header, HTTPException, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse

from memory_plugin.errors import (
    BackendUnavailableError,
    ConflictError,
    InvalidIdError,
    LockedSettingError,
    MemoryPluginError,
)
from memory_plugin.scope.context import MemoryContext
from memory_plugin.scope.doors import token_context
from memory_plugin.scope.identity import DEFAULT_AGENT, UserKey
from memory_plugin.scope.namespaces import encode_id
from memory_plugin.server.headers import security_headers
from memory_plugin.server.tokens import bearer_token
from memory_plugin.server.workspaces import memory_workspaces

logger = logging.getLogger(__name__)

NOT_FOUND = "not found"
UNAVAILABLE = "the memory store is unavailable; try again shortly"
INTERNAL = "internal error"


class NotFound(Exception):
    """Answered 404 `{"detail": "not found"}`: nothing about what was asked is echoed."""


def _names(value: Any) -> tuple[str, ...]:
    if isinstance(value, str):
        return (value,)
    if isinstance(value, Iterable):
        return tuple(str(item) for item in value)
    return ()


@dataclass(frozen=True)
class Caller:
    """The authenticated user of a request: identity, org, agent, workspaces and roles."""

    user_id: str
    org_id: str | None = None
    agent_id: str = DEFAULT_AGENT
    workspaces: tuple[str, ...] = ()
    spaces: tuple[str, ...] = ()
    admin: tuple[str, ...] = ()

    @classmethod
    def of(cls, user: Mapping[str, Any]) -> Caller:
        """The caller a token's user mapping describes: who they are as every door resolves
        it (memory_plugin.scope.doors.token_context), and the workspaces they belong to."""
        ctx = token_context(user)
        pinned = user.get("workspace_id")
        workspaces = dict.fromkeys([*_names(user.get("workspaces")), *_names(pinned)])
        return cls(
            user_id=str(ctx.user_id),
            org_id=ctx.org_id,
            agent_id=ctx.agent_id or DEFAULT_AGENT,
            workspaces=tuple(workspaces),
            spaces=_names(user.get("spaces")),
            admin=_names(user.get("admin")),
        )

    @property
    def key(self) -> UserKey:
        """Who the caller is, as the key of every per-user state: their org and user id."""
        return UserKey(self.org_id, self.user_id)

    @property
    def platform_admin(self) -> bool:
        """Whether the caller administers the platform settings layer."""
        return "platform" in self.admin

    def joining(self, workspaces: Iterable[str]) -> Caller:
        """The caller, a member of `workspaces` too."""
        joined = dict.fromkeys([*self.workspaces, *workspaces])
        return dataclasses.replace(self, workspaces=tuple(joined))

    def member(self, workspace: str) -> bool:
        """Whether the caller belongs to `workspace`."""
        return workspace in self.workspaces

    def administers(self, layer: str, space: str | None) -> bool:
        """Whether the caller may write a settings layer (their own user layer always)."""
        if layer == "user":
            return True
        if layer == "platform":
            return self.platform_admin
        if layer == "org":
            return self.org_id is not None and "org" in self.admin
        return space is not None and f"space:{space}" in self.admin

    def context(self) -> MemoryContext:
        """The caller's own context: no workspace, their agent."""
        return MemoryContext(user_id=self.user_id, org_id=self.org_id, agent_id=self.agent_id)

    def personal(self, workspace: str | None) -> MemoryContext:
        """The caller's personal scope, inside `workspace` when named (404 unless member)."""
        if workspace is not None:
            self._admit(workspace)
        return MemoryContext(user_id=self.user_id, org_id=self.org_id, workspace_id=workspace)

    def team(self, workspace: str) -> MemoryContext:
        """The team scope of `workspace` (404 unless the caller is a member)."""
        self._admit(workspace)
        return MemoryContext(
            user_id=self.user_id,
            org_id=self.org_id,
            workspace_id=workspace,
            thread_visibility="shared",
        )

    def settings_context(self, space: str | None) -> MemoryContext:
        """The context of the settings the caller sees, in `space` when named (404 unless
        the caller works in it or administers it)."""
        if space is not None and space not in self.spaces and not self.administers("space", space):
            raise NotFound
        return MemoryContext(user_id=self.user_id, org_id=self.org_id, space_id=space)

    def _admit(self, workspace: str) -> None:
        if not self.member(workspace):
            raise NotFound
        try:
            encode_id(workspace, what="workspace_id")
        except InvalidIdError:
            raise NotFound from None


async def authenticated(
    request: Request, authorization: Annotated[str | None, Header()] = None
) -> Caller:
    """The caller of a request: the user of its bearer token, else 401; with the app's
    `workspaces_from_store`, a member of every workspace where they have personal memory or
    own a thread (server.workspaces)."""
    token = bearer_token(authorization)
    user = request.app.state.authenticate(token) if token is not None else None
    if user is None:
        raise HTTPException(
            status_code=401,
            detail="missing or unknown bearer token",
            headers={"WWW-Authenticate": "Bearer"},
        )
    caller = Caller.of(user)
    if not request.app.state.workspaces_from_store:
        return caller
    store = request.app.state.console.store
    return caller.joining(await memory_workspaces(store, caller.user_id, caller.org_id))


CallerDep = Annotated[Caller, Depends(authenticated)]


def forbidden(reason: str) -> HTTPException:
    """403 for a visible resource the caller may not change, with the reason."""
    return HTTPException(status_code=403, detail=reason)


def status_of(exc: MemoryPluginError) -> int:
    """The HTTP status of a refused or failed memory call."""
    if isinstance(exc, BackendUnavailableError):
        return 503
    if isinstance(exc, ConflictError):
        return 409
    if isinstance(exc, LockedSettingError):
        return 403
    return 400


def http_error(exc: MemoryPluginError) -> HTTPException:
    """The HTTP answer to a refused or failed memory call, naming what was wrong."""
    return HTTPException(status_code=status_of(exc), detail=str(exc))


async def not_found_answer(request: Request, exc: Exception) -> JSONResponse:
    """The one 404 answer."""
    return JSONResponse({"detail": NOT_FOUND}, status_code=404)


async def invalid_answer(request: Request, exc: Exception) -> JSONResponse:
    """422 for a malformed request: where and what, without echoing the input back."""
    assert isinstance(exc, RequestValidationError)
    errors = [
        {"type": error["type"], "loc": list(error["loc"]), "msg": error["msg"]}
        for error in exc.errors()
    ]
    return JSONResponse({"detail": errors}, status_code=422)


STORE_DOWN: tuple[type[Exception], ...] = (
    OSError,
    sqlite3.OperationalError,
    psycopg.OperationalError,
)
"""How a store that cannot be reached fails (connection refused, pool timeout, disk errors)."""


async def unavailable_answer(request: Request, exc: Exception) -> JSONResponse:
    """503 when the store fails underneath a request: logged, nothing of it echoed."""
    logger.warning("%s %s: the store failed: %r", request.method, request.url.path, exc)
    return JSONResponse({"detail": UNAVAILABLE}, status_code=503)


async def internal_answer(request: Request, exc: Exception) -> JSONResponse:
    """500 for a failure nothing else answers: nothing of it echoed, the security headers set
    here (the server's error layer sends it past the app's middleware); the server logs it."""
    headers = {name.decode(): value.decode() for name, value in security_headers(request.url.path)}
    return JSONResponse({"detail": INTERNAL}, status_code=500, headers=headers)


async def refused_answer(request: Request, exc: Exception) -> JSONResponse:
    """A MemoryPluginError raised by a route: its status and message."""
    assert isinstance(exc, MemoryPluginError)
    return JSONResponse({"detail": str(exc)}, status_code=status_of(exc))
