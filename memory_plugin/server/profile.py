"""Routes over the caller's profile ("What I know about you"): read it with its change log,
and the opt-out that deletes it."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter

from memory_plugin.profile.document import render
from memory_plugin.profile.memory import ProfileMemory, enablement
from memory_plugin.server import schemas
from memory_plugin.server.access import CallerDep
from memory_plugin.server.console import ConsoleDep, provenance_json, written_by

router = APIRouter(prefix="/api/profile", tags=["profile"])
OPTED_OUT = "Context memory is off for your account; your memory profile was permanently deleted."


def change_json(change: Any) -> dict[str, Any]:
    """One profile write as JSON."""
    return {
        "at": change.at,
        "operations": [
            {"op": op.op, "section": op.section, "before": op.before, "after": op.after}
            for op in change.operations
        ],
        "provenance": provenance_json(change.provenance),
    }


@router.get("", response_model=schemas.ProfileAnswer)
async def read_profile(caller: CallerDep, console: ConsoleDep) -> dict[str, Any]:
    """The caller's profile, whether it is on (and why not) and its changes, newest first."""
    ctx = caller.context()
    settings = (await console.settings.aget(ctx)).values
    enabled, reason = enablement(settings)
    profile = await console.of(ProfileMemory).aread(ctx)
    changes = await console.of(ProfileMemory).achanges(ctx)
    return {
        "enabled": enabled,
        "reason": reason,
        "blocked_by_web_search": settings.web_search and not settings.profile_with_web_search,
        "profile": (
            {
                "markdown": render(profile),
                "last_updated": profile.last_updated,
                "turn_count": profile.turn_count,
            }
            if profile
            else None
        ),
        "changes": [change_json(change) for change in changes],
    }


@router.delete("", response_model=schemas.OptedOut)
async def opt_out(caller: CallerDep, console: ConsoleDep) -> dict[str, Any]:
    """Turn context memory off for the caller and permanently delete their profile."""
    with written_by(caller):
        await console.of(ProfileMemory).aopt_out(caller.context())
    return {"deleted": True, "message": OPTED_OUT}
