"""The user's profile change log: one record per saved profile write, in a ring of
`keep` slots beside the profile, so the newest `keep` writes are kept."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from langgraph.store.base import PutOp

from memory_plugin.backends.conditional import PutIfVersion
from memory_plugin.errors import InvalidArgumentError, ScopeError
from memory_plugin.plans import Plan, all_items_plan
from memory_plugin.profile.changes import ProfileChange, change_record, diff, to_change
from memory_plugin.profile.document import Profile, render
from memory_plugin.profile.stored import KEY
from memory_plugin.provenance import Provenance
from memory_plugin.scope import profile_scope
from memory_plugin.scope.context import MemoryContext

CHANGES = "changes"
KEEP_CHANGES = 100
LOG_PAGE = 500


class ChangeLog:
    """The change log of every user's profile, keeping the newest `keep` writes."""

    def __init__(self, keep: int = KEEP_CHANGES) -> None:
        self.keep = keep

    def slot(self, seq: int) -> str:
        """The change-log key of the write numbered `seq`: a ring of `keep` slots."""
        return f"{seq % self.keep:06d}"

    def save(
        self,
        namespace: tuple[str, ...],
        before: Profile | None,
        new: Profile,
        version: int | None,
        provenance: Provenance | None,
        at: datetime,
        also: tuple[PutOp, ...] = (),
    ) -> PutIfVersion:
        """The compare-and-swap write of `new` over the profile read at `version`, with its
        change-log record (numbered by its `turn_count`) and `also` in the same transaction."""
        record = change_record(at.isoformat(), new.turn_count, diff(before, new), provenance)
        slot = PutOp((*namespace, CHANGES), self.slot(new.turn_count), record, index=False)
        return PutIfVersion(namespace, KEY, {"text": render(new)}, version, (slot, *also))

    def items_plan(self, ctx: MemoryContext) -> Plan[list[Any]]:
        """Every item of the user's change log (at most `keep`, a few more if it was kept
        longer before)."""
        namespace = (*profile_scope(ctx).namespace, CHANGES)
        return (yield from all_items_plan(namespace, page=LOG_PAGE))

    def changes_plan(self, ctx: MemoryContext, limit: Any) -> Plan[list[ProfileChange]]:
        """The caller's latest profile changes, newest first (at most `limit`)."""
        if isinstance(limit, bool) or not isinstance(limit, int) or limit < 1:
            raise InvalidArgumentError(f"limit must be a whole number from 1, got {limit!r}")
        if not ctx.user_id:
            raise ScopeError("the profile's change log needs the user's user_id in the context")
        items = yield from self.items_plan(ctx)
        items.sort(key=lambda item: (str(item.value.get("at")), item.value.get("seq", 0)))
        found = [change for item in reversed(items) if (change := to_change(item.value))]
        return found[:limit]
