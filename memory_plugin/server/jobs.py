"""The nightly consolidation's last runs, each cut to the scopes the caller can see."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Query

from memory_plugin.server import schemas
from memory_plugin.server.access import Caller, CallerDep
from memory_plugin.server.services import ConsoleDep

router = APIRouter(prefix="/api/jobs", tags=["jobs"])


def sees(caller: Caller, scope: Any) -> bool:
    """Whether a run's scope is the caller's: their personal scope, or a team they are in."""
    if scope.org_id != caller.org_id:
        return False
    if scope.kind == "team":
        return scope.workspace_id is not None and caller.member(scope.workspace_id)
    in_workspace = scope.workspace_id is None or caller.member(scope.workspace_id)
    return scope.user_id == caller.user_id and in_workspace


@router.get("/consolidation", response_model=schemas.JobRuns)
async def consolidation_runs(
    caller: CallerDep,
    console: ConsoleDep,
    limit: Annotated[int, Query(ge=1, le=100)] = 20,
) -> dict[str, Any]:
    """The last runs, newest first; non-admins see only their scopes, and only runs that
    touched one of them."""
    from memory_plugin.scoped.job_runs import alist_runs

    runs = await alist_runs(console.store, limit=limit)
    shown = []
    for run in runs:
        record = run.to_json()
        if not caller.platform_admin:
            scopes = [scope for scope in run.scopes if sees(caller, scope)]
            if not scopes:
                continue
            record["scopes"] = [scope.to_json() for scope in scopes]
            record["folded"] = sum(scope.folded for scope in scopes)
            record["summary"] = f"Folded {record['folded']} notes in {len(scopes)} of your scopes."
        shown.append(record)
    return {"runs": shown}
