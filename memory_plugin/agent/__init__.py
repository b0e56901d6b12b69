"""Agent memory entries: curated facts kept across every thread of one agent, with pinning."""

from memory_plugin.agent.api import AgentMemory
from memory_plugin.agent.entries import Entry
from memory_plugin.agent.tools import agent_memory_tools

__all__ = ["AgentMemory", "Entry", "agent_memory_tools"]
