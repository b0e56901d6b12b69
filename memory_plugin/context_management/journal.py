"""The thread journal: every message of a thread, written once and kept in the store.

Masking and compaction may later shrink the graph's working state; the journal keeps the
full transcript, searchable, and an index from each tool call id to its call and result.
Deleting a thread keeps its journal and summaries unless asked otherwise: they are moved
aside as a kept incarnation of the thread (0, 1, ... in the order of the deletes), so a
thread started again under the same id begins an empty journal that can neither find nor
overwrite the old one, and the kept journal stays readable by its incarnation. A thread
deleted some other way (LangGraph Server's API, the checkpointer alone) is noticed when its
id starts a journal again over a journal that begins with another message, and that old
journal is moved aside then.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, fields
from datetime import UTC, date, datetime
from typing import Any

from langchain_core.messages import (
    AIMessage,
    BaseMessage,
    ToolMessage,
    message_to_dict,
    messages_from_dict,
)
from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.store.base import BaseStore, GetOp, Item, Op, PutOp, SearchOp

from memory_plugin.context_management.owners import release_plan
from memory_plugin.context_management.prompts import message_text
from memory_plugin.errors import MemoryWriteError
from memory_plugin.plans import Plan, all_items_plan, arun, run
from memory_plugin.scope.namespaces import encode_id, namespace
from memory_plugin.text import bm25_scores, tokens

JOURNAL = "journal"
TOOL_CALLS = "tool_calls"
KEPT = "kept_thread"
KEPT_COUNT = "incarnations"
PAGE = 1_000
MAX_HITS = 50
_ROLE_ALIASES = {"user": "human", "assistant": "ai"}


@dataclass(frozen=True)
class JournalEntry:
    """One journaled message."""

    seq: int
    message_id: str | None
    role: str
    text: str
    tool_calls: list[dict[str, Any]]
    tool_call_id: str | None
    name: str | None
    created_at: str
    message: dict[str, Any]

    def to_message(self) -> BaseMessage:
        """The message as it was journaled."""
        (message,) = messages_from_dict([self.message])
        return message

    @property
    def day(self) -> date:
        """The UTC day the entry was journaled."""
        return datetime.fromisoformat(self.created_at).astimezone(UTC).date()


_FIELDS = tuple(f.name for f in fields(JournalEntry))


def thread_namespace(thread_id: str) -> tuple[str, ...]:
    """The namespace holding everything durable about one thread."""
    return namespace("thread", encode_id(thread_id, what="thread_id"))


def kept_namespace(thread_id: str, incarnation: int) -> tuple[str, ...]:
    """The namespace holding a deleted thread's kept journal and summaries."""
    return (*_kept_root(thread_id), str(incarnation))


def _kept_root(thread_id: str) -> tuple[str, ...]:
    return namespace(KEPT, encode_id(thread_id, what="thread_id"))


def _base(thread_id: str, incarnation: int | None) -> tuple[str, ...]:
    """The live thread's namespace, or a kept incarnation's."""
    if incarnation is None:
        return thread_namespace(thread_id)
    if isinstance(incarnation, bool) or not isinstance(incarnation, int) or incarnation < 0:
        raise MemoryWriteError(f"incarnation must be a whole number >= 0, got {incarnation!r}")
    return kept_namespace(thread_id, incarnation)


def entry_key(seq: int) -> str:
    """The store key of a journal entry: sortable by seq."""
    return f"{seq:012d}"


def _entry(message: BaseMessage, seq: int, created_at: str) -> JournalEntry:
    calls = message.tool_calls if isinstance(message, AIMessage) else []
    return JournalEntry(
        seq=seq,
        message_id=message.id,
        role=message.type,
        text=message_text(message),
        tool_calls=[{"name": c["name"], "args": c["args"], "id": c.get("id")} for c in calls],
        tool_call_id=message.tool_call_id if isinstance(message, ToolMessage) else None,
        name=message.name,
        created_at=created_at,
        message=message_to_dict(message),
    )


def _from_item(item: Item) -> JournalEntry:
    return JournalEntry(**{name: item.value[name] for name in _FIELDS})


def _shallow(entry: JournalEntry) -> dict[str, Any]:
    return {name: getattr(entry, name) for name in _FIELDS}


CALL, RESULT = "call", "result"


def _link_key(tool_call_id: str, side: str) -> str:
    """Where the tool-call index keeps the seq of a call, or of its result."""
    return f"{side}:{tool_call_id}"


def append_plan(
    thread_id: str, messages: Sequence[BaseMessage], start_seq: int, now: datetime
) -> Plan[int]:
    """Journal messages as entries start_seq, start_seq + 1, ... in one write; the next seq.
    A journal started over another thread's (one deleted without delete_thread) first moves
    that one aside."""
    if start_seq < 0:
        raise MemoryWriteError(f"start_seq must be at least 0, got {start_seq}")
    base = thread_namespace(thread_id)
    if start_seq == 0 and messages:
        (first,) = yield [GetOp((*base, JOURNAL), entry_key(0))]
        if first is not None and first.value.get("message_id") != messages[0].id:
            yield from _move_aside_plan(thread_id)
    created_at = now.astimezone(UTC).isoformat()
    entries = [_entry(message, start_seq + n, created_at) for n, message in enumerate(messages)]
    links = (*base, TOOL_CALLS)
    ops: list[Op] = []
    for entry in entries:
        ops.append(PutOp((*base, JOURNAL), entry_key(entry.seq), _shallow(entry), index=False))
        for call in entry.tool_calls:
            if call["id"]:
                ops.append(PutOp(links, _link_key(call["id"], CALL), {"seq": entry.seq}, False))
        if entry.tool_call_id:
            key = _link_key(entry.tool_call_id, RESULT)
            ops.append(PutOp(links, key, {"seq": entry.seq}, index=False))
    if ops:
        yield ops
    return start_seq + len(entries)


def take_back_plan(thread_id: str, seq: int, next_seq: int) -> Plan[int]:
    """Delete entries seq .. next_seq - 1 (a turn taken back) with their tool-call links;
    how many were deleted."""
    entries = yield from tail_plan(thread_id, next_seq, next_seq - seq)
    base = thread_namespace(thread_id)
    ops: list[Op] = []
    for entry in entries:
        ops.append(PutOp((*base, JOURNAL), entry_key(entry.seq), None))
        for call in entry.tool_calls:
            if call["id"]:
                ops.append(PutOp((*base, TOOL_CALLS), _link_key(call["id"], CALL), None))
        if entry.tool_call_id:
            ops.append(PutOp((*base, TOOL_CALLS), _link_key(entry.tool_call_id, RESULT), None))
    if ops:
        yield ops
    return len(entries)


def tail_plan(thread_id: str, next_seq: int, n: int) -> Plan[list[JournalEntry]]:
    """The last n entries before next_seq, oldest first."""
    seqs = range(max(0, next_seq - n), next_seq)
    if not seqs:
        return []
    journal = (*thread_namespace(thread_id), JOURNAL)
    items = yield [GetOp(journal, entry_key(seq)) for seq in seqs]
    return [_from_item(item) for item in items if item is not None]


def tool_call_plan(
    thread_id: str, tool_call_id: str, *, incarnation: int | None = None
) -> Plan[tuple[JournalEntry | None, JournalEntry | None]]:
    """The entry that made a tool call and the entry holding its result (in the live thread,
    or in a kept incarnation)."""
    base = _base(thread_id, incarnation)
    sides = (CALL, RESULT)
    links = yield [GetOp((*base, TOOL_CALLS), _link_key(tool_call_id, side)) for side in sides]
    seqs = {side: link.value["seq"] for side, link in zip(sides, links, strict=True) if link}
    if not seqs:
        return None, None
    items = yield [GetOp((*base, JOURNAL), entry_key(seq)) for seq in seqs.values()]
    pairs = zip(seqs, items, strict=True)
    found = {side: _from_item(item) for side, item in pairs if item is not None}
    return found.get(CALL), found.get(RESULT)


def entries_plan(thread_id: str, *, incarnation: int | None = None) -> Plan[list[JournalEntry]]:
    """Every entry of the live thread's journal, or of a kept incarnation's, by seq."""
    journal = (*_base(thread_id, incarnation), JOURNAL)
    items = yield from all_items_plan(journal, page=PAGE)
    return sorted((_from_item(item) for item in items), key=lambda e: e.seq)


def _rank(query: str, entries: list[JournalEntry]) -> list[JournalEntry]:
    """Entries sharing a word with the query, best BM25 match first, newer first on ties."""
    by_seq = {entry.seq: entry for entry in entries}
    scores = bm25_scores(query, [(entry.seq, entry.text) for entry in entries])
    return [by_seq[seq] for seq in sorted(scores, key=lambda seq: (-scores[seq], -seq))]


def search_plan(
    thread_id: str,
    query: str,
    *,
    role: str | None,
    after: date | None,
    before: date | None,
    limit: int,
    incarnation: int | None = None,
) -> Plan[list[JournalEntry]]:
    """The thread's entries best matching a query; with only filters, the newest first (in
    the live thread, or in a kept incarnation)."""
    role = _ROLE_ALIASES.get(role, role) if role else None
    keyword = bool(tokens(query))
    if not keyword and role is None and after is None and before is None:
        raise MemoryWriteError("journal search needs a query, or a role, after or before filter")
    if after is not None and before is not None and after > before:
        raise MemoryWriteError(f"after ({after}) is later than before ({before})")
    entries = yield from entries_plan(thread_id, incarnation=incarnation)
    matching = [
        entry
        for entry in entries
        if (role is None or entry.role == role)
        and (after is None or entry.day >= after)
        and (before is None or entry.day <= before)
    ]
    limit = max(1, min(limit, MAX_HITS))
    if keyword:
        return _rank(query, matching)[:limit]
    return matching[::-1][:limit]


def kept_incarnations_plan(thread_id: str) -> Plan[list[int]]:
    """The kept incarnations of a thread id, oldest first."""
    (item,) = yield [GetOp(_kept_root(thread_id), KEPT_COUNT)]
    return list(range(int(item.value["count"]) if item else 0))


def _move_aside_plan(thread_id: str) -> Plan[int | None]:
    """Move everything the live thread keeps in the store to its next kept incarnation, each
    page copied before its originals go (a retry after a crash finishes the same move)."""
    base = thread_namespace(thread_id)
    incarnation = len((yield from kept_incarnations_plan(thread_id)))
    target = kept_namespace(thread_id, incarnation)
    moved = False
    while True:
        (page,) = yield [SearchOp(base, limit=PAGE)]
        if not page:
            break
        moved = True
        yield [
            PutOp((*target, *item.namespace[len(base) :]), item.key, item.value, index=False)
            for item in page
        ]
        yield [PutOp(item.namespace, item.key, None) for item in page]
    if not moved:
        return None
    count = {"count": incarnation + 1}
    yield [PutOp(_kept_root(thread_id), KEPT_COUNT, count, index=False)]
    return incarnation


def _purge_plan(thread_id: str) -> Plan[None]:
    for base in (thread_namespace(thread_id), _kept_root(thread_id)):
        while True:
            (page,) = yield [SearchOp(base, limit=PAGE)]
            if not page:
                break
            yield [PutOp(item.namespace, item.key, None) for item in page]
    yield from release_plan(thread_id)


def delete_thread(
    checkpointer: BaseCheckpointSaver[Any],
    store: BaseStore,
    thread_id: str,
    *,
    keep_journal: bool = True,
) -> int | None:
    """Delete a thread's checkpoints and its recorded owner; its journal and summaries are
    kept aside, the kept incarnation returned (None when there was nothing to keep). With
    keep_journal=False they are deleted too, with every kept incarnation of the thread id."""
    if not keep_journal:
        checkpointer.delete_thread(thread_id)
        run(store, _purge_plan(thread_id))
        return None
    incarnation = run(store, _move_aside_plan(thread_id))
    checkpointer.delete_thread(thread_id)
    run(store, release_plan(thread_id))
    return incarnation


async def adelete_thread(
    checkpointer: BaseCheckpointSaver[Any],
    store: BaseStore,
    thread_id: str,
    *,
    keep_journal: bool = True,
) -> int | None:
    """Async delete_thread."""
    if not keep_journal:
        await checkpointer.adelete_thread(thread_id)
        await arun(store, _purge_plan(thread_id))
        return None
    incarnation = await arun(store, _move_aside_plan(thread_id))
    await checkpointer.adelete_thread(thread_id)
    await arun(store, release_plan(thread_id))
    return incarnation
