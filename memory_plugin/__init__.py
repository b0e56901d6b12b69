"""memory_plugin: durable memory and managed context for LangGraph agents."""

from memory_plugin.backends import Backend, aconnect, connect
from memory_plugin.context import MemoryContext, current_context
from memory_plugin.errors import (
    BackendError,
    BackendUnavailableError,
    InvalidIdError,
    LockedSettingError,
    MemoryPluginError,
    ScopeError,
    SettingsError,
)
from memory_plugin.graph import create_memory_graph
from memory_plugin.scope import (
    Scope,
    agent_scope,
    personal_scope,
    profile_scope,
    readable_thread_scope,
    team_scope,
    thread_scope,
)
from memory_plugin.settings import EffectiveSettings, LayeredSettings, MemorySettings
from memory_plugin.tokens import TokenCounter, context_window, counter_for

__all__ = [
    "Backend",
    "BackendError",
    "BackendUnavailableError",
    "EffectiveSettings",
    "InvalidIdError",
    "LayeredSettings",
    "LockedSettingError",
    "MemoryContext",
    "MemoryPluginError",
    "MemorySettings",
    "Scope",
    "ScopeError",
    "SettingsError",
    "TokenCounter",
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
    "team_scope",
    "thread_scope",
]
