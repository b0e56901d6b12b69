"""BoundedMemory: the Python API over the `memory` and `user` targets, sync and async.

Each target is one store record per agent and user ({"entries": [...], "version": n}),
written with a compare-and-swap on its version and retried on a conflict, so concurrent
writers never lose an entry nor pass the limit.
"""

from __future__ import annotations

import re
from typing import Any

from langchain_core.tools import BaseTool
from langgraph.store.base import GetOp

from memory_plugin.backends.conditional import PutIfVersion
from memory_plugin.backends.erasure import Purge
from memory_plugin.base import MemoryService
from memory_plugin.blocks import PromptBlock
from memory_plugin.bounded import privacy
from memory_plugin.bounded.blocks import block_text
from memory_plugin.bounded.entries import TARGETS, TargetView, check_names, edit, used
from memory_plugin.bounded.naming import NAME
from memory_plugin.bounded.privacy import HOLDING
from memory_plugin.bounded.toolkit import memory_tools
from memory_plugin.errors import ConflictError
from memory_plugin.holdings import Outcome, Owner, Place
from memory_plugin.plans import Plan, arun, run
from memory_plugin.provenance import Provenance, current, provenance_of
from memory_plugin.safety import screen
from memory_plugin.scope import bounded_namespace
from memory_plugin.scope.context import MemoryContext
from memory_plugin.scope.identity import Membership
from memory_plugin.settings import LayeredSettings, MemorySettings

RETRIES = 64
BLOCK = "bounded_memory"


def limit_of(settings: MemorySettings, target: str) -> int:
    """The character limit of a target."""
    return settings.bounded_memory_chars if target == "memory" else settings.bounded_user_chars


def _entries(item: Any) -> tuple[list[str], int | None]:
    if item is None:
        return [], None
    value = item.value
    return [str(e) for e in value.get("entries") or []], value.get("version")


def _origins(item: Any, count: int) -> tuple[Provenance | None, ...]:
    """The provenance of each of the item's `count` entries (None where none is recorded)."""
    stored = item.value.get("provenance") if item is not None else None
    if not isinstance(stored, list) or len(stored) != count:
        return (None,) * count
    return tuple(provenance_of({"provenance": value}) for value in stored)


def _carried(
    old: list[str], origins: tuple[Provenance | None, ...], new: list[str], made: Provenance
) -> list[dict[str, Any] | None]:
    """The stored provenance of the new entries: an entry kept keeps its own, a new or
    rewritten one gets `made`."""
    kept = dict(zip(reversed(old), reversed(origins), strict=True))
    found = [kept.get(entry, made) for entry in new]
    return [origin.to_json() if origin is not None else None for origin in found]


class BoundedMemory(MemoryService):
    """The agent's notes (`memory`) and who the user is (`user`), each a bounded list of
    entries, per agent and user."""

    name = NAME
    place = "frozen"
    obeys_memory_off = True
    over_mcp = True

    def tools(self, membership: Membership | None) -> list[BaseTool]:
        """The `memory` tool over this bounded memory."""
        return memory_tools(self, membership)

    @property
    def settings(self) -> LayeredSettings:
        """The layered settings over this store."""
        return self.layered

    def read_plan(
        self, ctx: MemoryContext, settings: MemorySettings
    ) -> Plan[dict[str, TargetView]]:
        """Both targets' entries and usage."""
        ns = bounded_namespace(ctx)
        items = yield [GetOp(ns, target) for target in TARGETS]
        views: dict[str, TargetView] = {}
        for target, item in zip(TARGETS, items, strict=True):
            entries, _ = _entries(item)
            limit, origins = limit_of(settings, target), _origins(item, len(entries))
            views[target] = TargetView(target, entries, used(entries), limit, origins)
        return views

    def _read(self, ctx: MemoryContext) -> Plan[dict[str, TargetView]]:
        settings = yield from self.settings_plan(ctx)
        return (yield from self.read_plan(ctx, settings))

    def read(self, ctx: MemoryContext) -> dict[str, TargetView]:
        """Both targets (`memory`, `user`) with their entries and usage."""
        return run(self.store, self._read(ctx))

    async def aread(self, ctx: MemoryContext) -> dict[str, TargetView]:
        """Async twin of read."""
        return await arun(self.store, self._read(ctx))

    def apply_plan(
        self,
        ctx: MemoryContext,
        action: str,
        target: str,
        content: str | None,
        old_text: str | None,
    ) -> Plan[str]:
        """The plan behind apply (and the `memory` tool)."""
        check_names(action, target)
        if content is not None and action != "remove":
            screen(content, f"the {target} entry")
        made = current(actor=ctx.user_id)
        ns = bounded_namespace(ctx)
        settings = yield from self.settings_plan(ctx)
        limit = limit_of(settings, target)
        for _ in range(RETRIES):
            (item,) = yield [GetOp(ns, target)]
            entries, version = _entries(item)
            view = TargetView(target, entries, used(entries), limit)
            new, answer = edit(entries, action, content, old_text, view)
            if new is None:
                return answer
            origins = _carried(entries, _origins(item, len(entries)), new, made)
            value = {"entries": new, "provenance": origins}
            stored = yield PutIfVersion(ns, target, value, version)
            if stored is not None:
                if action != "add":
                    yield Purge()
                return answer
        raise ConflictError(f"the {target} entries kept changing; nothing was saved, try again")

    def apply(
        self,
        ctx: MemoryContext,
        action: str,
        target: str,
        content: str | None = None,
        old_text: str | None = None,
    ) -> str:
        """Add, replace or remove one entry of a target; the answer text for the model.
        Raises MemoryWriteError (bad input, screened text, over the limit), nothing stored."""
        return run(self.store, self.apply_plan(ctx, action, target, content, old_text))

    async def aapply(
        self,
        ctx: MemoryContext,
        action: str,
        target: str,
        content: str | None = None,
        old_text: str | None = None,
    ) -> str:
        """Async twin of apply."""
        return await arun(self.store, self.apply_plan(ctx, action, target, content, old_text))

    def blocks_plan(
        self, ctx: MemoryContext, settings: MemorySettings | None = None
    ) -> Plan[list[PromptBlock]]:
        """The frozen block showing both targets with their usage (none without a user or
        with bounded memory switched off)."""
        if settings is None:
            settings = yield from self.settings_plan(ctx)
        if not settings.bounded_memory or not ctx.user_id:
            return []
        views = yield from self.read_plan(ctx, settings)
        entries = tuple(entry for view in views.values() for entry in view.entries)
        return [PromptBlock(BLOCK, "frozen", block_text(views), entries=entries)]

    holdings = (HOLDING,)

    def places_plan(self, owner: Owner, needle: str, pattern: re.Pattern[str]) -> Plan[list[Place]]:
        """The bounded entries of the owner's agents holding the text (bounded/privacy.py)."""
        return (yield from privacy.places_plan(self, owner, pattern))

    def forget_places_plan(
        self, owner: Owner, places: list[Place], pattern: re.Pattern[str]
    ) -> Plan[list[Outcome]]:
        """Remove the entries from their targets."""
        return (yield from privacy.forget_plan(self, owner, places))
