"""A run whose context names nobody to remember for: long-term memory is off for it, and the
run says so once (a memory event, and one log line per process) instead of failing.

The same holds locally and under LangGraph Server: without authentication the server names no
user, so a run without `user_id` in its context is the same run in both places.
"""

from __future__ import annotations

import logging

from memory_plugin.events import emit
from memory_plugin.scope.context import MemoryContext

logger = logging.getLogger(__name__)
MEMORY_OFF = "memory_off"
_logged: set[str] = set()


def off_reason(ctx: MemoryContext) -> str | None:
    """Why this run has no long-term memory, None when it has."""
    if ctx.thread_visibility == "private" and not ctx.user_id:
        return (
            "memory is off for this run: its context has no user_id (pass "
            "context={'user_id': ...}); the conversation is still kept in its thread"
        )
    if ctx.thread_visibility == "shared" and not ctx.workspace_id:
        return (
            "team memory is off for this run: this shared thread's context has no "
            "workspace_id; the conversation is still kept in its thread"
        )
    return None


def announce(ctx: MemoryContext, kind: str) -> str | None:
    """Say once for this run (as a memory event of `kind`, the kind saying it) that memory is
    off and why, and log it once per process; the reason, or None when memory is on."""
    reason = off_reason(ctx)
    if reason is None:
        return None
    emit(kind, "disabled", None, reason=reason)
    if reason not in _logged:
        _logged.add(reason)
        logger.warning("memory_plugin: %s", reason)
    return reason
