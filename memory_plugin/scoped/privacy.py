"""What scoped memory keeps of a user (memory_plugin.holdings): their personal notes and document
(with its saved versions), outside workspaces and in each workspace, as the export's
scoped_memory items; how an import checks them; how the readable export shows them."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from langgraph.store.base import PutOp
from pydantic import StrictBool, StrictStr

from memory_plugin.backends.claims import positioned_key
from memory_plugin.holdings import Held, Holding, Owner, Shelf, Spot, as_item, labels_plan
from memory_plugin.holdings.readable import origin_of, quoted
from memory_plugin.holdings.values import Day, Instant, Origin, Position, StoredValue, Version
from memory_plugin.plans import Plan
from memory_plugin.scope.namespaces import ROOT, encode_id
from memory_plugin.scoped.documents import CURRENT, DOCUMENT, HISTORY, history_key, to_document
from memory_plugin.scoped.naming import NAME
from memory_plugin.scoped.notes import NOTE_INDEX, NOTES, to_note

PERSONAL = "personal"


def personal_root(owner: Owner, workspace: str | None, agent: str | None = None) -> tuple[str, ...]:
    """The namespace of the owner's personal memory (inside `workspace` when named)."""
    space = ("ws", encode_id(workspace, what="workspace_id")) if workspace else ()
    return (ROOT, *owner.tenant(), *space, PERSONAL, owner.label())


def workspaces_plan(owner: Owner) -> Plan[list[str]]:
    """Every workspace holding personal memory of the owner, sorted."""
    tenant = owner.tenant()
    prefix = (ROOT, *tenant, "ws", "*", PERSONAL, owner.label())
    return (yield from labels_plan(prefix, len(tenant) + 2))


def _spots(owner: Owner, workspaces: Sequence[str] | None) -> Plan[list[Spot]]:
    if workspaces is None:
        workspaces = yield from workspaces_plan(owner)
    return [(workspace, None) for workspace in (None, *sorted(set(workspaces)))]


class DocumentValue(StoredValue):
    """The current memory document, and each saved version of it."""

    text: StrictStr
    version: Version
    updated_at: Instant
    folded: list[StrictStr]
    provenance: Origin = None


class NoteValue(StoredValue):
    """A note, or the tombstone a deleted note leaves at its key (no text)."""

    text: StrictStr
    day: Day
    position: Position
    created_at: Instant
    version: Version
    consolidated: StrictBool = False
    deleted: StrictBool = False
    deleted_at: Instant | None = None
    deletion: Origin = None
    provenance: Origin = None


def _note(key: str, value: dict[str, Any]) -> str | None:
    note = NoteValue.model_validate(value)
    if key != positioned_key(note.day, note.position):
        return f"a note's key is its day and position, {positioned_key(note.day, note.position)}"
    if note.deleted:
        return None if note.text == "" and note.deleted_at else "a tombstone keeps no text"
    if not note.text.startswith("- ") or not note.text[2:].strip():
        return 'a note\'s text is one bullet, "- " and its text'
    return None if to_note(as_item((NOTES,), key, value)) else "not a note"


def _document(key: str, value: dict[str, Any], current: bool) -> str | None:
    document = DocumentValue.model_validate(value)
    if key != (CURRENT if current else history_key(document.version)):
        return "the key is not the document's" if current else "the key is not its version's"
    return None if to_document(as_item((), key, value)) else "not a document"


def _note_index(ns: tuple[str, ...], key: str, value: dict[str, Any]) -> PutOp | None:
    """A live note's copy in the vector index, as scoped/notes.py writes it."""
    if value.get("deleted") or not isinstance(value.get("text"), str):
        return None
    copy = {"text": value["text"][2:], "day": value.get("day")}
    return PutOp((*ns[:-1], NOTE_INDEX), key, copy, index=["text"])


def _render(workspace: str | None, agent: str | None, items: list[Held]) -> list[str]:
    where = f"in workspace {workspace}" if workspace else "outside workspaces"
    lines = [f"## Personal memory {where}", ""]
    for h in items:
        if h.path == (DOCUMENT,):
            lines += [f"### Document (version {h.value.get('version', '?')})", ""]
            lines += [*quoted(str(h.value.get("text", ""))), ""]
    versions = [h for h in items if h.path == (HISTORY,)]
    if versions:
        lines += ["### Saved versions", ""]
        for h in sorted(versions, key=lambda h: h.key, reverse=True):
            chars = len(str(h.value.get("text", "")))
            version = h.value.get("version", h.key)
            lines.append(f"- version {version}: {chars} characters{origin_of(h.value)}")
        lines.append("")
    notes = [h for h in items if h.path == (NOTES,)]
    if notes:
        lines += ["### Notes", ""]
        for h in notes:
            if h.value.get("deleted"):
                lines.append(f"- {h.value.get('day', '')}: _(deleted)_")
                continue
            body = str(h.value.get("text", "")).removeprefix("- ")
            lines.append(f"- {h.value.get('day', '')}: {body}{origin_of(h.value)}")
        lines.append("")
    return lines


HOLDING = Holding(
    NAME,
    personal_root,
    (
        Shelf((DOCUMENT,), lambda key, value: _document(key, value, True)),
        Shelf((HISTORY,), lambda key, value: _document(key, value, False), indexing="store"),
        Shelf((NOTES,), _note, counted=True, copy=_note_index),
        Shelf((NOTE_INDEX,), derived=True),
    ),
    _spots,
    _render,
    workspace=True,
    v1_kind=PERSONAL,
)
"""The owner's personal memory, outside workspaces and in each workspace."""
