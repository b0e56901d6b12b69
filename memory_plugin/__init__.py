"""memory_plugin: durable memory and managed context for LangGraph agents."""

from importlib.metadata import PackageNotFoundError, version

from memory_plugin.backends import Backend
from memory_plugin.connection import AsyncConnection, aconnect, connect
from memory_plugin.context import MemoryContext, current_context
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
from memory_plugin.graph import create_memory_graph
from memory_plugin.middleware import MemoryMiddleware
from memory_plugin.offline import OfflineModel
from memory_plugin.profile.memory import ProfileMemory
from memory_plugin.scope import (
    Scope,
    agent_scope,
    personal_scope,
    profile_scope,
    readable_thread_scope,
    team_scope,
    thread_scope,
)
from memory_plugin.scoped import ScopedMemory, scoped_memory_tools
from memory_plugin.settings import EffectiveSettings, LayeredSettings, MemorySettings
from memory_plugin.thread.nodes import ContextManager
from memory_plugin.thread.state import MemoryState
from memory_plugin.tokens import TokenCounter, context_window, counter_for

try:
    __version__ = version("memory-plugin")
except PackageNotFoundError:  # a source tree that was never installed
    __version__ = "0.0.0"

__all__ = [
    "AsyncConnection",
    "Backend",
    "BackendError",
    "BackendUnavailableError",
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
    "agent_scope",
    "connect",
    "context_window",
    "counter_for",
    "create_memory_graph",
    "current_context",
    "personal_scope",
    "profile_scope",
    "readable_thread_scope",
    "scoped_memory_tools",
    "team_scope",
    "thread_scope",
]
