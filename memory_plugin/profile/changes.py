"""What a profile rewrite changed, as the update operations of the reference: ADD, UPDATE,
DELETE per section, NOOP when nothing did."""

from __future__ import annotations

from difflib import SequenceMatcher
from typing import Literal

from memory_plugin.profile.document import SECTIONS, Profile

Op = Literal["ADD", "UPDATE", "DELETE", "NOOP"]


def changes(old: Profile | None, new: Profile | None) -> list[tuple[Op, str | None]]:
    """(operation, section) for every changed section; [("NOOP", None)] when none changed."""
    found: list[tuple[Op, str | None]] = []
    for section in SECTIONS:
        before = list(old.bullets(section)) if old else []
        after = list(new.bullets(section)) if new else []
        for tag, i1, i2, j1, j2 in SequenceMatcher(a=before, b=after).get_opcodes():
            if tag == "insert":
                found.append(("ADD", section))
            elif tag == "delete":
                found.append(("DELETE", section))
            elif tag == "replace":
                found.append(("UPDATE" if i2 - i1 == j2 - j1 else "ADD", section))
    return found or [("NOOP", None)]
