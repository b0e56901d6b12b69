"""The schema of every stored value of a user's memory, by kind and place, as the kinds' own
readers read it (scoped/notes.py `to_note`, scoped/documents.py `to_document`, the profile's
`parse`, `to_change` and cursors, agent/entries.py `to_entry`, the bounded targets): an import
checks each item against it, and reads it back with its reader, before writing anything, so
it cannot plant what those reads cannot serve (docs/privacy.md)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from datetime import UTC, date, datetime
from typing import Annotated, Any, Literal

from langgraph.store.base import Item
from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Field,
    StrictBool,
    StrictInt,
    StrictStr,
    ValidationError,
)

from memory_plugin.agent.entries import CONTENT_MAX, KEY_MAX, to_entry
from memory_plugin.backends.claims import positioned_key
from memory_plugin.bounded.entries import TARGETS
from memory_plugin.profile.changes import Op, to_change
from memory_plugin.profile.cursor import CURSORS
from memory_plugin.profile.cursor import from_item as to_cursor
from memory_plugin.profile.document import SECTIONS
from memory_plugin.profile.memory import CHANGES
from memory_plugin.profile.memory import KEY as PROFILE_KEY
from memory_plugin.scoped.documents import CURRENT, HISTORY, history_key, to_document
from memory_plugin.scoped.notes import NOTES, to_note

MAX_DEPTH = 32
"""How deeply a stored value may nest lists and objects (the deepest a kind writes is 4)."""


def _instant(text: str) -> str:
    datetime.fromisoformat(text)
    return text


def _day(text: str) -> str:
    date.fromisoformat(text)
    return text


def _section(name: str) -> str:
    if name not in SECTIONS:
        raise ValueError(f"not a section of the profile: {name!r}")
    return name


Instant = Annotated[StrictStr, AfterValidator(_instant)]
Day = Annotated[StrictStr, AfterValidator(_day)]
Version = Annotated[StrictInt, Field(ge=1)]
Position = Annotated[StrictInt, Field(ge=1)]
Count = Annotated[StrictInt, Field(ge=0)]
Origin = dict[str, Any] | None


class _Value(BaseModel):
    """A stored value: the fields its reader needs, typed; other fields are kept as stored."""

    model_config = ConfigDict(strict=True, extra="allow")


class _Deletion(BaseModel):
    """What a tombstone records of a delete (never the deleted text)."""

    model_config = ConfigDict(strict=True, extra="allow")

    deleted: Literal[True] = True
    deleted_at: Instant
    deletion: Origin = None


class DocumentValue(_Value):
    """The current memory document, and each saved version of it."""

    text: StrictStr
    version: Version
    updated_at: Instant
    folded: list[StrictStr]
    provenance: Origin = None


class NoteValue(_Value):
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


class ProfileValue(_Value):
    """The profile's memory.md (its text is checked against the template elsewhere)."""

    text: StrictStr
    version: Version


class Operation(BaseModel):
    """One bullet operation of a profile change."""

    model_config = ConfigDict(strict=True, extra="allow")

    op: Op
    section: Annotated[StrictStr, AfterValidator(_section)]
    before: StrictStr | None = None
    after: StrictStr | None = None


class ChangeValue(_Value):
    """One saved write of the profile's change log."""

    at: Instant
    seq: Count | None = None
    operations: list[Operation]
    provenance: Origin = None


class CursorValue(_Value):
    """How far the profile has read one thread."""

    seq: Count
    failures: Count = 0
    version: Version | None = None


class EntryValue(_Value):
    """A private agent entry."""

    content: Annotated[StrictStr, Field(min_length=1, max_length=CONTENT_MAX)]
    category: Annotated[StrictStr, Field(min_length=1)]
    visibility: Literal["private"]
    importance: Annotated[float, Field(ge=0.0, le=1.0, allow_inf_nan=False)]
    updated_at: Instant
    expires_at: Instant | None = None
    text: StrictStr | None = None
    provenance: Origin = None


class EntryTombstone(_Deletion):
    """What a deleted agent entry leaves at its key."""

    deleted_by: StrictStr | None = None


class BoundedValue(_Value):
    """One bounded target: its entries, with the provenance of each."""

    entries: list[StrictStr]
    version: Version | None = None
    provenance: list[dict[str, Any] | None] | None = None


def depth(value: Any) -> int:
    """How deeply `value` nests lists and objects (0 for a scalar), without recursing."""
    deepest, stack = 0, [(value, 0)]
    while stack:
        inner, level = stack.pop()
        if isinstance(inner, dict):
            inner = list(inner.values())
        elif not isinstance(inner, list):
            continue
        deepest = max(deepest, level + 1)
        if deepest > MAX_DEPTH:
            return deepest
        stack += [(each, level + 1) for each in inner]
    return deepest


def _item(path: tuple[str, ...], key: str, value: dict[str, Any]) -> Item:
    now = datetime.now(UTC)
    return Item(value=value, key=key, namespace=path, created_at=now, updated_at=now)


def _note(key: str, value: dict[str, Any]) -> str | None:
    note = NoteValue.model_validate(value)
    if key != positioned_key(note.day, note.position):
        return f"a note's key is its day and position, {positioned_key(note.day, note.position)}"
    if note.deleted:
        return None if note.text == "" and note.deleted_at else "a tombstone keeps no text"
    if not note.text.startswith("- ") or not note.text[2:].strip():
        return 'a note\'s text is one bullet, "- " and its text'
    return None if to_note(_item((NOTES,), key, value)) else "not a note"


def _document(key: str, value: dict[str, Any], current: bool) -> str | None:
    document = DocumentValue.model_validate(value)
    if key != (CURRENT if current else history_key(document.version)):
        return "the key is not the document's" if current else "the key is not its version's"
    return None if to_document(_item((), key, value)) else "not a document"


def _entry(key: str, value: dict[str, Any]) -> str | None:
    if len(key) > KEY_MAX or "\n" in key or key != key.strip():
        return f"an entry key is one line of at most {KEY_MAX} characters"
    if value.get("deleted"):
        EntryTombstone.model_validate(value)
        return None if "content" not in value else "a tombstone keeps no content"
    entry = EntryValue.model_validate(value)
    if entry.text is not None and entry.text != f"{key}: {entry.content}":
        return 'its text is "<key>: <content>"'
    return None if to_entry(_item((), key, value)) else "not an entry"


def _profile(key: str, value: dict[str, Any]) -> str | None:
    ProfileValue.model_validate(value)
    return None if key == PROFILE_KEY else f"the profile's key is {PROFILE_KEY}"


def _change(key: str, value: dict[str, Any]) -> str | None:
    ChangeValue.model_validate(value)
    return None if to_change(value) is not None else "not a profile change"


def _cursor(key: str, value: dict[str, Any]) -> str | None:
    CursorValue.model_validate(value)
    return None if to_cursor(_item((CURSORS,), key, value)) else "not a cursor"


def _bounded(key: str, value: dict[str, Any]) -> str | None:
    BoundedValue.model_validate(value)
    return None if key in TARGETS else f"a bounded target is one of {', '.join(TARGETS)}"


CHECKS: Mapping[tuple[str, tuple[str, ...]], Callable[[str, dict[str, Any]], str | None]] = {
    ("personal", ("document",)): lambda key, value: _document(key, value, True),
    ("personal", (HISTORY,)): lambda key, value: _document(key, value, False),
    ("personal", (NOTES,)): _note,
    ("profile", ()): _profile,
    ("profile", (CHANGES,)): _change,
    ("profile", (CURSORS,)): _cursor,
    ("agent", ("entries",)): _entry,
    ("bounded", ("bounded",)): _bounded,
}
"""Each kind's check, by kind and path (the settings layer is checked as a write to it is)."""


def _explained(error: ValidationError) -> str:
    first = error.errors()[0]
    where = ".".join(str(part) for part in first["loc"])
    return f"{where}: {first['msg']}" if where else str(first["msg"])


def problem(kind: str, path: tuple[str, ...], key: str, value: dict[str, Any]) -> str | None:
    """What is wrong with a value of `kind` at `path` and `key` as its reader reads it (too
    deep, a field missing or of the wrong type, a key its reader would not find), or None."""
    if depth(value) > MAX_DEPTH:
        return f"the value nests lists and objects more than {MAX_DEPTH} deep"
    check = CHECKS.get((kind, path))
    if check is None:
        return None
    try:
        return check(key, value)
    except ValidationError as exc:
        return _explained(exc)
    except (KeyError, TypeError, ValueError) as exc:
        return f"its reader cannot read it ({type(exc).__name__}: {exc})"
