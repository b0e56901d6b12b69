"""GET /api/workspaces: the workspaces the caller belongs to, each with the memory it holds."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter
from langgraph.store.base import BaseStore

from memory_plugin.scope.scopes import thread_scope
from memory_plugin.server import schemas
from memory_plugin.server.access import CallerDep, NotFound
from memory_plugin.server.console import ConsoleDep

router = APIRouter(prefix="/api/workspaces", tags=["me"])


async def holds(store: BaseStore, namespace: tuple[str, ...]) -> bool:
    """Whether the store holds an item under `namespace` (a namespace only read holds none)."""
    return bool(await store.asearch(namespace, limit=1))


@router.get("", response_model=schemas.Workspaces)
async def list_workspaces(caller: CallerDep, console: ConsoleDep) -> dict[str, Any]:
    """The caller's workspaces in the order of /api/me, each with whether the store holds
    personal memory of theirs in it and whether it holds team memory (a workspace id no
    store could hold is left out)."""
    listed = []
    for workspace in caller.workspaces:
        try:
            personal = thread_scope(caller.personal(workspace)).namespace
            team = thread_scope(caller.team(workspace)).namespace
        except NotFound:
            continue
        listed.append(
            {
                "workspace": workspace,
                "personal": await holds(console.store, personal),
                "team": await holds(console.store, team),
            }
        )
    return {"workspaces": listed}
