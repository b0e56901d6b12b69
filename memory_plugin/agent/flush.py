"""Agent entries from the pre-compaction flush: the same one model call may add `entry:`
lines after its note when the Memory capability is on."""

from __future__ import annotations

import logging
from datetime import datetime

from memory_plugin.agent.entries import new_entry, put_plan
from memory_plugin.plans import Plan
from memory_plugin.provenance import Provenance
from memory_plugin.scope.context import MemoryContext

logger = logging.getLogger(__name__)
ENTRY_PREFIX = "entry:"
ENTRY_INSTRUCTION = (
    "\n\nAfter the note you may add durable facts worth keeping across conversations, one per "
    "line, as `entry: <short key> | <fact>`. Add none when nothing qualifies."
)


def split_entries(text: str) -> tuple[str, list[tuple[str, str]]]:
    """The note without its `entry:` lines, and each line's (key, content)."""
    note: list[str] = []
    entries: list[tuple[str, str]] = []
    for line in text.splitlines():
        body = line.strip().lstrip("-*• ")
        if body.lower().startswith(ENTRY_PREFIX):
            key, sep, content = body[len(ENTRY_PREFIX) :].partition("|")
            if sep and key.strip() and content.strip():
                entries.append((key.strip(), content.strip()))
        else:
            note.append(line)
    return "\n".join(note).strip(), entries


def flush_entries_plan(
    ctx: MemoryContext,
    entries: list[tuple[str, str]],
    now: datetime,
    semantic: bool,
    provenance: Provenance | None = None,
) -> Plan[int]:
    """Store the flush's entries (private to the user, shared when there is none) with the
    flush's provenance; each one the screen or validation refuses is logged and skipped. How
    many were stored."""
    visibility = "private" if ctx.user_id else "shared"
    stored = 0
    for key, content in entries:
        try:
            entry = new_entry(ctx, key, content, "general", visibility, 0.5, None, now)
            yield from put_plan(ctx, entry, semantic, model=True, provenance=provenance)
            stored += 1
        except Exception:
            logger.warning("flush entry %r not stored", key, exc_info=True)
    return stored
