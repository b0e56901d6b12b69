"""The scope's protected prompt blocks: the curated document and the recent notes."""

from __future__ import annotations

import logging
from datetime import datetime

from langgraph.store.base import SearchOp

from memory_plugin.blocks import PromptBlock
from memory_plugin.events import emit
from memory_plugin.plans import Plan, gather
from memory_plugin.scope import Scope
from memory_plugin.scoped.documents import Document, read_plan, size_warning
from memory_plugin.scoped.naming import NAME
from memory_plugin.scoped.notes import NOTES, PAGE, Note, day_plan, to_note, utc_days
from memory_plugin.settings import MemorySettings

logger = logging.getLogger(__name__)

DOCUMENT_BLOCK = "memory_document"
NOTES_BLOCK = "recent_memory_notes"


UNAVAILABLE = (
    "(The memory document could not be loaded this turn. Do not rewrite it now: update_memory "
    "would show you the current document first.)"
)


def _label(scope: Scope) -> str:
    return "team" if scope.kind == "team" else "personal"


def document_block(scope: Scope, document: Document | None, settings: MemorySettings) -> str:
    """The curated document as a prompt block, with its size warning when over the soft limit."""
    body = document.text if document and document.text else "(empty)"
    lines = [f'<memory_document scope="{_label(scope)}">', body]
    warning = size_warning(document.text, settings) if document else None
    if warning:
        lines.append(f"(Warning: {warning}.)")
    lines.append("</memory_document>")
    return "\n".join(lines)


def _document_plan(scope: Scope, settings: MemorySettings) -> Plan[PromptBlock]:
    """The document block, carrying the version it shows; when the document cannot be read
    the block says so and carries no version (update_memory then shows it before a write)."""
    try:
        document = yield from read_plan(scope)
    except Exception:
        logger.warning(
            "the memory document could not be loaded; the turn goes on without it", exc_info=True
        )
        text = f'<memory_document scope="{_label(scope)}">\n{UNAVAILABLE}\n</memory_document>'
        return PromptBlock(DOCUMENT_BLOCK, "per_turn", text)
    text = document_block(scope, document, settings)
    body = document.text.splitlines() if document else []
    entries = tuple(line for line in body if line.strip())
    version = document.version if document else 0
    return PromptBlock(DOCUMENT_BLOCK, "per_turn", text, version, entries)


def notes_block(notes: list[Note], max_chars: int) -> str:
    """Recent notes newest first, dropping whole notes from the oldest end to fit max_chars."""
    opening, closing = f"<{NOTES_BLOCK}>", f"</{NOTES_BLOCK}>"
    used = len(opening) + len(closing) + 2
    kept: list[str] = []
    for note in sorted(notes, key=lambda n: n.key, reverse=True):
        line = note.render()
        if used + len(line) + 1 > max_chars:
            break
        kept.append(line)
        used += len(line) + 1
    return "\n".join([opening, *kept, closing])


def recent_notes_plan(scope: Scope, days: int, now: datetime) -> Plan[list[Note]]:
    """Live notes written today and on the days before it (UTC): every day's first page in
    one batch, then further pages of a day that had more."""
    wanted = utc_days(now, days)
    pages = yield [SearchOp(scope.child(NOTES), filter={"day": day}, limit=PAGE) for day in wanted]
    notes: list[Note] = []
    for day, page in zip(wanted, pages, strict=True):
        items = page if len(page) < PAGE else (yield from day_plan(scope, day))
        notes.extend(note for item in items if (note := to_note(item)) is not None)
    return sorted(notes, key=lambda note: note.key)


def _notes_plan(scope: Scope, settings: MemorySettings, now: datetime) -> Plan[list[Note] | None]:
    """The recent notes, None (logged) when they cannot be loaded."""
    try:
        return (yield from recent_notes_plan(scope, settings.recent_notes_days, now))
    except Exception:
        logger.warning(
            "recent notes could not be loaded; the turn goes on without them", exc_info=True
        )
        return None


def blocks_plan(scope: Scope, settings: MemorySettings, now: datetime) -> Plan[list[PromptBlock]]:
    """The document block and the recent-notes block, read in one batch. Each fails alone: a
    block that cannot be loaded is logged and left out (the document block says so), never
    blocking the turn or the other block."""
    document, notes = yield from gather(
        [_document_plan(scope, settings), _notes_plan(scope, settings, now)]
    )
    blocks = [document]
    if notes is not None:
        text = notes_block(notes, settings.recent_notes_max_chars)
        held = tuple(note.render() for note in notes)
        lines = set(text.splitlines())
        shown = tuple(line for line in held if line in lines)
        blocks.append(PromptBlock(NOTES_BLOCK, "recent_notes", text, entries=shown, held=held))
    loaded = None if notes is None else len(notes)
    version = document.version or None
    emit(NAME, "loaded", scope.kind, recent_notes=loaded, document_version=version)
    return blocks
