"""The frozen prompt block of bounded memory: both targets with their usage."""

from __future__ import annotations

from memory_plugin.bounded.entries import SEPARATOR, TargetView

TAGS = {"memory": "memory_entries", "user": "user_entries"}
TITLES = {"memory": "Your notes", "user": "About the user"}


def target_text(view: TargetView) -> str:
    """One target as a tagged block with its usage line."""
    tag = TAGS[view.target]
    body = SEPARATOR.join(view.entries) if view.entries else "(empty)"
    return f"<{tag}>\n{TITLES[view.target]} [{view.usage}]\n{body}\n</{tag}>"


def block_text(views: dict[str, TargetView]) -> str:
    """Both targets, `memory` then `user`, as of the session's start."""
    return "\n".join(target_text(views[target]) for target in ("memory", "user"))
