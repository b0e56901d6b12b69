"""What bounded memory keeps of a user (memory_plugin.holdings): each agent's two targets; how
an import checks them; how the readable export shows them; where a text occurs in them and
forgetting it there (BoundedMemory's hooks)."""

from __future__ import annotations

import re
from typing import Any, Protocol

from pydantic import StrictStr

from memory_plugin.bounded import toolkit
from memory_plugin.bounded.entries import TARGETS, TargetView
from memory_plugin.bounded.naming import NAME
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
    place,
    under_agent,
)
from memory_plugin.holdings.readable import origin_of
from memory_plugin.holdings.values import StoredValue, Version
from memory_plugin.plans import Plan
from memory_plugin.scope.context import MemoryContext
from memory_plugin.settings import MemorySettings

BOUNDED = "bounded"


class BoundedValue(StoredValue):
    """One bounded target: its entries, with the provenance of each."""

    entries: list[StrictStr]
    version: Version | None = None
    provenance: list[dict[str, Any] | None] | None = None


def _bounded(key: str, value: dict[str, Any]) -> str | None:
    BoundedValue.model_validate(value)
    return None if key in TARGETS else f"a bounded target is one of {', '.join(TARGETS)}"


def _render(workspace: str | None, agent: str | None, items: list[Held]) -> list[str]:
    lines = [f"## Agent {agent}: bounded memory", ""]
    for h in items:
        lines.append(f"- **{h.key}**{origin_of(h.value)}")
        lines += [f"  - {entry}" for entry in h.value.get("entries", [])]
    return [*lines, ""]


HOLDING = Holding(
    NAME,
    under_agent,
    (Shelf((BOUNDED,), _bounded),),
    agent_spots,
    _render,
    agent=True,
    v1_kind=BOUNDED,
)
"""Each agent's bounded targets for the owner."""


class Bounded(toolkit.Bounded, Protocol):
    """What forgetting asks of bounded memory: what its tool asks, and reading."""

    def settings_plan(self, ctx: MemoryContext, store: Any = None) -> Plan[MemorySettings]: ...

    def read_plan(
        self, ctx: MemoryContext, settings: MemorySettings
    ) -> Plan[dict[str, TargetView]]: ...


def places_plan(bounded: Bounded, owner: Owner, pattern: re.Pattern[str]) -> Plan[list[Place]]:
    """The entries of both targets, under every agent, that hold the text."""
    places = []
    for agent in sorted({*(yield from agents_plan(owner)), *owner.agents}):
        ctx = MemoryContext(user_id=owner.user_id, org_id=owner.org_id, agent_id=agent)
        settings = yield from bounded.settings_plan(ctx)
        views = yield from bounded.read_plan(ctx, settings)
        for target in TARGETS:
            view = views[target]
            origins = list(view.provenance) + [None] * len(view.entries)
            for entry, made in zip(view.entries, origins, strict=False):
                if pattern.search(entry):
                    places.append(
                        place(
                            NAME,
                            NAME,
                            entry,
                            "words",
                            scope="bounded memory",
                            what=f"{target} entry",
                            provenance=made,
                            agent=agent,
                            key=target,
                        )
                    )
    return places


def forget_plan(bounded: Bounded, owner: Owner, places: list[Place]) -> Plan[list[Outcome]]:
    """Remove each entry from its target."""
    outcomes = []
    for each in places:
        ctx = MemoryContext(user_id=owner.user_id, org_id=owner.org_id, agent_id=each.agent)
        try:
            yield from bounded.apply_plan(ctx, "remove", str(each.key), None, each.text)
            outcomes.append(Outcome(each, True, "entry removed"))
        except MemoryPluginError as exc:
            outcomes.append(Outcome(each, False, str(exc)))
    return outcomes
