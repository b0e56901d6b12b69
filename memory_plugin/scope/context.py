"""The run context that decides whose memory a node or tool may touch."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

from memory_plugin.errors import ScopeError
from memory_plugin.scope.identity import (
    OWNER_METADATA_KEY,
    SERVER_KEYS,
    Membership,
    resolve_identity,
    server_identity,
)
from memory_plugin.scope.namespaces import encode_id

Visibility = Literal["private", "shared"]
_ID_FIELDS = ("user_id", "workspace_id", "org_id", "space_id", "agent_id", "thread_owner_id")
_FIELDS = (*_ID_FIELDS, "thread_visibility")


@dataclass(frozen=True, slots=True)
class MemoryContext:
    """Who is running this graph, usable as a LangGraph `context_schema`.

    The model never supplies any of these: they come from the caller's `context=` or
    `config["configurable"]`; under LangGraph Server the authenticated user decides
    (see memory_plugin.scope.identity).
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
        *,
        membership: Membership | None = None,
        metadata: Mapping[str, Any] | None = None,
    ) -> MemoryContext:
        """The run's context: `context` over `config["configurable"]`, then the server's
        authenticated user over both; a workspace the caller names must pass `membership`
        (under the server, by default, the user object's `workspaces`)."""
        conf = configurable or {}
        claimed = {name: conf[name] for name in _FIELDS if conf.get(name) is not None}
        claimed.update(_context_fields(context))
        server = server_identity(conf, metadata)
        return cls(**resolve_identity(claimed, server, membership))


def _context_fields(context: Any) -> dict[str, Any]:
    """Read the MemoryContext fields out of a dict, dataclass or object context."""
    if context is None:
        return {}
    if isinstance(context, Mapping):
        source: Mapping[str, Any] = context
    elif dataclasses.is_dataclass(context) and not isinstance(context, type):
        source = {f.name: getattr(context, f.name) for f in dataclasses.fields(context)}
    else:
        source = {name: getattr(context, name) for name in _FIELDS if hasattr(context, name)}
    return {name: source[name] for name in _FIELDS if source.get(name) is not None}


_last: tuple[tuple[Any, ...], MemoryContext] | None = None
_WANTED = (*_FIELDS, *SERVER_KEYS)


def current_context(membership: Membership | None = None) -> MemoryContext:
    """The MemoryContext of the LangGraph run this is called from.

    Without a membership hook the last one built is reused while its inputs are the same
    (nodes ask many times a turn); with one, the hook is asked on every call, so a revoked
    membership takes effect at once.
    """
    global _last
    from langgraph.config import get_config
    from langgraph.runtime import get_runtime

    config = get_config()
    conf = config.get("configurable") or {}
    metadata = config.get("metadata") or {}
    owner = metadata.get(OWNER_METADATA_KEY)
    fields = tuple(_context_fields(get_runtime().context).items())
    server = tuple((k, conf[k]) for k in _WANTED if conf.get(k) is not None)
    key = (fields, server, owner)
    last = _last
    if membership is None and last is not None and last[0] == key:
        return last[1]
    built = MemoryContext.from_run(
        dict(fields),
        dict(server),
        membership=membership,
        metadata={OWNER_METADATA_KEY: owner} if owner is not None else None,
    )
    if membership is None:
        _last = (key, built)
    return built
