"""What every memory kind holds, constructed one way: a store (default: the running graph's),
one settings source shared with the graph's other kinds, the maintenance model, the membership
hook that admits a run's workspace, and a clock; and what every assembler asks of a kind (its
one name, how it is built, its tools, where its prompt block goes, whether it obeys "memory
off"), so that the graph, the middleware, the console and the MCP gateway loop over
memory_plugin.kinds.KINDS and name no kind."""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import ClassVar, Literal, TypedDict

from langchain_core.language_models import BaseChatModel
from langchain_core.tools import BaseTool
from langgraph.config import get_store
from langgraph.store.base import BaseStore

from memory_plugin.blocks import BlockSource
from memory_plugin.holdings import Holding, Outcome, Owner
from memory_plugin.holdings import Place as HeldPlace
from memory_plugin.models.maintenance import MaintenanceModel, maintenance_of
from memory_plugin.plans import Plan
from memory_plugin.scope.context import MemoryContext
from memory_plugin.scope.identity import Membership, admit, trust_run_context
from memory_plugin.settings import LayeredSettings, MemorySettings, SettingsCache

SettingsLike = MemorySettings | SettingsCache | LayeredSettings
Place = Literal["per_turn", "frozen"]


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


@dataclass(frozen=True)
class Parts:
    """What every kind of one graph (or console) is built from; `blocks`: the block sources of
    the kinds built before it, by place (context management gathers them)."""

    store: BaseStore | None
    settings: SettingsCache
    maintenance: MaintenanceModel
    membership: Membership | None = None
    model: BaseChatModel | None = None
    system_prompt: str | None = None
    blocks: Mapping[Place, Sequence[BlockSource]] = field(default_factory=dict)


class MemoryService:
    """The base of the memory kinds.

    `store` defaults to the running graph's store (as under LangGraph Server). `settings` is
    the graph's shared SettingsCache, a LayeredSettings pinned to one store, or code defaults
    (a MemorySettings, also accepted as `defaults`). `model` does the kind's maintenance work
    unless the `maintenance_model` setting names another; `membership` admits the workspace a
    run names (default: trust the run's context).

    A kind declares, at class level: `name`, its one name (every other vocabulary derives
    from it), also the setting that switches it when MemorySettings has one of that name;
    `place`, where its prompt block goes (None: it has none); `always`, built even when
    switched off in the base settings (its nodes or reads need it); `obeys_memory_off`, its
    tools are refused while a run has no long-term memory; `needs_agent`, its tools are
    offered only to a run naming an agent; `over_mcp`, the MCP gateway serves its tools. It
    overrides `tools` to offer the model tools, and `build` when it is not built from the
    common Parts alone.
    """

    name: ClassVar[str]
    place: ClassVar[Place | None] = None
    always: ClassVar[bool] = False
    obeys_memory_off: ClassVar[bool] = False
    needs_agent: ClassVar[bool] = False
    over_mcp: ClassVar[bool] = False

    @classmethod
    def build(cls, parts: Parts) -> MemoryService:
        """This kind over one graph's (or console's) parts."""
        return cls(
            parts.store,
            settings=parts.settings,
            model=parts.maintenance,
            membership=parts.membership,
        )

    @classmethod
    def switched_on(cls, settings: MemorySettings) -> bool:
        """Whether the setting named `name` is on (a kind no setting names is always on)."""
        return bool(getattr(settings, cls.name, True))

    def tools(self, membership: Membership | None) -> list[BaseTool]:
        """The model's tools over this kind (`membership` admits a run's workspace); none."""
        return []

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

    # Privacy hooks: memory_plugin.privacy loops over KINDS and asks each kind these; a kind
    # that keeps nothing of a user keeps the empty defaults and offers nothing there.

    holdings: ClassVar[tuple[Holding, ...]] = ()
    """What the kind keeps of a user (export, import, delete-user; memory_plugin.holdings)."""

    def places_plan(
        self, owner: Owner, needle: str, pattern: re.Pattern[str]
    ) -> Plan[list[HeldPlace]]:
        """Every place of the kind holding the text `needle` (matched by `pattern`) that the
        owner's forget searches; none."""
        yield from ()
        return []

    def forget_places_plan(
        self, owner: Owner, places: list[HeldPlace], pattern: re.Pattern[str]
    ) -> Plan[list[Outcome]]:
        """Forget the text at the places this kind found (made as a forget by the owner), the
        outcome of each; none."""
        yield from ()
        return []
