"""What the console's routes work with: one store, the memory kinds over it, the model that
compresses, consolidates and summarizes, and the checkpointer Summarize now reads."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Annotated, Any, TypeVar

from fastapi import Depends, Request
from langchain_core.language_models import BaseChatModel
from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.store.base import BaseStore

from memory_plugin.base import MemoryService, Parts
from memory_plugin.kinds import build_kinds
from memory_plugin.models.maintenance import maintenance_of
from memory_plugin.provenance import Provenance, origin
from memory_plugin.safety.staged import Check, Screen, screen_from
from memory_plugin.server.access import Caller
from memory_plugin.settings import LayeredSettings, MemorySettings, SettingsCache

K = TypeVar("K", bound=MemoryService)


def default_model() -> BaseChatModel:
    """$MEMORY_MAINTENANCE_MODEL, else $MEMORY_MODEL, else the offline model (with a warning)."""
    from memory_plugin.offline.default import default_model as configured

    return configured(maintenance=True)


@dataclass
class Console:
    """The memory kinds over one store, built from the registry (memory_plugin.kinds) with one
    settings source that the console's memory graph shares, for the routes, and the safety
    screen every request's writes run (the built-in stages, the operator's `check`, the judge
    the settings ask for)."""

    store: BaseStore
    model: BaseChatModel
    checkpointer: BaseCheckpointSaver[Any] | None = None
    defaults: MemorySettings | None = None
    check: Check | None = None
    cache: SettingsCache = field(init=False)
    screen: Screen = field(init=False)
    kinds: dict[str, MemoryService] = field(init=False)
    _graph: Any = field(init=False, default=None)

    def __post_init__(self) -> None:
        self.cache = SettingsCache(self.defaults)
        self.screen = screen_from(self.check, self.cache.base, self.model)
        parts = Parts(self.store, self.cache, maintenance_of(self.model), model=self.model)
        self.kinds = build_kinds(parts, self.cache.base, every=True)

    def of(self, cls: type[K]) -> K:
        """The service of this kind class over the store (every kind is built here)."""
        found = next((kind for kind in self.kinds.values() if isinstance(kind, cls)), None)
        if found is None:
            raise LookupError(f"no {cls.__name__} among the console's kinds")
        return found

    @property
    def settings(self) -> LayeredSettings:
        """The layered settings over the store."""
        return self.cache.for_store(self.store)

    def graph(self) -> Any:
        """The memory graph over the same store and checkpointer (built once, for Summarize now)."""
        if self._graph is None:
            from memory_plugin.prebuilt.graph import create_memory_graph

            self._graph = create_memory_graph(
                self.model,
                store=self.store,
                checkpointer=self.checkpointer,
                settings=self.cache,
                screen=self.check,
            )
        return self._graph


def console(request: Request) -> Console:
    """The app's console services."""
    found: Console = request.app.state.console
    return found


ConsoleDep = Annotated[Console, Depends(console)]


@contextmanager
def written_by(caller: Caller) -> Iterator[None]:
    """Writes inside carry provenance source "api", acted by the caller."""
    with origin(source="api", actor=caller.user_id):
        yield


PUBLIC_PROVENANCE = ("source", "at", "tool", "job", "job_run")


def provenance_json(value: Provenance | None, *, public: bool = False) -> dict[str, Any] | None:
    """A provenance as JSON, or None; `public`: only what names no user or thread (for
    shared entries shown to users other than platform admins)."""
    if value is None:
        return None
    found = value.to_json()
    return {k: v for k, v in found.items() if k in PUBLIC_PROVENANCE} if public else found
