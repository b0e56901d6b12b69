"""What a profile rewrite changed, as the update operations of the reference (ADD, UPDATE,
DELETE per bullet, NOOP when nothing did), and how to apply those changes again to a profile
that someone else changed meanwhile; and the change log's records of saved writes.

Within a section, bullets are aligned in order: a run of old bullets replaced by a run of new
ones is UPDATEs pairwise, then DELETEs for the old bullets left over or ADDs for the new ones
(three bullets replaced by one: one UPDATE and two DELETEs).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from difflib import SequenceMatcher
from typing import Any, Literal, cast, get_args

from memory_plugin.profile.document import SECTIONS, Profile
from memory_plugin.provenance import Provenance, provenance_of, stamped

Op = Literal["ADD", "UPDATE", "DELETE", "NOOP"]


@dataclass(frozen=True)
class Change:
    """One bullet-level operation: `before` is the old bullet (UPDATE, DELETE), `after` the
    new one (ADD, UPDATE)."""

    op: Op
    section: str
    before: str | None = None
    after: str | None = None


def _section_diff(section: str, before: list[str], after: list[str]) -> list[Change]:
    found: list[Change] = []
    for tag, i1, i2, j1, j2 in SequenceMatcher(a=before, b=after, autojunk=False).get_opcodes():
        if tag == "equal":
            continue
        old, new = before[i1:i2], after[j1:j2]
        paired = min(len(old), len(new))
        found += [Change("UPDATE", section, o, n) for o, n in zip(old, new, strict=False)]
        found += [Change("DELETE", section, before=o) for o in old[paired:]]
        found += [Change("ADD", section, after=n) for n in new[paired:]]
    return found


def diff(old: Profile | None, new: Profile | None) -> list[Change]:
    """Every bullet-level change from `old` to `new`, section by section."""
    return [
        change
        for section in SECTIONS
        for change in _section_diff(
            section,
            list(old.bullets(section)) if old else [],
            list(new.bullets(section)) if new else [],
        )
    ]


def changes(old: Profile | None, new: Profile | None) -> list[tuple[Op, str | None]]:
    """(operation, section) for every changed bullet; [("NOOP", None)] when none changed."""
    return [(c.op, c.section) for c in diff(old, new)] or [("NOOP", None)]


def reapply(delta: list[Change], onto: Profile) -> Profile:
    """`onto` with the changes of another rewrite applied: deleted bullets removed, updated
    ones rewritten in place (added when the old bullet is gone meanwhile), then added ones
    appended; a bullet already there is not added twice."""
    sections = {s: list(onto.bullets(s)) for s in SECTIONS}
    for change in sorted(delta, key=lambda c: c.op == "ADD"):
        bullets = sections[change.section]
        if change.before in bullets and change.op != "ADD":
            at = bullets.index(change.before)
            if change.op == "DELETE" or change.after in bullets:
                del bullets[at]
            else:
                bullets[at] = str(change.after)
        elif change.after is not None and change.after not in bullets:
            bullets.append(change.after)
    return onto.with_sections({s: tuple(b) for s, b in sections.items()})


@dataclass(frozen=True)
class ProfileChange:
    """One saved profile write: when, the bullet operations it made, and where it came from."""

    at: str
    operations: tuple[Change, ...]
    provenance: Provenance | None = None


def change_record(
    at: str, seq: int, delta: list[Change], provenance: Provenance | None
) -> dict[str, Any]:
    """The stored form of one profile write in the change log."""
    operations = [
        {"op": c.op, "section": c.section, "before": c.before, "after": c.after} for c in delta
    ]
    return stamped({"at": at, "seq": seq, "operations": operations}, provenance)


def _operation(value: Any) -> Change | None:
    if not isinstance(value, Mapping):
        return None
    op, section = value.get("op"), value.get("section")
    if op not in get_args(Op) or not isinstance(section, str):
        return None
    before, after = value.get("before"), value.get("after")
    return Change(
        cast(Op, op),
        section,
        before if isinstance(before, str) else None,
        after if isinstance(after, str) else None,
    )


def to_change(value: Mapping[str, Any]) -> ProfileChange | None:
    """A change-log record read back; None when it is not one."""
    at, operations = value.get("at"), value.get("operations")
    if not isinstance(at, str) or not isinstance(operations, list):
        return None
    found = tuple(c for c in map(_operation, operations) if c is not None)
    return ProfileChange(at, found, provenance_of(value))
