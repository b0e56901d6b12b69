"""Export one user's memory as one JSON document, and import such a document into a store.

The document (schema_version 2, documented in docs/privacy.md) lists every item of the user's memory
(memory_plugin.privacy.inventory) with its kind (the name of the kind keeping it), workspace or
agent, its namespace below the kind's root (`path`), key and value, values as stored: a document's
versions, notes with their provenance, tombstones and consolidation marks, the profile and its
change log, entries, the settings layer. Items are sorted and keys too, and the store's own
timestamps are left out, so the same memory always exports byte-identical JSON. A schema_version 1
document, whose kinds were other words (each holding's `v1_kind`), imports too.

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
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from langgraph.store.base import Op, PutOp

from memory_plugin.backends.claims import DropCounters, InsertMany, positioned_key
from memory_plugin.errors import MemoryPluginError, MemoryWriteError
from memory_plugin.holdings import Holding, Shelf
from memory_plugin.plans import Plan
from memory_plugin.privacy.inventory import (
    Held,
    Owner,
    UnknownUserError,
    counts,
    derived,
    export_order,
    holding_of,
    holdings,
    inventory_plan,
    kind_order,
    namespace_of,
)
from memory_plugin.privacy.progress import Progress, quiet
from memory_plugin.privacy.values import MAX_DEPTH, problem
from memory_plugin.safety import screen
from memory_plugin.scope.namespaces import check_id

SCHEMA_VERSION = 2
READS = (1, SCHEMA_VERSION)
FORMAT = "memory_plugin.export"
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
        """The export document (schema_version 2)."""
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


def export_plan(
    owner: Owner, workspaces: Sequence[str] = (), progress: Progress = quiet
) -> Plan[Archive]:
    """The owner's memory (personal memory inside `workspaces` too) as an Archive; `progress`
    hears how many store items were read."""
    check_id(owner.user_id, what="user_id")
    held = yield from inventory_plan(owner, workspaces, progress)
    items = tuple(h for h in held if not derived(h))
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


def _kinds(where: str) -> str:
    """The kinds whose items lie in a workspace (`where` "workspace") or under an agent."""
    return " and ".join(h.kind for h in holdings() if getattr(h, where))


def _v1_kinds() -> dict[str, str]:
    """Each kind's name by its word in a schema_version 1 export, where that was another."""
    return {h.v1_kind: h.kind for h in holdings() if h.v1_kind is not None}


def _item(raw: Any, n: int, renamed: Mapping[str, str]) -> Held:
    where = f"items[{n}]"
    if not isinstance(raw, dict) or set(raw) != set(ITEM_FIELDS):
        raise _fail(where, f"an item is an object with exactly the fields {', '.join(ITEM_FIELDS)}")
    kind = raw["kind"]
    if isinstance(kind, str):
        kind = renamed.get(kind, kind)
    holding = holding_of(kind) if isinstance(kind, str) else None
    if holding is None:
        raise _fail(where, f"unknown kind {kind!r}; one of {', '.join(kind_order())}")
    workspace = _optional_id(raw["workspace"], where, "workspace")
    agent = _optional_id(raw["agent"], where, "agent")
    if workspace is not None and not holding.workspace:
        raise _fail(where, f"only {_kinds('workspace')} memory lies inside a workspace")
    if (agent is not None) != holding.agent:
        raise _fail(where, f"{_kinds('agent')} entries, and only they, name their agent")
    path = raw["path"]
    texts = isinstance(path, list) and all(isinstance(label, str) for label in path)
    shelf = holding.shelf(tuple(path)) if texts else None
    if shelf is None or shelf.derived:
        raise _fail(where, f"{kind} holds no items at path {path!r}")
    key, value = raw["key"], raw["value"]
    if not isinstance(key, str) or not key or "\x00" in key:
        raise _fail(where, "the key must be a non-empty string")
    if not isinstance(value, dict):
        raise _fail(where, "the value must be an object")
    return Held(kind, workspace, agent, tuple(path), key, value)


def _shelf(held: Held) -> tuple[Holding, Shelf]:
    holding = holding_of(held.kind)
    shelf = holding.shelf(held.path) if holding is not None else None
    assert holding is not None and shelf is not None, f"no kind keeps {held.kind!r} items there"
    return holding, shelf


def _check(held: Held, n: int) -> None:
    """Check an item against its kind's schema (its shelf's check), screen every text of it."""
    what = f"items[{n}] ({held.kind} {'/'.join((*held.path, held.key))})"
    _, shelf = _shelf(held)
    wrong = problem(shelf, held.key, held.value)
    if wrong is not None:
        raise _fail(what, wrong)
    try:
        for text in shelf.texts(held.value):
            screen(text, "its text", lines=True)
    except MemoryWriteError as exc:
        raise _fail(what, str(exc)) from None


def parse(text: str | bytes, progress: Progress = quiet) -> Archive:
    """The Archive an export document holds, every item checked (shape, safety screen,
    settings); ArchiveError names the first thing wrong. `progress` hears how many items
    were checked."""
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
    if version not in READS or isinstance(version, bool):
        raise ArchiveError(
            f"unknown schema_version {version!r}: this memory_plugin reads schema_version "
            f"{' and '.join(map(str, READS))}; nothing was imported"
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
    renamed = _v1_kinds() if version == 1 else {}
    items = [_item(raw, n, renamed) for n, raw in enumerate(raw_items)]
    seen: set[tuple[Any, ...]] = set()
    for n, held in enumerate(items):
        root = _shelf(held)[0].root
        identity = (root, held.workspace, held.agent, held.path, held.key)
        if identity in seen:
            raise _fail(f"items[{n}]", "the same item appears twice")
        seen.add(identity)
        if held.workspace is not None and held.workspace not in workspaces:
            raise _fail(f"items[{n}]", f"workspace {held.workspace!r} is not in workspaces")
    for n, held in enumerate(items):
        _check(held, n)
        progress("items checked", n + 1, len(items))
    ordered = sorted(items, key=export_order(kind_order()))
    return Archive(Owner(user, org), workspaces, tuple(ordered))


# Writing


ALREADY = "already there"
KEPT = "another value is already there; kept it"
GONE = "a deleted note (tombstone) whose key holds another note; nothing to add"
NOT_IMPORTED = ", not imported"
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
            "imported": {kind: self.imported[kind] for kind in kind_order()},
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
        parts = ", ".join(f"{self.imported[kind]} {kind}" for kind in kind_order())
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


def _same_note(a: Mapping[str, Any], b: Mapping[str, Any]) -> bool:
    return all(a.get(k) == b.get(k) for k in ("text", "day", "created_at"))


def _tombstoned(old: Mapping[str, Any] | None, held: Held) -> str | None:
    """How the item was removed here ("forgotten on <day>" or "deleted on <day>") when its key
    holds the tombstone of this very item (a note's tombstone keeps its day and creation time;
    an entry is its key), None otherwise."""
    if old is None or not old.get("deleted") or held.value.get("deleted"):
        return None
    if _shelf(held)[1].counted and not all(
        old.get(name) == held.value.get(name) for name in ("day", "created_at")
    ):
        return None
    deletion = old.get("deletion")
    source = deletion.get("source") if isinstance(deletion, dict) else None
    how = "forgotten" if source == "forget" else "deleted"
    return f"{how} on {str(old.get('deleted_at', ''))[:10]}"


def import_plan(
    archive: Archive,
    *,
    merge: bool,
    semantic: bool,
    include_forgotten: bool = False,
    progress: Progress = quiet,
) -> Plan[ImportReport]:
    """Write the archive's items into the owner's memory; refused (nothing written) when the
    owner already has memory here, unless `merge`. An item whose key here holds its own
    tombstone (forgotten or deleted since the export), and the profile of an owner who opted
    out of it here, are skipped, unless `include_forgotten` puts them back. `semantic`: the
    store keeps a vector index (notes get their index copy, entries are indexed). `progress`
    hears how many store items were read, then written."""
    owner, report = archive.owner, ImportReport(archive.owner)
    present = yield from inventory_plan(owner, None, progress)
    if present and not merge:
        raise ArchiveError(
            f"{owner.describe()} already has memory in this store ({len(present)} items); "
            "import with --merge (REST: ?merge=true) to add only what is missing; "
            "nothing was imported"
        )
    refused = {h.kind: h.refused(present) for h in holdings() if h.refused is not None}
    there = {(namespace_of(owner, h), h.key): h.value for h in present}
    notes_by_ns: dict[tuple[str, ...], list[Mapping[str, Any]]] = {}
    for h in present:
        if _shelf(h)[1].counted:
            notes_by_ns.setdefault(namespace_of(owner, h), []).append(h.value)
    ops: list[Op] = []
    appends: list[tuple[Held, tuple[str, ...]]] = []
    touched: set[tuple[str, ...]] = set()
    for held in archive.items:
        ns = namespace_of(owner, held)
        shelf = _shelf(held)[1]
        note = shelf.counted
        old = there.get((ns, held.key))
        gone = _tombstoned(old, held)
        if refused.get(held.kind) and old is None:
            gone = refused[held.kind]
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
        ops.append(PutOp(ns, held.key, held.value, index=shelf.index(semantic)))
        report.imported[held.kind] += 1
        if note:
            touched.add(ns)
        copy = shelf.copy(ns, held.key, held.value) if semantic and shelf.copy else None
        if copy is not None:
            ops.append(copy)
    for start in range(0, len(ops), BATCH):
        yield ops[start : start + BATCH]
        progress("items written", min(start + BATCH, len(ops)), len(ops))
    if touched:
        yield DropCounters(tuple(sorted(touched)))
    for held, ns in appends:
        value = {k: v for k, v in held.value.items() if k not in ("position", "version")}
        day = str(held.value.get("day") or held.key.split("#")[0])
        (stored,) = yield InsertMany(ns, day, (value,), dated=True)
        key = positioned_key(day, int(stored["position"]))
        made = _shelf(held)[1].copy
        copy = made(ns, key, stored) if semantic and made else None
        if copy is not None:
            yield [copy]
        report.imported[held.kind] += 1
        report.appended.append((held, key))
    return report
