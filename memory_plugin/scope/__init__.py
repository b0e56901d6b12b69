"""Whose memory a run reaches: the run's context (`context`), who is calling and which
workspaces admit them (`identity`), where a CLI command, token or MCP session lands by the same
rules (`doors`), store namespace labels (`namespaces`), the scopes a context resolves to
(`scopes`), and runs that name nobody to remember for (`nouser`)."""

from memory_plugin.scope.scopes import (
    Scope,
    agent_scope,
    bounded_namespace,
    personal_scope,
    profile_scope,
    reachable_namespace,
    readable_thread_scope,
    scope_from_namespace,
    team_scope,
    thread_scope,
)

__all__ = [
    "Scope",
    "agent_scope",
    "bounded_namespace",
    "personal_scope",
    "profile_scope",
    "reachable_namespace",
    "readable_thread_scope",
    "scope_from_namespace",
    "team_scope",
    "thread_scope",
]
