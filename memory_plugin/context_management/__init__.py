"""Context management: the protected system-prompt prefix, the thread journal, masking old
tool output, compaction at token-ratio thresholds with the pre-compaction flush, and the
recent window with its rolling summary, as LangGraph nodes (`nodes`) over MemoryState's keys
(`state`), with the journal tools (`journal_tools`)."""

from memory_plugin.context_management.journal_tools import journal_tools
from memory_plugin.context_management.nodes import ContextManager
from memory_plugin.context_management.state import MemoryState

__all__ = ["ContextManager", "MemoryState", "journal_tools"]
