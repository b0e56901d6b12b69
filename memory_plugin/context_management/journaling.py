"""The journal step: every message of the thread written once to the journal, in order.

Its bookkeeping is the cursor (`journal_seq`, the next entry's number, and `journal_last_id`,
the last journaled message). A failed write (the store down, read-only or full) never stops
the turn: the cursor stays where it was, so the next turn writes what was missed, and the
turn is marked unjournaled so no later step takes messages out of the thread state.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from datetime import datetime

from langchain_core.messages import BaseMessage

from memory_plugin.context_management import journal
from memory_plugin.context_management.naming import NAME
from memory_plugin.context_management.turn import Turn
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


class JournalStep:
    """Journals what is new; at most one write attempt per node call."""

    def __init__(self, clock: Callable[[], datetime]) -> None:
        self.clock = clock

    def step(self, turn: Turn) -> Plan[None]:
        """Journal the messages added since the last journaled one."""
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
