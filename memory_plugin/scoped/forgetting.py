"""Where a text occurs in scoped memory, and forgetting it there (ScopedMemory's privacy hooks,
called by memory_plugin.privacy.forget): the owner's personal notes and document lines
(outside workspaces and in each workspace where they have personal memory), the team memory
of the workspaces they belong to, and the saved document versions of each (a restore would
bring the text back). With a vector index, the notes nearest in meaning (the vector search
alone) are added as candidates (`match="meaning"`)."""

from __future__ import annotations

import re
from typing import Any, Protocol

from langgraph.store.base import BaseStore, Item, PutOp

from memory_plugin.errors import ConflictError, MemoryPluginError
from memory_plugin.holdings import Outcome, Owner, Place, place, rewritten
from memory_plugin.plans import Plan, all_items_plan
from memory_plugin.scope import thread_scope
from memory_plugin.scope.context import MemoryContext
from memory_plugin.scoped.documents import HISTORY, Document, DocumentWrite, to_document
from memory_plugin.scoped.notes import Note
from memory_plugin.scoped.privacy import workspaces_plan
from memory_plugin.scoped.recall import recall_plan as meaning_plan

SEMANTIC_CANDIDATES = 5
PAGE = 100
RETRIES = 5
SCOPES = {"personal": "personal memory", "team": "team memory"}


class Notes(Protocol):
    """What forgetting asks of scoped memory."""

    @property
    def store(self) -> BaseStore: ...

    def member(self, ctx: MemoryContext) -> MemoryContext: ...

    def list_notes_plan(self, ctx: MemoryContext, days: int | None) -> Plan[list[Note]]: ...

    def read_document_plan(self, ctx: MemoryContext) -> Plan[Document | None]: ...

    def delete_note_plan(self, ctx: MemoryContext, key: str) -> Plan[None]: ...

    def write_document_plan(
        self, ctx: MemoryContext, text: Any, expected: int | str | None
    ) -> Plan[DocumentWrite]: ...


def _context(owner: Owner, workspace: str | None, where: str) -> MemoryContext:
    return MemoryContext(
        user_id=owner.user_id,
        org_id=owner.org_id,
        workspace_id=workspace,
        thread_visibility="shared" if where == "team" else "private",
    )


def _place(kind: str, where: str, text: str, what: str, **found: Any) -> Place:
    match = found.pop("match", "words")
    return place(kind, where, text, match, scope=SCOPES[where], what=what, **found)


def places_plan(
    notes: Notes, owner: Owner, needle: str, pattern: re.Pattern[str]
) -> Plan[list[Place]]:
    """Every place of the owner's personal memory and their workspaces' team memory that holds
    the text."""
    personal = yield from workspaces_plan(owner)
    found: list[Place] = []
    scopes = [
        (workspace, "personal") for workspace in [None, *sorted({*personal, *owner.workspaces})]
    ]
    scopes += [(workspace, "team") for workspace in owner.workspaces]
    for workspace, where in scopes:
        ctx = _context(owner, workspace, where)
        found += yield from _scope_plan(notes, ctx, needle, pattern)
    return found


def _scope_plan(
    notes: Notes, ctx: MemoryContext, needle: str, pattern: re.Pattern[str]
) -> Plan[list[Place]]:
    """The notes and document lines of one scope that hold the text, and (with a vector
    index) the notes nearest in meaning, found by the vector search alone."""
    where = "team" if ctx.thread_visibility == "shared" else "personal"
    workspace = ctx.workspace_id
    listed = yield from notes.list_notes_plan(ctx, None)
    found = [
        _place(
            "note",
            where,
            note.body,
            f"note {note.key}",
            provenance=note.provenance,
            workspace=workspace,
            key=note.key,
        )
        for note in listed
        if pattern.search(note.body)
    ]
    if getattr(notes.store, "index_config", None) is not None and listed:
        matched = {each.key for each in found}
        scope = thread_scope(notes.member(ctx))
        hits = yield from meaning_plan(scope, needle, SEMANTIC_CANDIDATES, signals={"semantic"})
        found += [
            _place(
                "note",
                where,
                hit.note.body,
                f"note {hit.note.key}",
                match="meaning",
                provenance=hit.note.provenance,
                workspace=workspace,
                key=hit.note.key,
            )
            for hit in hits
            if hit.note.key not in matched
        ]
    document = yield from notes.read_document_plan(ctx)
    if document is not None:
        lines = dict.fromkeys(
            line.strip() for line in document.text.splitlines() if pattern.search(line)
        )
        found += [
            _place(
                "document",
                where,
                line,
                "document line",
                provenance=document.provenance,
                workspace=workspace,
            )
            for line in lines
        ]
    held = yield from _history_plan(notes, ctx, pattern, scrub=False)
    if held:
        first = next(line.strip() for line in held[0].text.split("\n") if pattern.search(line))
        versions = f"{len(held)} version{'s' if len(held) > 1 else ''}"
        what = f"earlier versions of the document ({versions})"
        found.append(
            _place(
                "history",
                where,
                first,
                what,
                provenance=held[0].provenance,
                workspace=workspace,
                key=versions,
            )
        )
    return found


def _without(item: Item, pattern: re.Pattern[str]) -> str:
    """A saved version's text without the lines that hold the text."""
    return "\n".join(line for line in item.value["text"].split("\n") if not pattern.search(line))


def _history_plan(
    notes: Notes, ctx: MemoryContext, pattern: re.Pattern[str], *, scrub: bool
) -> Plan[list[Document]]:
    """The saved versions of the scope's document holding the text; with `scrub`, each
    rewritten without the lines that hold it."""
    namespace = thread_scope(notes.member(ctx)).child(HISTORY)
    items = yield from all_items_plan(namespace, page=PAGE)
    held = [item for item in items if pattern.search(str(item.value.get("text", "")))]
    if scrub and held:
        yield [
            PutOp(namespace, item.key, {**item.value, "text": _without(item, pattern)})
            for item in held
        ]
    return [document for item in held if (document := to_document(item)) is not None]


def forget_plan(
    notes: Notes, owner: Owner, places: list[Place], pattern: re.Pattern[str]
) -> Plan[list[Outcome]]:
    """Forget the places: a note deleted (a tombstone), a scope's document lines removed in
    one new version, the lines holding the text dropped from every saved version."""
    outcomes: list[Outcome] = []
    documents: dict[tuple[str, str | None], list[Place]] = {}
    for each in places:
        ctx = _context(owner, each.workspace, each.where)
        if each.kind == "note":
            try:
                yield from notes.delete_note_plan(ctx, str(each.key))
                outcomes.append(Outcome(each, True, "note deleted"))
            except MemoryPluginError as exc:
                outcomes.append(Outcome(each, False, str(exc)))
        elif each.kind == "document":
            documents.setdefault((each.where, each.workspace), []).append(each)
    for (where, workspace), lines in documents.items():
        outcomes += yield from _lines_plan(notes, _context(owner, workspace, where), lines)
    for each in places:
        if each.kind == "history":
            ctx = _context(owner, each.workspace, each.where)
            scrubbed = yield from _history_plan(notes, ctx, pattern, scrub=True)
            outcomes.append(rewritten(each, len(scrubbed), "versions"))
    return outcomes


def _lines_plan(notes: Notes, ctx: MemoryContext, lines: list[Place]) -> Plan[list[Outcome]]:
    """Remove the lines from the scope's document in one new version."""
    gone = {each.text for each in lines}
    for _ in range(RETRIES):
        document = yield from notes.read_document_plan(ctx)
        if document is None:
            return [Outcome(each, False, "already gone") for each in lines]
        kept, removed = [], set()
        for line in document.text.splitlines():
            if line.strip() in gone:
                removed.add(line.strip())
            else:
                kept.append(line)
        if not removed:
            return [Outcome(each, False, "already gone") for each in lines]
        try:
            written = yield from notes.write_document_plan(ctx, "\n".join(kept), document.version)
        except ConflictError:
            continue
        except MemoryPluginError as exc:
            return [Outcome(each, False, str(exc)) for each in lines]
        version = written.document.version
        return [
            Outcome(each, True, f"line removed (document version {version})")
            if each.text in removed
            else Outcome(each, False, "already gone")
            for each in lines
        ]
    return [Outcome(each, False, "the document kept changing; try again") for each in lines]
