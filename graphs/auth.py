"""Bearer-token auth for `langgraph dev` and LangGraph Server: a LangGraph custom-auth example
that gives memory_plugin a user it can trust. langgraph.json loads it with
`"auth": {"path": "./graphs/auth.py:auth"}`.

Tokens come from a JSON file named by $MEMORY_AUTH_TOKENS:

    {"<token>": {"identity": "ann", "workspaces": ["acme"], "org_id": "..."}, ...}

(`identity` is required; `workspaces`, `workspace_id` and `org_id` are optional; `"operator":
true` lets a token use the whole /store API, for inspection and cron jobs). With the variable
unset, the demo table below is used and a warning is logged: `ann-demo-token` (ann, member of
workspace `acme`) and `mallory-demo-token` (mallory, member of `mallory-lab`). Never deploy
with the demo tokens.

Clients send `Authorization: Bearer <token>`
(`get_sync_client(url=..., headers={"Authorization": "Bearer ann-demo-token"})`). Then:

- the graph's memory belongs to the token's user: the server passes the user returned here
  as `config["configurable"]["langgraph_auth_user"]`, memory_plugin takes `user_id` from it,
  and a run `context` naming another user is refused;
- a run's `context={"workspace_id": ...}` is honoured only for one of the user's
  `workspaces` (or the app's own check, `create_memory_graph(..., membership=...)`); naming
  any other workspace fails the run before memory is read or written;
- threads belong to their creator (`owner` in the thread's metadata, which memory_plugin
  reads as the thread owner); nobody else can read, search or run them;
- the /store API reaches only memory of the caller: their personal memory and profile and
  the team memory of their workspaces (memory_plugin.scope.reachable_namespace);
- only operators create, read or change cron jobs (the nightly `memory_consolidation` job
  reaches every scope; graphs/consolidation.py also refuses runs by anyone else).

LangGraph Studio's own requests (`langgraph-studio-user` under `langgraph dev`) keep full
access to the /store API, so Studio can show memory; in runs from Studio, memory belongs to
that Studio user, which lists no workspaces.
"""

from __future__ import annotations

import json
import logging
import os
from pathlib import Path
from typing import Any

from langgraph_sdk import Auth

from memory_plugin.errors import InvalidIdError
from memory_plugin.identity import OWNER_METADATA_KEY, user_field
from memory_plugin.scope import reachable_namespace

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


def _set_owner(ctx: Auth.types.AuthContext, value: dict[str, Any]) -> None:
    """Record the caller as owner, in place: the server keeps the metadata dict it passed."""
    if value.get("metadata") is None:
        value["metadata"] = {}
    value["metadata"][OWNER_METADATA_KEY] = _identity(ctx)


@auth.on.threads.create
async def own_new_thread(ctx: Auth.types.AuthContext, value: dict[str, Any]) -> None:
    """A new thread belongs to its creator."""
    _set_owner(ctx, value)


@auth.on.threads.create_run
async def run_own_thread(ctx: Auth.types.AuthContext, value: dict[str, Any]) -> dict[str, str]:
    """Runs only on the caller's threads; a thread a run creates is the caller's."""
    _set_owner(ctx, value)
    return {OWNER_METADATA_KEY: _identity(ctx)}


@auth.on.threads
async def only_own_threads(ctx: Auth.types.AuthContext, value: Any) -> dict[str, str]:
    """Read, update, delete and search only the caller's threads."""
    return {OWNER_METADATA_KEY: _identity(ctx)}


def _unrestricted(user: Any) -> bool:
    return isinstance(user, Auth.types.StudioUser) or user_field(user, "operator") is True


@auth.on.store
async def own_memory_only(ctx: Auth.types.AuthContext, value: dict[str, Any]) -> None:
    """The /store API reaches only memory the caller may reach (operators and Studio: all)."""
    if _unrestricted(ctx.user):
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
        raise Auth.exceptions.HTTPException(
            status_code=403, detail=f"namespace {list(namespace)} is not your memory"
        )


@auth.on.crons
async def operators_schedule(ctx: Auth.types.AuthContext, value: dict[str, Any]) -> None:
    """Cron jobs are the operators' (and Studio's): the nightly job reaches every scope."""
    if not _unrestricted(ctx.user):
        raise Auth.exceptions.HTTPException(
            status_code=403, detail="only operators schedule cron jobs"
        )
