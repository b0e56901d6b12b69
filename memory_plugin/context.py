"""The run context that decides whose memory a node or tool may touch."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

from memory_plugin.errors import ScopeError
from memory_plugin.namespaces import encode_id

Visibility = Literal["private", "shared"]
_ID_FIELDS = ("user_id", "workspace_id", "org_id", "space_id", "agent_id", "thread_owner_id")
_AUTH_USER_KEY = "langgraph_auth_user_id"


@dataclass(frozen=True, slots=True)
class MemoryContext:
    """Who is running this graph, usable as a LangGraph `context_schema`.

    The model never supplies any of these: they come from the caller's `context=` or, under
    LangGraph Server, from `config["configurable"]` (including `langgraph_auth_user_id`).
    """

    user_id: str | None = None
    workspace_id: str | None = None
    org_id: str | None = None
    space_id: str | None = None
    agent_id: str | None = None
    thread_visibility: Visibility = "private"
    thread_owner_id: str | None = None

    def __post_init__(self) -> None:
        for name in _ID_FIELDS:
            value = getattr(self, name)
            if value is not None:
                encode_id(value, what=name)
        if self.thread_visibility not in ("private", "shared"):
            raise ScopeError(
                f"thread_visibility must be 'private' or 'shared', got {self.thread_visibility!r}"
            )

    @classmethod
    def from_run(
        cls,
        context: Any = None,
        configurable: Mapping[str, Any] | None = None,
    ) -> MemoryContext:
        """Merge a run's `context` with `config["configurable"]`; context values win."""
        merged: dict[str, Any] = {}
        conf = dict(configurable or {})
        for name in (*_ID_FIELDS, "thread_visibility"):
            if conf.get(name) is not None:
                merged[name] = conf[name]
        merged.update(_context_fields(context))
        auth_user = conf.get(_AUTH_USER_KEY)
        if auth_user:
            claimed = merged.get("user_id")
            if claimed is not None and claimed != auth_user:
                raise ScopeError(
                    f"context user_id {claimed!r} does not match the authenticated user"
                )
            merged["user_id"] = auth_user
        return cls(**merged)


def _context_fields(context: Any) -> dict[str, Any]:
    """Read the MemoryContext fields out of a dict, dataclass or object context."""
    if context is None:
        return {}
    names = (*_ID_FIELDS, "thread_visibility")
    if isinstance(context, Mapping):
        source: Mapping[str, Any] = context
    elif dataclasses.is_dataclass(context) and not isinstance(context, type):
        source = {f.name: getattr(context, f.name) for f in dataclasses.fields(context)}
    else:
        source = {name: getattr(context, name) for name in names if hasattr(context, name)}
    return {name: source[name] for name in names if source.get(name) is not None}


_Key = tuple[tuple[tuple[str, Any], ...], tuple[tuple[str, Any], ...]]
_last: tuple[_Key, MemoryContext] | None = None
_WANTED = (*_ID_FIELDS, "thread_visibility", _AUTH_USER_KEY)


def current_context() -> MemoryContext:
    """The MemoryContext of the LangGraph run this is called from (the last one built is
    reused while the ids are the same: nodes ask many times a turn)."""
    global _last
    from langgraph.config import get_config
    from langgraph.runtime import get_runtime

    conf = get_config().get("configurable") or {}
    fields = tuple(_context_fields(get_runtime().context).items())
    key = (fields, tuple((k, conf[k]) for k in _WANTED if conf.get(k) is not None))
    last = _last
    if last is not None and last[0] == key:
        return last[1]
    built = MemoryContext.from_run(dict(key[0]), dict(key[1]))
    _last = (key, built)
    return built
