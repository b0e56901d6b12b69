"""What agent memory keeps of a user (memory_plugin.holdings): each agent's entries private to
them; how an import checks them; how the readable export shows them; where a text occurs in an
agent's entries (private, and shared: only a platform admin changes those) and forgetting it
there (AgentMemory's hooks)."""

from __future__ import annotations

import re
from typing import Annotated, Any, Literal

from langgraph.store.base import GetOp
from pydantic import Field, StrictStr

from memory_plugin.agent.entries import (
    CONTENT_MAX,
    ENTRIES,
    KEY_MAX,
    Visibility,
    forget_plan,
    to_entry,
)
from memory_plugin.agent.naming import NAME
from memory_plugin.errors import MemoryPluginError
from memory_plugin.holdings import (
    Held,
    Holding,
    Outcome,
    Owner,
    Place,
    Shelf,
    agent_spots,
    agents_plan,
    as_item,
    place,
    under_agent,
)
from memory_plugin.holdings.readable import origin_of
from memory_plugin.holdings.values import Deletion, Instant, Origin, StoredValue
from memory_plugin.plans import Plan, all_items_plan
from memory_plugin.scope import agent_scope
from memory_plugin.scope.context import MemoryContext

PAGE = 100
SHARED_ENTRY = "only a platform admin may change the agent's shared or read-only entries"
SCOPES = {"agent_private": "private agent memory", "agent_shared": "shared agent memory"}


class EntryValue(StoredValue):
    """A private agent entry."""

    content: Annotated[StrictStr, Field(min_length=1, max_length=CONTENT_MAX)]
    category: Annotated[StrictStr, Field(min_length=1)]
    visibility: Literal["private"]
    importance: Annotated[float, Field(ge=0.0, le=1.0, allow_inf_nan=False)]
    updated_at: Instant
    expires_at: Instant | None = None
    text: StrictStr | None = None
    provenance: Origin = None


class EntryTombstone(Deletion):
    """What a deleted agent entry leaves at its key."""

    deleted_by: StrictStr | None = None


def _entry(key: str, value: dict[str, Any]) -> str | None:
    if len(key) > KEY_MAX or "\n" in key or key != key.strip():
        return f"an entry key is one line of at most {KEY_MAX} characters"
    if value.get("deleted"):
        EntryTombstone.model_validate(value)
        return None if "content" not in value else "a tombstone keeps no content"
    entry = EntryValue.model_validate(value)
    if entry.text is not None and entry.text != f"{key}: {entry.content}":
        return 'its text is "<key>: <content>"'
    return None if to_entry(as_item((), key, value)) else "not an entry"


def _render(workspace: str | None, agent: str | None, items: list[Held]) -> list[str]:
    lines = [
        f"- **{h.key}**: _(deleted)_"
        if h.value.get("deleted")
        else f"- **{h.key}**: {h.value.get('content', '')}{origin_of(h.value)}"
        for h in items
    ]
    return [f"## Agent {agent}: your private entries", "", *lines, ""]


HOLDING = Holding(
    NAME,
    under_agent,
    (Shelf((ENTRIES,), _entry, indexing="semantic"),),
    agent_spots,
    _render,
    agent=True,
    v1_kind="agent",
)
"""Each agent's entries private to the owner."""


def places_plan(owner: Owner, needle: str, pattern: re.Pattern[str]) -> Plan[list[Place]]:
    """The entries (private, and shared) of every agent keeping memory of the owner or named
    by them whose key or content holds the text."""
    places = []
    for agent in sorted({*(yield from agents_plan(owner)), *owner.agents}):
        ctx = MemoryContext(user_id=owner.user_id, org_id=owner.org_id, agent_id=agent)
        for private in (True, False):
            scope = agent_scope(ctx, private=private).child(ENTRIES)
            items = yield from all_items_plan(scope, page=PAGE)
            for item in items:
                entry = to_entry(item)
                if entry is None or not pattern.search(f"{entry.key}\n{entry.content}"):
                    continue
                editable = private or owner.admin
                where = "agent_private" if private else "agent_shared"
                places.append(
                    place(
                        NAME,
                        where,
                        entry.content,
                        "words",
                        scope=SCOPES[where],
                        what=f"entry {entry.key}",
                        provenance=entry.provenance,
                        agent=agent,
                        key=entry.key,
                        editable=editable,
                        reason=None if editable else SHARED_ENTRY,
                    )
                )
    return places


def forget_places_plan(owner: Owner, places: list[Place]) -> Plan[list[Outcome]]:
    """Remove each entry (a shared one as the visibility it has)."""
    outcomes = []
    for each in places:
        ctx = MemoryContext(user_id=owner.user_id, org_id=owner.org_id, agent_id=each.agent)
        try:
            visibility: Visibility = "private"
            if each.where == "agent_shared":
                shared = agent_scope(ctx, private=False).child(ENTRIES)
                (item,) = yield [GetOp(shared, str(each.key))]
                entry = to_entry(item)
                visibility = entry.visibility if entry is not None else "shared"
            yield from forget_plan(ctx, each.key, model=False, visibility=visibility)
            outcomes.append(Outcome(each, True, "entry removed"))
        except MemoryPluginError as exc:
            outcomes.append(Outcome(each, False, str(exc)))
    return outcomes
