"""Forget everywhere over REST: preview where the caller's memory holds a text, then apply
the preview by its id (memory_plugin.privacy.forget). Only the caller's own memory: their
personal memory and profile, their bounded and private agent entries, the team memory of
their workspaces; an agent's shared entries are listed, changed only by a platform admin.

A preview lives in the serving process for PREVIEW_SECONDS (it holds the text to forget, so
it is never written to the store), under the whole identity of the caller (org and user):
only they may apply it. Applying it, or its expiry, drops it, and another person, another
process or an expired id answers 404: preview again.
"""

from __future__ import annotations

import secrets
import time
from dataclasses import dataclass
from typing import Annotated, Any, Literal

from fastapi import APIRouter, Path, Request
from pydantic import BaseModel, ConfigDict, Field

from memory_plugin.context_management.owners import aowned_thread_ids
from memory_plugin.plans import arun
from memory_plugin.privacy.erase import adelete_threads
from memory_plugin.privacy.forget import Forgetter, Place, Preview, threads_plan
from memory_plugin.privacy.inventory import Owner
from memory_plugin.provenance import Provenance
from memory_plugin.scope.identity import UserKey
from memory_plugin.server.access import Caller, CallerDep, NotFound
from memory_plugin.server.console import Console, ConsoleDep, provenance_json

router = APIRouter(prefix="/api/forget", tags=["forget"])
PREVIEW_SECONDS = 15 * 60
MAX_PREVIEWS = 20
"""Previews kept per person at most (the oldest go first)."""
PreviewId = Annotated[str, Path(min_length=1, max_length=64)]


class ForgetBody(BaseModel):
    """What to forget."""

    model_config = ConfigDict(extra="forbid")
    text: str = Field(max_length=2_000, description="the fact or the word to forget")


class ApplyBody(BaseModel):
    """Which places of the preview to forget."""

    model_config = ConfigDict(extra="forbid")
    places: list[Annotated[str, Field(max_length=64)]] | None = Field(
        default=None,
        max_length=1_000,
        description="place ids to forget (found by meaning too); default: every place "
        "found by words that you may change",
    )
    delete_threads: bool = Field(
        default=False,
        description="also delete the preview's threads (conversation history, not memory): "
        "their checkpoints, journals and summaries",
    )


class PlaceAnswer(BaseModel):
    """One place that holds the text."""

    id: str
    kind: str = Field(description="what the place is, in its memory kind's own words (note, ...)")
    where: str = Field(description="where it is, in its memory kind's own words (personal, ...)")
    label: str
    text: str
    match: Literal["words", "meaning"]
    editable: bool
    reason: str | None
    workspace: str | None
    agent: str | None
    key: str | None
    provenance: Provenance | None


class PreviewAnswer(BaseModel):
    """A preview: its id (for apply), the text, and every place it was found in."""

    preview_id: str
    text: str
    expires_in: int
    places: list[PlaceAnswer]
    threads: list[str] = Field(
        description="the caller's threads whose journal mentions the text: conversation "
        "history, kept unless apply asks for delete_threads"
    )


class OutcomeAnswer(BaseModel):
    """What apply did at one place."""

    id: str
    label: str
    done: bool
    detail: str


class Applied(BaseModel):
    """What a forget changed."""

    removed: int
    summary: str
    outcomes: list[OutcomeAnswer]
    threads_deleted: list[str]


@dataclass
class _Held:
    preview: Preview
    threads: list[str]
    until: float


Held = dict[tuple[UserKey, str], _Held]


def _previews(request: Request) -> Held:
    found: Held | None = getattr(request.app.state, "forget_previews", None)
    if found is None:
        found = request.app.state.forget_previews = {}
    now = time.monotonic()
    for key in [key for key, held in found.items() if held.until <= now]:
        del found[key]
    return found


def _forgetter(console: Console) -> Forgetter:
    return Forgetter(*console.kinds.values())


def _owner(caller: Caller) -> Owner:
    return Owner(
        caller.user_id,
        caller.org_id,
        caller.workspaces,
        (caller.agent_id,),
        caller.platform_admin,
    )


def place_json(place: Place) -> dict[str, Any]:
    """A place as JSON (the provenance of one the caller may not change names no user)."""
    return {
        "id": place.id,
        "kind": place.kind,
        "where": place.where,
        "label": place.label,
        "text": place.text,
        "match": place.match,
        "editable": place.editable,
        "reason": place.reason,
        "workspace": place.workspace,
        "agent": place.agent,
        "key": place.key,
        "provenance": provenance_json(place.provenance, public=not place.editable),
    }


@router.post("/preview", response_model=PreviewAnswer)
async def preview(
    body: ForgetBody, request: Request, caller: CallerDep, console: ConsoleDep
) -> dict[str, Any]:
    """Every place the caller's memory holds the text, with provenance and whether the caller
    may change it; changes nothing. An empty text is refused (400)."""
    found = await _forgetter(console).apreview(_owner(caller), body.text)
    threads: list[str] = []
    if console.checkpointer is not None:
        owned = await aowned_thread_ids(console.checkpointer, console.store, caller.key)
        threads = await arun(console.store, threads_plan(owned, found.text))
    held = _previews(request)
    mine = sorted((key for key in held if key[0] == caller.key), key=lambda key: held[key].until)
    for key in mine[: max(0, len(mine) - MAX_PREVIEWS + 1)]:
        del held[key]
    preview_id = secrets.token_urlsafe(12)
    until = time.monotonic() + PREVIEW_SECONDS
    held[(caller.key, preview_id)] = _Held(found, threads, until)
    return {
        "preview_id": preview_id,
        "text": found.text,
        "expires_in": PREVIEW_SECONDS,
        "places": [place_json(place) for place in found.places],
        "threads": threads,
    }


@router.post("/{preview_id}/apply", response_model=Applied)
async def apply(
    preview_id: PreviewId,
    request: Request,
    caller: CallerDep,
    console: ConsoleDep,
    body: ApplyBody | None = None,
) -> dict[str, Any]:
    """Forget the preview's places (the ones `places` names, by default every place found by
    words the caller may change), each as a forget by the caller; 404 for a preview that is
    not the caller's, was applied already or expired."""
    held = _previews(request)
    found = held.get((caller.key, preview_id))
    if found is None:
        raise NotFound
    ids = body.places if body is not None else None
    done = await _forgetter(console).aapply(found.preview, ids)
    held.pop((caller.key, preview_id), None)
    deleted: list[str] = []
    if body is not None and body.delete_threads and console.checkpointer is not None:
        await adelete_threads(console.checkpointer, console.store, found.threads)
        deleted = found.threads
    return {
        "removed": done.removed,
        "summary": done.summary(),
        "outcomes": [
            {
                "id": outcome.place.id,
                "label": outcome.place.label,
                "done": outcome.done,
                "detail": outcome.detail,
            }
            for outcome in done.outcomes
        ],
        "threads_deleted": deleted,
    }
