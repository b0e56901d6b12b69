"""Bounded entries: the pure edit and read rules of one target (no store, no model)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from memory_plugin.errors import MemoryWriteError
from memory_plugin.provenance import Provenance

Action = Literal["add", "replace", "remove", "read"]
Target = Literal["memory", "user"]
ACTIONS: tuple[str, ...] = ("add", "replace", "remove", "read")
TARGETS: tuple[str, ...] = ("memory", "user")
SEPARATOR = "\n§\n"
PREVIEW = 60


@dataclass(frozen=True)
class TargetView:
    """One target's entries, the characters they use (joined) and its limit, and where each
    entry came from (parallel to `entries`; None for entries older than provenance)."""

    target: str
    entries: list[str]
    used: int
    limit: int
    provenance: tuple[Provenance | None, ...] = ()

    @property
    def usage(self) -> str:
        """Usage like `64% — 1,408/2,200 chars`."""
        percent = round(100 * self.used / self.limit) if self.limit else 0
        return f"{percent}% — {self.used:,}/{self.limit:,} chars"


def joined(entries: list[str]) -> str:
    """The target's text: entries separated by a line holding only `§`."""
    return SEPARATOR.join(entries)


def used(entries: list[str]) -> int:
    """Characters of the whole joined text."""
    return len(joined(entries))


def clean(content: str | None, what: str) -> str:
    """An entry's text, stripped; refused when missing, empty, or holding a `§` line."""
    if content is None or not isinstance(content, str) or not content.strip():
        raise MemoryWriteError(f"{what} is required and must not be empty")
    text = content.strip()
    if any(line.strip() == "§" for line in text.splitlines()):
        raise MemoryWriteError(f"{what} must not contain a line holding only '§' (the separator)")
    return text


def check_names(action: str, target: str) -> None:
    """Refuse an unknown action or target, naming the allowed values."""
    if action not in ACTIONS:
        raise MemoryWriteError(f"action must be one of {', '.join(ACTIONS)}; got {action!r}")
    if target not in TARGETS:
        raise MemoryWriteError(f"target must be one of memory, user; got {target!r}")


def _preview(entry: str) -> str:
    flat = " ".join(entry.split())
    return flat if len(flat) <= PREVIEW else flat[: PREVIEW - 1] + "…"


def find(entries: list[str], old_text: str | None) -> int:
    """The index of the one entry holding `old_text`; refused when none or several differ."""
    needle = (old_text or "").strip()
    if not needle:
        raise MemoryWriteError("old_text is required: a short unique part of the entry")
    hits = [i for i, entry in enumerate(entries) if needle in entry]
    if not hits:
        raise MemoryWriteError(f"no entry contains {needle!r}")
    if len({entries[i] for i in hits}) > 1:
        shown = "; ".join(repr(_preview(entries[i])) for i in hits)
        raise MemoryWriteError(
            f"{len(hits)} entries contain {needle!r}; use a longer unique part. Matches: {shown}"
        )
    return hits[0]


def listing(view: TargetView) -> str:
    """The target's entries as they are now, with their usage (the `read` answer)."""
    body = SEPARATOR.join(view.entries) if view.entries else "(empty)"
    return f"Current {view.target} entries [{view.usage}]:\n{body}"


def edit(
    entries: list[str],
    action: str,
    content: str | None,
    old_text: str | None,
    view: TargetView,
) -> tuple[list[str] | None, str]:
    """The new entries (None when nothing changes) and the answer; refuses a bad edit, or one
    that would pass the limit and use more than now, listing the current entries. An edit that
    uses no more than now is allowed over the limit, so a lowered limit never locks it in."""
    target = view.target
    if action == "read":
        return None, listing(view)
    if action == "add":
        text = clean(content, "content")
        if text in entries:
            return None, f"Already in {target}: nothing changed ({view.usage})."
        new = [*entries, text]
    elif action == "replace":
        text = clean(content, "content")
        index = find(entries, old_text)
        new = [*entries[:index], text, *entries[index + 1 :]]
        if text in entries[:index] + entries[index + 1 :]:
            del new[index]
    else:
        index = find(entries, old_text)
        new = [*entries[:index], *entries[index + 1 :]]
    size = used(new)
    if size > view.limit and size > view.used:
        raise MemoryWriteError(
            f"{target} would exceed limit: {size:,}/{view.limit:,} chars after this {action} "
            f"(now {view.usage}); replace or remove entries first.\n{listing(view)}"
        )
    after = TargetView(target, new, size, view.limit)
    done = {"add": "Added to", "replace": "Replaced in", "remove": "Removed from"}[action]
    return new, f"{done} {target} ({after.usage})."
