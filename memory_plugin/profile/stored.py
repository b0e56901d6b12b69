"""Where a user's profile is kept and how it is read: one item, `memory.md`, in the user's
profile namespace, read alone or together with one thread's consolidation cursor."""

from __future__ import annotations

import logging
from typing import Any

from langgraph.store.base import GetOp

from memory_plugin.plans import Plan
from memory_plugin.profile import cursor as cursors
from memory_plugin.profile.document import Profile, ProfileFormatError, parse
from memory_plugin.scope import profile_scope
from memory_plugin.scope.context import MemoryContext

logger = logging.getLogger(__name__)
KEY = "memory.md"
MAX_ATTEMPTS = 10
"""Compare-and-swap attempts at one profile write before it gives up."""
Seen = tuple[Profile | None, int | None, cursors.Cursor | None]
"""A profile, its version and a thread's cursor, as read together."""


def stored(item: Any, user_id: str) -> tuple[Profile | None, int | None]:
    """The profile a stored item holds and its version (no profile when malformed)."""
    if item is None:
        return None, None
    try:
        return parse(item.value["text"]), item.value["version"]
    except ProfileFormatError:
        logger.warning("stored profile of %s is malformed; rebuilding it", user_id)
        return None, item.value["version"]


def read_plan(ctx: MemoryContext) -> Plan[tuple[Profile | None, int | None]]:
    """The caller's profile and its version; (None, None) without one."""
    assert ctx.user_id is not None
    (item,) = yield [GetOp(profile_scope(ctx).namespace, KEY)]
    return stored(item, ctx.user_id)


def with_cursor_plan(ctx: MemoryContext, thread_id: str | None) -> Plan[Seen]:
    """The profile, its version and the thread's cursor, in one batch (the cursor after the
    profile: a profile write moves both at once, so the cursor is never older)."""
    assert ctx.user_id is not None
    if thread_id is None:
        profile, version = yield from read_plan(ctx)
        return profile, version, None
    namespace = profile_scope(ctx).namespace
    item, cursor = yield [
        GetOp(namespace, KEY),
        GetOp(cursors.cursors_namespace(namespace), thread_id),
    ]
    return (*stored(item, ctx.user_id), cursors.from_item(cursor))
