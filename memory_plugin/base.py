"""What every memory kind holds, constructed one way: a store (default: the running graph's),
one settings source shared with the graph's other kinds, the maintenance model, the membership
hook that admits a run's workspace, and a clock."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime
from typing import TypedDict

from langchain_core.language_models import BaseChatModel
from langgraph.config import get_store
from langgraph.store.base import BaseStore

from memory_plugin.models.maintenance import MaintenanceModel, maintenance_of
from memory_plugin.plans import Plan
from memory_plugin.scope.context import MemoryContext
from memory_plugin.scope.identity import Membership, admit, trust_run_context
from memory_plugin.settings import LayeredSettings, MemorySettings, SettingsCache

SettingsLike = MemorySettings | SettingsCache | LayeredSettings


class ServiceOptions(TypedDict, total=False):
    """The keyword arguments every memory kind takes (see MemoryService)."""

    settings: SettingsLike | None
    defaults: MemorySettings | None
    model: BaseChatModel | MaintenanceModel | None
    membership: Membership | None
    clock: Callable[[], datetime]


def utc_now() -> datetime:
    """The current time in UTC."""
    return datetime.now(UTC)


class MemoryService:
    """The base of the five memory kinds.

    `store` defaults to the running graph's store (as under LangGraph Server). `settings` is
    the graph's shared SettingsCache, a LayeredSettings pinned to one store, or code defaults
    (a MemorySettings, also accepted as `defaults`). `model` does the kind's maintenance work
    unless the `maintenance_model` setting names another; `membership` admits the workspace a
    run names (default: trust the run's context).
    """

    def __init__(
        self,
        store: BaseStore | None = None,
        *,
        settings: SettingsLike | None = None,
        defaults: MemorySettings | None = None,
        model: BaseChatModel | MaintenanceModel | None = None,
        membership: Membership | None = None,
        clock: Callable[[], datetime] = utc_now,
    ) -> None:
        self._store = store
        self._pinned = settings if isinstance(settings, LayeredSettings) else None
        if isinstance(settings, SettingsCache):
            self.source = settings
        else:
            code = settings if isinstance(settings, MemorySettings) else defaults
            self.source = SettingsCache(self._pinned.defaults if self._pinned else code)
        self.maintenance = maintenance_of(model)
        self.membership = membership or trust_run_context
        self.clock = clock

    @property
    def store(self) -> BaseStore:
        """The store given, else the running graph's."""
        return self._store if self._store is not None else get_store()

    @property
    def layered(self) -> LayeredSettings:
        """The layered settings over this kind's store."""
        return self._pinned or self.source.for_store(self.store)

    def settings_plan(
        self, ctx: MemoryContext, store: BaseStore | None = None
    ) -> Plan[MemorySettings]:
        """The settings in effect for the run's context (over `store`, default this kind's)."""
        layered = self.layered if store is None else self.source.for_store(store)
        effective = yield from layered.effective_plan(ctx)
        return effective.values

    def member(self, ctx: MemoryContext) -> MemoryContext:
        """The context, once the membership hook admits the workspace it names."""
        if ctx.workspace_id is not None and self.membership is not trust_run_context:
            admit(ctx.user_id, ctx.workspace_id, self.membership)
        return ctx
