"""Whether a memory feature is on for the caller, and the reason the page shows up front
when it is off (instead of refusing a form after it was filled in)."""

from __future__ import annotations

from typing import Any

AGENT_MEMORY_OFF = (
    "Agent memory is switched off for you (setting agent_memory): its entries can be read "
    "here, but not added, changed or deleted. It is turned on in Settings."
)
SCOPED_MEMORY_OFF = (
    "Scoped memory is switched off here (setting scoped_memory): the agent neither reads "
    "nor writes this memory, and it cannot be saved or searched here. It is turned on in "
    "Settings."
)
SUMMARIZE_OFF = (
    "Summarize now is off: the platform turns it on with the compaction_manual setting "
    "(MEMORY_COMPACTION_MANUAL)."
)


def switch(enabled: bool, reason: str) -> dict[str, Any]:
    """A Switch as JSON: on, or off with `reason`."""
    return {"enabled": enabled, "disabled_reason": None if enabled else reason}
