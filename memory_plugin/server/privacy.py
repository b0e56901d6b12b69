"""Routes that take a user's memory out, bring it back, and delete a user (docs/privacy.md):
a caller exports and imports their own memory; another user's only a platform admin, who
alone deletes users."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from fastapi import APIRouter, Path, Query, Request
from fastapi.responses import Response

from memory_plugin.plans import arun
from memory_plugin.privacy.archive import export_plan, import_plan, parse, require_plan
from memory_plugin.privacy.commands import semantic
from memory_plugin.privacy.erase import aerase_user
from memory_plugin.privacy.inventory import Owner
from memory_plugin.privacy.readable import to_markdown
from memory_plugin.scope.namespaces import MAX_ID_BYTES
from memory_plugin.server.access import CallerDep, forbidden
from memory_plugin.server.console import ConsoleDep

router = APIRouter(tags=["privacy"])
ADMIN_ONLY = "only a platform admin may {} another user's memory"


@router.get("/api/export", response_class=Response)
async def export(
    caller: CallerDep,
    console: ConsoleDep,
    user: Annotated[str | None, Query(max_length=MAX_ID_BYTES)] = None,
    workspace: Annotated[list[str] | None, Query(max_length=MAX_ID_BYTES)] = None,
    format: Literal["json", "markdown"] = "json",
) -> Response:
    """The caller's memory (another `user`'s for a platform admin: 403 otherwise; 400 when
    that user has none) as the export document, or as Markdown; `workspace` (repeatable):
    the personal memory inside it too (404 unless the caller is a member, or an admin)."""
    if user is not None and user != caller.user_id:
        if not caller.platform_admin:
            raise forbidden(ADMIN_ONLY.format("export"))
        owner = Owner(user, caller.org_id)
        await arun(console.store, require_plan(owner))
    else:
        owner = Owner(caller.user_id, caller.org_id)
        for name in workspace or ():
            caller.personal(name)
    archive = await arun(console.store, export_plan(owner, workspace or ()))
    suffix = "md" if format == "markdown" else "json"
    headers = {"Content-Disposition": f'attachment; filename="memory-export.{suffix}"'}
    if format == "markdown":
        return Response(to_markdown(archive), media_type="text/markdown", headers=headers)
    return Response(archive.dumps(), media_type="application/json", headers=headers)


@router.post("/api/import")
async def import_memory(
    request: Request,
    caller: CallerDep,
    console: ConsoleDep,
    merge: bool = False,
    include_forgotten: bool = False,
) -> dict[str, Any]:
    """Load an export document (the request body) into this store: the caller's own, in
    workspaces they belong to (another user's of the caller's org, or other workspaces, for a
    platform admin; 403 otherwise). 400, naming what is wrong, for a body that
    is not JSON or not an export, an unknown schema_version, an item the safety screen
    refuses or a value its kind's reads could not serve, a body nested too deeply, or a user
    who already has memory without `merge`; nothing is written then. What was forgotten or
    deleted here since the export is not imported unless `include_forgotten`."""
    archive = parse(await request.body())
    if archive.owner.org_id != caller.org_id:
        raise forbidden("an import must be of a user of your own org")
    if archive.owner.user_id != caller.user_id and not caller.platform_admin:
        raise forbidden(ADMIN_ONLY.format("import"))
    outside = sorted(set(archive.workspaces) - set(caller.workspaces or ()))
    if outside and not caller.platform_admin:
        raise forbidden(f"you are not a member of workspace {outside[0]!r}")
    plan = import_plan(
        archive, merge=merge, semantic=semantic(console.store), include_forgotten=include_forgotten
    )
    report = await arun(console.store, plan)
    return report.to_json()


@router.delete("/api/users/{user_id}")
async def delete_user(
    user_id: Annotated[str, Path(min_length=1, max_length=MAX_ID_BYTES)],
    caller: CallerDep,
    console: ConsoleDep,
    threads: bool = False,
) -> dict[str, Any]:
    """Delete every memory of a user (of the caller's org) on every kind and their settings
    layer; with `threads`, the threads they own with their journals and summaries. Platform
    admins only (403); 400 for a user with no memory here, and nothing changes."""
    if not caller.platform_admin:
        raise forbidden("only a platform admin may delete a user")
    checkpointer = console.checkpointer if threads else None
    erased = await aerase_user(
        console.store, Owner(user_id, caller.org_id), checkpointer=checkpointer
    )
    return erased.to_json()
