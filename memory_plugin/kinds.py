"""The registry of memory kinds: for each, the setting that switches it, how it is built,
its tools, and where its prompt block goes. `build_services`, the middleware and the console
are all built from this one table; a new kind is one more row."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Literal

from langchain_core.language_models import BaseChatModel
from langchain_core.tools import BaseTool
from langgraph.store.base import BaseStore

from memory_plugin.agent import AgentMemory, agent_memory_tools
from memory_plugin.base import MemoryService
from memory_plugin.blocks import BlockSource
from memory_plugin.bounded import BoundedMemory, bounded_memory_tools
from memory_plugin.context_management.journal_tools import journal_tools
from memory_plugin.context_management.nodes import ContextManager
from memory_plugin.models.maintenance import MaintenanceModel
from memory_plugin.profile.memory import ProfileMemory
from memory_plugin.scope.identity import Membership
from memory_plugin.scoped.api import ScopedMemory
from memory_plugin.scoped.tools import scoped_memory_tools
from memory_plugin.settings import MemorySettings, SettingsCache

ToolFactory = Callable[..., list[BaseTool]]
Place = Literal["per_turn", "frozen"]


@dataclass(frozen=True)
class Parts:
    """What every kind of one graph (or console) is built from."""

    store: BaseStore | None
    settings: SettingsCache
    maintenance: MaintenanceModel
    membership: Membership | None = None
    model: BaseChatModel | None = None
    system_prompt: str | None = None
    blocks: Mapping[Place, Sequence[BlockSource]] = field(default_factory=dict)


def _service(cls: type[MemoryService]) -> Callable[[Parts], MemoryService]:
    def build(parts: Parts) -> MemoryService:
        return cls(
            parts.store,
            settings=parts.settings,
            model=parts.maintenance,
            membership=parts.membership,
        )

    return build


def _manager(parts: Parts) -> MemoryService:
    assert parts.model is not None, "context management needs the graph's model"
    return ContextManager(
        parts.model,
        summary_model=parts.maintenance,
        sources=parts.blocks.get("per_turn", ()),
        frozen_sources=parts.blocks.get("frozen", ()),
        system_prompt=parts.system_prompt,
        settings=parts.settings,
        membership=parts.membership,
    )


@dataclass(frozen=True)
class Kind:
    """One memory kind. `switch` is its setting; `always`: built even when switched off in
    the base settings (its nodes or reads need it); `block`: where its prompt block goes;
    `tools(service, membership)`: the model's tools over it."""

    switch: str
    build: Callable[[Parts], MemoryService]
    tools: ToolFactory | None = None
    block: Place | None = None
    always: bool = False


KINDS: tuple[Kind, ...] = (
    Kind("scoped_memory", _service(ScopedMemory), scoped_memory_tools, "per_turn"),
    Kind("profile", _service(ProfileMemory), None, "per_turn"),
    Kind("agent_memory", _service(AgentMemory), agent_memory_tools, "frozen", always=True),
    Kind("bounded_memory", _service(BoundedMemory), bounded_memory_tools, "frozen"),
    Kind("context_management", _manager, journal_tools, always=True),
)


def build_kinds(
    parts: Parts, base: MemorySettings, *, every: bool = False
) -> dict[str, MemoryService]:
    """The service of each kind on in `base` (or that is built `always`; `every`: all kinds,
    as the console needs), keyed by its switch; each kind's block source goes to the kinds
    built after it (context management gathers them)."""
    built: dict[str, MemoryService] = {}
    blocks: dict[Place, list[BlockSource]] = {"per_turn": [], "frozen": []}
    for kind in KINDS:
        if not (every or kind.always or getattr(base, kind.switch)):
            continue
        service = kind.build(replace(parts, blocks=blocks))
        built[kind.switch] = service
        if kind.block is not None:
            blocks[kind.block].append(service)  # type: ignore[arg-type]
    return built


def kind_tools(
    built: Mapping[str, MemoryService], base: MemorySettings, membership: Membership | None
) -> tuple[list[BaseTool], dict[str, str]]:
    """The tools of the kinds built and on in `base`, and the setting that switches each."""
    tools: list[BaseTool] = []
    switches: dict[str, str] = {}
    for kind in KINDS:
        if kind.tools is None or kind.switch not in built or not getattr(base, kind.switch):
            continue
        made = kind.tools(built[kind.switch], membership)
        tools += made
        switches.update(dict.fromkeys((tool.name for tool in made), kind.switch))
    return tools, switches
