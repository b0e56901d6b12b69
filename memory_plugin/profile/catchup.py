"""The catch-up step: a thread's exchanges from its consolidation cursor up to the turn that
just ended, each consolidated into the profile exactly once (memory_plugin.profile.cursor).

The cursor moves with each saved profile write; after a NOOP or a discarded reply it moves in
this process only (memory_plugin.profile.known), and the next write stores it, so a job with
nothing to change makes no store round trip when its turn showed the profile this process
knows. A failed exchange leaves the cursor at it, its failures counted, so the thread's next
job tries again; after `max_failures` it is given up and the cursor moves past it. A failure
of the store's is not counted: the next job tries again. While the profile is off the cursor
moves on alone, so those exchanges never reach it.
"""

from __future__ import annotations

import logging
from typing import Any, Protocol

from langchain_core.messages import BaseMessage

from memory_plugin.context_management.journal import tail_plan
from memory_plugin.context_management.journaling import SEQ
from memory_plugin.plans import Plan
from memory_plugin.profile import cursor as cursors
from memory_plugin.profile.enablement import enablement
from memory_plugin.profile.known import Memo
from memory_plugin.profile.rewrite import Consolidation, ThreadCursor, quiet_emit, report
from memory_plugin.profile.stored import MAX_ATTEMPTS, Seen, with_cursor_plan
from memory_plugin.provenance import Provenance
from memory_plugin.scope import profile_scope
from memory_plugin.scope.context import MemoryContext
from memory_plugin.settings import MemorySettings

logger = logging.getLogger(__name__)
MAX_FAILURES = 3
"""Attempts at one exchange before it is given up (the cursor moves past it, with a warning):
a failure a retry cures (a model or store hiccup, a timeout) rarely fails three turns running,
while one that does (an exchange the model always chokes on) would block every later exchange
of the thread for good."""
MAX_CATCH_UP = 10
"""Exchanges one job consolidates at most, the newest ones: a thread far behind (a long model
outage) catches up on its recent exchanges instead of making one job ask the model for each."""
MAX_READ = 500
"""Journal entries one job reads at most, the newest ones."""
_UNREAD = object()
"""A cursor not read yet: move_plan reads it."""


class Consolidate(Protocol):
    """ProfileMemory.consolidate_plan: one exchange into the profile."""

    def __call__(
        self,
        ctx: MemoryContext,
        user: str,
        assistant: str,
        settings: MemorySettings | None = None,
        provenance: Provenance | None = None,
        cursor: ThreadCursor | None = None,
        seen: Seen | None = None,
    ) -> Plan[Consolidation]: ...


def store_failure(exc: BaseException) -> bool:
    """Whether a failure is the store's (unreachable, restarting, locked) rather than the
    exchange's: it does not count towards giving the exchange up. A timeout is the model's."""
    if isinstance(exc, TimeoutError):
        return False
    names = {cls.__name__ for cls in type(exc).__mro__}
    return isinstance(exc, OSError) or bool(names & {"OperationalError", "InterfaceError"})


def move_plan(
    namespace: tuple[str, ...],
    thread_id: str,
    seq: int,
    known: cursors.Cursor | object | None = _UNREAD,
) -> Plan[None]:
    """Move the thread's cursor alone to `seq`, unless it is there already (`known`: the
    cursor as just read, tried first without reading it again)."""
    for _ in range(MAX_ATTEMPTS):
        if isinstance(known, cursors.Cursor) or known is None:
            read, known = known, _UNREAD
        else:
            read = yield from cursors.read_plan(namespace, thread_id)
        if read is not None and read.seq >= seq:
            return
        if (yield from cursors.move_plan(namespace, thread_id, read, seq)):
            return


class CatchUp:
    """Consolidates a thread's exchanges from its cursor on, with `consolidate`."""

    def __init__(self, consolidate: Consolidate, max_failures: int = MAX_FAILURES) -> None:
        self.consolidate = consolidate
        self.max_failures = max_failures

    def plan(
        self,
        ctx: MemoryContext,
        messages: list[BaseMessage],
        info: dict[str, Any],
        thread_id: str,
        settings: MemorySettings,
        provenance: Provenance,
        memo: Memo,
    ) -> Plan[None]:
        """Consolidate the thread's exchanges from its cursor to the state's journal_seq, the
        profile and cursor taken from `memo` when it knows them."""
        namespace = profile_scope(ctx).namespace
        end = int(info[SEQ])
        seen: Seen | None = memo.seen(namespace, thread_id, settings.profile_max_tokens)
        if seen is None:
            seen = yield from with_cursor_plan(ctx, thread_id)
            memo.remember(namespace, thread_id, seen)
        read = seen[2]
        done = read.seq if read is not None else 0
        if not enablement(settings)[0]:
            memo.forget(namespace, thread_id)
            if read is None or done < end:  # these exchanges stay out once it is back on
                yield from move_plan(namespace, thread_id, end, read)
            quiet_emit("disabled", operations=[])
            return
        if done >= end:
            return  # consolidated already, or the turn is not journaled yet
        turn = cursors.turn_exchange(messages, info)
        if turn is not None and turn.start == done:
            todo = [turn]  # the normal case: the cursor is where this turn began
        else:
            entries = yield from tail_plan(thread_id, end, min(end - done, MAX_READ))
            todo = cursors.exchanges(entries, end)[-MAX_CATCH_UP:]
        for exchange in todo:
            try:
                result = yield from self.consolidate(
                    ctx,
                    exchange.user,
                    exchange.assistant,
                    settings,
                    provenance,
                    (thread_id, exchange.end),
                    seen,
                )
            except Exception as exc:
                logger.warning(
                    "profile consolidation failed; the profile is unchanged", exc_info=True
                )
                quiet_emit("failed", reason=f"{type(exc).__name__}: {exc}")
                if store_failure(exc):
                    return  # the store's, not the exchange's: the next job tries again
                memo.forget(namespace, thread_id)
                if not (yield from self._failed_plan(namespace, thread_id, exchange)):
                    return
                continue
            report(result)
            seen = None
            if result.saved is not None:
                memo.remember(namespace, thread_id, result.saved)
            elif result.status in ("noop", "discarded"):
                memo.passed(namespace, thread_id, exchange.end)
            else:
                memo.forget(namespace, thread_id)
            if result.status == "conflict":
                if not (yield from self._failed_plan(namespace, thread_id, exchange)):
                    return
            elif result.status == "disabled":
                return
        if not todo or todo[-1].end < end:  # what is left has no exchange to consolidate
            memo.passed(namespace, thread_id, end)

    def _failed_plan(
        self, namespace: tuple[str, ...], thread_id: str, exchange: cursors.Exchange
    ) -> Plan[bool]:
        """Count a failed attempt at an exchange on the cursor, left at the exchange so the
        next job retries it; after `max_failures` it is given up: the cursor moves past it.
        Whether it was given up (the job goes on with the next exchange); when the count
        cannot be written either (the store is down), the attempt is not counted."""
        try:
            return (yield from self._count_failure_plan(namespace, thread_id, exchange))
        except Exception:
            logger.warning("the failed profile consolidation could not be counted", exc_info=True)
            return False

    def _count_failure_plan(
        self, namespace: tuple[str, ...], thread_id: str, exchange: cursors.Exchange
    ) -> Plan[bool]:
        read = yield from cursors.read_plan(namespace, thread_id)
        if read is not None and read.seq > exchange.start:
            return False  # another worker got further
        failures = (read.failures if read is not None and read.seq == exchange.start else 0) + 1
        if failures < self.max_failures:
            yield from cursors.move_plan(namespace, thread_id, read, exchange.start, failures)
            return False
        logger.warning(
            "profile consolidation of thread %s gave up on the exchange at journal seq %d "
            "after %d failures",
            thread_id,
            exchange.start,
            failures,
        )
        yield from cursors.move_plan(namespace, thread_id, read, exchange.end)
        return True
