"""Dated notes: one-line bullets appended to a scope, never edited or purged by the system.

Each note records its UTC day and its position within that day. The note is inserted at the
day's next position in one short transaction (`InsertNext`), so positions are unique and
gap-free however many turns write at once; a deleted note stays as a tombstone that keeps
its position.
"""

from __future__ import annotations

import logging
import re
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from langgraph.store.base import GetOp, Item, PutOp, SearchOp

from memory_plugin.backends.claims import InsertNext, positioned_key
from memory_plugin.errors import MemoryWriteError
from memory_plugin.plans import Plan, PutIfVersion
from memory_plugin.safety import Visibility, screen, strip_control, visibility_of
from memory_plugin.scope import Scope

logger = logging.getLogger(__name__)

NOTES = "notes"
NOTE_INDEX = "note_index"
PAGE = 1_000
_BULLET = re.compile(r"^\s*[-*+•](\s+|$)")
_HEADING = re.compile(r"^\s*#{1,6}(\s|$)")


@dataclass(frozen=True)
class Note:
    """One stored note."""

    key: str
    text: str
    day: str
    position: int
    created_at: str
    consolidated: bool
    version: int

    @property
    def body(self) -> str:
        """The note's text without its bullet marker."""
        return self.text[2:]

    def render(self) -> str:
        """The note as a dated bullet, as injected into prompts."""
        return f"- [{self.day}] {self.body}"


def note_key(day: str, position: int) -> str:
    """The store key of a note: sortable by day, then position."""
    return positioned_key(day, position)


def validate_note(text: Any, max_chars: int, *, visibility: Visibility = "private") -> str:
    """Return the note as a single `- text` bullet, or raise naming what is wrong."""
    if not isinstance(text, str):
        raise MemoryWriteError(f"a note must be text, got {type(text).__name__}")
    stripped = text.strip()
    if "\n" in stripped or "\r" in stripped:
        raise MemoryWriteError("a note is one line: store one fact per note, without line breaks")
    body = _BULLET.sub("", strip_control(stripped, keep_newlines=False), count=1).strip()
    if not body:
        raise MemoryWriteError("a note cannot be empty")
    if _HEADING.match(body):
        raise MemoryWriteError("a note cannot be a heading; write the fact as a sentence")
    if _BULLET.match(body):
        raise MemoryWriteError("a note is a single bullet, not several")
    if len(body) > max_chars:
        raise MemoryWriteError(
            f"a note is at most {max_chars:,} characters (this one has {len(body):,}); "
            "write it shorter"
        )
    screen(body, "the note", visibility=visibility)
    return f"- {body}"


def to_note(item: Item) -> Note | None:
    """A live note from a store item, None for a tombstone."""
    value = item.value
    if value.get("deleted"):
        return None
    return Note(
        key=item.key,
        text=value["text"],
        day=value["day"],
        position=value["position"],
        created_at=value["created_at"],
        consolidated=bool(value.get("consolidated")),
        version=value["version"],
    )


def utc_days(now: datetime, count: int) -> list[str]:
    """Today and the days before it (UTC), newest first."""
    today = now.astimezone(UTC).date()
    return [(today - timedelta(days=n)).isoformat() for n in range(count)]


def day_plan(scope: Scope, day: str) -> Plan[list[Item]]:
    """Every item (tombstones included) of one day, in position order."""
    items: list[Item] = []
    while True:
        (page,) = yield [
            SearchOp(scope.child(NOTES), filter={"day": day}, limit=PAGE, offset=len(items))
        ]
        items.extend(page)
        if len(page) < PAGE:
            return sorted(items, key=lambda item: item.value["position"])


def all_notes_plan(scope: Scope) -> Plan[list[Note]]:
    """Every live note of a scope, oldest first."""
    items: list[Item] = []
    while True:
        (page,) = yield [SearchOp(scope.child(NOTES), limit=PAGE, offset=len(items))]
        items.extend(page)
        if len(page) < PAGE:
            break
    notes = [note for item in items if (note := to_note(item)) is not None]
    return sorted(notes, key=lambda note: note.key)


def append_plan(
    scope: Scope, text: Any, max_chars: int, now: datetime, semantic: bool
) -> Plan[Note]:
    """Validate and append one note at the next position of its UTC day."""
    line = validate_note(text, max_chars, visibility=visibility_of(scope.kind))
    day = now.astimezone(UTC).date().isoformat()
    created_at = now.astimezone(UTC).isoformat()
    value = {"text": line, "day": day, "created_at": created_at, "consolidated": False}
    stored = yield InsertNext(scope.child(NOTES), day, value)
    key = note_key(day, stored["position"])
    if semantic:
        try:
            yield [
                PutOp(scope.child(NOTE_INDEX), key, {"text": line[2:], "day": day}, index=["text"])
            ]
        except Exception:
            logger.warning("note %s stored but not indexed for semantic recall", key, exc_info=True)
    return Note(key, line, day, stored["position"], created_at, False, int(stored["version"]))


def update_note_plan(scope: Scope, key: str, change: dict[str, Any]) -> Plan[dict[str, Any] | None]:
    """Apply a change to a live note by compare-and-swap; None when it is gone."""
    while True:
        (item,) = yield [GetOp(scope.child(NOTES), key)]
        if item is None or item.value.get("deleted"):
            return None
        value = {k: v for k, v in item.value.items() if k != "version"}
        stored = yield PutIfVersion(
            scope.child(NOTES), key, {**value, **change}, item.value["version"]
        )
        if stored is not None:
            return dict(stored)
