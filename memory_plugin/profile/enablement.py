"""Whether profile memory is on for a turn: the operator's flag, the space's, web search's
and the user's own switch."""

from __future__ import annotations

from memory_plugin.settings import MemorySettings


def enablement(settings: MemorySettings) -> tuple[bool, str]:
    """Whether profile memory is active for a turn with these settings, and why not."""
    if not settings.profile:
        return False, "the operator feature flag is off"
    if not settings.profile_space:
        return False, "context memory is disabled for this space"
    if settings.web_search and not settings.profile_with_web_search:
        return False, "context memory is unavailable while web search is enabled"
    if not settings.profile_user:
        return False, "the user turned context memory off"
    return True, "enabled"
