"""The vocabulary of a kind's privacy hooks (MemoryService): whose memory (`Owner`), what a kind
keeps of an owner (`Holding`, its `Shelf`s, each item a `Held`), and where a text occurs in it
(`Place`) with what forgetting a place did (`Outcome`). memory_plugin.privacy loops over the
kinds with these; the kinds import this module, never memory_plugin.privacy."""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, Literal

from langgraph.store.base import Item, ListNamespacesOp, MatchCondition, PutOp

from memory_plugin.plans import Plan, all_items_plan
from memory_plugin.provenance import Provenance
from memory_plugin.scope.identity import UserKey
from memory_plugin.scope.namespaces import ROOT, decode_id, encode_id

PAGE = 500
Match = Literal["words", "meaning"]
Indexing = Literal["never", "store", "semantic"]
Check = Callable[[str, dict[str, Any]], str | None]
Spot = tuple[str | None, str | None]
"""A workspace and an agent a holding keeps items under (None: none)."""


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
    """One store item of a user's memory: its holding's kind, the workspace (personal memory
    inside a workspace) or agent (agent and bounded entries) it belongs to, its namespace below
    the holding's root (`path`), key and value."""

    kind: str
    workspace: str | None
    agent: str | None
    path: tuple[str, ...]
    key: str
    value: dict[str, Any]


def every_string(value: Any) -> Iterator[str]:
    """Every string a stored value holds, at any depth."""
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for inner in value.values():
            yield from every_string(inner)
    elif isinstance(value, list):
        for inner in value:
            yield from every_string(inner)


@dataclass(frozen=True)
class Shelf:
    """Where a holding keeps items, below its root (`path`): how an import checks a value
    (`check`: what is wrong with it, or None) and which of its texts it screens (`texts`);
    whether the store indexes it as the kind writes it (`indexing`); whether it is a `derived`
    copy another item rebuilds (never exported; `copy` makes it from the item it copies);
    whether its keys are a day's `counted` positions (an import appends a note whose key
    holds another)."""

    path: tuple[str, ...]
    check: Check | None = None
    texts: Callable[[dict[str, Any]], Iterator[str]] = every_string
    indexing: Indexing = "never"
    derived: bool = False
    counted: bool = False
    copy: Callable[[tuple[str, ...], str, dict[str, Any]], PutOp | None] | None = None

    def index(self, semantic: bool) -> Literal[False] | list[str] | None:
        """How the kind's own write indexes an item of this shelf."""
        if self.indexing == "store":
            return None
        return ["text"] if self.indexing == "semantic" and semantic else False


@dataclass(frozen=True)
class Holding:
    """One kind of item an owner holds (an export item's `kind`: its kind's name): its namespace
    `root` for an owner, workspace and agent; its `shelves`; the `spots` (workspace, agent) where
    the owner holds some (given the workspaces asked for; None: every one); whether its items lie in
    a `workspace` or under an `agent`; its heading and lines in the readable export (`render`);
    `refused`: why, given what the owner holds here, an item of it missing here is not imported (or
    None); and `v1_kind`: its items' `kind` in a schema_version 1 export, when that was another
    word."""

    kind: str
    root: Callable[[Owner, str | None, str | None], tuple[str, ...]]
    shelves: tuple[Shelf, ...]
    spots: Callable[[Owner, Sequence[str] | None], Plan[list[Spot]]]
    render: Callable[[str | None, str | None, list[Held]], list[str]]
    workspace: bool = False
    agent: bool = False
    refused: Callable[[Sequence[Held]], str | None] | None = None
    v1_kind: str | None = None

    def shelf(self, path: tuple[str, ...]) -> Shelf | None:
        """The shelf at `path`, if the holding has one there."""
        return next((shelf for shelf in self.shelves if shelf.path == path), None)


def held_plan(holding: Holding, owner: Owner, workspaces: Sequence[str] | None) -> Plan[list[Held]]:
    """The items on the holding's shelves for the owner, at every spot they hold some."""
    held = []
    for workspace, agent in (yield from holding.spots(owner, workspaces)):
        root = holding.root(owner, workspace, agent)
        for item in (yield from all_items_plan(root, page=PAGE)):
            path = tuple(item.namespace[len(root) :])
            if holding.shelf(path) is not None:
                value = dict(item.value)
                held.append(Held(holding.kind, workspace, agent, path, item.key, value))
    return held


def nowhere_else(owner: Owner, workspaces: Sequence[str] | None) -> Plan[list[Spot]]:
    """The one spot of a holding kept outside workspaces and agents."""
    yield from ()
    return [(None, None)]


def labels_plan(prefix: tuple[str, ...], at: int) -> Plan[list[str]]:
    """The decoded labels at position `at` of the namespaces matching `prefix` ("*" wild)."""
    found: list[tuple[str, ...]] = []
    while True:
        condition = MatchCondition(match_type="prefix", path=prefix)
        op = ListNamespacesOp((condition,), max_depth=len(prefix), limit=PAGE, offset=len(found))
        (page,) = yield [op]
        found += page
        if len(page) < PAGE:
            return sorted({decode_id(ns[at]) for ns in found})


def agent_root(owner: Owner, agent: str) -> tuple[str, ...]:
    """The namespace of one agent's memory private to the owner (entries, bounded)."""
    agent_label = encode_id(agent, what="agent_id")
    return (ROOT, *owner.tenant(), "agent", agent_label, "user", owner.label())


def agents_plan(owner: Owner) -> Plan[list[str]]:
    """Every agent holding memory private to the owner, sorted."""
    tenant = owner.tenant()
    prefix = (ROOT, *tenant, "agent", "*", "user", owner.label())
    return (yield from labels_plan(prefix, len(tenant) + 2))


def agent_spots(owner: Owner, workspaces: Sequence[str] | None) -> Plan[list[Spot]]:
    """Every agent holding memory private to the owner, as spots."""
    return [(None, agent) for agent in (yield from agents_plan(owner))]


def under_agent(owner: Owner, workspace: str | None, agent: str | None) -> tuple[str, ...]:
    """The root of a holding kept under an agent, private to the owner."""
    return agent_root(owner, agent or "")


def as_item(path: tuple[str, ...], key: str, value: dict[str, Any]) -> Item:
    """A stored value as the store item a kind's reader reads."""
    now = datetime.now(UTC)
    return Item(value=value, key=key, namespace=path, created_at=now, updated_at=now)


@dataclass(frozen=True)
class Place:
    """One place that holds the text: what it is (`kind`), where (`where`), its text and
    provenance, how it matched, and whether the owner may change it (`reason` says why not).
    `scope` and `what` say it in words; `source` is the kind that found it."""

    id: str
    kind: str
    where: str
    text: str
    match: Match
    editable: bool
    provenance: Provenance | None = None
    workspace: str | None = None
    agent: str | None = None
    key: str | None = None
    """The note key, profile section, bounded target or agent entry key."""
    reason: str | None = None
    scope: str = ""
    what: str = ""
    source: str = field(default="", compare=False)

    @property
    def label(self) -> str:
        """Where the place is, in words."""
        scope = self.scope
        if self.workspace is not None:
            scope += f" of workspace {self.workspace}"
        if self.agent is not None:
            scope += f" of agent {self.agent}"
        return f"{scope}: {self.what}"


def place(
    kind: str,
    where: str,
    text: str,
    match: Match,
    *,
    scope: str,
    what: str,
    provenance: Provenance | None = None,
    workspace: str | None = None,
    agent: str | None = None,
    key: str | None = None,
    editable: bool = True,
    reason: str | None = None,
) -> Place:
    """A place, with an id its kind, scope, key and text make stable between previews."""
    parts = (kind, where, workspace, agent, key, text)
    digest = hashlib.sha256("\x1f".join(part or "" for part in parts).encode()).hexdigest()
    return Place(
        digest[:12],
        kind,
        where,
        text,
        match,
        editable,
        provenance,
        workspace,
        agent,
        key,
        reason,
        scope,
        what,
    )


@dataclass(frozen=True)
class Outcome:
    """What applying a forget did at one place: `done` when it changed it, else why not."""

    place: Place
    done: bool
    detail: str


def rewritten(place: Place, count: int, what: str) -> Outcome:
    """The outcome of rewriting `count` records at a place (none: already gone)."""
    return Outcome(place, bool(count), f"{count} {what} rewritten" if count else "already gone")
