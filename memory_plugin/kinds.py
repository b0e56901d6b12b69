"""The registry of memory kinds: one row per kind, the kind's class. Each class says what the
assemblers ask of it (memory_plugin.base.MemoryService: its name, how it is built, its tools,
where its prompt block goes); `build_services`, the middleware, the console and the MCP
gateway are all built from this one tuple, so a new kind is one more row."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace

from langchain_core.tools import BaseTool

from memory_plugin.agent import AgentMemory
from memory_plugin.base import MemoryService, Parts, Place
from memory_plugin.blocks import BlockSource
from memory_plugin.bounded import BoundedMemory
from memory_plugin.context_management.nodes import ContextManager
from memory_plugin.profile.memory import ProfileMemory
from memory_plugin.scope.identity import Membership
from memory_plugin.scoped.api import ScopedMemory
from memory_plugin.settings import MemorySettings

Kind = type[MemoryService]

KINDS: tuple[Kind, ...] = (
    ScopedMemory,
    ProfileMemory,
    AgentMemory,
    BoundedMemory,
    ContextManager,
)


def build_kinds(
    parts: Parts, base: MemorySettings, *, every: bool = False, kinds: Sequence[Kind] | None = None
) -> dict[str, MemoryService]:
    """The service of each kind on in `base` (or that is built `always`; `every`: all kinds,
    as the console needs), keyed by its name; each kind's block source goes to the kinds
    built after it (context management gathers them). `kinds`: the registry (default KINDS)."""
    built: dict[str, MemoryService] = {}
    blocks: dict[Place, list[BlockSource]] = {"per_turn": [], "frozen": []}
    for kind in KINDS if kinds is None else kinds:
        if not (every or kind.always or kind.switched_on(base)):
            continue
        service = kind.build(replace(parts, blocks=blocks))
        built[kind.name] = service
        if kind.place is not None:
            blocks[kind.place].append(service)  # type: ignore[arg-type]
    return built


def kind_tools(
    built: Mapping[str, MemoryService], base: MemorySettings, membership: Membership | None
) -> tuple[list[BaseTool], dict[str, Kind]]:
    """The tools of the kinds built and on in `base`, and the kind each belongs to."""
    tools: list[BaseTool] = []
    owners: dict[str, Kind] = {}
    for service in built.values():
        kind = type(service)
        if not kind.switched_on(base):
            continue
        made = service.tools(membership)
        tools += made
        owners.update(dict.fromkeys((tool.name for tool in made), kind))
    return tools, owners
