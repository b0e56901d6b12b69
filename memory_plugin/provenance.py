"""Where a stored memory came from: the thread, turn, tool call or job that wrote it, and when.

Write paths call `current()`, which merges the fields set by the `origin()` blocks around the
write with what LangGraph's runnable config tells when the write happens inside a run (its
thread and run ids); the result is stored next to the memory as `provenance`. Memories
written before provenance existed read back as None.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from contextlib import AbstractContextManager, contextmanager
from contextvars import ContextVar
from dataclasses import asdict, dataclass, fields
from datetime import UTC, datetime
from typing import Annotated, Any, Literal, cast, get_args

from langchain_core.messages import BaseMessage, HumanMessage
from langgraph.config import get_config
from pydantic import Field

Source = Literal["tool", "node", "job", "api", "code", "forget"]
"""What wrote a memory: a tool, a graph node, a background job, the console's REST API, your
code, or a forget the user asked for (memory_plugin.privacy.forget)."""
SOURCES: tuple[str, ...] = get_args(Source)
PROVENANCE = "provenance"
_Known = Field(exclude_if=lambda value: value is None)
"""Left out of the JSON the console answers with when not known."""


@dataclass(frozen=True)
class Provenance:
    """What wrote a memory, in which thread, turn, tool call or job, and when."""

    source: Source
    at: str
    thread_id: Annotated[str | None, _Known] = None
    turn: Annotated[int | None, _Known] = None
    run_id: Annotated[str | None, _Known] = None
    tool: Annotated[str | None, _Known] = None
    tool_call_id: Annotated[str | None, _Known] = None
    job: Annotated[str | None, _Known] = None
    job_run: Annotated[str | None, _Known] = None
    actor: Annotated[str | None, _Known] = None

    def to_json(self) -> dict[str, Any]:
        """The stored form: the set fields only."""
        return {name: value for name, value in asdict(self).items() if value is not None}

    @classmethod
    def from_json(cls, value: Any) -> Provenance | None:
        """The provenance stored in `value`; None when missing or not a provenance."""
        if not isinstance(value, Mapping):
            return None
        source, at = value.get("source"), value.get("at")
        if source not in SOURCES or not isinstance(at, str):
            return None
        found: dict[str, Any] = {}
        for name in _OPTIONAL:
            field_value = value.get(name)
            if name == "turn":
                ok = isinstance(field_value, int) and not isinstance(field_value, bool)
                found[name] = field_value if ok else None
            else:
                found[name] = field_value if isinstance(field_value, str) else None
        return cls(source=cast(Source, source), at=at, **found)


FIELDS = frozenset(f.name for f in fields(Provenance))
_OPTIONAL = tuple(f.name for f in fields(Provenance) if f.name not in ("source", "at"))
_origin: ContextVar[Mapping[str, Any] | None] = ContextVar("memory_plugin_origin", default=None)


def _checked(values: Mapping[str, Any]) -> dict[str, Any]:
    unknown = sorted(set(values) - FIELDS)
    if unknown:
        raise TypeError(f"unknown provenance fields: {', '.join(unknown)}")
    source = values.get("source")
    if source is not None and source not in SOURCES:
        raise ValueError(f"provenance source must be one of {', '.join(SOURCES)}, got {source!r}")
    return {name: value for name, value in values.items() if value is not None}


@contextmanager
def origin(**values: Any) -> Iterator[None]:
    """Set provenance fields for the writes made inside the block (nested blocks add to and
    override the outer ones)."""
    token = _origin.set({**(_origin.get() or {}), **_checked(values)})
    try:
        yield
    finally:
        _origin.reset(token)


def _run_fields() -> dict[str, Any]:
    """The thread and run ids of the LangGraph run this code is inside, if any."""
    try:
        config = get_config()
    except RuntimeError:
        return {}
    configurable = config.get("configurable") or {}
    metadata = config.get("metadata") or {}
    found = {
        "thread_id": configurable.get("thread_id"),
        "run_id": config.get("run_id") or configurable.get("run_id") or metadata.get("run_id"),
    }
    return {name: str(value) for name, value in found.items() if value}


def current(source_default: str = "code", **defaults: Any) -> Provenance:
    """The provenance of a write made now: the `origin()` fields, else the run's thread and
    run ids, else `defaults`; the source is `source_default` when no origin names one."""
    merged = {**_checked(defaults), **_run_fields(), **(_origin.get() or {})}
    merged.setdefault("source", source_default)
    if merged["source"] not in SOURCES:
        raise ValueError(f"provenance source must be one of {', '.join(SOURCES)}")
    merged.setdefault("at", datetime.now(UTC).isoformat())
    return Provenance(**merged)


def stamped(value: Mapping[str, Any], provenance: Provenance | None) -> dict[str, Any]:
    """`value` with the provenance to store (none when None)."""
    if provenance is None:
        return dict(value)
    return {**value, PROVENANCE: provenance.to_json()}


def provenance_of(value: Mapping[str, Any]) -> Provenance | None:
    """The provenance stored in a memory's value, None for values written before it existed."""
    return Provenance.from_json(value.get(PROVENANCE))


def turn_of(messages: Sequence[BaseMessage] | None) -> int | None:
    """The 1-based user turn of a thread holding `messages` (its count of human messages)."""
    if not messages:
        return None
    count = sum(1 for message in messages if isinstance(message, HumanMessage))
    return count or None


def _messages(state: Any) -> Any:
    if isinstance(state, Mapping):
        return state.get("messages")
    return getattr(state, "messages", None)


def tool_origin(tool: str, runtime: Any, actor: str | None = None) -> AbstractContextManager[None]:
    """The origin of a tool's writes: its name, call id and the turn of the state it sees."""
    turn = turn_of(_messages(getattr(runtime, "state", None)))
    call_id = getattr(runtime, "tool_call_id", None)
    return origin(source="tool", tool=tool, tool_call_id=call_id, turn=turn, actor=actor)
