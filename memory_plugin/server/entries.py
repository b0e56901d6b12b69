"""Routes over bounded entries (the `memory` tool's two targets) and agent memory entries."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Path

from memory_plugin.agent import AgentMemory, Entry
from memory_plugin.agent.entries import KEY_MAX, Visibility
from memory_plugin.bounded import BoundedMemory
from memory_plugin.server import schemas
from memory_plugin.server.access import Caller, CallerDep, NotFound, forbidden
from memory_plugin.server.console import Console, ConsoleDep, provenance_json, written_by
from memory_plugin.server.switches import AGENT_MEMORY_OFF, switch

router = APIRouter(prefix="/api/entries", tags=["entries"])
EntryKey = Annotated[str, Path(min_length=1, max_length=KEY_MAX)]
ADMIN_ONLY = "only a platform admin may change the agent's shared or read-only entries"


def target_json(view: Any) -> dict[str, Any]:
    """One bounded target as JSON: entries with their provenance, usage and limit."""
    origins = list(view.provenance) + [None] * (len(view.entries) - len(view.provenance))
    return {
        "entries": [
            {"index": index, "text": text, "provenance": provenance_json(origin)}
            for index, (text, origin) in enumerate(zip(view.entries, origins, strict=False))
        ],
        "used": view.used,
        "limit": view.limit,
        "usage": view.usage,
    }


async def targets(console: Console, caller: Caller) -> dict[str, Any]:
    """Both bounded targets of the caller and their agent."""
    views = await console.of(BoundedMemory).aread(caller.context())
    return {name: target_json(view) for name, view in views.items()}


@router.get("/bounded", response_model=schemas.Bounded)
async def read_bounded(caller: CallerDep, console: ConsoleDep) -> dict[str, Any]:
    """Both bounded targets of the caller and their agent, with their usage."""
    return {"agent_id": caller.agent_id, **await targets(console, caller)}


@router.post("/bounded", response_model=schemas.BoundedWrite)
async def write_bounded(
    body: schemas.MemoryWrite, caller: CallerDep, console: ConsoleDep
) -> dict[str, Any]:
    """Add, replace or remove one entry, through the `memory` tool's write path."""
    with written_by(caller):
        message = await console.of(BoundedMemory).aapply(
            caller.context(), body.action, body.target, body.content, body.old_text
        )
    return {"message": message, **await targets(console, caller)}


def entry_json(entry: Entry, caller: Caller) -> dict[str, Any]:
    """An agent entry as JSON, with whether the caller may change it (the provenance of one
    they may not change names no user or thread)."""
    editable = entry.visibility == "private" or caller.platform_admin
    return {
        "key": entry.key,
        "content": entry.content,
        "category": entry.category,
        "visibility": entry.visibility,
        "importance": entry.importance,
        "updated_at": entry.updated_at,
        "expires_at": entry.expires_at,
        "provenance": provenance_json(entry.provenance, public=not editable),
        "editable": editable,
    }


@router.get("/agent", response_model=schemas.AgentEntries)
async def list_agent_entries(caller: CallerDep, console: ConsoleDep) -> dict[str, Any]:
    """The caller's private entries and the agent's shared and read-only ones, and whether
    agent memory is on for the caller (writes need it)."""
    ctx = caller.context()
    entries = await console.of(AgentMemory).aentries(ctx)
    settings = (await console.settings.aget(ctx)).values
    return {
        "agent_id": caller.agent_id,
        "entries": [entry_json(e, caller) for e in entries],
        "switch": switch(settings.agent_memory, AGENT_MEMORY_OFF),
    }


@router.put("/agent/{key}", response_model=schemas.AgentEntry)
async def put_agent_entry(
    key: EntryKey, body: schemas.AgentEntryBody, caller: CallerDep, console: ConsoleDep
) -> dict[str, Any]:
    """Create an entry, or edit the one under `key` (what the body leaves out is kept);
    shared and read-only entries: platform admins only."""
    ctx = caller.context()
    found = {e.visibility: e for e in await console.of(AgentMemory).aentries(ctx) if e.key == key}
    existing: Visibility = "private" if "private" in found or not found else next(iter(found))
    visibility: Visibility = body.visibility or existing
    if visibility != "private" and not caller.platform_admin:
        raise forbidden(ADMIN_ONLY)
    kept = found.get(visibility)
    category = body.category or (kept.category if kept else "general")
    importance = body.importance
    if importance is None:
        importance = kept.importance if kept else 0.5
    with written_by(caller):
        entry = await console.of(AgentMemory).astore_entry(
            ctx, key, body.content, visibility=visibility, category=category, importance=importance
        )
    return entry_json(entry, caller)


@router.delete("/agent/{key}", response_model=schemas.Deleted)
async def delete_agent_entry(
    key: EntryKey, caller: CallerDep, console: ConsoleDep, visibility: Visibility | None = None
) -> dict[str, Any]:
    """Delete exactly one entry: the one with `visibility`, by default the one the caller sees
    (their private entry first); shared and read-only ones: platform admins only."""
    ctx = caller.context()
    seen = next(
        (entry for entry in await console.of(AgentMemory).aentries(ctx) if entry.key == key), None
    )
    if seen is None:
        raise NotFound
    target = visibility or seen.visibility
    if target != "private" and not caller.platform_admin:
        raise forbidden(ADMIN_ONLY)
    with written_by(caller):
        await console.of(AgentMemory).aforget(ctx, key, visibility=target)
    return {"deleted": key}


memory_router = APIRouter(tags=["entries"])


def legacy_target(view: Any) -> dict[str, Any]:
    """One bounded target as GET/POST /memory answer it: plain entry texts."""
    return {
        "entries": list(view.entries),
        "used": view.used,
        "limit": view.limit,
        "usage": view.usage,
    }


@memory_router.get("/memory")
async def read_memory(caller: CallerDep, console: ConsoleDep) -> dict[str, Any]:
    """Both bounded targets of the token's user and agent, with their usage."""
    views = await console.of(BoundedMemory).aread(caller.context())
    targets = {name: legacy_target(view) for name, view in views.items()}
    return {"user_id": caller.user_id, "agent_id": caller.agent_id, **targets}


@memory_router.post("/memory")
async def write_memory(
    body: schemas.MemoryWrite, caller: CallerDep, console: ConsoleDep
) -> dict[str, Any]:
    """Add, replace or remove one entry, through the `memory` tool's write path."""
    ctx = caller.context()
    with written_by(caller):
        message = await console.of(BoundedMemory).aapply(
            ctx, body.action, body.target, body.content, body.old_text
        )
    views = await console.of(BoundedMemory).aread(ctx)
    return {"message": message, **{name: legacy_target(v) for name, v in views.items()}}
