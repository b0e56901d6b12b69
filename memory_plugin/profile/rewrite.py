"""The rewrite step: one exchange into the user's profile. The model answers NOOP or a
rewritten profile; the rewrite is checked (memory_plugin.profile.guard), fitted to its token
budget and saved with compare-and-swap, with its change-log record and, for a thread, its
consolidation cursor in the same transaction. On a concurrent change the rewrite's bullet
changes are applied again to the newer profile, without asking the model again."""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass, replace
from datetime import datetime
from typing import Any, Literal

from langchain_core.language_models import BaseChatModel
from langgraph.store.base import PutOp

from memory_plugin.events import emit
from memory_plugin.models.replies import RejectedReply, reply_text
from memory_plugin.plans import ModelCall, Plan
from memory_plugin.profile import cursor as cursors
from memory_plugin.profile.budget import body, fit_plan
from memory_plugin.profile.changes import Op, changes, diff, reapply
from memory_plugin.profile.document import SCHEMA_VERSION, Profile
from memory_plugin.profile.guard import check_consolidation, proposed
from memory_plugin.profile.log import ChangeLog
from memory_plugin.profile.naming import NAME
from memory_plugin.profile.prompts import NOOP, consolidation_messages
from memory_plugin.profile.stored import MAX_ATTEMPTS, Seen, with_cursor_plan
from memory_plugin.provenance import Provenance
from memory_plugin.scope import profile_scope
from memory_plugin.scope.context import MemoryContext
from memory_plugin.settings import MemorySettings
from memory_plugin.tokens import TokenCounter

logger = logging.getLogger(__name__)
Status = Literal["updated", "noop", "discarded", "disabled", "conflict", "skipped"]
ThreadCursor = tuple[str, int]
"""A thread id and the journal seq its cursor moves to with a consolidation."""


@dataclass(frozen=True)
class Consolidation:
    """What one post-turn consolidation did."""

    status: Status
    profile: Profile | None = None
    operations: tuple[tuple[Op, str | None], ...] = ()
    reason: str | None = None
    saved: Seen | None = None
    """After a saved write: the profile, its new version and the thread's cursor as stored."""


def quiet_emit(action: str, **details: Any) -> None:
    """A background job's event, on the run's stream while it is still read; a stream that
    is gone (the run over, its loop closed) is no failure."""
    try:
        emit(NAME, action, "profile", **details)
    except Exception:
        logger.debug("the profile event %s was not delivered", action, exc_info=True)


def report(result: Consolidation) -> None:
    """A background consolidation's event: its status and bullet operations."""
    operations = [{"op": op, "section": section} for op, section in result.operations]
    details = {"reason": result.reason} if result.reason else {}
    quiet_emit(result.status, operations=operations, **details)


def _done(cursor: ThreadCursor | None, read: cursors.Cursor | None) -> bool:
    """Whether the thread's cursor is already past the exchange (another worker did it)."""
    return cursor is not None and read is not None and read.seq >= cursor[1]


def _empty(user_id: str) -> Profile:
    return Profile(user_id, SCHEMA_VERSION).with_sections({})


class Rewrite:
    """Consolidates one exchange into a profile: ask, check, fit and save."""

    def __init__(
        self, counter: TokenCounter, clock: Callable[[], datetime], log: ChangeLog
    ) -> None:
        self.counter = counter
        self.clock = clock
        self.log = log

    def plan(
        self,
        ctx: MemoryContext,
        user: str,
        assistant: str,
        model: BaseChatModel,
        settings: MemorySettings,
        provenance: Provenance,
        cursor: ThreadCursor | None = None,
        seen: Seen | None = None,
    ) -> Plan[Consolidation]:
        """Rewrite the caller's profile after one exchange, as `model` proposes (see
        ProfileMemory.consolidate_plan)."""
        assert ctx.user_id is not None
        timeout = settings.profile_timeout_seconds
        namespace = profile_scope(ctx).namespace
        if seen is None:
            seen = yield from with_cursor_plan(ctx, cursor and cursor[0])
        stored, version, read = seen
        if _done(cursor, read):
            return Consolidation("skipped", stored, reason="already consolidated")
        base = stored or _empty(ctx.user_id)
        now = self.clock()
        stamp = now.strftime("%Y-%m-%d %H:%M UTC")
        messages = consolidation_messages(body(base), user, assistant, stamp)
        reply = yield ModelCall(model, messages, timeout=timeout)
        if reply_text(reply).strip("`\"'. ").upper() == NOOP:
            return Consolidation("noop", stored)
        try:
            rewrite = proposed(reply, base, now)
            if rewrite.same_content(base):
                return Consolidation("noop", stored)
            check_consolidation(base, rewrite, user)
        except RejectedReply as exc:
            logger.warning("profile update of %s discarded: %s", ctx.user_id, exc.reason)
            return Consolidation("discarded", stored, reason=exc.reason)
        delta = diff(base, rewrite)
        for _ in range(MAX_ATTEMPTS):
            budget, ratio = settings.profile_max_tokens, settings.profile_condense_ratio
            fitted = yield from fit_plan(rewrite, budget, ratio, model, self.counter, now, timeout)
            new = replace(
                fitted,
                user_id=base.user_id,
                schema_version=base.schema_version,
                last_updated=now.isoformat(timespec="seconds"),
                turn_count=base.turn_count + 1,
            )
            also: tuple[PutOp, ...] = ()
            moved: cursors.Cursor | None = None
            if cursor is not None:
                put = cursors.cursor_put(namespace, cursor[0], read, cursor[1])
                also, moved = (put,), cursors.from_item(put)
            saved = yield self.log.save(namespace, stored, new, version, provenance, now, also)
            if saved is not None:
                done = (new, saved["version"], moved)
                return Consolidation("updated", new, tuple(changes(stored, new)), saved=done)
            logger.info("profile of %s changed meanwhile; applying this turn again", ctx.user_id)
            stored, version, read = yield from with_cursor_plan(ctx, cursor and cursor[0])
            if _done(cursor, read):
                return Consolidation("skipped", stored, reason="already consolidated")
            base = stored or _empty(ctx.user_id)
            rewrite = reapply(delta, base)
            if rewrite.same_content(base):
                return Consolidation("noop", stored)
        return Consolidation("conflict", None, reason="the profile kept changing meanwhile")
