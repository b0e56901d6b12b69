"""Dated notes: one-line bullets appended to a scope, never edited or purged by the system.

Each note records its UTC day and its position within that day. The note is inserted at the
day's next position in one short transaction (`InsertNext`), so positions are unique and
gap-free however many turns write at once; a deleted note stays as a tombstone that keeps
its position.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Iterable
from dataclasses import dataclass, replace
from datetime import UTC, date, datetime, timedelta
from typing import Any

from langgraph.store.base import GetOp, Item, Op, PutOp, SearchOp

from memory_plugin.backends.claims import InsertMany, InsertNext, positioned_key
from memory_plugin.backends.conditional import PutIfVersion
from memory_plugin.backends.days import NoteDays
from memory_plugin.errors import InvalidArgumentError, MemoryWriteError
from memory_plugin.plans import Plan, all_items_plan
from memory_plugin.provenance import Provenance, current, provenance_of, stamped
from memory_plugin.safety import Visibility, screen, strip_control, visibility_of
from memory_plugin.scope import Scope
from memory_plugin.storable import unstorable_character

logger = logging.getLogger(__name__)

NOTES = "notes"
NOTE_INDEX = "note_index"
PAGE = 1_000
IMPORT_CHUNK = 1_000
MAX_PAGE_DAYS = 31
_BULLET = re.compile(r"^\s*[-*+•](\s+|$)")
_HEADING = re.compile(r"^\s*#{1,6}(\s|$)")
_SPACES = re.compile(r"\s+")


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
    provenance: Provenance | None = None

    @property
    def body(self) -> str:
        """The note's text without its bullet marker."""
        return self.text[2:]

    def render(self) -> str:
        """The note as a dated bullet, as injected into prompts."""
        return f"- [{self.day}] {self.body}"


@dataclass(frozen=True)
class NotesPage:
    """Notes grouped by day, newest day first (notes in a day newest first), and the cursor
    of the next older page."""

    days: list[tuple[str, list[Note]]]
    older: str | None


def note_key(day: str, position: int) -> str:
    """The store key of a note: sortable by day, then position."""
    return positioned_key(day, position)


def validate_note(text: Any, max_chars: int, *, visibility: Visibility = "private") -> str:
    """Return the note as a single `- text` bullet (whitespace runs, line breaks included,
    folded to one space), or raise naming what is wrong. The safety screen judges the text as
    given, before it is folded, as on every other write path."""
    if not isinstance(text, str):
        raise MemoryWriteError(f"a note must be text, got {type(text).__name__}")
    screen(text, "the note", visibility=visibility)
    folded = _SPACES.sub(" ", text).strip()
    body = _BULLET.sub("", strip_control(folded, keep_newlines=False), count=1).strip()
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
        provenance=provenance_of(value),
    )


def utc_days(now: datetime, count: int) -> list[str]:
    """Today and the days before it (UTC), newest first."""
    today = now.astimezone(UTC).date()
    return [(today - timedelta(days=n)).isoformat() for n in range(count)]


def day_plan(scope: Scope, day: str) -> Plan[list[Item]]:
    """Every item (tombstones included) of one day, in position order."""
    items = yield from all_items_plan(scope.child(NOTES), page=PAGE, filter={"day": day})
    return sorted(items, key=lambda item: item.value["position"])


def page_arguments(before: Any, days: Any) -> tuple[str | None, int]:
    """The checked `before` cursor (an ISO date, exclusive) and day count of a notes page,
    or InvalidArgumentError naming the argument."""
    if isinstance(days, bool) or not isinstance(days, int) or not 1 <= days <= MAX_PAGE_DAYS:
        raise InvalidArgumentError(
            f"days must be a whole number from 1 to {MAX_PAGE_DAYS}, got {days!r}"
        )
    if before is None:
        return None, days
    try:
        valid = isinstance(before, str) and date.fromisoformat(before).isoformat() == before
    except ValueError:
        valid = False
    if not valid:
        raise InvalidArgumentError(f"before must be an ISO date (YYYY-MM-DD), got {before!r}")
    return before, days


def notes_page_plan(scope: Scope, before: str | None, days: int) -> Plan[NotesPage]:
    """The live notes of the `days` newest days that have any, before `before`: the days are
    found from the keys alone, then each day's notes are read in one batch."""
    found: list[str] = yield NoteDays(scope.child(NOTES), before, days + 1)
    shown = found[:days]
    pages = yield [SearchOp(scope.child(NOTES), filter={"day": day}, limit=PAGE) for day in shown]
    grouped: list[tuple[str, list[Note]]] = []
    for day, page in zip(shown, pages, strict=True):
        items = page if len(page) < PAGE else (yield from day_plan(scope, day))
        notes = [note for item in items if (note := to_note(item)) is not None]
        if notes:
            grouped.append((day, sorted(notes, key=lambda note: note.position, reverse=True)))
    return NotesPage(grouped, shown[-1] if len(found) > days else None)


def key_argument(key: Any) -> str:
    """A checked note key, or InvalidArgumentError."""
    if not isinstance(key, str) or not key:
        raise InvalidArgumentError(f"a note key is a non-empty string, got {key!r}")
    found = unstorable_character(key)
    if found is not None:
        raise InvalidArgumentError(f"a note key cannot hold {found}, got {key!r}")
    return key


def get_note_plan(scope: Scope, key: str) -> Plan[Note | None]:
    """One live note by key, None when there is none (or it was deleted)."""
    (item,) = yield [GetOp(scope.child(NOTES), key)]
    return to_note(item) if item is not None else None


def all_notes_plan(scope: Scope) -> Plan[list[Note]]:
    """Every live note of a scope, oldest first."""
    items = yield from all_items_plan(scope.child(NOTES), page=PAGE)
    notes = [note for item in items if (note := to_note(item)) is not None]
    return sorted(notes, key=lambda note: note.key)


def append_plan(
    scope: Scope,
    text: Any,
    max_chars: int,
    now: datetime,
    semantic: bool,
    provenance: Provenance | None = None,
) -> Plan[Note]:
    """Validate and append one note at the next position of its UTC day, recording its
    provenance (by default the current one)."""
    line = validate_note(text, max_chars, visibility=visibility_of(scope.kind))
    day = now.astimezone(UTC).date().isoformat()
    created_at = now.astimezone(UTC).isoformat()
    origin = replace(provenance, at=created_at) if provenance else current(at=created_at)
    value = {"text": line, "day": day, "created_at": created_at, "consolidated": False}
    stored = yield InsertNext(scope.child(NOTES), day, stamped(value, origin))
    key = note_key(day, stored["position"])
    if semantic:
        try:
            yield [
                PutOp(scope.child(NOTE_INDEX), key, {"text": line[2:], "day": day}, index=["text"])
            ]
        except Exception:
            logger.warning("note %s stored but not indexed for semantic recall", key, exc_info=True)
    position, version = stored["position"], int(stored["version"])
    return Note(key, line, day, position, created_at, False, version, origin)


DayLike = date | datetime | str


def note_day(day: Any) -> tuple[str, str]:
    """The UTC day and creation time of an imported note's day (a date, a datetime, naive
    meaning UTC, or an ISO date string), or MemoryWriteError."""
    if isinstance(day, str):
        try:
            day = datetime.fromisoformat(day) if "T" in day else date.fromisoformat(day)
        except ValueError:
            raise MemoryWriteError(f"a note's day {day!r} is not an ISO date") from None
    if isinstance(day, datetime):
        moment = day.replace(tzinfo=UTC) if day.tzinfo is None else day.astimezone(UTC)
        return moment.date().isoformat(), moment.isoformat()
    if isinstance(day, date):
        midnight = datetime(day.year, day.month, day.day, tzinfo=UTC)
        return day.isoformat(), midnight.isoformat()
    raise MemoryWriteError(
        f"a note's day must be a date, a datetime or an ISO date string, got {type(day).__name__}"
    )


def _imported(
    notes: Iterable[tuple[DayLike, Any]],
    max_chars: int,
    visibility: Visibility,
    origin: Provenance,
) -> list[dict[str, Any]]:
    """Every note validated and screened as remember does, before anything is written."""
    values = []
    for number, pair in enumerate(notes, start=1):
        try:
            day_value, text = pair
        except (TypeError, ValueError):
            raise MemoryWriteError(f"note {number} is not a (day, text) pair") from None
        try:
            day, created_at = note_day(day_value)
            line = validate_note(text, max_chars, visibility=visibility)
        except MemoryWriteError as exc:
            raise MemoryWriteError(f"note {number}: {exc}") from exc
        value = {"text": line, "day": day, "created_at": created_at, "consolidated": False}
        values.append(stamped(value, origin))
    return values


def import_plan(
    scope: Scope,
    notes: Iterable[tuple[DayLike, Any]],
    max_chars: int,
    semantic: bool,
    provenance: Provenance | None = None,
) -> Plan[list[Note]]:
    """Validate every note, then append them in order, each at the next position of its own
    day, in batches, all with one provenance (by default the current one); nothing is written
    when any note is refused."""
    origin = provenance or current()
    values = _imported(notes, max_chars, visibility_of(scope.kind), origin)
    by_day: dict[str, list[int]] = {}
    for index, value in enumerate(values):
        by_day.setdefault(value["day"], []).append(index)
    stored: list[dict[str, Any]] = [{}] * len(values)
    for day, indexes in by_day.items():
        for start in range(0, len(indexes), IMPORT_CHUNK):
            chunk = indexes[start : start + IMPORT_CHUNK]
            request = InsertMany(scope.child(NOTES), day, tuple(values[i] for i in chunk), True)
            for i, value in zip(chunk, (yield request), strict=True):
                stored[i] = value
    notes_out = [
        Note(
            note_key(v["day"], v["position"]),
            v["text"],
            v["day"],
            v["position"],
            v["created_at"],
            False,
            int(v["version"]),
            provenance_of(v),
        )
        for v in stored
    ]
    if semantic:
        yield from _index_plan(scope, notes_out)
    return notes_out


def _index_plan(scope: Scope, notes: list[Note]) -> Plan[None]:
    """Copy notes into the vector index, in batches; a failure is logged, never raised."""
    for start in range(0, len(notes), IMPORT_CHUNK):
        chunk = notes[start : start + IMPORT_CHUNK]
        puts: list[Op] = [
            PutOp(scope.child(NOTE_INDEX), n.key, {"text": n.body, "day": n.day}, index=["text"])
            for n in chunk
        ]
        try:
            yield puts
        except Exception:
            logger.warning(
                "%d imported notes stored but not indexed for semantic recall",
                len(chunk),
                exc_info=True,
            )


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
