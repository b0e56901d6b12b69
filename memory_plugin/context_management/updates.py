"""What memory learned during a session, told to the model after the history.

The system message shows every memory block as a snapshot taken when the session started
(`shown_blocks` in memory_context), so a note or a profile change made mid-session never
rewrites the front of the request and the provider's prefix cache keeps hitting. What is new
since the snapshot reaches the model in one short `<memory_update>` in front of the turn's
input (in the user message the model is sent, never in the stored thread), where it stays for
the rest of the session (`session_updates`): the request before it is still a byte prefix of
every later one.

A block with a version (the curated document) is told again whole when its version changes;
any other block tells only its lines that were neither shown nor told before. An update only
adds: when memory the session has shown (an entry of the snapshot or of an update) is no
longer in what the sources give (a note deleted, a fact forgotten, a profile turned off, a
bullet or line replaced), it is `retracted`: memory the snapshot showed starts the session
again with a new snapshot; memory only updates told drops those updates from the first that
told it (`standing`), the system message and the request before that update kept, and what
is still new is told again in front of the turn's input. Either way removed text is never in
front of the model again and never next to its replacement.
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


def known(
    shown: Sequence[PromptBlock], updates: Sequence[Mapping[str, Any]]
) -> dict[str, set[str]]:
    """Per block, the memory the session has shown: the snapshot's entries and those the
    updates told (an update from before entries were kept counts its lines)."""
    seen = {block.name: set(block.memory()) for block in shown}
    for update in updates:
        for name, told in (update.get("entries", update.get("lines")) or {}).items():
            seen.setdefault(name, set()).update(told)
    return seen


def retracted(
    shown: Sequence[PromptBlock], updates: Sequence[Mapping[str, Any]], now: Sequence[PromptBlock]
) -> bool:
    """Whether memory the session has shown is gone from `now`: its block is no longer given,
    or an entry is neither shown nor held by it. A block given without the version it had
    (it could not be read) retracts nothing."""
    fresh = {block.name: block for block in now}
    versions = {block.name: block.version for block in shown}
    for name, seen in known(shown, updates).items():
        block = fresh.get(name)
        if block is None:
            still: set[str] = set()
        elif block.version is None and versions.get(name) is not None:
            continue
        else:
            still = {*block.memory(), *block.held}
        if seen - still:
            return True
    return False


def standing(
    shown: Sequence[PromptBlock], updates: Sequence[Mapping[str, Any]], now: Sequence[PromptBlock]
) -> int:
    """How many leading updates tell only memory `now` still holds (all when none lost any):
    those stay told, and the request before the first of the others stays a byte prefix."""
    for n in range(len(updates)):
        if retracted(shown, updates[: n + 1], now):
            return n
    return len(updates)


def news(
    shown: Sequence[PromptBlock], updates: Sequence[Mapping[str, Any]], now: Sequence[PromptBlock]
) -> dict[str, Any] | None:
    """The update entry telling what `now` holds beyond the snapshot and earlier updates
    (without its anchor), None when there is nothing new; `entries` records the memory it
    tells."""
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
        said = set(old.text.splitlines()) if old else set()
        said |= told_lines.get(block.name, set())
        fresh = [line for line in block.text.splitlines() if line.strip() and line not in said]
        if fresh:
            lines[block.name] = fresh
    if not lines:
        return None
    seen = known(shown, updates)
    entries = {
        block.name: [entry for entry in block.memory() if entry not in seen.get(block.name, ())]
        for block in now
        if block.name in lines
    }
    text = render(lines, versions)
    return {"lines": lines, "versions": versions, "entries": entries, "text": text}


def render(lines: Mapping[str, Sequence[str]], whole: Mapping[str, int]) -> str:
    """The update message's text: each block's new lines in that block's tags (a block told
    `whole` carries its own)."""
    parts = [f"<{TAG}>", PREAMBLE]
    for name, body in lines.items():
        parts.extend(body if name in whole else [f"<{name}>", *body, f"</{name}>"])
    parts.append(f"</{TAG}>")
    return "\n".join(parts)


def anchor(messages: Sequence[BaseMessage]) -> str | None:
    """The id of the message the update is told in: the turn's latest user message, else
    nothing (it then goes after the last message)."""
    for message in reversed(messages):
        if isinstance(message, HumanMessage):
            return message.id
        if message.type == "ai":
            break
    return None


def _told_with(message: BaseMessage, texts: list[str]) -> BaseMessage:
    """The turn's input with what memory learned in front of its own words."""
    told = "\n\n".join(texts)
    content = message.content
    if isinstance(content, str):
        return message.model_copy(update={"content": f"{told}\n\n{content}"})
    return message.model_copy(update={"content": [{"type": "text", "text": told}, *content]})


def place(
    messages: Sequence[BaseMessage], updates: Sequence[Mapping[str, Any]]
) -> list[BaseMessage]:
    """The thread's messages with each update told in its anchor, the turn's input (in a
    message of its own after the message it followed, when the turn had no user message)."""
    if not updates:
        return list(messages)
    before: dict[str, list[str]] = {}
    after: dict[str, list[BaseMessage]] = {}
    for n, update in enumerate(updates):
        if update.get("before"):
            before.setdefault(update["before"], []).append(update["text"])
        elif update.get("after"):
            message: BaseMessage = HumanMessage(update["text"], id=f"{TAG}-{n}")
            after.setdefault(update["after"], []).append(message)
    placed: list[BaseMessage] = []
    for message in messages:
        texts = before.get(message.id or "")
        placed.append(_told_with(message, texts) if texts else message)
        placed.extend(after.get(message.id or "", ()))
    return placed
