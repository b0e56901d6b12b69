"""Who an MCP session is: fixed by the command line (stdio) or by the bearer token of each
HTTP request, never by a tool's arguments; and the rule for an anonymous session."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from mcp.server.auth.middleware.auth_context import get_access_token
from mcp.server.auth.provider import AccessToken

from memory_plugin.errors import MemoryPluginError
from memory_plugin.scope.context import MemoryContext
from memory_plugin.scope.doors import token_context
from memory_plugin.server.access import Caller

Identity = Callable[[], MemoryContext]
"""The MemoryContext of the request being served."""

ANONYMOUS = (
    "this MCP session has no user (start it with --user): there is no per-user isolation "
    "on an anonymous surface, so a private agent memory entry is stored shared"
)


def fixed(ctx: MemoryContext) -> Identity:
    """Every request is `ctx` (stdio: one local user, or nobody)."""
    return lambda: ctx


class TableVerifier:
    """The SDK's TokenVerifier over the console's token table: a known token's user rides
    in the AccessToken's claims, its whole identity (org and user) as the client and subject
    the SDK binds a session to (so one org's user never reaches the session of a user of the
    same id in another org); an unknown token is refused (401)."""

    def __init__(self, table: Mapping[str, Mapping[str, Any]]) -> None:
        self.table = dict(table)

    async def verify_token(self, token: str) -> AccessToken | None:
        """The access token of a known bearer token, None otherwise."""
        user = self.table.get(token)
        if user is None:
            return None
        who = Caller.of(user).key.text()
        return AccessToken(
            token=token, client_id=who, scopes=[], subject=who, claims={"user": dict(user)}
        )


def from_token() -> MemoryContext:
    """The MemoryContext of the current HTTP request's bearer token, resolved as every door
    resolves its user: the same names on stdio land on the same memory."""
    access = get_access_token()
    user = (access.claims or {}).get("user") if access is not None else None
    if not isinstance(user, Mapping):
        raise MemoryPluginError("this request is not authenticated")
    return token_context(user)


def anonymous(ctx: MemoryContext) -> bool:
    """Whether the session names no user."""
    return not ctx.user_id
