"""Every store item of one user's memory, across kinds: what each kind of
memory_plugin.kinds.KINDS says it keeps of a user (its `holdings`), and the settings layer
they own.

The kinds keep, today: their personal notes and document (outside workspaces, and inside each
workspace), their profile with its change log, their private agent entries and bounded
entries (under each agent). Team memory and an agent's shared entries are not theirs alone
and are never listed here; nor are thread journals (conversation history, kept by context
management, which holds no memory of a user). A user "exists" in a store when it holds at
least one item of their memory.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from typing import Any

from memory_plugin import kinds
from memory_plugin.errors import MemoryPluginError
from memory_plugin.holdings import Held, Holding, Owner, Shelf, held_plan, nowhere_else
from memory_plugin.plans import Plan
from memory_plugin.privacy.progress import Progress, quiet, reading_plan
from memory_plugin.scope.namespaces import ROOT
from memory_plugin.settings.layers import apply_changes, empty_record

__all__ = ["Held", "Owner", "UnknownUserError", "inventory_plan", "workspaces_plan"]
SETTINGS = "settings"


class UnknownUserError(MemoryPluginError):
    """The store holds no memory of the user named."""


def settings_root(owner: Owner, workspace: str | None, agent: str | None) -> tuple[str, ...]:
    """The namespace of the owner's settings layer."""
    return (ROOT, SETTINGS, *owner.tenant(), "user", owner.label())


def _layer(key: str, value: dict[str, Any]) -> str | None:
    """What is wrong with a user settings layer, checked as a write to it is."""
    values, locked = value.get("values"), value.get("locked")
    if set(value) != {"values", "locked"} or not isinstance(values, dict) or locked:
        return 'a user settings layer is {"values": {...}, "locked": []}'
    try:
        apply_changes("user", empty_record(), [], set_values=values, clear=[], lock=[], unlock=[])
    except MemoryPluginError as exc:
        return str(exc)
    return None


def _render(workspace: str | None, agent: str | None, items: list[Held]) -> list[str]:
    lines = ["## Your settings layer", ""]
    for h in items:
        values = h.value.get("values", {})
        lines += [f"- `{name}` = `{json.dumps(values[name])}`" for name in sorted(values)]
    return [*lines, ""]


SETTINGS_LAYER = Holding(
    SETTINGS, settings_root, (Shelf((), _layer, lambda value: iter(())),), nowhere_else, _render
)
"""The settings layer the owner owns (not a memory kind: it is read by every kind)."""


def holdings() -> tuple[Holding, ...]:
    """What a user's memory holds: each kind's holdings in KINDS order, then their settings."""
    return (*(holding for kind in kinds.KINDS for holding in kind.holdings), SETTINGS_LAYER)


def holding_of(kind: str) -> Holding | None:
    """The holding whose items are of `kind`, if any."""
    return next((holding for holding in holdings() if holding.kind == kind), None)


def kind_order() -> tuple[str, ...]:
    """The kinds of a user's memory, in the order an export lists them."""
    return tuple(holding.kind for holding in holdings())


def shelf_of(held: Held) -> Shelf | None:
    """The shelf an item lies on, if its kind keeps one at its path."""
    holding = holding_of(held.kind)
    return holding.shelf(held.path) if holding is not None else None


def derived(held: Held) -> bool:
    """Whether the item is a copy another item rebuilds (a note's vector-index copy)."""
    shelf = shelf_of(held)
    return shelf is not None and shelf.derived


def namespace_of(owner: Owner, held: Held) -> tuple[str, ...]:
    """The store namespace of an item of the owner's memory."""
    holding = holding_of(held.kind)
    assert holding is not None, f"no kind keeps {held.kind!r} items"
    return (*holding.root(owner, held.workspace, held.agent), *held.path)


Order = tuple[int, str, str, tuple[str, ...], str]


def export_order(order: Sequence[str]) -> Callable[[Held], Order]:
    """The sort key of items in export order: kind (in `order`), workspace, agent, path, key."""

    def key(h: Held) -> Order:
        return (order.index(h.kind), h.workspace or "", h.agent or "", h.path, h.key)

    return key


def workspaces_plan(owner: Owner) -> Plan[list[str]]:
    """Every workspace where a kind keeps memory of the owner, sorted."""
    found: set[str] = set()
    for holding in holdings():
        if holding.workspace:
            spots = yield from holding.spots(owner, None)
            found.update(workspace for workspace, _ in spots if workspace is not None)
    return sorted(found)


def inventory_plan(
    owner: Owner, workspaces: Sequence[str] | None = (), progress: Progress = quiet
) -> Plan[list[Held]]:
    """Every item of the owner's memory, in export order, with personal memory inside
    `workspaces` too (None: inside every workspace that holds some); `progress` hears how
    many store items were read."""
    held = yield from reading_plan(_held_plan(owner, workspaces), progress)
    return sorted(held, key=export_order(kind_order()))


def _held_plan(owner: Owner, workspaces: Sequence[str] | None) -> Plan[list[Held]]:
    held: list[Held] = []
    for holding in holdings():
        held += yield from held_plan(holding, owner, workspaces)
    return held


def counts(held: Sequence[Held]) -> dict[str, int]:
    """Items per kind, every kind named (0 for none), in export order."""
    return {kind: sum(1 for h in held if h.kind == kind) for kind in kind_order()}
