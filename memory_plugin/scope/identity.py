"""Who is calling: under LangGraph Server the authenticated user, never the client's claim.

LangGraph Server puts the user its `auth` handler returned in `config["configurable"]`
(`langgraph_auth_user`, `langgraph_auth_user_id`). When it is there:

- `user_id` is the authenticated user's id; a client context naming another user is refused;
- `workspace_id`, `org_id` (fields of the user object: attribute or mapping key) and the thread
  owner (`owner` in the run's metadata, as LangGraph's thread-ownership recipe records it)
  win over the client: a client context contradicting them is refused;
- a workspace the client names itself is admitted only when the membership hook says the user
  belongs to it: by default, when it is one of the user object's `workspaces`;
- an `org_id` the server does not supply is refused (orgs come from the server only).

Outside the server (no authenticated user) the app's own context is trusted, unless the app
gives a membership hook: then a named workspace must pass it too. Every refusal is a
`ScopeError` naming the field, raised before any memory is read or written.

The same rules hold at every door (a graph run, LangGraph Server's auth, and through
memory_plugin.scope.doors the CLI, the console's tokens and the MCP gateway): no workspace
unless one is named (`personal` is the label of no workspace, never a workspace id), no org
unless one is named or pinned. A door that names no agent is the agent `default`; a graph run
names its own (without one it has no agent memory, and its bounded memory is `default`'s).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from memory_plugin.errors import ScopeError

Membership = Callable[[str, str], bool]
"""(user_id, workspace_id) -> whether the user belongs to the workspace."""

AUTH_USER = "langgraph_auth_user"
AUTH_USER_ID = "langgraph_auth_user_id"
OWNER_METADATA_KEY = "owner"
OWNER_ORG_METADATA_KEY = "owner_org"
"""The thread metadata naming the owner's org, beside `owner` (graphs/auth.py records both)."""
SERVER_KEYS = (AUTH_USER, AUTH_USER_ID)
PERSONAL = "personal"
"""The label of a user's memory outside every workspace: naming it names no workspace."""
DEFAULT_AGENT = "default"
"""The agent of a run or door that names none."""


@dataclass(frozen=True, slots=True)
class UserKey:
    """One person as a key: their org (None for a user of no org) and their user id. Two
    users who share an id in two orgs are two people: key every per-user state by this,
    never by the user id alone."""

    org_id: str | None
    user_id: str

    def text(self) -> str:
        """The key as one string that tells every (org, user) pair apart."""
        return json.dumps([self.org_id, self.user_id])


def trust_run_context(user_id: str, workspace_id: str) -> bool:
    """Admit every workspace: for apps that build the run context themselves."""
    return True


def user_field(user: Any, name: str) -> Any:
    """A field of an authenticated user object: attribute or mapping key, else None."""
    if user is None:
        return None
    if isinstance(user, Mapping):
        return user.get(name)
    value = getattr(user, name, None)
    if value is None and callable(getattr(user, "get", None)):
        value = user.get(name)
    return value


@dataclass(frozen=True, slots=True)
class ServerIdentity:
    """What the server vouches for: the user, and the fields its user object pins."""

    user: Any
    user_id: str
    pinned: Mapping[str, str]
    workspaces: frozenset[str] | None

    def admits(self, workspace_id: str) -> bool:
        """The default membership under the server: the user object's `workspaces`."""
        return self.workspaces is not None and workspace_id in self.workspaces


def _workspaces(value: Any) -> frozenset[str] | None:
    if value is None:
        return None
    if isinstance(value, str):
        return frozenset((value,))
    if isinstance(value, Mapping):
        return frozenset(str(key) for key in value)
    if isinstance(value, Iterable):
        return frozenset(str(item) for item in value)
    return None


def server_identity(
    configurable: Mapping[str, Any], metadata: Mapping[str, Any] | None = None
) -> ServerIdentity | None:
    """The authenticated user of a LangGraph Server run, None outside the server."""
    user = configurable.get(AUTH_USER)
    user_id = configurable.get(AUTH_USER_ID) or user_field(user, "identity")
    if not user_id:
        return None
    pinned: dict[str, str] = {"user_id": str(user_id)}
    for name in ("workspace_id", "org_id"):
        value = user_field(user, name)
        if value is not None:
            pinned[name] = str(value)
    owner = (metadata or {}).get(OWNER_METADATA_KEY)
    if isinstance(owner, str) and owner:
        pinned["thread_owner_id"] = owner
    return ServerIdentity(user, str(user_id), pinned, _workspaces(user_field(user, "workspaces")))


def resolve_identity(
    claimed: Mapping[str, Any],
    server: ServerIdentity | None,
    membership: Membership | None = None,
) -> dict[str, Any]:
    """The context fields a run or door may use: the server's over the client's, workspace
    admitted, no workspace unless one is named."""
    fields = _defaults(claimed)
    if server is None:
        workspace = fields.get("workspace_id")
        if membership is not None and workspace is not None:
            admit(fields.get("user_id"), workspace, membership)
        return fields
    for name, value in server.pinned.items():
        said = fields.get(name)
        if said is not None and said != value:
            what = "user" if name == "user_id" else f"user's {name}"
            raise ScopeError(f"context {name} {said!r} does not match the authenticated {what}")
        fields[name] = value
    org = fields.get("org_id")
    if org is not None and "org_id" not in server.pinned:
        raise ScopeError(
            f"context org_id {org!r} is not vouched for by the server: under LangGraph Server "
            "the org comes from the authenticated user"
        )
    workspace = fields.get("workspace_id")
    if workspace is not None and "workspace_id" not in server.pinned:
        if membership is not None:
            admit(server.user_id, workspace, membership)
        elif not server.admits(workspace):
            raise ScopeError(
                f"user {server.user_id!r} is not a member of workspace {workspace!r} "
                "(not in the authenticated user's workspaces)"
            )
    return _defaults(fields)


def _defaults(claimed: Mapping[str, Any]) -> dict[str, Any]:
    fields = {name: value for name, value in claimed.items() if value is not None}
    if fields.get("workspace_id") == PERSONAL:
        del fields["workspace_id"]
    return fields


def admit(user_id: str | None, workspace_id: str, membership: Membership) -> None:
    if not user_id:
        raise ScopeError(
            f"workspace {workspace_id!r} needs a user_id in the context to check membership"
        )
    if not membership(user_id, workspace_id):
        raise ScopeError(f"user {user_id!r} is not a member of workspace {workspace_id!r}")
