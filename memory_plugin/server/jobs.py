"""The nightly consolidation's last runs, each cut to the scopes the caller can see."""

from __future__ import annotations

from dataclasses import replace
from datetime import datetime
from typing import TYPE_CHECKING, Annotated, Any

from fastapi import APIRouter, Query

from memory_plugin.server import schemas
from memory_plugin.server.access import Caller, CallerDep
from memory_plugin.server.console import ConsoleDep

if TYPE_CHECKING:
    from memory_plugin.scoped.job_runs import JobRun

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
    if caller.platform_admin:
        return {"runs": [run.to_json() for run in runs]}
    return {"runs": [own.to_json() for run in runs if (own := cut(caller, run)) is not None]}


def cut(caller: Caller, run: JobRun) -> JobRun | None:
    """The run as one non-admin sees it: only their scopes, with the status, count and
    summary of those alone (another scope's failure shows nowhere); None when it touched none."""
    scopes = [scope for scope in run.scopes if sees(caller, scope)]
    if not scopes:
        return None
    folded = sum(scope.folded for scope in scopes)
    summary = f"Folded {folded} notes in {len(scopes)} of your scopes."
    if run.finished_at is None:
        return replace(run, scopes=tuple(scopes), folded=folded, summary=summary)
    return run.finish(scopes, summary, datetime.fromisoformat(run.finished_at))
