"""The memory of one graph, built once: one settings source and one service per memory kind.

`create_memory_graph` and `MemoryMiddleware` build a MemoryServices, and every node, tool and
hook of that graph uses it: settings given in code, set by the environment or stored in a layer
reach every path from this one owner. Which memory kinds exist in the graph is decided here,
from the code defaults and the environment; a kind a stored layer switches off for a scope is
off for that scope's turns: its tools are not offered to the model, and a call to one anyway is
refused (`offered`, `refusal`, `gate`). The journal tools are offered from the first call whose
prompt lacks something the journal holds (`this_turn`); the tool node runs them on any call.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeVar

from langchain_core.language_models import BaseChatModel, LanguageModelInput
from langchain_core.messages import BaseMessage, ToolMessage
from langchain_core.runnables import Runnable, RunnableConfig
from langchain_core.tools import BaseTool
from langgraph.prebuilt.tool_node import ToolCallRequest
from langgraph.store.base import BaseStore
from langgraph.types import Command

from memory_plugin.base import MemoryService, Parts
from memory_plugin.compat import RunnableCallable
from memory_plugin.context_management.journal_tools import journal_holds_more
from memory_plugin.context_management.nodes import JOURNAL_TOOLS, ContextManager
from memory_plugin.kinds import Kind, build_kinds, kind_tools
from memory_plugin.models.maintenance import MaintenanceModel
from memory_plugin.profile.memory import ProfileMemory
from memory_plugin.safety.staged import Check, Screen, screen_from, screening
from memory_plugin.scope.context import MemoryContext, current_context
from memory_plugin.scope.identity import Membership
from memory_plugin.scope.nouser import MEMORY_OFF
from memory_plugin.settings import MemorySettings, SettingsCache

State = Mapping[str, Any]
Result = ToolMessage | Command[Any]
Execute = Callable[[ToolCallRequest], Result]
AsyncExecute = Callable[[ToolCallRequest], Awaitable[Result]]
BoundModel = Runnable[LanguageModelInput, BaseMessage]
K = TypeVar("K", bound=MemoryService)


@dataclass
class MemoryServices:
    """One graph's memory: its settings source, the service of each memory kind that exists
    in it (keyed by the kind's name), the memory tools, and the kind each tool belongs to."""

    settings: SettingsCache
    services: dict[str, MemoryService]
    tools: list[BaseTool]
    owners: dict[str, Kind]
    membership: Membership | None = None
    screen: Screen = field(default_factory=Screen)
    _last: tuple[Any, MemorySettings] | None = field(default=None, repr=False)

    def of(self, cls: type[K]) -> K | None:
        """The service of this kind class, None when it is not part of this graph."""
        return next((found for found in self.services.values() if isinstance(found, cls)), None)

    @property
    def manager(self) -> ContextManager:
        """The context-management nodes (always built: they load memory and journal)."""
        found = self.of(ContextManager)
        assert found is not None
        return found

    @property
    def base(self) -> MemorySettings:
        """The code defaults with the environment applied (before any stored layer)."""
        return self.settings.base

    @property
    def managed(self) -> bool:
        """Whether context management is part of this graph."""
        return self.base.context_management

    @property
    def start(self) -> RunnableCallable:
        """The node that opens a turn: load memory (and manage the context)."""
        return self.screened(self.manager.start_turn if self.managed else self.manager.load_memory)

    @property
    def manage(self) -> RunnableCallable:
        """The node run after each tool step: removed memory out of the prompt (and the
        context managed)."""
        return self.screened(self.manager.after_tools if self.managed else self.manager.recheck)

    @property
    def finish(self) -> RunnableCallable:
        """The node that closes a turn: journal the answer (and the rolling summary)."""
        return self.screened(self.manager.finish_turn if self.managed else self.manager.journal)

    @property
    def summarize_now(self) -> RunnableCallable:
        """The node that compacts the thread on request."""
        return self.screened(self.manager.summarize_now)

    @property
    def consolidate(self) -> RunnableCallable | None:
        """The node that consolidates the profile after a turn, None without profile memory."""
        profile = self.of(ProfileMemory)
        return None if profile is None else self.screened(profile.consolidate_profile)

    def context(self) -> MemoryContext:
        """The run's MemoryContext, its workspace checked with this graph's membership hook."""
        return current_context(self.membership)

    def turn_settings(self, state: Any) -> MemorySettings:
        """The settings this turn's opening resolved (kept in memory_context), else the
        graph's base settings."""
        info = state.get("memory_context") if isinstance(state, Mapping) else None
        values = (info or {}).get("settings")
        if not values:
            return self.base
        last = self._last
        if last is None or last[0] is not values:
            last = self._last = (values, MemorySettings.model_construct(**values))
        return last[1]

    @staticmethod
    def memory_off(state: Any) -> str | None:
        """Why this run has no long-term memory (load_memory said so), None when it has."""
        info = state.get("memory_context") if isinstance(state, Mapping) else None
        off = (info or {}).get(MEMORY_OFF)
        return str(off) if off else None

    def offered(self, settings: MemorySettings, off: str | None = None) -> list[BaseTool]:
        """The memory tools of the kinds that are on for these settings (none of a kind that
        obeys "memory off" when memory is `off` for the run)."""
        return [tool for tool in self.tools if self.refusal(tool.name, settings, off) is None]

    def this_turn(self, state: Any) -> list[BaseTool]:
        """The memory tools this turn offers: those `offered` for its settings and memory being
        off or on, less the tools of kinds that need an agent when the run names none, and
        less the journal tools until the prompt lacks something the journal holds (a summary,
        a masked output, messages out of the recent window: that call's prompt cache breaks
        anyway, so their schemas join the request there)."""
        memory = self.offered(self.turn_settings(state), self.memory_off(state))
        info = state.get("memory_context") if isinstance(state, Mapping) else None
        if not journal_holds_more(info):
            memory = [tool for tool in memory if tool.name not in JOURNAL_TOOLS]
        if self.context().agent_id:
            return memory
        return [tool for tool in memory if not self.owners[tool.name].needs_agent]

    def refusal(self, name: str, settings: MemorySettings, off: str | None = None) -> str | None:
        """Why a call to this tool is refused (its memory kind is off, or memory is `off` for
        the run), None when it is not."""
        kind = self.owners.get(name)
        if kind is None:
            return None
        if off and kind.obeys_memory_off:
            return f"Memory not changed: {name} is unavailable because {off}."
        if kind.switched_on(settings):
            return None
        why = f"{kind.name} is switched off here"
        return f"Memory not changed: {name} is unavailable because {why}."

    def _refused(self, request: ToolCallRequest) -> ToolMessage | None:
        call = request.tool_call
        state = request.state
        why = self.refusal(call["name"], self.turn_settings(state), self.memory_off(state))
        if why is None:
            return None
        return ToolMessage(why, name=call["name"], tool_call_id=call["id"], status="error")

    def gate(self, request: ToolCallRequest, execute: Execute) -> Result:
        """A ToolNode wrapper refusing calls to tools of a memory kind that is off; a call
        that runs does so under this graph's safety screen."""
        refused = self._refused(request)
        if refused is not None:
            return refused
        with screening(self.screen):
            return execute(request)

    async def agate(self, request: ToolCallRequest, execute: AsyncExecute) -> Result:
        """Async twin of gate."""
        refused = self._refused(request)
        if refused is not None:
            return refused
        with screening(self.screen):
            return await execute(request)

    def screened(self, node: RunnableCallable) -> RunnableCallable:
        """The node run under this graph's safety screen, as every node property above is (set
        inside the node's body, since LangGraph runs each node in a context of its own), sync
        and async."""
        screen = self.screen

        def sync(state: Any, config: RunnableConfig) -> Any:
            with screening(screen):
                return node.invoke(state, config)

        async def asynchronous(state: Any, config: RunnableConfig) -> Any:
            with screening(screen):
                return await node.ainvoke(state, config)

        return RunnableCallable(sync, asynchronous, name=node.name, trace=False)


@dataclass
class TurnTools:
    """The agent's model with the app's tools and this turn's memory tools bound (with the
    `binding` keyword arguments of its bind_tools); one binding per set of tools, reused."""

    model: BaseChatModel
    app_tools: Sequence[Any]
    services: MemoryServices
    binding: Mapping[str, Any] = field(default_factory=dict)
    _bound: dict[tuple[str, ...], BoundModel] = field(default_factory=dict, repr=False)

    def __call__(self, state: Any) -> BoundModel:
        """The bound model for this turn's settings."""
        services = self.services
        memory = services.this_turn(state)
        key = tuple(tool.name for tool in memory)
        found = self._bound.get(key)
        if found is None:
            tools = [*self.app_tools, *memory]
            found = self.model.bind_tools(tools, **self.binding) if tools else self.model
            self._bound[key] = found
        return found


def build_services(
    model: BaseChatModel,
    settings: MemorySettings | SettingsCache | None = None,
    *,
    store: BaseStore | None = None,
    system_prompt: str | None = None,
    membership: Membership | None = None,
    environ: Mapping[str, str] | None = None,
    maintenance_model: BaseChatModel | None = None,
    screen: Check | None = None,
    every_kind: bool = False,
    kinds: Sequence[Kind] | None = None,
) -> MemoryServices:
    """Build one graph's memory from the registry of kinds (memory_plugin.kinds); memory work
    uses `maintenance_model` (default: `model`) unless the `maintenance_model` setting names
    another. `settings` are the code defaults, or a SettingsCache to share with another
    surface over the same store (the console). Every write runs the safety screen: the
    built-in stages, then the operator's `screen` check, then the judge when `screen_judge`
    is on (asking the maintenance model). `every_kind`: build the kinds switched off in the
    base settings too; `kinds`: the registry of kinds (default memory_plugin.kinds.KINDS). Bad
    settings (in code or the environment, a maintenance model that
    cannot be loaded included) raise SettingsError here, a `screen` that is not callable
    TypeError."""
    source = (
        settings
        if isinstance(settings, SettingsCache)
        else SettingsCache(settings, environ=environ)
    )
    base = source.base
    maintenance = MaintenanceModel(maintenance_model or model)
    if base.maintenance_model:
        maintenance.load(base.maintenance_model)
    staged = screen_from(screen, base, maintenance(base))
    parts = Parts(store, source, maintenance, membership, model, system_prompt)
    built = build_kinds(parts, base, every=every_kind, kinds=kinds)
    tools, owners = kind_tools(built, base, membership)
    return MemoryServices(source, built, tools, owners, membership, staged)
