"""What this process last read or wrote of each user's profile and each thread's cursor, per
store, so that a consolidation job whose turn has nothing new costs no store round trip.

A job trusts the profile it knows only while the turn that just ended showed that same profile
(the turn's "What I know about you" block, as its opening read it): a write by another process
or instance shows in that block and sends the job back to the store. A write the job makes is
still a compare-and-swap on the profile's version, so a stale profile can never overwrite a
newer one: the write fails, and the job reads and applies its changes again.

The thread's cursor known here may be ahead of the stored one: a NOOP or a discarded reply moves
it in this process only, and the next profile write stores it. A process that exits before that
leaves the stored cursor behind, so the thread's next job consolidates those exchanges again
(at most catchup.MAX_CATCH_UP of them): an exchange may be asked about twice, never skipped.
"""

from __future__ import annotations

import threading
import weakref
from collections import OrderedDict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from langgraph.store.base import BaseStore

from memory_plugin.profile.budget import truncate
from memory_plugin.profile.cursor import Cursor
from memory_plugin.profile.document import Profile, render
from memory_plugin.profile.stored import Seen
from memory_plugin.tokens import TokenCounter

BLOCK = "user_profile"
INSTRUCTION = (
    "## What I know about you\n"
    "Durable context about the user from earlier conversations. Treat it as background: adapt "
    "your tone, examples and depth to it, and let what the user says now take precedence."
)
KEEP = 4096
"""Profiles and cursors kept per store, the least recently used dropped first."""


def block_text(fitted: Profile) -> str:
    """The text of the profile's block as a turn shows it (the profile fitted to its budget)."""
    return f"{INSTRUCTION}\n\n<user_memory>\n{render(fitted).strip()}\n</user_memory>"


def shown_text(blocks: Sequence[Mapping[str, Any]] | None) -> str | None:
    """The profile block's text among a turn's memory blocks: "" when the turn showed none,
    None when the turn's blocks are unknown."""
    if blocks is None:
        return None
    return next((str(b.get("text")) for b in blocks if b.get("name") == BLOCK), "")


@dataclass(frozen=True)
class Entry:
    """A profile and its version, as last read or written."""

    profile: Profile | None
    version: int | None


class Known:
    """Per store, each user's profile and each thread's cursor as this process last saw them."""

    def __init__(self, keep: int = KEEP) -> None:
        self.keep = keep
        self._stores: weakref.WeakKeyDictionary[BaseStore, OrderedDict[Any, Any]] = (
            weakref.WeakKeyDictionary()
        )
        self._lock = threading.Lock()

    def _get(self, store: BaseStore, key: Any) -> Any:
        with self._lock:
            found = self._stores.get(store)
            if found is None or key not in found:
                return None
            found.move_to_end(key)
            return found[key]

    def _set(self, store: BaseStore, key: Any, value: Any) -> None:
        with self._lock:
            found = self._stores.setdefault(store, OrderedDict())
            found[key] = value
            found.move_to_end(key)
            while len(found) > self.keep:
                found.popitem(last=False)

    def _drop(self, store: BaseStore, key: Any) -> None:
        with self._lock:
            found = self._stores.get(store)
            if found is not None:
                found.pop(key, None)

    def seen(
        self,
        store: BaseStore,
        namespace: tuple[str, ...],
        thread_id: str,
        shown: str | None,
        budget: int,
        counter: TokenCounter,
    ) -> Seen | None:
        """The profile, its version and the thread's cursor when all are known and the turn
        showed that profile (`shown`: its block's text); None when the job must read them."""
        entry = self._get(store, namespace)
        cursor = self._get(store, (namespace, thread_id))
        if shown is None or entry is None or cursor is None:
            return None
        profile = entry.profile
        expected = "" if profile is None else block_text(truncate(profile, budget, counter))
        if expected != shown:
            return None
        return entry.profile, entry.version, cursor

    def remember(
        self, store: BaseStore, namespace: tuple[str, ...], thread_id: str, seen: Seen
    ) -> None:
        """The profile, its version and the thread's cursor as just read or written (no cursor
        stored yet: one at seq 0 with no version)."""
        profile, version, cursor = seen
        self._set(store, namespace, Entry(profile, version))
        self._set(store, (namespace, thread_id), cursor or Cursor(0))

    def passed(
        self, store: BaseStore, namespace: tuple[str, ...], thread_id: str, seq: int
    ) -> None:
        """The thread's exchanges up to `seq` are consolidated, the stored cursor left as is."""
        cursor = self._get(store, (namespace, thread_id))
        if cursor is not None and cursor.seq < seq:
            self._set(store, (namespace, thread_id), replace(cursor, seq=seq, failures=0))

    def forget(self, store: BaseStore, namespace: tuple[str, ...], thread_id: str) -> None:
        """The thread's cursor is no longer known: the next job reads it."""
        self._drop(store, (namespace, thread_id))


@dataclass(frozen=True)
class Memo:
    """One job's view of Known: its store, and the profile block its turn showed."""

    known: Known
    store: BaseStore
    shown: str | None
    counter: TokenCounter

    def seen(self, namespace: tuple[str, ...], thread_id: str, budget: int) -> Seen | None:
        """See Known.seen."""
        return self.known.seen(self.store, namespace, thread_id, self.shown, budget, self.counter)

    def remember(self, namespace: tuple[str, ...], thread_id: str, seen: Seen) -> None:
        """See Known.remember."""
        self.known.remember(self.store, namespace, thread_id, seen)

    def passed(self, namespace: tuple[str, ...], thread_id: str, seq: int) -> None:
        """See Known.passed."""
        self.known.passed(self.store, namespace, thread_id, seq)

    def forget(self, namespace: tuple[str, ...], thread_id: str) -> None:
        """See Known.forget."""
        self.known.forget(self.store, namespace, thread_id)
