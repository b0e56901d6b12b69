"""Routes over a personal or team scope: the curated document, its history and restore, the
notes day by day, search, one note, delete, and "run now" consolidation."""

from typing import Annotated, Any

from fastapi import APIRouter, Depends, Path, Query

from memory_plugin.errors import MemoryPluginError, MemoryWriteError
from memory_plugin.scope.context import MemoryContext
from memory_plugin.scope.namespaces import MAX_ID_BYTES
from memory_plugin.scoped import ScopedMemory
from memory_plugin.scoped.documents import Document
from memory_plugin.scoped.notes import Note
from memory_plugin.server import schemas
from memory_plugin.server.access import CallerDep, NotFound
from memory_plugin.server.console import Console, ConsoleDep, provenance_json, written_by
from memory_plugin.server.limits import document_limit
from memory_plugin.server.switches import SCOPED_MEMORY_OFF, switch

PERSONAL = "/api/personal"
WorkspaceId = Annotated[str, Path(min_length=1, max_length=MAX_ID_BYTES)]
NoteKey = Annotated[str, Path(min_length=1, max_length=64)]
TEAM = "/api/team/{workspace}"


def personal_context(
    caller: CallerDep,
    workspace: Annotated[
        str | None,
        Query(max_length=MAX_ID_BYTES, description="your personal scope inside this workspace"),
    ] = None,
) -> MemoryContext:
    """The caller's personal scope (in a workspace they belong to, when named), else 404."""
    return caller.personal(workspace)


def team_context(caller: CallerDep, workspace: WorkspaceId) -> MemoryContext:
    """The team scope of a workspace the caller belongs to, else 404."""
    return caller.team(workspace)


def note_json(note: Note) -> dict[str, Any]:
    """A note as JSON: its body without the bullet."""
    return {
        "key": note.key,
        "day": note.day,
        "position": note.position,
        "text": note.body,
        "created_at": note.created_at,
        "consolidated": note.consolidated,
        "provenance": provenance_json(note.provenance),
    }


def document_json(document: Document) -> dict[str, Any]:
    """A document version as JSON."""
    return {
        "text": document.text,
        "version": document.version,
        "updated_at": document.updated_at,
        "chars": len(document.text),
        "provenance": provenance_json(document.provenance),
    }


def write_json(written: Any) -> dict[str, Any]:
    """A saved document write as JSON."""
    return {
        "document": document_json(written.document),
        "compressed": written.compressed,
        "warnings": list(written.warnings),
    }


def scope_router(prefix: str, context: Any, tag: str) -> APIRouter:
    """The routes of one kind of scope, under `prefix`, its context resolved by `context`."""
    router = APIRouter(prefix=prefix, tags=[tag])
    Scope = Annotated[MemoryContext, Depends(context)]

    @router.get("/document", response_model=schemas.DocumentAnswer)
    async def read_document(ctx: Scope, console: ConsoleDep) -> dict[str, Any]:
        """The curated document (null before its first save), its limits, and whether
        scoped memory is on (saving and searching need it)."""
        settings = (await console.settings.aget(ctx)).values
        document = await console.of(ScopedMemory).aread_document(ctx)
        return {
            "document": document_json(document) if document else None,
            "limits": {
                "soft": settings.document_soft_limit_chars,
                "hard": settings.document_hard_limit_chars,
            },
            "switch": switch(settings.scoped_memory, SCOPED_MEMORY_OFF),
        }

    @router.put("/document", response_model=schemas.DocumentWrite)
    async def write_document(
        body: schemas.DocumentBody, ctx: Scope, caller: CallerDep, console: ConsoleDep
    ) -> dict[str, Any]:
        """Replace the document: validated, screened, compare-and-swap on `expected_version`;
        longer than its hard limit plus the compression headroom: refused before any of it."""
        settings = (await console.settings.aget(ctx)).values
        hard = settings.document_hard_limit_chars
        longest = document_limit(hard)
        if len(body.text) > longest:
            raise MemoryWriteError(
                f"the memory document is {len(body.text):,} characters; this memory takes at "
                f"most {longest:,} (its hard limit of {hard:,} and a quarter more for the "
                "compression rewrite); nothing was saved"
            )
        with written_by(caller):
            written = await console.of(ScopedMemory).awrite_document(
                ctx, body.text, expected_version=body.expected_version
            )
        return write_json(written)

    @router.get("/document/history", response_model=schemas.History)
    async def document_history(ctx: Scope, console: ConsoleDep) -> dict[str, Any]:
        """Every saved version, newest first."""
        versions = await console.of(ScopedMemory).ahistory(ctx)
        return {"versions": [document_json(version) for version in versions]}

    @router.post("/document/restore", response_model=schemas.DocumentWrite)
    async def restore_document(
        body: schemas.RestoreBody, ctx: Scope, caller: CallerDep, console: ConsoleDep
    ) -> dict[str, Any]:
        """Save an earlier version again as the current one (404 for a version never saved)."""
        saved = {version.version for version in await console.of(ScopedMemory).ahistory(ctx)}
        if body.version not in saved:
            raise NotFound
        with written_by(caller):
            written = await console.of(ScopedMemory).arestore(ctx, body.version)
        return write_json(written)

    @router.get("/notes", response_model=schemas.NotesPage)
    async def list_notes(
        ctx: Scope,
        console: ConsoleDep,
        before: Annotated[
            str | None,
            Query(max_length=10, description="an ISO date: only days before it (exclusive)"),
        ] = None,
        days: Annotated[int, Query(ge=1, le=31, description="days with notes per page")] = 3,
    ) -> dict[str, Any]:
        """Days with notes, newest first; `older` is the `before` of the next page."""
        page = await console.of(ScopedMemory).anotes_page(ctx, before=before, days=days)
        return {
            "days": [
                {"day": day, "notes": [note_json(note) for note in notes]}
                for day, notes in page.days
            ],
            "older": page.older,
        }

    @router.get("/notes/search", response_model=schemas.SearchAnswer)
    async def search_notes(
        ctx: Scope,
        console: ConsoleDep,
        q: Annotated[str, Query(min_length=1, max_length=2_000)],
        k: Annotated[int, Query(ge=1, le=20)] = 8,
    ) -> dict[str, Any]:
        """The notes that best match `q` (semantic, keyword-only without a vector index)."""
        hits = await console.of(ScopedMemory).arecall(ctx, q, k)
        return {"hits": [{"note": note_json(hit.note), "score": hit.score} for hit in hits]}

    @router.get("/notes/{key}", response_model=schemas.Note)
    async def read_note(key: NoteKey, ctx: Scope, console: ConsoleDep) -> dict[str, Any]:
        """One live note."""
        return note_json(await live_note(console, ctx, key))

    @router.delete("/notes/{key}", response_model=schemas.Deleted)
    async def delete_note(
        key: NoteKey, ctx: Scope, caller: CallerDep, console: ConsoleDep
    ) -> dict[str, Any]:
        """Delete one note."""
        await live_note(console, ctx, key)
        with written_by(caller):
            await console.of(ScopedMemory).adelete_note(ctx, key)
        return {"deleted": key}

    @router.post("/consolidate", response_model=schemas.JobRun)
    async def consolidate_now(ctx: Scope, caller: CallerDep, console: ConsoleDep) -> Any:
        """Run nightly consolidation for this scope now; the run's record."""
        from memory_plugin.scoped.job_runs import aconsolidate_scope

        with written_by(caller):
            record = await aconsolidate_scope(console.store, console.model, ctx, by=caller.user_id)
        return record.to_json()

    return router


async def live_note(console: Console, ctx: MemoryContext, key: str) -> Note:
    """The live note under `key` in the scope, else 404 (a malformed key too)."""
    try:
        note = await console.of(ScopedMemory).aget_note(ctx, key)
    except MemoryPluginError:
        raise NotFound from None
    if note is None:
        raise NotFound
    return note


personal_router = scope_router(PERSONAL, personal_context, "personal memory")
team_router = scope_router(TEAM, team_context, "team memory")
