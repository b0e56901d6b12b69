"""Bounded entry memory: the agent's notes and who the user is, small and always in view."""

from memory_plugin.bounded.api import BoundedMemory
from memory_plugin.bounded.entries import TargetView
from memory_plugin.bounded.toolkit import MEMORY_TOOL
from memory_plugin.bounded.tools import bounded_memory_tools
from memory_plugin.scope import bounded_namespace

__all__ = [
    "MEMORY_TOOL",
    "BoundedMemory",
    "TargetView",
    "bounded_memory_tools",
    "bounded_namespace",
]
