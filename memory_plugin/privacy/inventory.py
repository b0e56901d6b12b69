"""Every store item of one user's memory, across kinds, found from the store's namespaces.

A user's memory is what lives under the namespaces that name them (memory_plugin.scope):
their personal notes and document (outside workspaces, and inside each workspace), their
profile with its change log, their private agent entries and bounded entries (under each
agent), and the settings layer they own. Team memory and an agent's shared entries are not
theirs alone and are never listed here; nor are thread journals (conversation history).
A user "exists" in a store when it holds at least one item of their memory.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal

from langgraph.store.base import ListNamespacesOp, MatchCondition

from memory_plugin.errors import MemoryPluginError
from memory_plugin.plans import Plan, all_items_plan
from memory_plugin.scope.identity import UserKey
from memory_plugin.scope.namespaces import ROOT, decode_id, encode_id
from memory_plugin.scoped.notes import NOTE_INDEX

HeldKind = Literal["personal", "profile", "agent", "bounded", "settings"]
KIND_ORDER: tuple[HeldKind, ...] = ("personal", "profile", "agent", "bounded", "settings")
"""The kinds of a user's memory, in the order an export lists them."""
BOUNDED = "bounded"
PAGE = 500


class UnknownUserError(MemoryPluginError):
    """The store holds no memory of the user named."""


@dataclass(frozen=True, slots=True)
class Owner:
    """Whose memory: a user, in an org's memory when `org_id` is given. A forget also
    searches the team memory of the `workspaces` the user belongs to, the `agents` named
    besides those found keeping memory of the user, and (for a platform `admin`) may change
    an agent's shared entries."""

    user_id: str
    org_id: str | None = None
    workspaces: tuple[str, ...] = ()
    agents: tuple[str, ...] = ()
    admin: bool = False

    @property
    def key(self) -> UserKey:
        """Who the owner is, as the key of every per-user state: their org and user id."""
        return UserKey(self.org_id, self.user_id)

    def tenant(self) -> tuple[str, ...]:
        """The org labels that prefix every namespace of this owner's memory."""
        return ("org", encode_id(self.org_id, what="org_id")) if self.org_id else ()

    def label(self) -> str:
        """The user's id as a namespace label."""
        return encode_id(self.user_id, what="user_id")

    def describe(self) -> str:
        """The owner as words, for messages."""
        return f"user {self.user_id!r}" + (f" of org {self.org_id!r}" if self.org_id else "")


@dataclass(frozen=True, slots=True)
class Held:
    """One store item of a user's memory: its kind, the workspace (personal memory inside a
    workspace) or agent (agent and bounded entries) it belongs to, its namespace below the
    kind's root (`path`), key and value."""

    kind: HeldKind
    workspace: str | None
    agent: str | None
    path: tuple[str, ...]
    key: str
    value: dict[str, Any]

    def sort_key(self) -> tuple[int, str, str, tuple[str, ...], str]:
        """HeldKind (KIND_ORDER), workspace, agent, path, key: the order an export lists."""
        return (
            KIND_ORDER.index(self.kind),
            self.workspace or "",
            self.agent or "",
            self.path,
            self.key,
        )

    @property
    def derived(self) -> bool:
        """Whether the item is a copy another item rebuilds (a note's vector-index copy)."""
        return self.kind == "personal" and self.path == (NOTE_INDEX,)


def personal_root(owner: Owner, workspace: str | None) -> tuple[str, ...]:
    """The namespace of the owner's personal memory (inside `workspace` when named)."""
    space = ("ws", encode_id(workspace, what="workspace_id")) if workspace else ()
    return (ROOT, *owner.tenant(), *space, "personal", owner.label())


def profile_root(owner: Owner) -> tuple[str, ...]:
    """The namespace of the owner's profile (its change log and cursors below it)."""
    return (ROOT, *owner.tenant(), "profile", owner.label())


def agent_root(owner: Owner, agent: str) -> tuple[str, ...]:
    """The namespace of one agent's memory private to the owner (entries, bounded)."""
    agent_label = encode_id(agent, what="agent_id")
    return (ROOT, *owner.tenant(), "agent", agent_label, "user", owner.label())


def settings_root(owner: Owner) -> tuple[str, ...]:
    """The namespace of the owner's settings layer."""
    return (ROOT, "settings", *owner.tenant(), "user", owner.label())


def root_of(owner: Owner, held: Held) -> tuple[str, ...]:
    """The namespace under which `held.path` lies."""
    if held.kind == "personal":
        return personal_root(owner, held.workspace)
    if held.kind == "profile":
        return profile_root(owner)
    if held.kind in ("agent", "bounded"):
        return agent_root(owner, held.agent or "")
    return settings_root(owner)


def namespace_of(owner: Owner, held: Held) -> tuple[str, ...]:
    """The store namespace of an item of the owner's memory."""
    return (*root_of(owner, held), *held.path)


def _wildcard_plan(prefix: tuple[str, ...], at: int) -> Plan[list[str]]:
    """The decoded labels at position `at` of the namespaces matching `prefix` ("*" wild)."""
    found: list[tuple[str, ...]] = []
    while True:
        condition = MatchCondition(match_type="prefix", path=prefix)
        op = ListNamespacesOp((condition,), max_depth=len(prefix), limit=PAGE, offset=len(found))
        (page,) = yield [op]
        found += page
        if len(page) < PAGE:
            return sorted({decode_id(ns[at]) for ns in found})


def workspaces_plan(owner: Owner) -> Plan[list[str]]:
    """Every workspace holding personal memory of the owner, sorted."""
    tenant = owner.tenant()
    prefix = (ROOT, *tenant, "ws", "*", "personal", owner.label())
    return (yield from _wildcard_plan(prefix, len(tenant) + 2))


def agents_plan(owner: Owner) -> Plan[list[str]]:
    """Every agent holding memory private to the owner, sorted."""
    tenant = owner.tenant()
    prefix = (ROOT, *tenant, "agent", "*", "user", owner.label())
    return (yield from _wildcard_plan(prefix, len(tenant) + 2))


def _items_plan(
    root: tuple[str, ...], kind: HeldKind, workspace: str | None, agent: str | None
) -> Plan[list[Held]]:
    items = yield from all_items_plan(root, page=PAGE)
    held = []
    for item in items:
        path = tuple(item.namespace[len(root) :])
        found: HeldKind = kind
        if kind == "agent" and path[:1] == (BOUNDED,):
            found = "bounded"
        held.append(Held(found, workspace, agent, path, item.key, dict(item.value)))
    return held


def inventory_plan(owner: Owner, workspaces: Sequence[str] | None = ()) -> Plan[list[Held]]:
    """Every item of the owner's memory, in export order: personal memory outside workspaces
    and in `workspaces` (None: in every workspace that holds some), the profile, each agent's
    private and bounded entries, the settings layer."""
    if workspaces is None:
        workspaces = yield from workspaces_plan(owner)
    held: list[Held] = []
    for workspace in (None, *sorted(set(workspaces))):
        root = personal_root(owner, workspace)
        held += yield from _items_plan(root, "personal", workspace, None)
    held += yield from _items_plan(profile_root(owner), "profile", None, None)
    for agent in (yield from agents_plan(owner)):
        held += yield from _items_plan(agent_root(owner, agent), "agent", None, agent)
    held += yield from _items_plan(settings_root(owner), "settings", None, None)
    return sorted(held, key=Held.sort_key)


def counts(held: Sequence[Held]) -> dict[str, int]:
    """Items per kind, every kind named (0 for none), in KIND_ORDER."""
    return {kind: sum(1 for h in held if h.kind == kind) for kind in KIND_ORDER}
