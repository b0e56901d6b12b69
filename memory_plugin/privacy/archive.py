"""Export one user's memory as one JSON document, and import such a document into a store.

The document (schema_version 1, documented in docs/privacy.md) lists every item of the
user's memory (memory_plugin.privacy.inventory) with its kind, workspace or agent, its
namespace below the kind's root (`path`), key and value, values as stored: a document's
versions, notes with their provenance, tombstones and consolidation marks, the profile and
its change log, entries, the settings layer. Items are sorted and keys too, and the store's
own timestamps are left out, so the same memory always exports byte-identical JSON.

An import checks the whole document first (JSON, format and schema version, every item's
shape and its value against its kind's schema (memory_plugin.privacy.values), every text
through the safety screen, the settings through their checks) and writes nothing when any of
it fails. Into a user who already has memory it is refused unless merging, which writes only
what is missing: an item already there is skipped, a note whose key holds another note is
appended at its day's next position unless its text is already a note of that day. What was
forgotten or deleted here since the export (its key holds its tombstone; a profile the user
opted out of) is left out and named in the report, unless `include_forgotten`.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from langgraph.store.base import Op, PutOp

from memory_plugin.backends.claims import DropCounters, InsertMany, positioned_key
from memory_plugin.errors import MemoryPluginError, MemoryWriteError
from memory_plugin.plans import Plan
from memory_plugin.privacy.inventory import (
    KIND_ORDER,
    Held,
    HeldKind,
    Owner,
    UnknownUserError,
    counts,
    inventory_plan,
    namespace_of,
)
from memory_plugin.privacy.values import MAX_DEPTH, problem
from memory_plugin.profile.document import SECTIONS, ProfileFormatError
from memory_plugin.profile.document import parse as parse_profile
from memory_plugin.safety import screen
from memory_plugin.scope.namespaces import check_id
from memory_plugin.scoped.documents import HISTORY
from memory_plugin.scoped.notes import NOTE_INDEX, NOTES
from memory_plugin.settings.layers import apply_changes, empty_record

SCHEMA_VERSION = 1
FORMAT = "memory_plugin.export"
PATHS: dict[HeldKind, frozenset[tuple[str, ...]]] = {
    "personal": frozenset({("document",), (HISTORY,), (NOTES,)}),
    "profile": frozenset({(), ("changes",), ("cursors",)}),
    "agent": frozenset({("entries",)}),
    "bounded": frozenset({("bounded",)}),
    "settings": frozenset({()}),
}
"""Where each kind's items lie below its root (a note's vector-index copy is rebuilt)."""
ITEM_FIELDS = ("kind", "workspace", "agent", "path", "key", "value")
BATCH = 100


class ArchiveError(MemoryPluginError):
    """An export document that cannot be imported: what is wrong, and where."""


@dataclass(frozen=True)
class Archive:
    """An export: whose memory, the workspaces whose personal memory it holds, its items."""

    owner: Owner
    workspaces: tuple[str, ...]
    items: tuple[Held, ...]

    def to_json(self) -> dict[str, Any]:
        """The export document (schema_version 1)."""
        return {
            "format": FORMAT,
            "schema_version": SCHEMA_VERSION,
            "user_id": self.owner.user_id,
            "org_id": self.owner.org_id,
            "workspaces": list(self.workspaces),
            "counts": counts(self.items),
            "items": [
                {
                    "kind": h.kind,
                    "workspace": h.workspace,
                    "agent": h.agent,
                    "path": list(h.path),
                    "key": h.key,
                    "value": h.value,
                }
                for h in self.items
            ],
        }

    def dumps(self) -> str:
        """The export document as JSON text: keys sorted, two-space indents, a final newline."""
        return dumps(self.to_json())


def dumps(document: Mapping[str, Any]) -> str:
    """JSON text the same for the same document: keys sorted, two-space indents, UTF-8 text."""
    try:
        return json.dumps(document, indent=2, sort_keys=True, ensure_ascii=False) + "\n"
    except (TypeError, ValueError) as exc:
        raise MemoryPluginError(
            f"a stored value is not JSON, so it cannot be exported: {exc}"
        ) from None


def export_plan(owner: Owner, workspaces: Sequence[str] = ()) -> Plan[Archive]:
    """The owner's memory (personal memory inside `workspaces` too) as an Archive."""
    check_id(owner.user_id, what="user_id")
    held = yield from inventory_plan(owner, workspaces)
    items = tuple(h for h in held if not h.derived)
    return Archive(owner, tuple(sorted(set(workspaces))), items)


def exists_plan(owner: Owner) -> Plan[bool]:
    """Whether the store holds any memory of the owner (in any workspace)."""
    held = yield from inventory_plan(owner, None)
    return bool(held)


def require_plan(owner: Owner) -> Plan[None]:
    """Raise UnknownUserError unless the store holds memory of the owner."""
    if not (yield from exists_plan(owner)):
        raise UnknownUserError(f"{owner.describe()} has no memory in this store")


# Reading and checking a document


def _fail(where: str, what: str) -> ArchiveError:
    return ArchiveError(f"{where}: {what}; nothing was imported")


def _optional_id(value: Any, where: str, what: str) -> str | None:
    if value is None:
        return None
    try:
        return check_id(value, what=what)
    except MemoryPluginError as exc:
        raise _fail(where, str(exc)) from None


def _item(raw: Any, n: int) -> Held:
    where = f"items[{n}]"
    if not isinstance(raw, dict) or set(raw) != set(ITEM_FIELDS):
        raise _fail(where, f"an item is an object with exactly the fields {', '.join(ITEM_FIELDS)}")
    kind = raw["kind"]
    if kind not in KIND_ORDER:
        raise _fail(where, f"unknown kind {kind!r}; one of {', '.join(KIND_ORDER)}")
    workspace = _optional_id(raw["workspace"], where, "workspace")
    agent = _optional_id(raw["agent"], where, "agent")
    if workspace is not None and kind != "personal":
        raise _fail(where, "only personal memory lies inside a workspace")
    if (agent is not None) != (kind in ("agent", "bounded")):
        raise _fail(where, "agent and bounded entries, and only they, name their agent")
    path = raw["path"]
    texts = isinstance(path, list) and all(isinstance(label, str) for label in path)
    if not texts or tuple(path) not in PATHS[kind]:
        raise _fail(where, f"{kind} memory holds no items at path {path!r}")
    key, value = raw["key"], raw["value"]
    if not isinstance(key, str) or not key or "\x00" in key:
        raise _fail(where, "the key must be a non-empty string")
    if not isinstance(value, dict):
        raise _fail(where, "the value must be an object")
    return Held(kind, workspace, agent, tuple(path), key, value)


def _texts(value: Any) -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for inner in value.values():
            yield from _texts(inner)
    elif isinstance(value, list):
        for inner in value:
            yield from _texts(inner)


def _profile_texts(value: Mapping[str, Any]) -> Iterator[str]:
    """What a profile item says: the bullets of a memory.md, which must be the canonical
    document the profile writes (its frontmatter and headings are the template, so a stray
    line is refused, not passed over), and each change's before and after."""
    text = value.get("text")
    if isinstance(text, str):
        try:
            profile = parse_profile(text)
        except ProfileFormatError as exc:
            raise MemoryWriteError(f"not a memory.md the profile writes: {exc}") from None
        for section in SECTIONS:
            yield from profile.bullets(section)
    for op in value.get("operations") or []:
        if isinstance(op, dict):
            yield from (op[k] for k in ("before", "after") if isinstance(op.get(k), str))


def _check(held: Held, n: int) -> None:
    """Check an item against its kind's schema (privacy/values.py), screen every text of it;
    check a settings layer as a write to it is checked."""
    what = f"items[{n}] ({held.kind} {'/'.join((*held.path, held.key))})"
    wrong = problem(held.kind, held.path, held.key, held.value)
    if wrong is not None:
        raise _fail(what, wrong)
    if held.kind == "settings":
        values, locked = held.value.get("values"), held.value.get("locked")
        if set(held.value) != {"values", "locked"} or not isinstance(values, dict) or locked:
            raise _fail(what, 'a user settings layer is {"values": {...}, "locked": []}')
        try:
            apply_changes(
                "user", empty_record(), [], set_values=values, clear=[], lock=[], unlock=[]
            )
        except MemoryPluginError as exc:
            raise _fail(what, str(exc)) from None
        return
    texts = _profile_texts(held.value) if held.kind == "profile" else _texts(held.value)
    try:
        for text in texts:
            screen(text, "its text", lines=True)
    except MemoryWriteError as exc:
        raise _fail(what, str(exc)) from None


def parse(text: str | bytes) -> Archive:
    """The Archive an export document holds, every item checked (shape, safety screen,
    settings); ArchiveError names the first thing wrong."""
    try:
        document = json.loads(text)
    except (ValueError, UnicodeDecodeError) as exc:
        raise ArchiveError(f"the file is not JSON ({exc}); nothing was imported") from None
    except RecursionError:
        raise ArchiveError(
            f"the file nests JSON too deeply (an item's value nests at most {MAX_DEPTH} deep); "
            "nothing was imported"
        ) from None
    if not isinstance(document, dict) or document.get("format") != FORMAT:
        raise ArchiveError(
            f"the file is not a memory export (its format is not {FORMAT!r}); nothing was imported"
        )
    version = document.get("schema_version")
    if version != SCHEMA_VERSION:
        raise ArchiveError(
            f"unknown schema_version {version!r}: this memory_plugin reads schema_version "
            f"{SCHEMA_VERSION}; nothing was imported"
        )
    user = _optional_id(document.get("user_id"), "user_id", "user_id")
    if user is None:
        raise _fail("user_id", "the export names no user")
    org = _optional_id(document.get("org_id"), "org_id", "org_id")
    spaces = document.get("workspaces")
    if not isinstance(spaces, list) or not all(isinstance(w, str) for w in spaces):
        raise _fail("workspaces", "a list of workspace ids is expected")
    checked = (_optional_id(w, "workspaces", "workspace") for w in spaces)
    workspaces = tuple(w for w in checked if w is not None)
    raw_items = document.get("items")
    if not isinstance(raw_items, list):
        raise _fail("items", "a list of items is expected")
    items = [_item(raw, n) for n, raw in enumerate(raw_items)]
    seen: set[tuple[Any, ...]] = set()
    for n, held in enumerate(items):
        identity = (held.kind, held.workspace, held.agent, held.path, held.key)
        if held.kind == "bounded":
            identity = ("agent", *identity[1:])
        if identity in seen:
            raise _fail(f"items[{n}]", "the same item appears twice")
        seen.add(identity)
        if held.workspace is not None and held.workspace not in workspaces:
            raise _fail(f"items[{n}]", f"workspace {held.workspace!r} is not in workspaces")
    for n, held in enumerate(items):
        _check(held, n)
    return Archive(Owner(user, org), workspaces, tuple(sorted(items, key=Held.sort_key)))


# Writing


ALREADY = "already there"
KEPT = "another value is already there; kept it"
GONE = "a deleted note (tombstone) whose key holds another note; nothing to add"
NOT_IMPORTED = ", not imported"
OPTED_OUT = "deleted when the user turned context memory off (the profile is off here)"
FORGOTTEN_HINT = (
    "Forgotten and deleted items are re-imported with --include-forgotten "
    "(REST: ?include_forgotten=true)."
)


@dataclass
class ImportReport:
    """What an import wrote and what it skipped (each with the reason), per kind."""

    owner: Owner
    imported: Counter[str] = field(default_factory=Counter)
    skipped: list[tuple[Held, str]] = field(default_factory=list)
    appended: list[tuple[Held, str]] = field(default_factory=list)
    """Notes whose key held another note here, with the key they were appended under."""
    reimported: list[tuple[Held, str]] = field(default_factory=list)
    """Items forgotten or deleted here and put back (include_forgotten), with how and when."""

    def to_json(self) -> dict[str, Any]:
        """The report as JSON."""
        return {
            "user_id": self.owner.user_id,
            "org_id": self.owner.org_id,
            "imported": {kind: self.imported[kind] for kind in KIND_ORDER},
            "skipped": [
                {"kind": h.kind, "path": list(h.path), "key": h.key, "reason": why}
                for h, why in self.skipped
            ],
            "appended": [
                {"kind": h.kind, "path": list(h.path), "key": h.key, "new_key": new}
                for h, new in self.appended
            ],
            "reimported": [
                {"kind": h.kind, "path": list(h.path), "key": h.key, "was": was}
                for h, was in self.reimported
            ],
        }

    def summary(self) -> str:
        """The report as lines of text."""
        parts = ", ".join(f"{self.imported[kind]} {kind}" for kind in KIND_ORDER)
        lines = [f"Imported {sum(self.imported.values())} items for {self.owner.describe()}: "]
        lines[0] += parts + "."
        lines.append(f"Skipped {len(self.skipped)}" + (":" if self.skipped else "."))
        lines += [f"  {h.kind} {'/'.join((*h.path, h.key))}: {why}" for h, why in self.skipped]
        lines += [
            f"Appended note {h.key} as {new}: its key holds another note here."
            for h, new in self.appended
        ]
        lines += [
            f"Re-imported {h.kind} {'/'.join((*h.path, h.key))}, {was}."
            for h, was in self.reimported
        ]
        if any(why.endswith(NOT_IMPORTED) for _, why in self.skipped):
            lines.append(FORGOTTEN_HINT)
        return "\n".join(lines)


def _index(held: Held, semantic: bool) -> Literal[False] | list[str] | None:
    """How the kind's own write indexes the item (see scoped/documents.py, agent/entries.py)."""
    if held.kind == "personal" and held.path == (HISTORY,):
        return None
    if held.kind == "agent" and semantic:
        return ["text"]
    return False


def _note_index(ns: tuple[str, ...], key: str, value: Mapping[str, Any]) -> PutOp | None:
    """A live note's copy in the vector index, as scoped/notes.py writes it."""
    if value.get("deleted") or not isinstance(value.get("text"), str):
        return None
    copy = {"text": value["text"][2:], "day": value.get("day")}
    return PutOp((*ns[:-1], NOTE_INDEX), key, copy, index=["text"])


def _same_note(a: Mapping[str, Any], b: Mapping[str, Any]) -> bool:
    return all(a.get(k) == b.get(k) for k in ("text", "day", "created_at"))


def _tombstoned(old: Mapping[str, Any] | None, held: Held) -> str | None:
    """How the item was removed here ("forgotten on <day>" or "deleted on <day>") when its key
    holds the tombstone of this very item (a note's tombstone keeps its day and creation time;
    an entry is its key), None otherwise."""
    if old is None or not old.get("deleted") or held.value.get("deleted"):
        return None
    if held.path == (NOTES,) and not all(
        old.get(name) == held.value.get(name) for name in ("day", "created_at")
    ):
        return None
    deletion = old.get("deletion")
    source = deletion.get("source") if isinstance(deletion, dict) else None
    how = "forgotten" if source == "forget" else "deleted"
    return f"{how} on {str(old.get('deleted_at', ''))[:10]}"


def _opted_out(present: Sequence[Held]) -> bool:
    """Whether the owner opted out of the profile here (their settings layer turns it off, and
    the opt-out deleted the profile with its change log)."""
    layer = next((h.value for h in present if h.kind == "settings"), {})
    values = layer.get("values")
    off = isinstance(values, dict) and values.get("profile_user") is False
    return off and not any(h.kind == "profile" and h.path == () for h in present)


def import_plan(
    archive: Archive, *, merge: bool, semantic: bool, include_forgotten: bool = False
) -> Plan[ImportReport]:
    """Write the archive's items into the owner's memory; refused (nothing written) when the
    owner already has memory here, unless `merge`. An item whose key here holds its own
    tombstone (forgotten or deleted since the export), and the profile of an owner who opted
    out of it here, are skipped, unless `include_forgotten` puts them back. `semantic`: the
    store keeps a vector index (notes get their index copy, entries are indexed)."""
    owner, report = archive.owner, ImportReport(archive.owner)
    present = yield from inventory_plan(owner, None)
    if present and not merge:
        raise ArchiveError(
            f"{owner.describe()} already has memory in this store ({len(present)} items); "
            "import with --merge (REST: ?merge=true) to add only what is missing; "
            "nothing was imported"
        )
    opted_out = _opted_out(present)
    there = {(namespace_of(owner, h), h.key): h.value for h in present}
    notes_by_ns: dict[tuple[str, ...], list[Mapping[str, Any]]] = {}
    for (ns, _), value in there.items():
        if ns[-1] == NOTES:
            notes_by_ns.setdefault(ns, []).append(value)
    ops: list[Op] = []
    appends: list[tuple[Held, tuple[str, ...]]] = []
    touched: set[tuple[str, ...]] = set()
    for held in archive.items:
        ns = namespace_of(owner, held)
        note = held.kind == "personal" and held.path == (NOTES,)
        old = there.get((ns, held.key))
        gone = _tombstoned(old, held)
        if opted_out and held.kind == "profile" and old is None:
            gone = OPTED_OUT
        if gone is not None and include_forgotten:
            report.reimported.append((held, gone))
        elif gone is not None:
            report.skipped.append((held, f"{gone}{NOT_IMPORTED}"))
            continue
        elif old is not None:
            if old == held.value:
                report.skipped.append((held, ALREADY))
            elif not note:
                report.skipped.append((held, KEPT))
            elif any(_same_note(v, held.value) for v in notes_by_ns.get(ns, [])):
                report.skipped.append((held, ALREADY))
            elif held.value.get("deleted"):
                report.skipped.append((held, GONE))
            else:
                appends.append((held, ns))
            continue
        ops.append(PutOp(ns, held.key, held.value, index=_index(held, semantic)))
        report.imported[held.kind] += 1
        if note:
            touched.add(ns)
            copy = _note_index(ns, held.key, held.value) if semantic else None
            if copy is not None:
                ops.append(copy)
    for start in range(0, len(ops), BATCH):
        yield ops[start : start + BATCH]
    if touched:
        yield DropCounters(tuple(sorted(touched)))
    for held, ns in appends:
        value = {k: v for k, v in held.value.items() if k not in ("position", "version")}
        day = str(held.value.get("day") or held.key.split("#")[0])
        (stored,) = yield InsertMany(ns, day, (value,), dated=True)
        key = positioned_key(day, int(stored["position"]))
        copy = _note_index(ns, key, stored) if semantic else None
        if copy is not None:
            yield [copy]
        report.imported[held.kind] += 1
        report.appended.append((held, key))
    return report
