"""Scope resolution: which store namespace a run may read and write.

Rules (scoped-memory-documents-and-notes.md, thread-and-agent-memory.md):
a private thread uses the caller's personal scope, a shared thread its workspace's team
scope; workspaces never see each other; personal memory is never touched from someone
else's thread; a write that needs a user is refused when there is none (never downgraded).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Literal

from memory_plugin.errors import ScopeError
from memory_plugin.scope.context import MemoryContext
from memory_plugin.scope.namespaces import ROOT, decode_id, encode_id, namespace

ScopeKind = Literal["personal", "team", "profile", "agent", "agent_private"]


@dataclass(frozen=True, slots=True)
class Scope:
    """A resolved memory scope: its kind and the store namespace that holds it."""

    kind: ScopeKind
    namespace: tuple[str, ...]

    def child(self, *labels: str) -> tuple[str, ...]:
        """A namespace nested under this scope, e.g. for one memory kind."""
        return (*self.namespace, *labels)


def _tenant(ctx: MemoryContext) -> tuple[str, ...]:
    return ("org", encode_id(ctx.org_id, what="org_id")) if ctx.org_id else ()


def _workspace(ctx: MemoryContext) -> tuple[str, ...]:
    if not ctx.workspace_id:
        return ()
    return ("ws", encode_id(ctx.workspace_id, what="workspace_id"))


def _require(value: str | None, what: str, purpose: str) -> str:
    if not value:
        raise ScopeError(f"{purpose} needs {what} in the run context, and there is none")
    return value


def _check_own_thread(ctx: MemoryContext) -> None:
    if ctx.thread_owner_id is not None and ctx.thread_owner_id != ctx.user_id:
        raise ScopeError("personal memory cannot be used from another user's thread")


def personal_scope(ctx: MemoryContext) -> Scope:
    """The caller's personal scope (inside their workspace when there is one)."""
    user = _require(ctx.user_id, "user_id", "personal memory")
    _check_own_thread(ctx)
    return Scope(
        "personal",
        namespace(*_tenant(ctx), *_workspace(ctx), "personal", encode_id(user, what="user_id")),
    )


def team_scope(ctx: MemoryContext) -> Scope:
    """The team scope of the caller's workspace."""
    _require(ctx.workspace_id, "workspace_id", "team memory")
    return Scope("team", namespace(*_tenant(ctx), *_workspace(ctx), "team"))


def profile_scope(ctx: MemoryContext) -> Scope:
    """The caller's user profile, shared by all their threads and spaces."""
    user = _require(ctx.user_id, "user_id", "the user profile")
    _check_own_thread(ctx)
    return Scope("profile", namespace(*_tenant(ctx), "profile", encode_id(user, what="user_id")))


def agent_scope(ctx: MemoryContext, *, private: bool) -> Scope:
    """The agent's shared memory, or its memory private to the calling user."""
    agent = encode_id(_require(ctx.agent_id, "agent_id", "agent memory"), what="agent_id")
    if not private:
        return Scope("agent", namespace(*_tenant(ctx), "agent", agent, "shared"))
    user = _require(ctx.user_id, "user_id", "private agent memory")
    _check_own_thread(ctx)
    return Scope(
        "agent_private",
        namespace(*_tenant(ctx), "agent", agent, "user", encode_id(user, what="user_id")),
    )


def thread_scope(ctx: MemoryContext) -> Scope:
    """The scope a thread writes: personal for private threads, team for shared ones."""
    if ctx.thread_visibility == "shared":
        return team_scope(ctx)
    return personal_scope(ctx)


def readable_thread_scope(ctx: MemoryContext) -> Scope | None:
    """The scope a thread reads, or None when the context names nobody to read for."""
    try:
        return thread_scope(ctx)
    except ScopeError:
        if ctx.thread_visibility == "shared" and not ctx.workspace_id:
            return None
        if ctx.thread_visibility == "private" and not ctx.user_id:
            return None
        raise


def scope_from_namespace(ns: tuple[str, ...]) -> tuple[Scope, MemoryContext]:
    """The personal or team scope stored at a namespace, and a context naming its owners."""
    labels = list(ns)
    if not labels or labels[0] != ROOT:
        raise ScopeError(f"{ns!r} is not a memory_plugin namespace")
    ids: dict[str, str] = {}
    i = 1
    while i < len(labels):
        label = labels[i]
        if label in ("org", "ws", "personal") and i + 1 < len(labels):
            ids[label] = decode_id(labels[i + 1])
            i += 2
        elif label == "team" and i == len(labels) - 1:
            ids["team"] = ""
            i += 1
        else:
            raise ScopeError(f"{ns!r} is not a personal or team scope")
    ctx = MemoryContext(
        user_id=ids.get("personal"),
        workspace_id=ids.get("ws"),
        org_id=ids.get("org"),
        thread_visibility="shared" if "team" in ids else "private",
    )
    scope = thread_scope(ctx)
    if scope.namespace != ns:
        raise ScopeError(f"{ns!r} is not a personal or team scope")
    return scope, ctx


def reachable_namespace(
    ns: tuple[str, ...],
    user_id: str,
    *,
    workspaces: Iterable[str] = (),
    org_id: str | None = None,
) -> bool:
    """Whether a store namespace, or a search prefix, lies wholly inside memory the user may
    reach: their personal memory, profile and private agent memory, the team memory of one of
    their workspaces, an agent's shared memory (for a LangGraph `@auth.on.store` handler)."""
    labels = list(ns)
    if labels[:1] != [ROOT]:
        return False
    rest = labels[1:]
    tenant = ["org", encode_id(org_id, what="org_id")] if org_id is not None else []
    if rest[: len(tenant)] != tenant or rest[len(tenant) : len(tenant) + 1] == ["org"]:
        return False
    rest = rest[len(tenant) :]
    me = encode_id(user_id, what="user_id")
    if rest[:1] == ["ws"]:
        allowed = {encode_id(w, what="workspace_id") for w in workspaces}
        if len(rest) < 2 or rest[1] not in allowed:
            return False
        return rest[2:3] == ["team"] or rest[2:4] == ["personal", me]
    if rest[:2] in (["personal", me], ["profile", me]):
        return True
    return rest[:1] == ["agent"] and (rest[2:3] == ["shared"] or rest[2:4] == ["user", me])


def bounded_namespace(ctx: MemoryContext) -> tuple[str, ...]:
    """Where one agent's bounded entries for one user live."""
    if not ctx.user_id:
        raise ScopeError("bounded memory needs user_id in the run context, and there is none")
    if ctx.thread_owner_id is not None and ctx.thread_owner_id != ctx.user_id:
        raise ScopeError("bounded memory cannot be used from another user's thread")
    tenant = ("org", encode_id(ctx.org_id, what="org_id")) if ctx.org_id else ()
    agent = encode_id(ctx.agent_id, what="agent_id") if ctx.agent_id else "default"
    user = encode_id(ctx.user_id, what="user_id")
    return namespace(*tenant, "agent", agent, "user", user, "bounded")
