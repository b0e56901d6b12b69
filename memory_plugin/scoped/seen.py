"""Which version of the curated document the model has seen this turn.

`update_memory` is a compare-and-swap against it: the version loaded into the turn's prompt
(the document block in `memory_blocks`), or the version named by the turn's latest
`update_memory` answer (the version it saved, or the current one it showed after a
conflict), carried in that tool message's artifact.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from langchain_core.messages import HumanMessage, ToolMessage

from memory_plugin.scoped.blocks import DOCUMENT_BLOCK
from memory_plugin.scoped.documents import CURRENT

UPDATE_MEMORY = "update_memory"
VERSION = "document_version"
UNSEEN = "unseen"

Seen = int | str | None
"""A version, None (no document yet), CURRENT or UNSEEN."""


def _get(state: Any, key: str) -> Any:
    if isinstance(state, Mapping):
        return state.get(key)
    return getattr(state, key, None)


def _answered(messages: Sequence[Any]) -> int | None:
    """The version the turn's latest update_memory answer named, if any."""
    for message in reversed(messages):
        if isinstance(message, HumanMessage):
            return None
        if isinstance(message, ToolMessage) and message.name == UPDATE_MEMORY:
            artifact = message.artifact
            if isinstance(artifact, Mapping) and isinstance(artifact.get(VERSION), int):
                return int(artifact[VERSION])
    return None


def seen_version(state: Any) -> Seen:
    """The document version the model has seen this turn (None: it saw there was none yet).

    CURRENT when the graph loads no document block (nothing is known about what the model
    saw, so the write replaces what is there); UNSEEN when the block says the document could
    not be loaded.
    """
    answered = _answered(_get(state, "messages") or [])
    if answered is not None:
        return answered or None
    blocks = _get(state, "memory_blocks")
    block = next((b for b in blocks or [] if b.get("name") == DOCUMENT_BLOCK), None)
    if block is None:
        return CURRENT
    version = block.get("version")
    if not isinstance(version, int):
        return UNSEEN
    return version or None


def artifact(version: int) -> dict[str, int]:
    """The artifact of an update_memory answer that showed or saved `version` (0: none)."""
    return {VERSION: version}
