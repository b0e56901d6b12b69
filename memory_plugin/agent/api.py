"""AgentMemory: the Python API over agent memory entries, sync and async, and the source of
the pinned block."""

from __future__ import annotations

import re
from datetime import datetime
from typing import Any

from langchain_core.tools import BaseTool

from memory_plugin.agent import privacy
from memory_plugin.agent.entries import (
    Entry,
    Visibility,
    forget_plan,
    list_plan,
    new_entry,
    put_plan,
    readable_scopes,
)
from memory_plugin.agent.naming import NAME
from memory_plugin.agent.pinned import pinned, pinned_block, qualifying
from memory_plugin.agent.privacy import HOLDING
from memory_plugin.agent.recall import EntryHit, recall_plan
from memory_plugin.base import MemoryService
from memory_plugin.blocks import PromptBlock
from memory_plugin.errors import ScopeError
from memory_plugin.holdings import Outcome, Owner, Place
from memory_plugin.plans import Plan, arun, run
from memory_plugin.scope.context import MemoryContext
from memory_plugin.scope.identity import Membership
from memory_plugin.settings import MemorySettings
from memory_plugin.tooling import clamp_k


class AgentMemory(MemoryService):
    """Agent memory entries for the agent the run's context names. Writing needs the
    `agent_memory` setting (the Memory capability); reading and pinning do not."""

    name = NAME
    place = "frozen"
    always = True
    needs_agent = True
    over_mcp = True

    def tools(self, membership: Membership | None) -> list[BaseTool]:
        """memory_store, memory_recall and memory_forget over this agent memory."""
        from memory_plugin.agent.tools import agent_memory_tools

        return agent_memory_tools(self, membership)

    def store_plan(
        self,
        ctx: MemoryContext,
        key: Any,
        content: Any,
        *,
        category: Any = "general",
        visibility: Any = "private",
        importance: Any = 0.5,
        expires_at: datetime | None = None,
        model: bool = False,
    ) -> Plan[Entry]:
        """Store one entry (refused while `agent_memory` is off; `model`: a model's write,
        which cannot touch read_only entries)."""
        settings = yield from self.settings_plan(self.member(ctx))
        if not settings.agent_memory:
            raise ScopeError("agent memory is switched off here (setting agent_memory)")
        now = self.clock()
        entry = new_entry(ctx, key, content, category, visibility, importance, expires_at, now)
        semantic = getattr(self.store, "index_config", True) is not None
        return (yield from put_plan(ctx, entry, semantic, model=model))

    def store_entry(self, ctx: MemoryContext, key: str, content: str, **fields: Any) -> Entry:
        """Store one entry: category, visibility (private, shared, read_only), importance
        (0..1) and expires_at as keywords."""
        return run(self.store, self.store_plan(ctx, key, content, **fields))

    async def astore_entry(
        self, ctx: MemoryContext, key: str, content: str, **fields: Any
    ) -> Entry:
        """Async twin of store_entry."""
        return await arun(self.store, self.store_plan(ctx, key, content, **fields))

    def forget_plan(
        self, ctx: MemoryContext, key: Any, *, model: bool = False, visibility: Any = None
    ) -> Plan[Visibility]:
        """Forget one entry (refused while `agent_memory` is off)."""
        settings = yield from self.settings_plan(self.member(ctx))
        if not settings.agent_memory:
            raise ScopeError("agent memory is switched off here (setting agent_memory)")
        return (yield from forget_plan(ctx, key, model=model, visibility=visibility))

    def forget(
        self, ctx: MemoryContext, key: str, *, visibility: Visibility | None = None
    ) -> Visibility:
        """Forget exactly one entry under `key`: the one with `visibility`, by default the one
        the caller sees (their private entry first); the visibility it had. Your code may
        forget shared and read_only entries; the model's memory_forget never a read_only one."""
        return run(self.store, self.forget_plan(ctx, key, visibility=visibility))

    async def aforget(
        self, ctx: MemoryContext, key: str, *, visibility: Visibility | None = None
    ) -> Visibility:
        """Async twin of forget."""
        return await arun(self.store, self.forget_plan(ctx, key, visibility=visibility))

    def recall_plan(self, ctx: MemoryContext, query: Any, k: int | None) -> Plan[list[EntryHit]]:
        """The best live entries for a query (default k from settings)."""
        settings = yield from self.settings_plan(self.member(ctx))
        count = clamp_k(k, settings.recall_default_k, settings.recall_max_k)
        return (yield from recall_plan(readable_scopes(ctx), query, count, self.clock()))

    def recall(self, ctx: MemoryContext, query: str, k: int | None = None) -> list[EntryHit]:
        """The entries that best match a query."""
        return run(self.store, self.recall_plan(ctx, query, k))

    async def arecall(self, ctx: MemoryContext, query: str, k: int | None = None) -> list[EntryHit]:
        """Async twin of recall."""
        return await arun(self.store, self.recall_plan(ctx, query, k))

    def entries(self, ctx: MemoryContext) -> list[Entry]:
        """Every live entry the caller can read."""
        return run(self.store, list_plan(readable_scopes(self.member(ctx)), self.clock()))

    async def aentries(self, ctx: MemoryContext) -> list[Entry]:
        """Async twin of entries."""
        return await arun(self.store, list_plan(readable_scopes(self.member(ctx)), self.clock()))

    def blocks_plan(
        self, ctx: MemoryContext, settings: MemorySettings | None = None
    ) -> Plan[list[PromptBlock]]:
        """The pinned block (makes AgentMemory a BlockSource), whatever `agent_memory` says."""
        if settings is None:
            settings = yield from self.settings_plan(ctx)
        scopes = readable_scopes(self.member(ctx))
        if not scopes or settings.pinned_max_entries == 0:
            return []
        entries = yield from list_plan(scopes, self.clock())
        chosen = pinned(entries, settings.pinned_max_entries, settings.pinned_min_importance)
        return pinned_block(chosen, qualifying(entries, settings.pinned_min_importance))

    holdings = (HOLDING,)

    def places_plan(self, owner: Owner, needle: str, pattern: re.Pattern[str]) -> Plan[list[Place]]:
        """The entries of the owner's agents holding the text (agent/privacy.py)."""
        return (yield from privacy.places_plan(owner, needle, pattern))

    def forget_places_plan(
        self, owner: Owner, places: list[Place], pattern: re.Pattern[str]
    ) -> Plan[list[Outcome]]:
        """Remove the entries."""
        return (yield from privacy.forget_places_plan(owner, places))
