"""memory_plugin: durable memory and managed context for LangGraph agents."""

from importlib.metadata import PackageNotFoundError, version
from typing import Any

from memory_plugin.agent import AgentMemory, agent_memory_tools
from memory_plugin.backends import Backend
from memory_plugin.bounded import BoundedMemory, bounded_memory_tools
from memory_plugin.connection import AsyncConnection, aconnect, connect
from memory_plugin.context_management import ContextManager, MemoryState, journal_tools
from memory_plugin.errors import (
    BackendError,
    BackendUnavailableError,
    ConflictError,
    InvalidIdError,
    LockedSettingError,
    MemoryPluginError,
    MemoryWriteError,
    ScopeError,
    SettingsError,
)
from memory_plugin.events import MemoryEvent
from memory_plugin.prebuilt import (
    MemoryMiddleware,
    MemoryServices,
    build_services,
    create_memory_graph,
)
from memory_plugin.profile import ProfileMemory
from memory_plugin.scope import (
    Scope,
    agent_scope,
    personal_scope,
    profile_scope,
    readable_thread_scope,
    team_scope,
    thread_scope,
)
from memory_plugin.scope.context import MemoryContext, current_context
from memory_plugin.scoped import ScopedMemory, scoped_memory_tools
from memory_plugin.settings import EffectiveSettings, LayeredSettings, MemorySettings
from memory_plugin.tokens import TokenCounter, context_window, counter_for

try:
    __version__ = version("memory-plugin")
except PackageNotFoundError:  # a source tree that was never installed
    __version__ = "0.0.0"

__all__ = [
    "AgentMemory",
    "AsyncConnection",
    "Backend",
    "BackendError",
    "BackendUnavailableError",
    "BoundedMemory",
    "ConflictError",
    "ContextManager",
    "EffectiveSettings",
    "InvalidIdError",
    "LayeredSettings",
    "LockedSettingError",
    "MemoryContext",
    "MemoryEvent",
    "MemoryMiddleware",
    "MemoryPluginError",
    "MemoryServices",
    "MemorySettings",
    "MemoryState",
    "MemoryWriteError",
    "OfflineModel",
    "ProfileMemory",
    "Scope",
    "ScopeError",
    "ScopedMemory",
    "SettingsError",
    "TokenCounter",
    "__version__",
    "aconnect",
    "agent_memory_tools",
    "agent_scope",
    "bounded_memory_tools",
    "build_services",
    "connect",
    "context_window",
    "counter_for",
    "create_memory_graph",
    "current_context",
    "journal_tools",
    "personal_scope",
    "profile_scope",
    "readable_thread_scope",
    "scoped_memory_tools",
    "team_scope",
    "thread_scope",
]


def __getattr__(name: str) -> Any:
    """OfflineModel on first use: the offline package loads only when it is asked for."""
    if name == "OfflineModel":
        from memory_plugin.offline import OfflineModel

        return OfflineModel
    raise AttributeError(f"module 'memory_plugin' has no attribute {name!r}")
