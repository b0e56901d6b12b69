"""The journal step: every message of the thread written once to the journal, in order.

Its bookkeeping is the cursor (`journal_seq`, the next entry's number, and `journal_last_id`,
the last journaled message). A failed write (the store down, read-only or full) never stops
the turn: the cursor stays where it was, so the next turn writes what was missed, and the
turn is marked unjournaled so no later step takes messages out of the thread state.

A step about to take messages out of the thread journals first only when one of them is not
journaled yet (`journal_before_removal`); otherwise what is new stays for the turn's last
journal write, and the cursor is moved onto what the thread keeps (`kept_cursor`).
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from datetime import datetime
from typing import Any

from langchain_core.messages import BaseMessage

from memory_plugin.context_management import journal
from memory_plugin.context_management.naming import NAME
from memory_plugin.context_management.turn import Turn
from memory_plugin.context_management.turn_end import journal_written
from memory_plugin.events import emit
from memory_plugin.plans import Plan

logger = logging.getLogger(__name__)
SEQ, LAST_ID = "journal_seq", "journal_last_id"
ACTIONS = ("journaled", "journal_failed")
"""The journal step's event actions (context management's kind): bookkeeping a chat hides."""


def next_seq(turn: Turn) -> int:
    """The number the next journal entry will get."""
    return int(turn.info.get(SEQ, 0))


def unjournaled(turn: Turn) -> list[BaseMessage]:
    """The messages after the last journaled one (none when that one is gone from the
    thread: it was rewritten outside memory_plugin)."""
    messages, last_id = turn.messages, turn.info.get(LAST_ID)
    if last_id is None:
        return list(messages)
    for i in range(len(messages) - 1, -1, -1):
        if messages[i].id == last_id:
            return list(messages[i + 1 :])
    logger.warning("thread %s was rewritten outside memory_plugin", turn.thread_id)
    return []


def journal_before_removal(
    turn: Turn,
    removed: Sequence[int],
    journal: Callable[[Turn], Plan[None]],
    turn_start: int | None,
) -> Plan[list[BaseMessage]]:
    """Journal with `journal` unless what is new is all of this turn (from `turn_start` on)
    and none of it is `removed`: that waits for the turn's last write (a journal that failed
    on an earlier turn is written now, and a failure stops the removal). The new messages
    left unjournaled."""
    new = unjournaled(turn)
    first_new = len(turn.messages) - len(new)
    waits = turn_start is not None and first_new >= turn_start
    if new and not (waits and (not removed or max(removed) < first_new)):
        yield from journal(turn)
        return []
    return new


def kept_cursor(kept: Sequence[BaseMessage], pending: Sequence[BaseMessage]) -> dict[str, Any]:
    """The cursor once the thread holds only `kept`, whose last messages are the `pending` ones
    not journaled yet: the message before them, none when they are all the thread keeps."""
    if not pending:
        return {}
    before = len(kept) - len(pending) - 1
    return {LAST_ID: kept[before].id if before >= 0 else None}


class JournalStep:
    """Journals what is new; at most one write attempt per node call."""

    def __init__(self, clock: Callable[[], datetime]) -> None:
        self.clock = clock

    def step(self, turn: Turn) -> Plan[None]:
        """Journal the messages added since the last journaled one, then say the turn's last
        journal write is done (memory_plugin.context_management.turn_end)."""
        try:
            yield from self._write(turn)
        finally:
            journal_written(turn.thread_id)

    def _write(self, turn: Turn) -> Plan[None]:
        if not turn.journaled:
            return
        new = unjournaled(turn)
        if not new:
            return
        try:
            seq = yield from journal.append_plan(turn.thread_id, new, next_seq(turn), self.clock())
        except Exception as exc:
            logger.warning(
                "journal write failed for thread %s; retried next turn",
                turn.thread_id,
                exc_info=True,
            )
            turn.journaled = False
            emit(NAME, "journal_failed", None, messages=len(new), reason=str(exc))
            return
        turn.record({SEQ: seq, LAST_ID: new[-1].id})
        emit(NAME, "journaled", None, messages=len(new))
