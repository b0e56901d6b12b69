"""Where a door lands: the (org, user, workspace, agent) of a CLI command, a console or MCP
bearer token, resolved by the same rules and defaults as a graph run
(memory_plugin.scope.identity.resolve_identity), and the words that say so."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from memory_plugin.errors import ScopeError
from memory_plugin.scope.context import MemoryContext
from memory_plugin.scope.identity import DEFAULT_AGENT, PERSONAL


def door_context(
    user: str | None,
    *,
    org: str | None = None,
    workspace: str | None = None,
    agent: str | None = None,
    shared: bool = False,
) -> MemoryContext:
    """The context a door lands in for what its user named (nothing named: no workspace,
    no org, the default agent); shared (team) memory needs a workspace named."""
    if shared and workspace in (None, PERSONAL):
        raise ScopeError("shared (team) memory needs a workspace: name one (--workspace)")
    agent = agent or DEFAULT_AGENT
    named = {"user_id": user, "org_id": org, "workspace_id": workspace, "agent_id": agent}
    named["thread_visibility"] = "shared" if shared else "private"
    return MemoryContext.from_run(named)


def token_context(user: Mapping[str, Any]) -> MemoryContext:
    """The context of a token table's user: their `identity`, `org_id`, `agent_id`, and
    the workspace their token pins (`workspace_id`), else none."""
    return door_context(
        str(user["identity"]),
        org=_text(user.get("org_id")),
        workspace=_text(user.get("workspace_id")),
        agent=_text(user.get("agent_id")),
    )


def _text(value: Any) -> str | None:
    return str(value) if value else None


def workspace_words(workspace: str | None) -> str:
    """Where a context's memory is, as a door says it."""
    return f"workspace {workspace}" if workspace else f"no workspace ({PERSONAL})"
