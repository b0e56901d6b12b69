"""Everything wired: the prebuilt graph (`graph`), the same memory as create_agent middleware
(`middleware`), the agent step they share (`agent_step`), one graph's services built from
the registry of kinds (`services`), and nightly consolidation as a graph
(`consolidation_graph`)."""

from memory_plugin.prebuilt.graph import create_memory_graph
from memory_plugin.prebuilt.middleware import MemoryMiddleware
from memory_plugin.prebuilt.services import MemoryServices, build_services

__all__ = ["MemoryMiddleware", "MemoryServices", "build_services", "create_memory_graph"]
