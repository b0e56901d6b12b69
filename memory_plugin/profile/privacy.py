"""What the profile keeps of a user (memory_plugin.holdings): its memory.md, change log and
thread cursors; how an import checks them; how the readable export shows them; where a text
occurs in it (a bullet, the change log) and forgetting it there (ProfileMemory's hooks)."""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import Annotated, Any, Protocol

from langgraph.store.base import Op, PutOp
from pydantic import AfterValidator, BaseModel, ConfigDict, StrictStr

from memory_plugin.errors import MemoryPluginError, MemoryWriteError
from memory_plugin.holdings import (
    Held,
    Holding,
    Outcome,
    Owner,
    Place,
    Shelf,
    as_item,
    nowhere_else,
    place,
    rewritten,
)
from memory_plugin.holdings.readable import quoted
from memory_plugin.holdings.values import Count, Instant, Origin, StoredValue, Version
from memory_plugin.plans import Plan, all_items_plan
from memory_plugin.profile.changes import Op as Operation
from memory_plugin.profile.changes import ProfileChange, to_change
from memory_plugin.profile.cursor import CURSORS
from memory_plugin.profile.cursor import from_item as to_cursor
from memory_plugin.profile.document import SECTIONS, Profile, ProfileFormatError, parse
from memory_plugin.profile.log import CHANGES
from memory_plugin.profile.naming import NAME
from memory_plugin.profile.stored import KEY
from memory_plugin.provenance import Provenance, provenance_of
from memory_plugin.scope.context import MemoryContext
from memory_plugin.scope.namespaces import ROOT

PROFILE = "profile"
PAGE = 100
FORGOTTEN = "[forgotten]"
OPTED_OUT = "deleted when the user turned context memory off (the profile is off here)"


def profile_root(
    owner: Owner, workspace: str | None = None, agent: str | None = None
) -> tuple[str, ...]:
    """The namespace of the owner's profile (its change log and cursors below it)."""
    return (ROOT, *owner.tenant(), PROFILE, owner.label())


def _section(name: str) -> str:
    if name not in SECTIONS:
        raise ValueError(f"not a section of the profile: {name!r}")
    return name


class ProfileValue(StoredValue):
    """The profile's memory.md (its text is checked against the template elsewhere)."""

    text: StrictStr
    version: Version


class OperationValue(BaseModel):
    """One bullet operation of a profile change."""

    model_config = ConfigDict(strict=True, extra="allow")

    op: Operation
    section: Annotated[StrictStr, AfterValidator(_section)]
    before: StrictStr | None = None
    after: StrictStr | None = None


class ChangeValue(StoredValue):
    """One saved write of the profile's change log."""

    at: Instant
    seq: Count | None = None
    operations: list[OperationValue]
    provenance: Origin = None


class CursorValue(StoredValue):
    """How far the profile has read one thread."""

    seq: Count
    failures: Count = 0
    version: Version | None = None


def _profile(key: str, value: dict[str, Any]) -> str | None:
    ProfileValue.model_validate(value)
    return None if key == KEY else f"the profile's key is {KEY}"


def _change(key: str, value: dict[str, Any]) -> str | None:
    ChangeValue.model_validate(value)
    return None if to_change(value) is not None else "not a profile change"


def _cursor(key: str, value: dict[str, Any]) -> str | None:
    CursorValue.model_validate(value)
    return None if to_cursor(as_item((CURSORS,), key, value)) else "not a cursor"


def _texts(value: Mapping[str, Any]) -> Iterator[str]:
    """What a profile item says: the bullets of a memory.md, which must be the canonical
    document the profile writes (its frontmatter and headings are the template, so a stray
    line is refused, not passed over), and each change's before and after."""
    text = value.get("text")
    if isinstance(text, str):
        try:
            profile = parse(text)
        except ProfileFormatError as exc:
            raise MemoryWriteError(f"not a memory.md the profile writes: {exc}") from None
        for section in SECTIONS:
            yield from profile.bullets(section)
    for op in value.get("operations") or []:
        if isinstance(op, dict):
            yield from (op[k] for k in ("before", "after") if isinstance(op.get(k), str))


def _refused(present: Sequence[Held]) -> str | None:
    """Why the profile is not imported: the owner opted out of it here (their settings layer
    turns it off, and the opt-out deleted the profile with its change log)."""
    layer = next((h.value for h in present if h.kind == "settings"), {})
    values = layer.get("values")
    off = isinstance(values, dict) and values.get("profile_user") is False
    held = any(h.kind == NAME and h.path == () for h in present)
    return OPTED_OUT if off and not held else None


def _render(workspace: str | None, agent: str | None, items: list[Held]) -> list[str]:
    lines = ["## Profile (what the agent knows about you)", ""]
    for h in items:
        if h.path == ():
            lines += [*quoted(str(h.value.get("text", ""))), ""]
    changes = [h for h in items if h.path == (CHANGES,)]
    if changes:
        lines += ["### Changes", ""]
        for h in changes:
            for op in h.value.get("operations", []):
                before, after = op.get("before"), op.get("after")
                what = f"{before!r} -> {after!r}" if before else repr(after)
                lines.append(
                    f"- {h.value.get('at', '')}: {op.get('op')} {op.get('section')}: {what}"
                )
        lines.append("")
    return lines


HOLDING = Holding(
    NAME,
    profile_root,
    (
        Shelf((), _profile, _texts),
        Shelf((CHANGES,), _change, _texts),
        Shelf((CURSORS,), _cursor),
    ),
    nowhere_else,
    _render,
    refused=_refused,
)
"""The owner's profile with its change log and thread cursors."""


class Profiles(Protocol):
    """What forgetting asks of the profile."""

    @property
    def keep_changes(self) -> int: ...

    def read_plan(self, ctx: MemoryContext) -> Plan[Profile | None]: ...

    def changes_plan(self, ctx: MemoryContext, limit: Any) -> Plan[list[ProfileChange]]: ...

    def remove_bullets_plan(
        self, ctx: MemoryContext, bullets: Iterable[tuple[str, str]]
    ) -> Plan[Profile | None]: ...


def _context(owner: Owner) -> MemoryContext:
    return MemoryContext(user_id=owner.user_id, org_id=owner.org_id)


def _scrubbed(operation: Any, pattern: re.Pattern[str]) -> Any:
    """A change-log operation with each before or after holding the text as FORGOTTEN."""
    if not isinstance(operation, dict):
        return operation
    return {
        key: FORGOTTEN
        if key in ("before", "after") and isinstance(value, str) and pattern.search(value)
        else value
        for key, value in operation.items()
    }


def _log_plan(
    owner: Owner, pattern: re.Pattern[str], *, scrub: bool
) -> Plan[list[tuple[str, Provenance | None]]]:
    """The befores and afters of the change log that hold the text, with the provenance of
    their change; with `scrub`, each becomes FORGOTTEN."""
    namespace = (*profile_root(owner), CHANGES)
    items = yield from all_items_plan(namespace, page=PAGE)
    found: list[tuple[str, Provenance | None]] = []
    puts: list[Op] = []
    for item in items:
        operations = item.value.get("operations") or []
        texts = [
            op[key]
            for op in operations
            if isinstance(op, dict)
            for key in ("before", "after")
            if isinstance(op.get(key), str) and pattern.search(op[key])
        ]
        if texts:
            found += [(text, provenance_of(item.value)) for text in texts]
            value = {**item.value, "operations": [_scrubbed(op, pattern) for op in operations]}
            puts.append(PutOp(namespace, item.key, value, index=False))
    if scrub and puts:
        yield puts
    return found


def places_plan(
    profiles: Profiles, owner: Owner, needle: str, pattern: re.Pattern[str]
) -> Plan[list[Place]]:
    """The profile's bullets holding the text, and its change log's mentions as one place."""
    ctx = _context(owner)
    profile = yield from profiles.read_plan(ctx)
    if profile is None:
        return []
    changes = yield from profiles.changes_plan(ctx, profiles.keep_changes)
    places = []
    for section in SECTIONS:
        for bullet in profile.bullets(section):
            if pattern.search(bullet):
                made = next(
                    (
                        change.provenance
                        for change in changes
                        if any(op.after == bullet for op in change.operations)
                    ),
                    None,
                )
                places.append(
                    place(
                        NAME,
                        PROFILE,
                        bullet,
                        "words",
                        scope=PROFILE,
                        what=f"bullet in {section}",
                        provenance=made,
                        key=section,
                    )
                )
    logged = yield from _log_plan(owner, pattern, scrub=False)
    if logged:
        count = f"{len(logged)} mention{'s' if len(logged) > 1 else ''}"
        text, made = logged[0]
        what = f"the profile's change log ({count})"
        places.append(
            place(
                "changes",
                PROFILE,
                text,
                "words",
                scope=PROFILE,
                what=what,
                provenance=made,
                key=count,
            )
        )
    return places


def forget_plan(
    profiles: Profiles, owner: Owner, places: list[Place], pattern: re.Pattern[str]
) -> Plan[list[Outcome]]:
    """Remove the bullets through the profile's compare-and-swap write and change log, then
    make every text of the change log holding the text FORGOTTEN."""
    bullets = [each for each in places if each.kind == NAME]
    log = [each for each in places if each.kind == "changes"]
    outcomes: list[Outcome] = []
    if bullets:
        outcomes += yield from _bullets_plan(profiles, owner, bullets)
    if bullets or log:
        logged = yield from _log_plan(owner, pattern, scrub=True)
        outcomes += [rewritten(each, len(logged), "mentions") for each in log]
    return outcomes


def _bullets_plan(profiles: Profiles, owner: Owner, bullets: list[Place]) -> Plan[list[Outcome]]:
    ctx = _context(owner)
    pairs = [(str(each.key), each.text) for each in bullets]
    before = yield from profiles.read_plan(ctx)
    try:
        after = yield from profiles.remove_bullets_plan(ctx, pairs)
    except MemoryPluginError as exc:
        return [Outcome(each, False, str(exc)) for each in bullets]

    def held(profile: Profile | None, each: Place) -> bool:
        return profile is not None and each.text in profile.bullets(str(each.key))

    return [
        Outcome(each, True, "bullet removed")
        if held(before, each) and not held(after, each)
        else Outcome(each, False, "already gone")
        for each in bullets
    ]
