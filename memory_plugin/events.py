"""Memory events: what memory did this turn, on LangGraph's custom stream.

Every node and tool that reads or writes memory emits one `MemoryEvent` per action through
`get_stream_writer()` (as the model's plain dict); stream with `stream_mode="custom"` (or
Studio) to see them. Outside a run, or without a custom stream, emitting does nothing, and
so does emitting inside `quiet()` (a re-read that did nothing a user asked for).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any, Literal

from langgraph.config import get_stream_writer
from pydantic import BaseModel, Field

from memory_plugin.compat import no_op_stream_writer

EventKind = str
"""The `name` of the memory kind that did it (a class of memory_plugin.kinds.KINDS)."""
_quiet: ContextVar[bool] = ContextVar("memory_plugin_quiet_events", default=False)


class MemoryEvent(BaseModel):
    """One thing memory did: the `kind` of memory (its name: scoped_memory, profile, agent_memory,
    bounded_memory, context_management, or any kind added to KINDS), `action`, the scope, and
    details."""

    type: Literal["memory_event"] = "memory_event"
    kind: EventKind
    action: str
    scope: str | None = None
    details: dict[str, Any] = Field(default_factory=dict)


def emit(kind: EventKind, action: str, scope: str | None = None, **details: Any) -> None:
    """Write an event to the run's custom stream (a no-op outside a run)."""
    if _quiet.get():
        return
    try:
        writer = get_stream_writer()
    except RuntimeError:
        return
    if writer is no_op_stream_writer:
        return
    event = {"type": "memory_event", "kind": kind, "action": action, "scope": scope}
    writer({**event, "details": details})


@contextmanager
def quiet() -> Iterator[None]:
    """Emit nothing inside: for work that only checks memory again."""
    token = _quiet.set(True)
    try:
        yield
    finally:
        _quiet.reset(token)
