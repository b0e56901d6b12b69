"""bounded_memory_tools: the model's `memory` tool (memory_plugin.bounded.toolkit) over a
bounded memory, by default one over the running graph's store."""

from __future__ import annotations

from langchain_core.tools import BaseTool

from memory_plugin.bounded.api import BoundedMemory
from memory_plugin.bounded.toolkit import memory_tools
from memory_plugin.scope.identity import Membership


def bounded_memory_tools(
    service: BoundedMemory | None = None, membership: Membership | None = None
) -> list[BaseTool]:
    """The `memory` tool, using `service` (default: one over the running graph's store)."""
    return memory_tools(service or BoundedMemory(), membership)
