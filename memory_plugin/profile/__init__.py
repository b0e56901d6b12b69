"""User profile memory: one memory.md per user, injected as "What I know about you" and
consolidated after each turn (`memory`), within its token budget (`budget`), guarded against
a reply that would lose what the user wrote (`guard`), with a change log (`changes`)."""

from memory_plugin.profile.memory import ProfileMemory

__all__ = ["ProfileMemory"]
