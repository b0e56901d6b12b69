"""What memory learned during a session, told to the model after the history.

The system message shows every memory block as a snapshot taken when the session started
(`shown_blocks` in memory_context), so a note or a profile change made mid-session never
rewrites the front of the request and the provider's prefix cache keeps hitting. What is new
since the snapshot reaches the model as one short message placed just before the turn's
input, where it stays for the rest of the session (`session_updates`): the request before it
is still a byte prefix of every later one.

A block with a version (the curated document) is told again whole when its version changes;
any other block tells only its lines that were neither shown nor told before.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from langchain_core.messages import BaseMessage, HumanMessage

from memory_plugin.blocks import PromptBlock

SHOWN, UPDATES = "shown_blocks", "session_updates"
TAG = "memory_update"
PREAMBLE = (
    "Saved to memory since this conversation's system prompt was written (newer than it; "
    "not said by the user):"
)


def _told(updates: Sequence[Mapping[str, Any]]) -> tuple[dict[str, set[str]], dict[str, int]]:
    lines: dict[str, set[str]] = {}
    versions: dict[str, int] = {}
    for update in updates:
        for name, told in (update.get("lines") or {}).items():
            lines.setdefault(name, set()).update(told)
        versions.update(update.get("versions") or {})
    return lines, versions


def news(
    shown: Sequence[PromptBlock], updates: Sequence[Mapping[str, Any]], now: Sequence[PromptBlock]
) -> dict[str, Any] | None:
    """The update entry telling what `now` holds beyond the snapshot and earlier updates
    (without its anchor), None when there is nothing new."""
    before = {block.name: block for block in shown}
    told_lines, told_versions = _told(updates)
    lines: dict[str, list[str]] = {}
    versions: dict[str, int] = {}
    for block in now:
        old = before.get(block.name)
        if block.version is not None:
            last = told_versions.get(block.name, old.version if old else None)
            if old is not None and last is None:
                continue
            if block.version != last:
                versions[block.name] = block.version
                lines[block.name] = [block.text]
            continue
        known = set(old.text.splitlines()) if old else set()
        known |= told_lines.get(block.name, set())
        fresh = [line for line in block.text.splitlines() if line.strip() and line not in known]
        if fresh:
            lines[block.name] = fresh
    if not lines:
        return None
    return {"lines": lines, "versions": versions, "text": render(lines)}


def render(lines: Mapping[str, Sequence[str]]) -> str:
    """The update message's text."""
    parts = [f"<{TAG}>", PREAMBLE]
    for body in lines.values():
        parts.extend(body)
    parts.append(f"</{TAG}>")
    return "\n".join(parts)


def anchor(messages: Sequence[BaseMessage]) -> str | None:
    """The id of the message the update goes in front of: the turn's latest user message,
    else nothing (it then goes after the last message)."""
    for message in reversed(messages):
        if isinstance(message, HumanMessage) and not _is_update(message):
            return message.id
        if message.type == "ai":
            break
    return None


def _is_update(message: BaseMessage) -> bool:
    return bool(message.id) and str(message.id).startswith(f"{TAG}-")


def place(
    messages: Sequence[BaseMessage], updates: Sequence[Mapping[str, Any]]
) -> list[BaseMessage]:
    """The thread's messages with each update in front of its anchor (after the message it
    followed, when its anchor has no id)."""
    if not updates:
        return list(messages)
    before: dict[str, list[BaseMessage]] = {}
    after: dict[str, list[BaseMessage]] = {}
    for n, update in enumerate(updates):
        message: BaseMessage = HumanMessage(update["text"], id=f"{TAG}-{n}")
        if update.get("before"):
            before.setdefault(update["before"], []).append(message)
        elif update.get("after"):
            after.setdefault(update["after"], []).append(message)
    placed: list[BaseMessage] = []
    for message in messages:
        placed.extend(before.get(message.id or "", ()))
        placed.append(message)
        placed.extend(after.get(message.id or "", ()))
    return placed
