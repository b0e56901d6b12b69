"""Bearer-token auth for `langgraph dev` and LangGraph Server: a LangGraph custom-auth example
that gives memory_plugin a user it can trust. langgraph.json loads it with
`"auth": {"path": "./graphs/auth.py:auth"}`.

Tokens come from a JSON file named by $MEMORY_AUTH_TOKENS:

    {"<token>": {"identity": "ann", "workspaces": ["acme"], "org_id": "..."}, ...}

(`identity` is required; `workspaces`, `workspace_id` and `org_id` are optional; `"operator":
true` makes the token an operator's: the whole store, assistants and cron jobs). With the
variable unset, the demo table below is used and a warning is logged: `ann-demo-token` (ann,
member of workspace `acme`) and `mallory-demo-token` (mallory, member of `mallory-lab`).
Never deploy with the demo tokens.

Clients send `Authorization: Bearer <token>`
(`get_sync_client(url=..., headers={"Authorization": "Bearer ann-demo-token"})`). Then:

- the graph's memory belongs to the token's user: the server passes the user returned here
  as `config["configurable"]["langgraph_auth_user"]`, memory_plugin takes `user_id` from it;
- a run (on a thread, stateless, or a cron's) whose context names another user, or a
  workspace that is not one of the user's `workspaces`, is refused with 403 and the reason
  before it starts (the same check memory_plugin makes inside the graph, which stays as the
  second line; a graph with its own `membership=` hook needs the same hook here);
- threads belong to their creator (`owner` in the thread's metadata, which memory_plugin
  reads as the thread owner, and `owner_org`, their org, for a user of an org); nobody else
  can read, search, run or take them (a user of the same identity in another org neither),
  and an owner cannot hand one to someone else. Give every token of a deployment with orgs
  its `org_id`: a token with none reaches the threads of its identity in every org;
- the /store API reaches only memory of the caller: their personal memory and profile and
  the team memory of their workspaces (memory_plugin.scope.scopes.reachable_namespace); the whole
  store is the operators';
- users can search and read assistants (to find `memory_agent` and run it); everything else
  no handler here names (creating, changing or deleting assistants, cron jobs, any action
  LangGraph adds later) is denied to all but operators. The nightly `memory_consolidation`
  job reaches every scope; graphs/consolidation.py also refuses runs by anyone else.

langgraph.json sets `"disable_studio_auth": true`, so LangGraph Studio's requests go through
this bearer-token check like any client's: Studio sees what its token's user may see.
"""

from __future__ import annotations

import json
import logging
import os
from pathlib import Path
from typing import Any

from langgraph_sdk import Auth

from memory_plugin.errors import InvalidIdError, ScopeError
from memory_plugin.scope import reachable_namespace
from memory_plugin.scope.context import MemoryContext
from memory_plugin.scope.identity import (
    AUTH_USER,
    AUTH_USER_ID,
    OWNER_METADATA_KEY,
    OWNER_ORG_METADATA_KEY,
    user_field,
)

logger = logging.getLogger("memory_plugin.graphs.auth")

TOKENS_ENV = "MEMORY_AUTH_TOKENS"
DEMO_TOKENS: dict[str, dict[str, Any]] = {
    "ann-demo-token": {"identity": "ann", "workspaces": ["acme"]},
    "mallory-demo-token": {"identity": "mallory", "workspaces": ["mallory-lab"]},
}


def load_tokens() -> dict[str, dict[str, Any]]:
    """The token table: the JSON file named by $MEMORY_AUTH_TOKENS, else the demo tokens."""
    path = os.environ.get(TOKENS_ENV)
    if not path:
        logger.warning(
            "%s is not set: the demo tokens (ann-demo-token, mallory-demo-token) are accepted; "
            "set %s to a JSON token file for anything but a demo",
            TOKENS_ENV,
            TOKENS_ENV,
        )
        return DEMO_TOKENS
    table = json.loads(Path(path).read_text())
    if not isinstance(table, dict) or not all(
        isinstance(user, dict) and isinstance(user.get("identity"), str) and user["identity"]
        for user in table.values()
    ):
        raise ValueError(f"{TOKENS_ENV} file {path} must map tokens to users with an identity")
    return table


TOKENS = load_tokens()
auth = Auth()


@auth.authenticate
async def authenticate(authorization: str | None) -> dict[str, Any]:
    """The user of a `Bearer <token>` header, else 401."""
    scheme, _, token = (authorization or "").partition(" ")
    user = TOKENS.get(token.strip()) if scheme.lower() == "bearer" else None
    if user is None:
        raise Auth.exceptions.HTTPException(status_code=401, detail="unknown or missing token")
    return dict(user)


def _identity(ctx: Auth.types.AuthContext) -> str:
    return str(ctx.user.identity)


def _operator(user: Any) -> bool:
    return user_field(user, "operator") is True


def _refuse(detail: str) -> Auth.exceptions.HTTPException:
    return Auth.exceptions.HTTPException(status_code=403, detail=detail)


def _own(ctx: Auth.types.AuthContext) -> dict[str, str]:
    """The metadata of the caller's threads: their identity, and their org when they have one
    (the same identity in another org is another person)."""
    org = user_field(ctx.user, "org_id")
    return {
        OWNER_METADATA_KEY: _identity(ctx),
        **({OWNER_ORG_METADATA_KEY: str(org)} if org else {}),
    }


def _set_owner(ctx: Auth.types.AuthContext, value: dict[str, Any]) -> None:
    """Record the caller as owner, in place: the server keeps the metadata dict it passed."""
    if value.get("metadata") is None:
        value["metadata"] = {}
    value["metadata"].update(_own(ctx))


def _admit_run(ctx: Auth.types.AuthContext, run: dict[str, Any] | None) -> None:
    """Refuse, with memory_plugin's reason, a run whose context the graph would refuse: 403
    for a user, workspace or owner that is not the caller's, 422 for a malformed id."""
    run = run or {}
    config = run.get("config") or {}
    configurable = {
        **(config.get("configurable") or {}),
        AUTH_USER: ctx.user,
        AUTH_USER_ID: _identity(ctx),
    }
    try:
        MemoryContext.from_run(run.get("context"), configurable, metadata=_own(ctx))
    except ScopeError as error:
        raise _refuse(str(error)) from None
    except InvalidIdError as error:
        raise Auth.exceptions.HTTPException(status_code=422, detail=str(error)) from None


@auth.on
async def operators_only(ctx: Auth.types.AuthContext, value: Any) -> None:
    """Default deny: whatever no handler below names is the operators' alone."""
    if not _operator(ctx.user):
        raise _refuse(f"only operators may {ctx.action} {ctx.resource}")


@auth.on.assistants(actions=["read", "search"])
async def find_assistants(ctx: Auth.types.AuthContext, value: Any) -> None:
    """Everyone may find and read the assistants they run; changing them is the operators'."""


@auth.on.threads.create
async def own_new_thread(ctx: Auth.types.AuthContext, value: dict[str, Any]) -> dict[str, str]:
    """A new thread belongs to its creator; an existing id must be the caller's thread."""
    _set_owner(ctx, value)
    return _own(ctx)


@auth.on.threads.create_run
async def run_own_thread(ctx: Auth.types.AuthContext, value: dict[str, Any]) -> dict[str, str]:
    """Runs only on the caller's threads, as the caller; a thread a run creates is theirs."""
    _admit_run(ctx, value.get("kwargs"))
    _set_owner(ctx, value)
    return _own(ctx)


@auth.on.threads.update
async def keep_own_threads(ctx: Auth.types.AuthContext, value: dict[str, Any]) -> dict[str, str]:
    """Update only the caller's threads, and never hand one to someone else."""
    metadata = value.get("metadata") or {}
    for key, mine in _own(ctx).items():
        if metadata.get(key, mine) != mine:
            given = metadata[key]
            raise _refuse(f"a thread cannot be given to {given!r}: threads stay with their creator")
    return _own(ctx)


@auth.on.threads
async def only_own_threads(ctx: Auth.types.AuthContext, value: Any) -> dict[str, str]:
    """Read, delete and search only the caller's threads."""
    return _own(ctx)


@auth.on.store
async def own_memory_only(ctx: Auth.types.AuthContext, value: dict[str, Any]) -> None:
    """The /store API reaches only memory the caller may reach (operators: all of it)."""
    if _operator(ctx.user):
        return
    namespace = tuple(value.get("namespace") or ())
    workspaces = user_field(ctx.user, "workspaces") or ()
    if isinstance(workspaces, str):
        workspaces = (workspaces,)
    pinned = user_field(ctx.user, "workspace_id")
    try:
        allowed = reachable_namespace(
            namespace,
            _identity(ctx),
            workspaces=[*workspaces, *([pinned] if pinned else [])],
            org_id=user_field(ctx.user, "org_id"),
        )
    except InvalidIdError:
        allowed = False
    if not allowed:
        raise _refuse(f"namespace {list(namespace)} is not your memory")


@auth.on.crons
async def operators_schedule(ctx: Auth.types.AuthContext, value: dict[str, Any]) -> None:
    """Cron jobs are the operators' (the nightly job reaches every scope); a cron's runs are
    checked like the operator's own runs."""
    if not _operator(ctx.user):
        raise _refuse("only operators schedule cron jobs")
    if ctx.action in ("create", "update"):
        _admit_run(ctx, value.get("payload"))
