"""Which exchanges of a thread are in the user's profile: a cursor per (user, thread).

The cursor is the journal seq up to which the thread's exchanges are consolidated (the seq of
the first entry not yet looked at), kept beside the profile at
`(*profile namespace, "cursors")` under the thread id, with `failures` (consolidation
attempts of the exchange at the cursor that failed) and its own `version`. A saved profile
write moves it in the same transaction as the profile (an extra put of that compare-and-swap,
see ProfileMemory.consolidate_plan); a NOOP, a discarded reply or a given-up exchange moves it
alone, with a compare-and-swap of its own. An exchange is the user message at seq `start`, the
final answer after it, up to the next user message (`end`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage
from langgraph.store.base import GetOp, PutOp

from memory_plugin.backends.conditional import PutIfVersion
from memory_plugin.context_management.journal import JournalEntry
from memory_plugin.plans import Plan

CURSORS = "cursors"


@dataclass(frozen=True)
class Cursor:
    """A stored cursor: `seq`, `failures`, and the item's `version`."""

    seq: int
    failures: int = 0
    version: int | None = None


@dataclass(frozen=True)
class Exchange:
    """One user message (journal seq `start`) and the final answer after it; the next user
    message, or the end of what was journaled, is at `end`."""

    start: int
    end: int
    user: str
    assistant: str


def cursors_namespace(profile_namespace: tuple[str, ...]) -> tuple[str, ...]:
    """Where the user's cursors are kept."""
    return (*profile_namespace, CURSORS)


def read_plan(profile_namespace: tuple[str, ...], thread_id: str) -> Plan[Cursor | None]:
    """The thread's cursor, None before its first consolidation."""
    (item,) = yield [GetOp(cursors_namespace(profile_namespace), thread_id)]
    return from_item(item)


def from_item(item: Any) -> Cursor | None:
    """The cursor a stored item holds, None for no item."""
    if item is None:
        return None
    value = item.value
    return Cursor(int(value["seq"]), int(value.get("failures", 0)), value.get("version"))


def cursor_put(
    profile_namespace: tuple[str, ...], thread_id: str, read: Cursor | None, seq: int
) -> PutOp:
    """The put moving the cursor to `seq`, for the profile write's transaction (its version
    is bumped by hand: extra puts are written as given)."""
    version = (read.version or 0) + 1 if read is not None else 1
    value = {"seq": seq, "failures": 0, "version": version}
    return PutOp(cursors_namespace(profile_namespace), thread_id, value, index=False)


def move_plan(
    profile_namespace: tuple[str, ...],
    thread_id: str,
    read: Cursor | None,
    seq: int,
    failures: int = 0,
) -> Plan[bool]:
    """Move the cursor alone (compare-and-swap on the one read); whether it was written."""
    namespace = cursors_namespace(profile_namespace)
    value = {"seq": seq, "failures": failures}
    expected = None if read is None else read.version
    saved = yield PutIfVersion(namespace, thread_id, value, expected)
    return saved is not None


def exchanges(entries: Sequence[JournalEntry], end: int) -> list[Exchange]:
    """The exchanges among journal entries (by seq, the journal's next seq `end`): each user
    message with the last tool-free answer before the next one; a user message with no such
    answer is left out."""
    found: list[Exchange] = []
    start: JournalEntry | None = None
    answer: str | None = None
    for entry in entries:
        if entry.role == "human":
            if start is not None and answer is not None:
                found.append(Exchange(start.seq, entry.seq, start.text, answer))
            start, answer = entry, None
        elif entry.role == "ai" and not entry.tool_calls and start is not None:
            answer = entry.text
    if start is not None and answer is not None:
        found.append(Exchange(start.seq, end, start.text, answer))
    return found


def turn_exchange(messages: Sequence[BaseMessage], info: dict[str, Any]) -> Exchange | None:
    """The turn that just ended as journal seqs, read from the state alone: when its last
    message is the last journaled one and its user message is still in the state, it runs
    from `journal_seq` less the messages from that user message on, to `journal_seq`."""
    end = info.get("journal_seq")
    if end is None or not messages or info.get("journal_last_id") != messages[-1].id:
        return None
    for index in range(len(messages) - 1, -1, -1):
        if isinstance(messages[index], HumanMessage):
            break
    else:
        return None
    answer = next(
        (
            m.text
            for m in reversed(messages[index:])
            if isinstance(m, AIMessage) and not m.tool_calls
        ),
        None,
    )
    start = int(end) - (len(messages) - index)
    if answer is None or start < 0:
        return None
    return Exchange(start, int(end), messages[index].text, answer)
