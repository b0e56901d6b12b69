"""Scoped memory: a curated document and dated notes per personal or team scope."""

from memory_plugin.scope.identity import Membership, trust_run_context
from memory_plugin.scoped.api import ScopedMemory
from memory_plugin.scoped.documents import Document, DocumentWrite
from memory_plugin.scoped.notes import Note, NotesPage
from memory_plugin.scoped.recall import Hit
from memory_plugin.scoped.tools import scoped_memory_tools

__all__ = [
    "Document",
    "DocumentWrite",
    "Hit",
    "Membership",
    "Note",
    "NotesPage",
    "ScopedMemory",
    "scoped_memory_tools",
    "trust_run_context",
]
